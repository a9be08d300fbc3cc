// Package diag is the one model of a problem the tool reports, whether it
// is in the plan (a YAML node) or in a row of data (a source cell), like
// Terraform's tfdiags: a severity, a one-line summary, a detail that says
// what to do, and the range of the file it is about. The plan, transform
// and executor packages build their problems into it in one place each;
// the command line renders it in one place, as text and as JSON.
//
// It lives under internal because it is the module's own vocabulary, not
// a stage of the data path (docs/design.md, The path of one row): it owns
// no step of it.
package diag
