// Package odata owns the service's wire format (its rules: docs/service.md):
// the EDMX metadata model, value encoding per Edm type, key expressions, URL
// building with the language code, the JSON and multipart $batch codecs, the
// error bodies (XML FORM/InterfaceErrors and their JSON forms) and the HTTP
// client with authentication, retries and version detection.
//
// Where things are:
//
//   - model.go, metadata.go, metadata_write.go: the metadata model, its
//     parsers (ParseMetadata, ParseEntityType for GetMetadataFor) and writers
//     (Metadata.WriteXML, EntityType.WriteXML), Suggest for "did you mean".
//   - decimal.go, values.go: exact Edm.Decimal, literals (FormatLiteral,
//     FormatDateTime, FormatDate), entity bodies (MarshalBody, the one
//     encoder, DecodeEntity) and typed decoding of server values
//     (DecodeValue); whether two values are the same is package compare's.
//   - keys.go, url.go: the one key grammar, which the executor and the
//     sandbox both call: FormatKey and ParseKey (raw), PathKey and
//     ParsePathKey (escaped by the one rule for URLs, as the journal keeps
//     keys), LocationKey, ParsePath and EscapePath; $<id> references,
//     ServiceRoot with the language code, Query and the filter builders
//     (Eq, And, Or, ...).
//   - errors.go: Error, ParseError, the Kind predicates and the error-body
//     writers the sandbox answers with.
//   - client.go: Client, Config, Authenticator (BasicAuth, PATAuth), retries
//     and InDoubtError, rate limits, Batch.
//   - batch.go, batch_json.go, batch_multipart.go: the $batch types and codecs.
//   - json_scan.go: a one-pass JSON reader for $batch answers and entities
//     (DecodeEntityOnly keeps what a Projection names), giving what
//     encoding/json gives and leaving to it whatever it does not take.
//   - version.go: system versions and the feature gates of docs/service.md,
//     Versions.
//
// A write the client cannot prove unsent or refused comes back as an
// *InDoubtError: the caller reconciles by reading, never by resending.
//
// It knows nothing about plans, sources or journals.
package odata
