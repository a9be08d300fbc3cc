// Package plan owns the YAML plan (docs/plan-format.md): strict
// decoding through yaml.Node with file:line:col on every problem, static
// checks, checks against the service's metadata, and the dependency order of
// steps. It reads no source rows and talks no HTTP.
//
// Load and Decode turn a file into a *Plan and Diagnostics (every problem,
// sorted by position, each a sentence for a person: `plan.yaml:7:5: unknown
// key "sorce" in step "parts"; did you mean "source"?`). They run Check, the
// checks that need nothing but the plan: names, references, cycles, the
// syntax of every expression (parsed with expr-lang's parser, positions
// mapped into the file character by character), every name in it (the
// variables of its scope, the functions of Functions and expr-lang's
// builtins), ref() and lookup() targets. CheckMetadata adds the
// checks against an *odata.Metadata for one system version: entities, fields
// and sub-forms at every depth, keys, mandatory fields, constants that cannot
// fit, and the version gates of docs/service.md, Versions. Order gives the
// steps in waves that may run concurrently; Columns lists the source columns
// expressions read, and CheckColumns checks them against the headers a caller
// read.
//
// The format is said once, in format.go: every block and key with its
// type, choices, bounds, default and meaning. The decoder takes its keys,
// choices and bounds from that table; `go generate ./plan` writes the JSON
// schema docs/plan.schema.json (for editors) and the keys tables of
// docs/plan-format.md from it, and tests fail when either is stale. Adding
// a key is a one-row change there, plus its case in the decoder's switch
// (what the value means) and `go generate ./plan`. Encoding names and what
// counts as a workbook come from the source package.
//
// Diagnostic.Diag gives a problem in the model every command renders
// (internal/diag): its range is the span of the YAML node it is about, which
// ranges.go measures from the text, since yaml.v3 says only where a node starts.
//
// Compiling expressions against the function library is the transform
// package's job; plan parses them and knows the library's names only.
package plan
