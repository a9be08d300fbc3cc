// Package profile looks at a plan's sources before a load (migrate profile):
// per column the rows, blanks, distinct and most frequent values, lengths
// against the MaxLength of the field the plan writes, numbers stored as
// text and text in number columns, the date layouts seen, values with
// leading or trailing spaces, duplicate keys (also those that differ only
// in case), and values missing from the source or the company they refer
// to. Every finding names its cells.
//
// It reads each source once, a row at a time. What it keeps grows with the
// distinct values, not the rows, and is capped: past MaxDistinct values of
// a column the count of distinct values is estimated (HyperLogLog, about
// 2 % off) and the most frequent values counted among the first ones only,
// and the column says it is approximate. Duplicates and missing references
// are never guessed: a key column keeps each distinct key (two 8-byte
// hashes, its line and, for the case check, its text), a column other
// sources refer to two hashes and a line per value. The sources referred
// to are read first, so a referring column keeps only its missing values
// (up to MaxDistinct, and says when there were more).
//
// It does not write, and knows the plan only through what
// executor.Prepared and transform.Program say about it (plan.go); the
// command line renders its Result as text, JSON or a page (html.go).
package profile
