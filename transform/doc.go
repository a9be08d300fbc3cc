// Package transform turns source rows into records: it compiles every
// expression of a plan once (expr-lang), provides the function library
// (docs/plan-format.md, Expressions), builds lookups, groups and links rows,
// and converts every field to its Edm type. It does no I/O beyond reading
// sources through the Opener it is given and the attachments file()
// documents.
//
// The flow:
//
//	prog, diags := transform.Compile(plan, md, transform.Options{...})
//	err := prog.BuildLookups(ctx, open)            // once, before any step
//	err = prog.Records(ctx, "customers", open, refs, func(r transform.Result) error {...})
//
// Compile reports expression syntax and type errors, bad constant regex
// patterns and computed fields, each at its plan position. The structural
// checks of a plan (unknown steps, sources, lookups, entities, fields,
// sub-forms, the names inside expressions, columns against the headers)
// belong to plan.Check, plan.CheckColumns and plan.CheckMetadata; Compile
// does not repeat them. Records checks the columns again against the header
// each source really has when it is opened.
//
// Scope of an expression: row (the current row; row.X is compiled into a
// variable of its own so that reading a cell costs no reflection), parent
// (parent.row, parent.fields, parent.parent in nested sub-forms), group
// (with group_by: the group's rows), ref(step, id), env(NAME) and the
// functions of library() in functions.go, each documented there with an
// example. A workbook's number cell is a source.Number (its exact text), so
// arithmetic and comparisons on it go through number(row.X) or int(row.X);
// number() results are exact decimals, and + - * and comparisons on them
// stay exact (decimal.go). Floats from arithmetic are written rounded to
// the 15 digits a float64 holds (0.1+0.2 is 0.3).
//
// Conversion (convert.go): Edm.String (MaxLength counted in characters),
// Edm.Int64, Edm.Decimal (text read with the source's decimal separator,
// number cells always with '.'), Edm.DateTimeOffset (in target.timezone; a
// typed date cell is wall-clock time in that zone) and Edm.Boolean. The
// empty rule (target.empty) decides whether an empty value is omitted,
// sent as null, or kept as "". A value that cannot be converted is a
// RowError naming the cell, field, value and type.
//
// Memory: Records holds one row at a time, except with group_by (every row
// of the step's source, since groups need not be consecutive) and for a
// linked sub-form (its source, indexed once per Records call). Past an
// eighth of Options.Memory those rows go to a temporary file and are read
// back group by group, or link value by link value (spill.go), with the
// same results. Lookup tables are held in memory, compactly (lookup.go).
//
// Value maps (valuemap.go, mapfile.go): map("NAME", value) parses as
// expr-lang's builtin map; a quoted first argument marks a value map and is
// compiled into a call of its own. A map written in the plan gives what it
// holds; a file map (units: {file: mapping.xlsx}) only what its mapping
// file confirms, read by LoadMapFiles when the plan is prepared. A value
// either lacks is the row's error at the cell of the column it maps.
//
// Concurrency: a Program may serve several Records calls at once (each has
// its own expression machine and environments) once BuildLookups returned.
package transform
