package source

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/migrate-tool/migrate/internal/didyoumean"
)

// xlsxReader streams the rows of one worksheet below its header row.
//
// Cells keep their type: text is string, numbers are Number with their
// stored digits (but a whole number formatted with leading zeros, such as
// "0000000000", is the string the sheet shows: number), cells formatted as
// a date or time are time.Time in UTC,
// booleans are bool. A cell the sheet leaves out (Excel stores no blank
// cell), a formatted cell without a value, and a cell past the end of a
// short row are "", as in CSV. A formula gives its cached value.
// A cell holding an error (#N/A, #DIV/0!) makes Next return a RowOnly
// *Error naming the cell, as does a value in a column without a header.
//
// Rows without any value are skipped, wherever they are, so the empty
// rows Excel leaves formatted below the data cost nothing but reading.
type xlsxReader struct {
	name, sheet string
	wb          *workbook
	part        io.ReadCloser
	s           *sheetStream
	header      *Header
	first       int // sheet column of the first header name
	hdrRow      int
	err         error
	closed      bool
}

func openXLSX(opts Options, files *Files) (Reader, error) {
	var wb *workbook
	var err error
	if files != nil {
		wb, err = files.workbook(opts.Path)
	} else {
		wb, err = openWorkbook(opts.Path)
	}
	if err != nil {
		if errors.Is(err, os.ErrNotExist) || errors.Is(err, os.ErrPermission) {
			return nil, openError(opts.Name, opts.Path, err)
		}
		var le limitError
		if errors.As(err, &le) {
			return nil, &Error{File: opts.Name, Err: err}
		}
		return nil, &Error{File: opts.Name, Err: fmt.Errorf("not a readable .xlsx workbook (%v): save it again from Excel as .xlsx; a password-protected workbook must be saved without the password", err)}
	}
	r, err := newXLSXReader(opts, wb)
	if err != nil {
		wb.close()
		return nil, err
	}
	return r, nil
}

func newXLSXReader(opts Options, wb *workbook) (*xlsxReader, error) {
	return newXLSXReaderWith(opts, wb, newSheetStream)
}

// newXLSXReaderWith reads the worksheet with the sheetStream stream makes:
// the byte scanner, or in tests the encoding/xml reference.
func newXLSXReaderWith(opts Options, wb *workbook, stream func(io.Reader, *sharedStrings, []bool, bool) *sheetStream) (*xlsxReader, error) {
	if len(wb.sheets) == 0 {
		return nil, &Error{File: opts.Name, Err: errNoSheets}
	}
	sh, ok := wb.sheet(opts.Sheet)
	if !ok {
		return nil, &Error{File: opts.Name, Err: unknownSheet(opts.Sheet, wb.sheetNames())}
	}
	r := &xlsxReader{name: opts.Name, sheet: sh.Name, wb: wb}
	fail := func(line int, err error) error {
		return &Error{File: opts.Name, Sheet: sh.Name, Line: line, Err: err}
	}
	if sh.target == "" || !wb.has(sh.target) {
		return nil, fail(0, errors.New("the workbook has no worksheet for this sheet (is it a chart sheet?): choose another sheet"))
	}
	headerRow := opts.HeaderRow
	if headerRow <= 0 {
		headerRow = 1
	}
	merges, err := r.mergesAt(sh.target, headerRow)
	if err != nil {
		return nil, fail(0, err)
	}
	part, err := wb.open(sh.target)
	if err != nil {
		return nil, fail(0, err)
	}
	r.part = part
	r.s = stream(part, wb.sst, wb.dateXf, wb.date1904)
	r.s.showXf = wb.showXf
	if err := r.readHeader(headerRow, merges); err != nil {
		part.Close()
		return nil, err
	}
	r.s.formatted = nil // the header's cells and those above it are no data
	return r, nil
}

// unknownSheet lists the sheets and suggests the closest name.
func unknownSheet(want string, have []string) error {
	quoted := make([]string, len(have))
	for i, h := range have {
		quoted[i] = strconv.Quote(h)
	}
	msg := fmt.Sprintf("the workbook has no sheet %q; it has %s", want, strings.Join(quoted, ", "))
	return errors.New(msg + didyoumean.Hint(strings.TrimSpace(want), have))
}

// merge is a merged range, 0-based columns and 1-based rows, inclusive.
type merge struct{ c1, r1, c2, r2 int }

// mergesAt returns the merged ranges that cross row. They are listed after
// the rows in the worksheet's XML, so the part is scanned for them as bytes
// first, without parsing the rows.
func (r *xlsxReader) mergesAt(part string, row int) ([]merge, error) {
	key := mergeKey{part, row}
	r.wb.mu.Lock()
	m, ok := r.wb.merges[key]
	r.wb.mu.Unlock()
	if ok {
		return m, nil
	}
	m, err := r.findMerges(part, row)
	if err == nil {
		r.wb.mu.Lock()
		if r.wb.merges == nil {
			r.wb.merges = make(map[mergeKey][]merge)
		}
		r.wb.merges[key] = m
		r.wb.mu.Unlock()
	}
	return m, err
}

// mergeKey is a sheet's part and its header row.
type mergeKey struct {
	part string
	row  int
}

func (r *xlsxReader) findMerges(part string, row int) ([]merge, error) {
	rc, err := r.wb.open(part)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	tail, err := findElement(rc, "mergeCells")
	if err != nil || tail == nil {
		return nil, err
	}
	d := xml.NewDecoder(tail)
	var out []merge
	for {
		tok, err := d.RawToken()
		if err != nil {
			return out, nil // what was read is all there is
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if t.Name.Local != "mergeCell" {
				continue
			}
			ref, _ := attr(t, "ref")
			from, to, ok := strings.Cut(ref, ":")
			if !ok {
				continue
			}
			c1, r1, ok1 := cellIndex(from)
			c2, r2, ok2 := cellIndex(to)
			if !ok1 || !ok2 || r1 == 0 || r2 == 0 || c2 < c1 || r2 < r1 {
				continue
			}
			if r1 <= row && row <= r2 {
				out = append(out, merge{c1, r1, c2, r2})
			}
		case xml.EndElement:
			if t.Name.Local == "mergeCells" {
				return out, nil
			}
		}
	}
}

// findElement reads rd up to the start tag <name or <prefix:name and
// returns a reader that begins with that tag, or nil when there is none.
func findElement(rd io.Reader, name string) (io.Reader, error) {
	// The whole part goes through here before the first row is read, so
	// it is read into one buffer with no copying but the last bytes of a
	// chunk, kept for a tag cut in two.
	const keep = 64
	needle := []byte(name)
	buf := make([]byte, 256<<10)
	have := 0
	for {
		// Matches starting before from were decided on the last round.
		from := max(0, have-keep)
		n, err := rd.Read(buf[have:])
		have += n
		chunk := buf[:have]
		for {
			i := bytes.Index(chunk[from:], needle)
			if i < 0 {
				break
			}
			i += from
			// Walk back over a namespace prefix to the '<'.
			j := i - 1
			if j >= 0 && chunk[j] == ':' {
				j--
				for j >= 0 && isNameByte(chunk[j]) {
					j--
				}
			}
			end := i + len(needle)
			if j >= 0 && chunk[j] == '<' && end < len(chunk) && (chunk[end] == '>' || chunk[end] == ' ' || chunk[end] == '\t' || chunk[end] == '\n' || chunk[end] == '\r') {
				return io.MultiReader(bytes.NewReader(append([]byte(nil), chunk[j:]...)), rd), nil
			}
			from = i + 1
		}
		if err == io.EOF {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		if have > keep && have > len(buf)-4096 {
			have = copy(buf, buf[have-keep:have])
		}
	}
}

func isNameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.'
}

// readHeader reads up to the header row. Rows above it are skipped but for
// the values of merged ranges that reach down into it.
func (r *xlsxReader) readHeader(headerRow int, merges []merge) error {
	origin := map[[2]int]Cell{} // (row, col) of a merge's top-left cell → its value
	for _, m := range merges {
		origin[[2]int{m.r1, m.c1}] = nil
	}
	fail := func(line int, err error) error {
		return &Error{File: r.name, Sheet: r.sheet, Line: line, Err: err}
	}
	var cells []rawCell
	for {
		n, cs, err := r.s.next()
		if err == io.EOF {
			if r.s.row == 0 {
				return fail(0, fmt.Errorf("%w: the sheet is empty", ErrNoHeader))
			}
			return fail(0, fmt.Errorf("%w: the sheet has no values in row %d or below; set header_row to the row that names the columns", ErrNoHeader, headerRow))
		}
		if err != nil {
			return fail(0, err)
		}
		for _, c := range cs {
			if _, ok := origin[[2]int{n, c.col}]; ok {
				origin[[2]int{n, c.col}] = c.val
			}
		}
		if n < headerRow {
			continue
		}
		if !hasValue(cs) {
			if n == headerRow {
				return fail(headerRow, fmt.Errorf("%w: row %d is empty: set header_row to the row that names the columns", ErrNoHeader, headerRow))
			}
			continue // an empty row below the header row: look for the first with values
		}
		if n > headerRow {
			return fail(headerRow, fmt.Errorf("%w: row %d is empty; the first row with values is %d: set header_row: %d", ErrNoHeader, headerRow, n, n))
		}
		cells = append([]rawCell(nil), cs...)
		break
	}
	// Lay the header out by column: cells first, then merged ranges.
	byCol := map[int]string{}
	for _, c := range cells {
		if c.err != nil {
			return &Error{File: r.name, Sheet: r.sheet, Line: headerRow, Cell: ColumnName(c.col) + strconv.Itoa(headerRow), Err: c.err}
		}
		if c.val != nil {
			byCol[c.col] = strings.TrimSpace(text(c.val))
		}
	}
	mergedFrom := map[int]int{} // column → first column of its merge
	for _, m := range merges {
		v := origin[[2]int{m.r1, m.c1}]
		for c := m.c1; c <= m.c2; c++ {
			if v != nil {
				byCol[c] = strings.TrimSpace(text(v))
			}
			mergedFrom[c] = m.c1
		}
	}
	lo, hi := -1, -1
	for c, v := range byCol {
		if v == "" {
			continue
		}
		if lo < 0 || c < lo {
			lo = c
		}
		if c > hi {
			hi = c
		}
	}
	if lo < 0 {
		return fail(headerRow, fmt.Errorf("%w: row %d is empty: set header_row to the row that names the columns", ErrNoHeader, headerRow))
	}
	if hi-lo >= 16384 {
		return fail(headerRow, errors.New("the header is wider than a sheet"))
	}
	names := make([]string, hi-lo+1)
	cols := make([]int, len(names))
	for i := range names {
		c := lo + i
		cols[i] = c
		names[i] = byCol[c]
		// A merged header names each column it spans: Amount, Amount_2, ...
		if f, ok := mergedFrom[c]; ok && c > f && names[i] != "" {
			names[i] += "_" + strconv.Itoa(c-f+1)
		}
	}
	if err := checkNames(names, cols); err != nil {
		return fail(headerRow, err)
	}
	h := NewHeader(names)
	h.Columns = cols
	r.header = h
	r.first = lo
	r.hdrRow = headerRow
	return nil
}

func hasValue(cs []rawCell) bool {
	for _, c := range cs {
		if c.err != nil {
			return true
		}
		if s, ok := c.val.(string); ok {
			if strings.TrimSpace(s) != "" {
				return true
			}
			continue
		}
		if c.val != nil {
			return true
		}
	}
	return false
}

// text is a header cell's value as a name.
func text(v Cell) string {
	switch v := v.(type) {
	case string:
		return v
	case Number:
		return string(v)
	case bool:
		if v {
			return "TRUE"
		}
		return "FALSE"
	case interface{ Format(string) string }:
		return v.Format("2006-01-02")
	}
	return fmt.Sprint(v)
}

func (r *xlsxReader) Header() *Header { return r.header }

func (r *xlsxReader) Next() (Row, error) {
	if r.closed {
		return Row{}, ErrClosed
	}
	if r.err != nil {
		return Row{}, r.err
	}
	for {
		n, cs, err := r.s.next()
		if err == io.EOF {
			r.err = io.EOF
			return Row{}, io.EOF
		}
		if err != nil {
			r.err = &Error{File: r.name, Sheet: r.sheet, Err: err}
			return Row{}, r.err
		}
		if !hasValue(cs) {
			continue
		}
		width := len(r.header.Names)
		row := Row{Loc: Location{File: r.name, Sheet: r.sheet, Line: n}, Header: r.header, Cells: blankCells(width)}
		var rowErr error
		var outside []string
		for _, c := range cs {
			i := c.col - r.first
			if i < 0 || i >= width {
				if c.err != nil || !emptyValue(c.val) {
					outside = append(outside, ColumnName(c.col)+strconv.Itoa(n))
				}
				continue
			}
			if c.err != nil {
				if rowErr == nil {
					rowErr = &Error{File: r.name, Sheet: r.sheet, Line: n, Cell: ColumnName(c.col) + strconv.Itoa(n), RowOnly: true, Err: c.err}
				}
				continue
			}
			row.Cells[i] = c.val
		}
		if rowErr == nil && len(outside) > 0 {
			sort.Strings(outside)
			rowErr = &Error{File: r.name, Sheet: r.sheet, Line: n, Cell: outside[0], RowOnly: true,
				Err: fmt.Errorf("%s: a value in a column without a header: name the column in row %d or clear the cell", strings.Join(outside, ", "), r.hdrRow)}
		}
		return row, rowErr
	}
}

func emptyValue(v Cell) bool {
	if v == nil {
		return true
	}
	s, ok := v.(string)
	return ok && strings.TrimSpace(s) == ""
}

func (r *xlsxReader) Close() error {
	if r.closed {
		return nil
	}
	r.closed = true
	r.keepFormatted()
	var err error
	if r.part != nil {
		err = r.part.Close()
	}
	if cerr := r.wb.close(); err == nil {
		err = cerr
	}
	return err
}
