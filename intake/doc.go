// Package intake owns the intake workbook of migrate template: the
// workbook a customer fills in for one entity and the sub-forms asked for.
// Layout says what it holds (a sheet per level, a column per writable
// field, the columns that join a sub-form's sheet to its parent's), Write
// writes it with each header's note, the mandatory fields marked and the
// value lists a target gave, and Read reads the layout back from the
// workbook's hidden _migrate sheet, as a spreadsheet program saved it,
// for migrate init to write the plan that loads it.
//
// It does not connect: the target's codes are given to Write. It does not
// write plans either: the command line writes the plan from a Layout.
package intake
