// Package odatasource reads the rows of an entity of an OData service as a
// source: a company that holds the data a plan copies. It stands
// beside package source, which must not know about entities, and gives its
// rows through the same source.Reader, so a step, a sub-form or a lookup
// reads a service as it reads a file.
//
// Rows are read a page at a time, $top/$skip in the order of the key,
// at most odata.MaxPageSize a page (MAXAPILINES; the server gives no next
// link, so only a page shorter than asked ends the rows): memory is one
// page whatever the number of rows. Every row is checked against the
// filter, because a server ignores a filter it cannot apply
// (docs/servers.md, Reading) and a load would then copy rows nobody chose.
// Each row's location is CONNECTION:ENTITY(key), such as
// template:FAMILY_LOG('F01').
//
// Cells: strings as strings, numbers as source.Number (their digits as the
// server wrote them), dates as time.Time, booleans as bool, null as "" (a
// blank cell in every source), and an expanded sub-form as a list of its
// lines, each a map of the same kinds of values.
package odatasource
