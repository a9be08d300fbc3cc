// Package source streams rows from the files a customer hands over: CSV
// (delimiter, quoting, encodings, BOM) and XLSX (sheet, header row, typed
// cells). Every row carries its location (file:line, or file!Sheet!C17 for a
// cell) so an error can point at the place to correct. It knows nothing about
// entities, plans or the service.
//
// A service's entity read as a source (a template company) is
// package odatasource beside this one: same Reader, same Row, its
// locations CONNECTION:ENTITY(key).
//
// Open picks the reader by extension. Both readers hold one row at a time,
// so memory does not grow with the file; the header is read by Open.
//
// Rules both readers follow:
//   - Header names are trimmed; an empty or repeated name is an error that
//     names the columns. A file or sheet without a header is ErrNoHeader.
//   - Rows without any value (empty lines, lines of delimiters only, the
//     formatted empty rows Excel leaves) are skipped wherever they are.
//   - A blank cell is "" in every source: an empty CSV field, a cell the
//     workbook leaves out or stores without a value, and every cell a row
//     shorter than the header lacks. Readers never give nil. A value
//     beyond the last header column makes Next return the row with a
//     RowOnly *Error (empty extra fields, as "a,b,," exports, are ignored).
//   - Errors are *Error, whose text starts with the place. A RowOnly error
//     concerns one row and reading can go on; any other error is final and
//     Next returns it again.
//
// CSV cells are strings, "" included. The encoding is utf-8 unless told
// (utf-16, windows-1255, iso-8859-8, windows-1252, names matched without
// case, dashes or underscores); a byte-order mark overrides it. Invalid
// UTF-8 is an error naming the line and the encoding option, never replaced.
//
// XLSX cells keep the type the workbook gives them: text is string, numbers
// are Number with their stored digits (exponents written out), numbers whose
// format shows a date or time are time.Time in UTC (both date systems, and
// Excel's phantom 29 February 1900 is refused), booleans are bool, formulas
// give their cached value. Error values (#N/A, #DIV/0!) are RowOnly errors
// naming the cell, not values. A merged header cell names every column it
// spans, the second and later with a suffix: Amount, Amount_2, Amount_3;
// merged data cells are not filled in. The worksheet is read straight from
// the zip by a byte scanner for the XML worksheets are written in, which
// hands anything unusual, and every error, to encoding/xml (xlsx_scan.go):
// excelize's streaming Rows gives text only, without each cell's type and
// style. Shared strings are the one part
// held in memory, as the format requires.
package source
