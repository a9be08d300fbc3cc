package source

import "strconv"

// String gives the row's place: "parts.csv:42" or "customers.xlsx!Customers!17".
func (l Location) String() string {
	if l.Sheet != "" {
		if l.Line <= 0 {
			return l.File + "!" + l.Sheet
		}
		return l.File + "!" + l.Sheet + "!" + strconv.Itoa(l.Line)
	}
	if l.Line <= 0 {
		return l.File
	}
	return l.File + ":" + strconv.Itoa(l.Line)
}

// Cell gives the place of one cell of the row: "customers.xlsx!Customers!C17"
// for XLSX, where col is the 0-based column in the sheet (0 = A; see
// Header.Column), and the row's place "parts.csv:42" for CSV, whose editors
// know lines, not cells.
func (l Location) Cell(col int) string {
	if l.Sheet == "" || l.Line <= 0 || col < 0 {
		return l.String()
	}
	return l.File + "!" + l.Sheet + "!" + ColumnName(col) + strconv.Itoa(l.Line)
}

// CellRef gives the most precise place of the cell of column name: the cell
// for XLSX, the line for CSV, the row when the column is unknown.
func (r Row) CellRef(name string) string {
	if r.Header == nil {
		return r.Loc.String()
	}
	i, ok := r.Header.Index(name)
	if !ok {
		return r.Loc.String()
	}
	return r.Loc.Cell(r.Header.Column(i))
}

// ColumnName turns a 0-based column index into its spreadsheet letters:
// 0 → "A", 25 → "Z", 26 → "AA". A negative index gives "".
func ColumnName(col int) string {
	if col < 0 {
		return ""
	}
	var b [8]byte
	i := len(b)
	for n := col + 1; n > 0; n = (n - 1) / 26 {
		i--
		b[i] = byte('A' + (n-1)%26)
	}
	return string(b[i:])
}

// cellIndex parses the letters of a cell reference ("C17" → 2, 17).
// ok is false for anything that is not letters followed by digits.
func cellIndex(ref string) (col, row int, ok bool) {
	i := 0
	col = 0
	for i < len(ref) {
		c := ref[i]
		if c >= 'a' && c <= 'z' {
			c -= 'a' - 'A'
		}
		if c < 'A' || c > 'Z' {
			break
		}
		col = col*26 + int(c-'A'+1)
		if col > 1<<20 {
			return 0, 0, false
		}
		i++
	}
	if i == 0 {
		return 0, 0, false
	}
	if i == len(ref) {
		return col - 1, 0, true
	}
	r, err := strconv.Atoi(ref[i:])
	if err != nil || r <= 0 || ref[i] == '+' {
		return 0, 0, false
	}
	return col - 1, r, true
}
