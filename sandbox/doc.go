// Package sandbox emulates the ERP's OData service (its rules:
// docs/service.md; what it is for: docs/design.md, The sandbox) as an
// http.Handler, for tests (httptest.NewServer(sb)) and for `migrate sandbox`.
//
// It serves the built-in demo schema (DemoMetadata) with the screens'
// business rules, or a schema loaded from a real installation's $metadata
// with generic rules only (types, MaxLength, Mandatory, keys). Every
// version-gated behaviour of docs/service.md, Versions follows
// Options.SystemVersion.
//
// Choices where the contract (docs/service.md) is silent (documented here so
// that clients and tests agree):
//
//   - Screen errors are answered 400 (409 for a POST of an existing key) as
//     the XML FORM/InterfaceErrors body of docs/service.md, Errors before
//     system version 23.0, and from 23.0 in the JSON shape newer servers
//     send:
//     {"FORM":{"@TYPE":…,"InterfaceErrors":{"@XmlFormat":"0","text":"Line 1-
//     …"}}}. Other errors (401, 403, 404, 429, malformed requests) use the
//     OData JSON error body {"error":{"code":…,"message":…}}.
//   - The language code after tabula.ini (",1" English, the default; ",2"
//     Hebrew) selects the language of screen messages (from 18.2; before,
//     a language code is not part of a valid service root: 404).
//   - Each company (the service root's last segment, Options.Companies,
//     default demo) holds its own data and numbering, empty but for the
//     currencies when new; an undeclared company is 404, and a $batch
//     sub-request into another company than the batch's is refused.
//     Limits (calls a minute, calls in flight) count per user across
//     companies, as a real server counts them.
//   - Writes before 17.2 answer 405. $expand before 18.1 answers 400.
//   - Text sub-forms before 20.0 are addressed with square brackets
//     ([ORDERSTEXT_SUBFORM]) and replace the text (no APPEND/SIGNATURE);
//     from 20.0 brackets are refused with 400.
//   - Attachments before 21.0 read back as file paths, not data URIs.
//   - RefuseKey receives the key values in key order joined by ",",
//     unquoted (e.g. "C100", or "IV26000001,A,D" for AINVOICES).
//   - A personal access token logs in as the user "demo" (or the first
//     configured user); GetLoginName answers that name.
//   - GetMetadataFor of an entity not yet read since start (or since
//     ClearEntityMetadata) answers 400 until a GET of the entity set ran.
//   - ClearEntityMetadata answers 204.
//   - A deep insert stores the parent, then its children in order; a child
//     the screen refuses fails the request, and what was stored stays
//     (nothing is ever rolled back, docs/service.md, Batch). PATCH with
//     sub-form arrays updates the lines whose key it gives and creates the
//     others.
//   - Before 22.0 a decimal may be written as a string with a decimal comma
//     ("12,5"); from 22.0 only the decimal point (docs/service.md, Service
//     root).
//   - Faults are drawn per API call (drops only for writes and $batch):
//     drop-before-commit closes the connection before anything is done,
//     drop-after-commit after the call committed and its state was saved.
//   - Calls per minute and concurrent calls are counted per user; past them
//     the answer is 429 with Retry-After (seconds).
//   - Options.Quirks switches on what real servers do beyond the contract
//     (docs/servers.md; quirks.go): multipart-ids (before 22.1 a write is
//     answered as ID-r1 in a changesetresponse part, a GET without
//     Content-ID), json-errors (JSON screen errors from 19.1, the parts of
//     a message a list of texts), cold-forms (the first request to a set
//     since start answers 404), normalised-texts (texts read back in <p dir=rtl>
//     without whitespace before <br>), metadata-wrong-type
//     (GetMetadataFor of an entity not read yet answers another's type),
//     real-metadata (realmeta.go), permission-400, oidc-accounts,
//     ignored-filters (a $filter it cannot apply answers every row) and
//     numbers-as-strings (Int64 and Decimal values answered as JSON
//     strings, as under IEEE754Compatible).
//   - A form of Options.Unpermitted refuses writes: 403, or a 400 screen
//     error "insufficient permissions" under QuirkPermission400.
//   - Under QuirkRealMetadata the served document uses real installations'
//     namespace and type names (realmeta.go); the model inside keeps the
//     contract's names, so rules and paths are the same either way.
//   - The demo's CURRENCIES is readable but not open to the API for writes
//     (403). Auto-unique keys (Core.Computed) count from 1 per form;
//     document numbers are SO/IV, the year's last two digits and 6 digits.
//
// The sandbox is imported only by cmd/migrate and by tests.
package sandbox
