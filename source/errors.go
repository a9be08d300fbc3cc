package source

import (
	"errors"
	"strconv"
)

var (
	// ErrNoHeader is returned by Open for a file (or sheet) without a header.
	ErrNoHeader = errors.New("no header row")
	// ErrClosed is returned by Next after Close.
	ErrClosed = errors.New("reader is closed")
)

// Error is a problem at a place in a source file. Error() begins with the
// place in the form editors parse: "parts.csv:42: ...",
// "customers.xlsx!Customers!C17: ..." or "customers.xlsx!Customers!17: ...";
// a CSV syntax error also gives the column: "parts.csv:42:7: ...".
type Error struct {
	File  string
	Line  int    // CSV line or XLSX row; 0 when the problem is about the whole file
	Col   int    // CSV only: 1-based byte in the (decoded) line, when known
	Sheet string // XLSX only
	Cell  string // XLSX cell reference ("C17"), when the problem is one cell
	// RowOnly says the problem concerns this row only: Next returned the row
	// as far as it could be read, and the next call to Next goes on with the
	// following row. Other errors are final: Next keeps returning them.
	RowOnly bool
	Err     error
}

func (e *Error) Error() string {
	return e.Where() + ": " + e.Err.Error()
}

// Where gives the place alone.
func (e *Error) Where() string {
	s := e.File
	switch {
	case e.Sheet != "" && e.Cell != "":
		s += "!" + e.Sheet + "!" + e.Cell
	case e.Sheet != "" && e.Line > 0:
		s += "!" + e.Sheet + "!" + strconv.Itoa(e.Line)
	case e.Sheet != "":
		s += "!" + e.Sheet
	case e.Line > 0:
		s += ":" + strconv.Itoa(e.Line)
		if e.Col > 0 {
			s += ":" + strconv.Itoa(e.Col)
		}
	}
	return s
}

func (e *Error) Unwrap() error { return e.Err }
