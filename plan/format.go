package plan

import "strings"

//go:generate go run ./internal/formatgen

// The plan format, said once. Each block of a plan and every key in it is
// one row below, with its type, bounds, choices, default and meaning. The
// decoder takes each block's keys, choices and bounds from here;
// `go generate ./plan` writes docs/plan.schema.json (Schema) and the keys
// tables of docs/plan-format.md (KeysDoc) from it, and tests fail when
// either is stale. Adding a key is one row here, its case in the decoder's
// switch, and `go generate ./plan`.

// Block is one block of the plan: a mapping whose keys the decoder knows.
type Block struct {
	Name    string // the decoder's name: top, target, source, lookup, step, subform, link
	Heading string // its "###" heading in docs/plan-format.md
	Desc    string // the schema's description of the block
	Note    string // a paragraph the doc prints after the block's table
	Schema  string // JSON Schema keywords beyond properties, required and additionalProperties
	Keys    []Key
}

// Key is one key of a block: a row of the doc's table and a property of
// the schema.
type Key struct {
	Name     string
	Type     string // the doc's type column (Markdown); "" for a choice of Enum
	Default  string // the doc's default column
	Required bool   // the block needs it (the schema's required)
	Meaning  string // the doc's meaning column, and the schema's description
	Schema   string // the JSON Schema of the value, less what the fields below say
	Enum     []string
	Null     bool   // a YAML null is accepted beside Enum
	Min, Max int    // bounds of an integer, 0 for none
	Only     string // "csv", "xlsx" or "service": a source key for one kind of source
}

var format = []Block{
	{Name: "top", Heading: "Top level", Desc: "A declarative data migration into the ERP's OData service: where to write (target), what to read (sources, lookups) and how rows become records (steps). See docs/plan-format.md. Use in an editor with the line `# yaml-language-server: $schema=../docs/plan.schema.json` at the top of the plan.",
		Keys: []Key{
			{Name: "version", Type: "integer", Default: "required", Required: true, Schema: `{"const": 1}`,
				Meaning: "the plan format; must be `1`"},
			{Name: "name", Type: "string", Default: "none", Schema: `{"type": "string"}`,
				Meaning: "shown in output and recorded in the journal"},
			{Name: "target", Type: "mapping", Default: "none", Schema: `{"$ref": "#/$defs/target"}`,
				Meaning: "connection defaults (below); flags and environment override every one"},
			{Name: "connections", Type: "mapping of name to connection", Default: "none", Schema: `{"type": "object", "propertyNames": {"pattern": "^[A-Za-z][A-Za-z0-9_]*$"}, "additionalProperties": {"$ref": "#/$defs/connection"}}`,
				Meaning: "services the plan reads besides its target (a template company, a test company), by a name of letters, digits and `_` starting with a letter (see Connections and OData sources). An extension of the original format"},
			{Name: "sources", Type: "mapping of name to source", Default: "none", Schema: `{"type": "object", "propertyNames": {"pattern": "^[A-Za-z0-9_-]+$", "not": {"const": "group"}}, "additionalProperties": {"$ref": "#/$defs/source"}}`,
				Meaning: "the input files, by a name of letters, digits, `_` and `-` (not `group`)"},
			{Name: "lookups", Type: "mapping of name to lookup", Default: "none", Schema: `{"type": "object", "propertyNames": {"pattern": "^[A-Za-z0-9_-]+$"}, "additionalProperties": {"$ref": "#/$defs/lookup"}}`,
				Meaning: "in-memory maps built from a source, read with `lookup(\"name\", key)`"},
			{Name: "maps", Type: "mapping of name to value map", Default: "none", Schema: `{"type": "object", "propertyNames": {"pattern": "^[A-Za-z0-9_-]+$"}, "additionalProperties": {"anyOf": [{"$ref": "#/$defs/map"}, {"type": "object", "minProperties": 1, "additionalProperties": {"type": ["string", "number", "boolean"]}}]}}`,
				Meaning: "value maps written in the plan, source value to target value (`units: {\"יח'\": EA, kg: KG}`), or read from a mapping file (`units: {file: mapping.xlsx}`), read with `map(\"name\", value)`; a value a map lacks is a row error at its cell (see Value maps). An extension of the original format"},
			{Name: "steps", Type: "list of steps", Default: "required, at least one", Required: true, Schema: `{"type": "array", "minItems": 1, "items": {"$ref": "#/$defs/step"}}`,
				Meaning: "one entity loaded from one source per step; run in dependency order"},
			{Name: "tests", Type: "list of tests", Default: "none", Schema: `{"type": "array", "items": {"$ref": "#/$defs/test"}}`,
				Meaning: "plan tests that `migrate test` runs offline: rows given, records or row errors expected (see Plan tests); more may stand in `NAME_test.yaml` beside the plan. An extension of the original format"},
		}},
	{Name: "target", Heading: "target", Desc: "Connection defaults. Command-line flags and the environment (MIGRATE_TARGET, MIGRATE_AUTH, ...) override every one. Secrets never go in the plan.",
		Keys: []Key{
			{Name: "url", Type: "http(s) URL", Default: "none", Schema: `{"type": "string", "pattern": "^https?://"}`,
				Meaning: "the service root (`{base_url}` of the spec); `--target` and `MIGRATE_TARGET` override it; a user name and password in it are an error (never echoed): secrets never go in the plan"},
			{Name: "dialect", Default: "`priority`", Enum: []string{"priority", "odata"},
				Meaning: "the kind of service: `priority`, the ERP's own (its functions, version gates and URL segments); `odata`, any other service that speaks OData 4.0 as the standard says (SAP CAP, S/4HANA, Business Central, Dataverse): no system version, `language` and `companies` refused, Edm.Date and Edm.Guid written as the standard writes them, `If-Match` with the ETag last read (docs/other-services.md); `--dialect` and `MIGRATE_DIALECT` override it. An extension of the original format"},
			{Name: "language", Type: "integer ≥ 1", Default: "none", Schema: `{"type": "integer"}`, Min: 1,
				Meaning: "language code: the URL's `tabula.ini` segment becomes `tabula.ini,CODE`"},
			{Name: "metadata", Type: "path", Default: "none", Schema: `{"type": "string"}`,
				Meaning: "a saved `$metadata` (relative to the plan's folder, or absolute): `validate` and `plan` use it instead of the target's and work offline; `apply` checks against it too; `metadata pull` writes it"},
			{Name: "system_version", Type: "`\"MAJOR.MINOR\"`", Default: "reported by the server", Schema: `{"type": "string", "pattern": "^[0-9]+\\.[0-9]+"}`,
				Meaning: "the server's version where it cannot say (no version function before 22.0); features are gated and the default batch size chosen on it; a version the server reports that differs is an error; `--system-version` and `MIGRATE_SYSTEM_VERSION` override it (see The system version)"},
			{Name: "auth", Default: "inferred", Enum: []string{"basic", "pat", "oidc", "client_credentials"},
				Meaning: "how to log in; `--auth` and `MIGRATE_AUTH` override it; unset: a cached OIDC token, else OAuth2 client credentials when a token URL and `MIGRATE_CLIENT_SECRET` are set, else `MIGRATE_TOKEN`, else `MIGRATE_USER` (cli.md, Target and secrets)"},
			{Name: "token_url", Type: "http(s) URL", Default: "none", Schema: `{"type": "string", "pattern": "^https?://"}`,
				Meaning: "the token endpoint of `auth: client_credentials` (OAuth2 client credentials: S/4HANA, Business Central, Dataverse); `MIGRATE_TOKEN_URL` overrides it; its host must be the target's or approved like it (cli.md, Which hosts receive credentials). The client id and secret come from `MIGRATE_CLIENT_ID` and `MIGRATE_CLIENT_SECRET` only. An extension of the original format"},
			{Name: "scopes", Type: "list of scopes (or one text of them)", Default: "none", Schema: `{"type": ["array", "string"], "items": {"type": "string"}}`,
				Meaning: "the scopes the client credentials' token is asked for (`https://api.businesscentral.dynamics.com/.default`); `MIGRATE_SCOPES` overrides them. An extension of the original format"},
			{Name: "batch_size", Type: "integer 1–1000", Default: "the server's limit", Schema: `{"type": "integer"}`, Min: 1, Max: 1000,
				Meaning: "most sub-requests per `$batch`; the server's limit (100 from 21.0, 1000 before) still caps it, and `apply` cuts it further when a call takes more than half of the server's 3 minutes (docs/cli.md, `batches_shrank`)"},
			{Name: "concurrency", Type: "integer ≥ 1", Default: "2", Schema: `{"type": "integer"}`, Min: 1,
				Meaning: "batches in flight at once; also caps the client's calls in flight; `apply --concurrency` overrides it"},
			{Name: "calls_per_minute", Type: "integer ≥ 1", Default: "no limit", Schema: `{"type": "integer"}`, Min: 1,
				Meaning: "client-side rate limit: calls are spaced evenly to stay under it (hosted installations allow about 100 a minute per user). Every call of a run counts, the start-up calls (version, metadata) and every retry too, and a call also waits until a minute after the answer to the call `calls_per_minute` before it, so a slow first call never lets the server count one too many in a minute (no 429 at exactly the server's limit); `plan`'s time estimate assumes it, else 100"},
			{Name: "transactions_left", Type: "integer ≥ 0", Default: "no budget", Schema: `{"type": "integer"}`, Min: 0,
				Meaning: "the API transactions the installation's pool has left this month: `apply` predicts the load first (the dry run of the journal it resumes: each entity and each line counts one) and refuses, sending nothing, a load that needs more (exit 1, both numbers named); `apply --transactions-left` overrides it"},
			{Name: "max_same_errors", Type: "integer ≥ 1", Default: "20", Schema: `{"type": "integer", "default": 20}`, Min: 1,
				Meaning: "a step stops after this many records in a row fail with one and the same screen error (real servers answer a missing permission on a form with a 400 screen error per record, not a 403): `apply` exits 4, those records stay pending, and `apply` after the cause is fixed sends them (cli.md, On a real installation)"},
			{Name: "timezone", Type: "IANA zone name", Default: "`UTC`", Schema: `{"type": "string"}`,
				Meaning: "the offset given to dates and times that carry none (`Asia/Jerusalem`); `Local` is refused, so a plan means the same on every machine"},
			{Name: "decimal_separator", Type: "`\".\"` \\| `\",\"`", Default: "`\".\"`", Enum: []string{".", ","},
				Meaning: "how decimals are written in text cells; a source may override it; output is always written with `.`"},
			{Name: "empty", Default: "`omit`", Enum: []string{"omit", "null", "keep"}, Null: true,
				Meaning: "what an empty field value becomes: left out of the record, sent as null, or sent as `\"\"` (text fields only; other types are left out)"},
			{Name: "companies", Type: "list of names", Default: "the URL's own company", Schema: `{"oneOf": [{"type": "string", "pattern": "^[^/?#%, ]+$"}, {"type": "array", "items": {"type": "string", "pattern": "^[^/?#%, ]+$"}, "uniqueItems": true}]}`,
				Meaning: "the companies of the same installation `apply` loads, one load each, at once: each name replaces the last segment of the service root (`…/tabula.ini/demo` → `…/tabula.ini/test`). Each company has one journal: `PLAN.journal` for the URL's own company, `PLAN.COMPANY.journal` for another and all share one rate budget (`calls_per_minute`), as the server counts per user; `apply --company` overrides the list (cli.md, Several companies)"},
		}},
	{Name: "connection", Heading: "connections.NAME", Desc: "A service the plan reads: its address and how to log in; the secrets come from MIGRATE_<NAME>_TOKEN, MIGRATE_<NAME>_USER and MIGRATE_<NAME>_PASSWORD, or migrate login --connection NAME; never from the plan.",
		Keys: []Key{
			{Name: "url", Type: "http(s) URL", Default: "required", Required: true, Schema: `{"type": "string", "pattern": "^https?://"}`,
				Meaning: "the service root, as `target.url`; `MIGRATE_<NAME>_TARGET` overrides it; a user name and password in it are an error"},
			{Name: "auth", Default: "inferred", Enum: []string{"basic", "pat", "oidc", "client_credentials"},
				Meaning: "how to log in, as `target.auth`, from `MIGRATE_<NAME>_TOKEN`, `MIGRATE_<NAME>_USER` and `MIGRATE_<NAME>_PASSWORD`, the token of `migrate login --connection NAME`, or client credentials (`MIGRATE_<NAME>_CLIENT_ID`, `MIGRATE_<NAME>_CLIENT_SECRET`); `MIGRATE_<NAME>_AUTH` overrides it"},
			{Name: "token_url", Type: "http(s) URL", Default: "none", Schema: `{"type": "string", "pattern": "^https?://"}`,
				Meaning: "as `target.token_url`; `MIGRATE_<NAME>_TOKEN_URL` overrides it"},
			{Name: "scopes", Type: "list of scopes (or one text of them)", Default: "none", Schema: `{"type": ["array", "string"], "items": {"type": "string"}}`,
				Meaning: "as `target.scopes`; `MIGRATE_<NAME>_SCOPES` overrides them"},
			{Name: "dialect", Default: "the target's", Enum: []string{"priority", "odata"},
				Meaning: "the kind of service the connection is, as `target.dialect`: a copy from the ERP into another OData service (or back) reads one dialect and writes the other (docs/other-services.md). An extension of the original format"},
			{Name: "language", Type: "integer ≥ 1", Default: "none", Schema: `{"type": "integer"}`, Min: 1,
				Meaning: "language code, as `target.language`"},
		}},
	{Name: "source", Heading: "sources.NAME", Desc: "An input: a file (CSV keys: delimiter, encoding, lazy_quotes; XLSX keys: sheet, header_row), or an entity of a connection (connection, entity, select, expand, filter).",
		Note:   "A CSV-only key on a workbook, an XLSX-only key on a CSV file, a file key on a connection's source or a connection key on a file is an error.",
		Schema: `{"dependentRequired": {"connection": ["entity"], "entity": ["connection"], "select": ["connection"], "expand": ["connection"], "filter": ["connection"]}}`,
		Keys: []Key{
			{Name: "file", Type: "path", Default: "required unless `connection`", Schema: `{"type": "string", "minLength": 1}`,
				Meaning: "the CSV or XLSX file, relative to the plan's folder, or absolute; `.xlsx` and `.xlsm` are workbooks; `.csv`, `.txt` and `.tsv` are CSV (`.tsv` with a tab delimiter); an old `.xls` is refused (save it as `.xlsx`); write a Windows path in single quotes (`'C:\\data\\orders.csv'`) or with forward slashes: in double quotes YAML reads `\\t`, `\\n`, `\\f` as control characters, and a path holding one is refused at its line"},
			{Name: "delimiter", Type: "one character", Default: "`\",\"`", Schema: `{"type": "string"}`, Only: "csv",
				Meaning: "CSV only; `\"\\t\"` for tab; not `\"` or a line break"},
			{Name: "encoding", Type: "name", Default: "`utf-8`", Schema: encodingSchema(), Only: "csv",
				Meaning: "CSV only: `utf-8`, `utf-16` (`utf-16le`, `utf-16be`), `windows-1255` (`cp1255`), `windows-1252` (`cp1252`), `iso-8859-8` (`iso-8859-8-i`, `hebrew`) or `iso-8859-1` (`latin1`), in any case, with or without `-`, `_` or spaces (`UTF8`, `Windows_1255`); a byte order mark is honoured"},
			{Name: "lazy_quotes", Type: "boolean", Default: "`false`", Schema: `{"type": "boolean"}`, Only: "csv",
				Meaning: "CSV only: a quote inside a field that is not quoted is kept as text, as Hebrew exports write abbreviations (`מק\"ט`, `בע\"מ`); without it such a line is an error that names this key. An extension of the original format"},
			{Name: "decimal_separator", Type: "`\".\"` \\| `\",\"`", Default: "`target.decimal_separator`", Enum: []string{".", ","},
				Meaning: "overrides the target's for this source's text cells"},
			{Name: "sheet", Type: "string", Default: "the first sheet", Schema: `{"type": ["string", "number"]}`, Only: "xlsx",
				Meaning: "XLSX only: the sheet to read"},
			{Name: "header_row", Type: "integer ≥ 1", Default: "1", Schema: `{"type": "integer"}`, Min: 1, Only: "xlsx",
				Meaning: "XLSX only: the row that holds the column names; rows above it are ignored (a CSV's header is always its first line)"},
			{Name: "connection", Type: "connection name", Default: "none", Schema: `{"type": "string"}`,
				Meaning: "instead of a file: the source reads `entity` of this connection (see Connections and OData sources). An extension of the original format"},
			{Name: "entity", Type: "entity set", Default: "required with `connection`", Schema: `{"type": "string"}`,
				Meaning: "the entity read: its rows, in the order of its key"},
			{Name: "select", Type: "list of field names (or one name)", Default: "every field", Schema: `{"type": ["array", "string"], "items": {"type": "string"}}`, Only: "service",
				Meaning: "with `connection`: the fields read, which are the source's columns"},
			{Name: "expand", Type: "list of sub-form names (or one name)", Default: "none", Schema: `{"type": ["array", "string"], "items": {"type": "string"}}`, Only: "service",
				Meaning: "with `connection`: sub-forms read with each row; each is a column holding the list of its lines (see `each`)"},
			{Name: "filter", Type: "OData `$filter`", Default: "all rows", Schema: `{"type": "string"}`, Only: "service",
				Meaning: "with `connection`: which rows are read (`\"FAMILYNAME ge 'F'\"`); every row is checked against it; of a connection of dialect `odata`, an Edm.Guid or Edm.Date value may be written quoted or bare, and is sent bare as the standard writes it (`ID eq 3a943e5e-…`, `CURDATE ge 2026-11-05`; docs/other-services.md)"},
		}},
	{Name: "lookup", Heading: "lookups.NAME", Desc: "A map from key to value built from a source's rows, or (entity) from the target's rows, read once per run.",
		Schema: `{"oneOf": [{"required": ["source"]}, {"required": ["entity"]}]}`,
		Keys: []Key{
			{Name: "source", Type: "source name", Default: "required unless `entity`", Schema: `{"type": "string"}`,
				Meaning: "the source the map is built from, read once before the first step"},
			{Name: "entity", Type: "entity set", Default: "none", Schema: `{"type": "string", "minLength": 1}`,
				Meaning: "instead of a source: the map is built from the target's rows of this entity set, read once per run (see Target lookups). An extension of the original format"},
			{Name: "key", Type: "expr; with `entity` a field name", Default: "required", Required: true, Schema: `{"$ref": "#/$defs/value"}`,
				Meaning: "the map's key, over the lookup source's `row`; with `entity`, the field whose value is the key"},
			{Name: "value", Type: "expr; with `entity` a field name", Default: "required", Required: true, Schema: `{"$ref": "#/$defs/value"}`,
				Meaning: "the map's value, over the same `row`; with `entity`, the field whose value is the value"},
			{Name: "filter", Type: "OData `$filter`", Default: "all rows", Schema: `{"type": "string"}`,
				Meaning: "with `entity` only: which of its rows build the map (`\"AGENTCODE eq '017'\"`; `eq ne gt ge lt le`, `and`, `or`, parentheses)"},
			{Name: "missing", Default: "`error`", Enum: []string{"error", "empty", "keep"},
				Meaning: "a key not in the map: a row error, `\"\"`, or the key itself"},
		}},
	{Name: "map", Heading: "maps.NAME with a file", Desc: "A value map read from a mapping file (columns map, source, count, cells, target, confirmed) that migrate mapping writes and a person confirms.",
		Note: "A map whose keys are `file` and perhaps `target` is read from that file; any other mapping is the map itself, source value to target value.",
		Keys: []Key{
			{Name: "file", Type: "path", Default: "required", Required: true, Schema: `{"type": "string", "pattern": "\\.(csv|xlsx)$"}`,
				Meaning: "the mapping file, `.csv` or `.xlsx`, relative to the plan's folder, or absolute: its rows whose `map` is this map's name give each `source` value its `target`, used once `confirmed` says yes (see Value maps)"},
			{Name: "target", Type: "`{entity: SET, key: FIELD}`", Default: "none", Schema: `{"type": "object", "required": ["entity", "key"], "additionalProperties": false, "properties": {"entity": {"type": "string", "minLength": 1}, "key": {"type": "string", "minLength": 1}}}`,
				Meaning: "the target's codes the map's values become (`{entity: FAMILY_LOG, key: FAMILYNAME}`): with a target, `migrate mapping` proposes for each value the nearest of them; `validate` checks both names against the metadata"},
		}},
	{Name: "step", Heading: "steps[]", Desc: "Loads one entity from one source.",
		Keys: []Key{
			{Name: "name", Type: "string", Default: "required", Required: true, Schema: `{"type": "string", "pattern": "^[A-Za-z0-9_-]+$"}`,
				Meaning: "unique; letters, digits, `_` and `-`; names the step in output, the journal, `after` and `ref()`"},
			{Name: "entity", Type: "string", Default: "required", Required: true, Schema: `{"type": "string", "minLength": 1}`,
				Meaning: "the entity set the step loads (`CUSTOMERS`)"},
			{Name: "source", Type: "source name", Default: "required", Required: true, Schema: `{"type": "string"}`,
				Meaning: "one record per row of this source (per group with `group_by`)"},
			{Name: "after", Type: "list of step names (or one name)", Default: "none", Schema: `{"anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "string"}]}`,
				Meaning: "steps that must finish first; a `ref()` to another step implies it too; a cycle is an error"},
			{Name: "when", Type: "expr", Default: "every row", Schema: `{"$ref": "#/$defs/condition"}`,
				Meaning: "rows for which it is false are skipped and counted"},
			{Name: "mode", Default: "`insert`", Enum: []string{"insert", "upsert", "update"},
				Meaning: "`insert` creates; `upsert` reads the record by its key (many records per read: one `$filter` of up to 40 keys with only the fields the step writes, 100 such reads a call, so 2,000 records cost at most one call), creates it when absent and otherwise sends only the fields that changed (journaled, so `undo` restores them), and a text sub-form only when the record does not hold that text already (an appended text, `APPEND: true`, whose content is already in the record's text, or a replacing one equal to it, compared on content: markup stripped, whitespace collapsed), so running the plan again does not double its texts; `update` does the same but fails a record that does not exist. Lines with `lines: append` are added to a record that exists unless it holds them already: a line whose every field written has the same value in one of the record's lines is not sent again (each line the record holds stands for one line of the plan, so two equal lines of the plan need two), so a re-run appends only the new lines, and `diff` lists each line it will append; `lines: replace` deletes the record's lines and writes the plan's"},
			{Name: "id", Type: "expr", Default: "entity key values, else the source location", Schema: `{"$ref": "#/$defs/value"}`,
				Meaning: "the record's identity in the journal (and for `ref()`). Without it, a step whose key the server assigns (orders) names each record by its row (`orders.csv:7`): a row deleted or inserted before a resume would shift the later ones, so `apply` refuses such a resume (cli.md, \"Resume and work in doubt\"); an `id` that names each record by its data (`row.OrderNo`) lets rows move"},
			{Name: "group_by", Type: "expr", Default: "none", Schema: `{"$ref": "#/$defs/value"}`,
				Meaning: "one record per distinct value; `row` is the group's first row, `group` all its rows; sub-forms may take `source: group`. The rows of a group need not stand together; sorted input is faster for a large source (past `--memory`'s share the rows go to a temporary file, docs/cli.md)"},
			{Name: "match", Type: "list of field names (or one name)", Default: "every field the step writes", Schema: `{"oneOf": [{"type": "string", "minLength": 1}, {"type": "array", "items": {"type": "string", "minLength": 1}}]}`,
				Meaning: "the fields that identify a document whose key the server assigns (an order numbered `SO…`): when a create goes in doubt (the connection dropped), the next `apply` looks the document up by these fields, among documents created after the step began, and tells look-alikes apart by their lines. Each must be a field the step writes, and one the API user may read: a field the target leaves out of its read answers (field-level permissions, 22.1 on) is never matched on, so a `match` naming one leaves such a document in doubt with a line naming the field (without `match`, it is left out of the fields written, with a warning); so is a field the server was seen to fill in place of the value sent (a name it fills from a reference), and a document that matches every field but one is left in doubt for `resolve`, never taken for one not made. `validate` warns about a step that creates server-numbered documents with neither `match` nor `id`. An extension of the original format"},
			{Name: "deep_insert", Type: "boolean", Default: "`true`", Schema: `{"type": "boolean"}`,
				Meaning: "send a created record's sub-form lines (and their texts) inside its POST (deep insert, docs/service.md): one sub-request per document instead of one per line, so a call carries up to 100 documents with all their lines (the server's limit counts sub-requests; API transactions still count each entity and each line). The server rolls nothing back: when a deep insert fails, `apply` reads back what the server kept of that document (by its key, or, numbered by the server, by `match` among the documents made since the step began that no record holds) and sends only the missing lines, each as a sub-request of its own, so the error names the line's source cell and nothing the server holds is sent twice. That read is made at once, while other batches of the step are in flight, when none of their documents looks like this one (the same values of the step's `match:` fields, else of every field written; text compared without case, any date taken for any other): so one bad line never stops a load whose documents tell each other apart. If that cannot be told (a look-alike document in flight, or two found), the record is in doubt and the next `apply` reconciles it. A document that exists (`upsert`, `update`, `lines: replace`) is never deep-inserted: its lines go one by one as before. Before 21.1 the server's answer holds no lines (docs/service.md, Deep insert), so `report --created` lists no line keys (KLINE) of a deep insert there. `false`: every line is its own sub-request. An extension of the original format, whose default was `false` (see below)"},
			{Name: "fields", Type: "mapping of field to expr", Default: "required unless the step has sub-forms", Schema: `{"$ref": "#/$defs/fields"}`,
				Meaning: "the entity's fields and how each is built"},
			{Name: "subforms", Type: "list of sub-forms", Default: "none", Schema: `{"type": "array", "items": {"$ref": "#/$defs/subform"}}`,
				Meaning: "the entity's sub-forms (next table)"},
			{Name: "exists", Type: "mapping of field to entity", Default: "none", Schema: `{"$ref": "#/$defs/exists"}`,
				Meaning: "reference checks, `exists: {CUSTNAME: CUSTOMERS}`: every value the step gives the field must be a key of the entity on the target, or be created by an earlier step of the plan (see Reference checks). An extension of the original format"},
			{Name: "totals", Type: "mapping of name to total", Default: "none", Schema: `{"type": "object", "propertyNames": {"minLength": 1}, "additionalProperties": {"type": "string", "pattern": "^\\s*(count|sum)\\s*\\("}}`,
				Meaning: "the customer's control totals of the step, by a name of their own: `count()` (the records), `count(NAV)` (the lines of a sub-form), `sum(FIELD)` or `sum(NAV.FIELD)` (a number field the step writes), each perhaps `by FIELD` or `by NAV.FIELD` (one total per value: a sum per currency). `migrate verify` shows each from the source rows, from what the run sent and from what the target holds, and fails on a difference (see Totals). An extension of the original format"},
		}},
	{Name: "subform", Heading: "subforms[]", Desc: "Feeds a navigation property of its parent. Without source: one child from the parent's row (the only choice for a single-object sub-form); source: NAME with link: the rows of that source that match the parent; source: group: one line per row of the parent's group.",
		Keys: []Key{
			{Name: "name", Type: "string", Default: "required", Required: true, Schema: `{"type": "string", "minLength": 1}`,
				Meaning: "a navigation property of the parent (`ORDERITEMS_SUBFORM`); at most one entry per name"},
			{Name: "source", Type: "source name \\| `group`", Default: "none", Schema: `{"type": ["string", "null"]}`,
				Meaning: "where the children come from (see Sub-forms); none: one child from the parent's own row"},
			{Name: "link", Type: "mapping", Default: "required with a source name", Schema: `{"$ref": "#/$defs/link"}`,
				Meaning: "joins the source's rows to the parent's (next table); not with `source: group` or without a source"},
			{Name: "each", Type: "expr", Default: "none", Schema: `{"$ref": "#/$defs/value"}`,
				Meaning: "an expression that gives a list: one child per element, the element as the child's `row` (`row.FAMILY_LOGPART_SUBFORM`, an expanded sub-form of an OData source; `split(row.Tags, \";\")`); not with `source` or `link`. An extension of the original format"},
			{Name: "when", Type: "expr", Default: "always", Schema: `{"$ref": "#/$defs/condition"}`,
				Meaning: "no child for a row where it is false"},
			{Name: "lines", Default: "`append`", Enum: []string{"append", "replace"},
				Meaning: "`replace` deletes the parent's existing lines of this sub-form first; `append` adds the lines a parent that exists does not hold already (upsert, update: see `mode`)"},
			{Name: "fields", Type: "mapping of field to expr", Default: "required unless it has sub-forms", Schema: `{"$ref": "#/$defs/fields"}`,
				Meaning: "the child's fields"},
			{Name: "subforms", Type: "list of sub-forms", Default: "none", Schema: `{"type": "array", "items": {"$ref": "#/$defs/subform"}}`,
				Meaning: "nested sub-forms, to any depth"},
			{Name: "exists", Type: "mapping of field to entity", Default: "none", Schema: `{"$ref": "#/$defs/exists"}`,
				Meaning: "reference checks of the children's fields, as on a step: `exists: {PARTNAME: LOGPART}`"},
		}},
	{Name: "link", Heading: "link", Desc: "Joins a sub-form's source to its parent: the child rows whose child value equals the parent row's parent value.",
		Keys: []Key{
			{Name: "parent", Type: "expr", Default: "required", Required: true, Schema: `{"$ref": "#/$defs/value"}`,
				Meaning: "the value on the parent's row (`row.Code`)"},
			{Name: "child", Type: "expr", Default: "required", Required: true, Schema: `{"$ref": "#/$defs/value"}`,
				Meaning: "the value on the sub-form source's row (`row.CustCode`); rows whose value equals the parent's become its children, in source order"},
		}},
	{Name: "test", Heading: "tests[]", Desc: "A plan test: rows given to a step's sources, and the records or row errors the step must build from them (migrate test).",
		Keys: []Key{
			{Name: "name", Type: "string", Default: "required", Required: true, Schema: `{"type": "string", "minLength": 1}`,
				Meaning: "unique among the plan's tests; names the test in `migrate test`'s output"},
			{Name: "step", Type: "step name", Default: "required", Required: true, Schema: `{"type": "string", "minLength": 1}`,
				Meaning: "the step whose records are built"},
			{Name: "given", Type: "mapping of source name to a list of rows", Default: "every source empty", Schema: `{"type": "object", "additionalProperties": {"type": "array", "items": {"type": "object", "additionalProperties": {"type": ["string", "number", "boolean", "null"]}}}}`,
				Meaning: "the rows of each source, each a mapping of column to value (`orders: [{Order: SO1, Part: P1}]`), read as a CSV file's text cells; a source not given has no rows, a column not given is blank. A lookup that reads the target is given by its name, rows of its key and value fields"},
			{Name: "expect", Type: "list of records", Default: "records not checked", Schema: `{"type": "array", "items": {"$ref": "#/$defs/test_record"}}`,
				Meaning: "the records the step builds, in order: `fields: {FIELD: value}` and, per sub-form, `NAV: [{FIELD: value}, ...]` (a line's own sub-forms likewise, by name); values are compared by the field's type, as `verify` compares"},
			{Name: "errors", Type: "list of row errors", Default: "none expected", Schema: `{"type": "array", "items": {"$ref": "#/$defs/test_error"}}`,
				Meaning: "the row errors the step gives (next table); any other row error fails the test"},
			{Name: "exact", Type: "boolean", Default: "`false`", Schema: `{"type": "boolean"}`,
				Meaning: "compare every field of each record and line, not only those `expect` names: a field built but not expected fails the test"},
		}},
	{Name: "test_error", Heading: "tests[].errors[]", Desc: "A row error a plan test expects.",
		Keys: []Key{
			{Name: "row", Type: "integer ≥ 1", Default: "required", Required: true, Schema: `{"type": "integer"}`, Min: 1,
				Meaning: "the given row it is about, counted from 1 among the rows given to its source (the step's, or a linked sub-form's)"},
			{Name: "field", Type: "field name", Default: "any", Schema: `{"type": "string"}`,
				Meaning: "the field it is about"},
			{Name: "message", Type: "string", Default: "any", Schema: `{"type": "string"}`,
				Meaning: "text the error's message holds"},
		}},
}

// blockOf is the block of that name; the names are the table's own.
func blockOf(name string) *Block {
	for i := range format {
		if format[i].Name == name {
			return &format[i]
		}
	}
	panic("plan: no block " + name + " in the format table")
}

// keysWhere lists the names of a block's keys that keep holds for (nil:
// all), in the table's order.
func keysWhere(block string, keep func(Key) bool) []string {
	var out []string
	for _, k := range blockOf(block).Keys {
		if keep == nil || keep(k) {
			out = append(out, k.Name)
		}
	}
	return out
}

func keyNames(block string) []string { return keysWhere(block, nil) }

func requiredKeys(block string) []string {
	return keysWhere(block, func(k Key) bool { return k.Required })
}

// onlyFor lists the source keys for one kind of file ("csv" or "xlsx").
func onlyFor(kind string) []string {
	return keysWhere("source", func(k Key) bool { return k.Only == kind })
}

// typeText is a key's type column: its own, or its choices.
func (k Key) typeText() string {
	if k.Type != "" || k.Enum == nil {
		return k.Type
	}
	return "`" + strings.Join(k.Enum, "` \\| `") + "`"
}

// formatKey is a key of a block.
func formatKey(block, name string) *Key {
	b := blockOf(block)
	for i := range b.Keys {
		if b.Keys[i].Name == name {
			return &b.Keys[i]
		}
	}
	panic("plan: no key " + name + " in block " + block + " of the format table")
}
