package source

import (
	"errors"
	"time"
)

// Number is a numeric cell as stored in the workbook, exactly ("12.10",
// "1E-3" is normalised by the reader to plain digits). It is never a float64,
// so no digit is lost on the way to an Edm.Decimal.
type Number string

// Cell values are one of: string (CSV cells and XLSX text), Number, bool,
// or time.Time (XLSX date cells, in UTC wall-clock as the workbook shows
// them). A blank cell is "" in every source: an empty CSV field, a cell a
// workbook leaves out of its XML (spreadsheet programs store no blank
// cells), a formatted cell without a value, and the cells a row shorter
// than the header lacks. So `row.X != ""` means "has a value" whatever
// the file; readers never give nil.
type Cell = any

var _ = time.Time{}

// Location says where a row or cell stands in its file.
type Location struct {
	File  string // as the plan wrote it
	Sheet string // XLSX only
	Line  int    // CSV: the line on which the record starts (header is line 1); XLSX: the row number
}

// Options opens one source.
type Options struct {
	// Name is the file name as the plan wrote it, used in locations.
	Name string
	// Path is the file to open (Name resolved against the plan's folder).
	Path string
	// CSV
	Delimiter rune   // default ','
	Encoding  string // utf-8 (default), utf-16, windows-1255, windows-1252, iso-8859-8; a BOM wins
	// LazyQuotes accepts a quote inside an unquoted field (Hebrew
	// abbreviations such as מק"ט are written with one) and an undoubled
	// quote inside a quoted field. Off by default: a stray quote is an error.
	LazyQuotes bool
	// XLSX
	Sheet     string // default: the first sheet
	HeaderRow int    // default 1; rows above it are ignored
}

// Row is one data row. Cells[i] belongs to Header[i].
type Row struct {
	Loc    Location
	Header *Header
	Cells  []Cell
}

// Header is the column names of a source, shared by all its rows.
type Header struct {
	Names []string
	// Columns[i] is the 0-based column of Names[i] in the sheet (0 = A), so
	// a cell location names the column the user sees even when the header
	// does not start in column A. Nil means Columns[i] == i (CSV).
	Columns []int
	index   map[string]int
}

// Column returns the 0-based sheet column of header position i.
func (h *Header) Column(i int) int {
	if h != nil && i >= 0 && i < len(h.Columns) {
		return h.Columns[i]
	}
	return i
}

// ErrUnknownFormat is returned for a file that is neither CSV nor XLSX.
var ErrUnknownFormat = errors.New("unknown source format")

// Reader streams the rows of one source. Next returns io.EOF after the last
// row. Implementations hold at most one row in memory.
type Reader interface {
	Header() *Header
	Next() (Row, error)
	Close() error
}

// NewHeader indexes column names. Names must be unique and non-empty
// (readers report duplicates and blanks as errors before calling it).
func NewHeader(names []string) *Header {
	h := &Header{Names: names, index: make(map[string]int, len(names))}
	for i, n := range names {
		h.index[n] = i
	}
	return h
}

// Index returns the column position of name.
func (h *Header) Index(name string) (int, bool) {
	i, ok := h.index[name]
	return i, ok
}

// Get returns the cell of column name: "" when the row is shorter than
// the header, nil when the column does not exist.
func (r Row) Get(name string) Cell {
	if r.Header == nil {
		return nil
	}
	i, ok := r.Header.index[name]
	if !ok {
		return nil
	}
	if i >= len(r.Cells) {
		return ""
	}
	return r.Cells[i]
}

// blankCells returns n cells that are all "", a row before its values.
func blankCells(n int) []Cell {
	cells := make([]Cell, n)
	for i := range cells {
		cells[i] = ""
	}
	return cells
}
