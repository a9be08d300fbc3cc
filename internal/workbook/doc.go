// Package workbook is the one way a string reaches a workbook or a CSV file
// the tool writes (the failed rows, the created keys, a diff, what verify
// found, an export): the cell guard (a value a cell cannot hold whole is
// cut or cleaned, marked, listed on a sheet of its own and kept whole in a
// CSV beside the workbook), sheet names, the CSV writer with its BOM and
// the neutralising of cells a spreadsheet program would run as formulas.
package workbook
