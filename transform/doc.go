// Package transform turns source rows into records: it compiles every
// expression of a plan once (expr-lang), provides the function library of
// PLAN-FORMAT.md, builds lookups, groups and links rows, and converts every
// field to its Edm type. It does no I/O beyond reading sources through the
// opener it is given and the attachments file() documents.
package transform
