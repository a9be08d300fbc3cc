package source

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// sheetStream reads a worksheet's rows one at a time from its XML, with
// each cell's type, style and value. It never looks at the declared
// dimension and allocates per cell present, not per column or row counted.
type sheetStream struct {
	in       *sheetInput
	d        *xml.Decoder // encoding/xml, while a row is read the reference way
	ref      bool         // read with encoding/xml only (the reference, in tests)
	err      error        // the first error, returned again by later calls
	vbuf     []byte       // the fast scanner's <v> text
	inl      []byte       // the fast scanner's inline string
	slowRuns int          // stretches read by encoding/xml (tests)
	sst      *sharedStrings
	sstErr   error // the shared strings could not be read: stops the sheet
	dateXf   []bool
	showXf   []numShow // by style: how its number format shows a number (nil: as stored)
	// formatted are the columns (by sheet column) whose number cells a
	// format shows otherwise than the digits the reader gives.
	formatted map[int]*formatNote
	date1904  bool
	row       int // number of the last row read
	cells     []rawCell
	buf       bytes.Buffer
	done      bool
}

// sharedString is the value of a cell that refers to shared string i
// (raw as the cell holds it, -1 when it is not a number).
func (s *sheetStream) sharedString(i int, raw string) (Cell, error) {
	v, err := s.sst.get(i)
	if err == nil {
		return v, nil
	}
	if err != errNoSharedString && s.sstErr == nil {
		s.sstErr = err
	}
	return nil, fmt.Errorf("refers to shared string %q, which the workbook does not have: the file is damaged; open and save it in Excel", raw)
}

// rawCell is one cell as stored: its column, and either a value or the
// problem that keeps it from having one.
type rawCell struct {
	col int
	val Cell
	err error
}

func newSheetStream(r io.Reader, sst *sharedStrings, dateXf []bool, date1904 bool) *sheetStream {
	return &sheetStream{in: newSheetInput(r), sst: sst, dateXf: dateXf, date1904: date1904}
}

// newReferenceSheetStream reads with encoding/xml token by token only, as
// the reader did before the byte scanner: the reference the scanner is
// compared with in tests.
func newReferenceSheetStream(r io.Reader, sst *sharedStrings, dateXf []bool, date1904 bool) *sheetStream {
	s := newSheetStream(r, sst, dateXf, date1904)
	s.ref = true
	s.d = xml.NewDecoder(s.in)
	s.d.Strict = true
	return s
}

// next returns the next <row> that exists in the XML, with its number and
// its non-empty cells (the slice is reused by the following call). io.EOF
// after the last row.
//
// Rows are read by the byte scanner (xlsx_scan.go). Whatever it does not
// handle itself (a comment, a processing instruction, CDATA, an unusual
// name or character, any error, the end of the input) makes it step back
// to where it started and read that stretch, up to the end of the next
// row, with encoding/xml exactly as before; then it carries on.
func (s *sheetStream) next() (int, []rawCell, error) {
	n, cells, err := s.nextRow()
	if s.sstErr != nil && s.err == nil {
		// A damaged or oversized table of shared strings is the workbook's
		// problem, not the row's.
		s.err = s.sstErr
	}
	if s.err != nil {
		return 0, nil, s.err
	}
	return n, cells, err
}

func (s *sheetStream) nextRow() (int, []rawCell, error) {
	if s.err != nil {
		return 0, nil, s.err
	}
	if s.done {
		return 0, nil, io.EOF
	}
	if s.ref {
		n, cells, err := s.slowNext()
		if err != nil && err != io.EOF {
			s.err = err
		}
		return n, cells, err
	}
	n, cells, st := s.fastNext()
	switch st {
	case scanRow:
		return n, cells, nil
	case scanEnd:
		s.done = true
		return 0, nil, io.EOF
	}
	s.in.pos = s.in.mark
	s.slowRuns++
	s.d = xml.NewDecoder(s.in)
	s.d.Strict = true
	n, cells, err := s.slowNext()
	s.d = nil
	if err != nil && err != io.EOF {
		s.err = err
	}
	return n, cells, err
}

// slowNext is next with encoding/xml, from the decoder's position.
func (s *sheetStream) slowNext() (int, []rawCell, error) {
	if s.done {
		return 0, nil, io.EOF
	}
	for {
		tok, err := s.d.RawToken()
		if err == io.EOF {
			s.done = true
			return 0, nil, io.EOF
		}
		if err != nil {
			return 0, nil, s.xmlError(err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if t.Name.Local == "row" {
				n := s.row + 1
				if v, ok := attr(t, "r"); ok {
					r, err := strconv.Atoi(v)
					if err != nil || r <= 0 || r > 1048576 {
						return 0, nil, fmt.Errorf("row %q: not a row number", v)
					}
					n = r
				}
				if n <= s.row {
					return 0, nil, fmt.Errorf("row %d comes after row %d: the worksheet is damaged; open and save it in Excel", n, s.row)
				}
				s.row = n
				if err := s.readCells(n); err != nil {
					return 0, nil, err
				}
				return n, s.cells, nil
			}
		case xml.EndElement:
			if t.Name.Local == "sheetData" {
				s.done = true
				return 0, nil, io.EOF
			}
		}
	}
}

func (s *sheetStream) xmlError(err error) error {
	var se *xml.SyntaxError
	if errors.As(err, &se) {
		return fmt.Errorf("the worksheet's XML is damaged after row %d (%s): open and save it in Excel", s.row, se.Msg)
	}
	return fmt.Errorf("reading the worksheet after row %d: %w", s.row, err)
}

func attr(t xml.StartElement, name string) (string, bool) {
	for _, a := range t.Attr {
		if a.Name.Local == name {
			return a.Value, true
		}
	}
	return "", false
}

// readCells reads the cells of row n up to </row>.
func (s *sheetStream) readCells(n int) error {
	s.cells = s.cells[:0]
	col := -1
	for {
		tok, err := s.d.RawToken()
		if err != nil {
			if err == io.EOF {
				return fmt.Errorf("the worksheet ends inside row %d: the file is truncated; save it again from Excel", n)
			}
			return s.xmlError(err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if t.Name.Local != "c" {
				continue
			}
			col++
			if ref, ok := attr(t, "r"); ok {
				c, r, ok := cellIndex(ref)
				if !ok || r != 0 && r != n || c >= 16384 {
					return fmt.Errorf("cell %q in row %d: not a cell of this row; the worksheet is damaged", ref, n)
				}
				col = c
			}
			if col >= 16384 {
				return fmt.Errorf("row %d has more than 16384 cells: the worksheet is damaged", n)
			}
			if err := s.readCell(t, col, n); err != nil {
				return err
			}
		case xml.EndElement:
			if t.Name.Local == "row" {
				return nil
			}
		}
	}
}

// cellTags follows the elements inside one <c> as they open and close:
// its value <v> (directly inside the cell), a formula, an inline string
// <is> and the <t> text of it that is not a phonetic run. readCell (from
// tokens) and scanCell (from bytes) share it.
type cellTags struct {
	depth                       int // elements open inside the cell
	skip                        int // phonetic runs open
	v, formula, hasV, inIS, inT bool
}

// open notes the start of element local.
func (c *cellTags) open(local string) {
	c.depth++
	switch local {
	case "v":
		if c.depth == 1 {
			c.hasV, c.v = true, true
		}
	case "f":
		c.formula = true
	case "is":
		c.inIS = true
	case "rPh", "phoneticPr":
		c.skip++
	case "t":
		c.inT = c.inIS && c.skip == 0
	}
}

// close notes the end of element local, below the cell itself.
func (c *cellTags) close(local string) {
	c.depth--
	switch local {
	case "v":
		c.v = false
	case "rPh", "phoneticPr":
		c.skip--
	case "t":
		c.inT = false
	}
}

// inValue: text here is the cell's value.
func (c *cellTags) inValue() bool { return c.v && c.depth == 1 }

// readCell reads one <c> element and appends it when it holds something.
func (s *sheetStream) readCell(start xml.StartElement, col, row int) error {
	typ, _ := attr(start, "t")
	style := 0
	if v, ok := attr(start, "s"); ok {
		style, _ = strconv.Atoi(v)
	}
	var (
		c      cellTags
		inline strings.Builder
	)
	s.buf.Reset()
	for {
		tok, err := s.d.RawToken()
		if err != nil {
			if err == io.EOF {
				return fmt.Errorf("the worksheet ends inside cell %s%d: the file is truncated; save it again from Excel", ColumnName(col), row)
			}
			return s.xmlError(err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			c.open(t.Name.Local)
		case xml.EndElement:
			if c.depth == 0 {
				if t.Name.Local == "c" {
					s.finish(col, row, typ, style, c.formula, c.hasV, c.inIS, inline.String())
					return nil
				}
				return fmt.Errorf("cell %s%d: unexpected </%s>; the worksheet is damaged", ColumnName(col), row, t.Name.Local)
			}
			c.close(t.Name.Local)
		case xml.CharData:
			if c.inValue() {
				s.buf.Write(t)
			} else if c.inT {
				inline.Write(t)
			}
		}
	}
}

// finish turns the stored parts of a cell into its value.
func (s *sheetStream) finish(col, row int, typ string, style int, formula, hasV, inIS bool, inline string) {
	raw := s.buf.String()
	add := func(v Cell, err error) {
		s.cells = append(s.cells, rawCell{col: col, val: v, err: err})
	}
	if typ == "inlineStr" || inIS && !hasV {
		if inIS {
			add(unescapeOOXML(inline), nil)
		}
		return
	}
	if !hasV {
		if formula {
			add(nil, errors.New("the formula has no saved value: open the workbook in Excel, let it calculate and save it"))
		}
		return // a formatted but empty cell
	}
	switch typ {
	case "s":
		i, err := strconv.Atoi(strings.TrimSpace(raw))
		if err != nil {
			i = -1
		}
		add(s.sharedString(i, raw))
	case "str":
		add(unescapeOOXML(raw), nil)
	case "b":
		switch strings.TrimSpace(raw) {
		case "1", "true", "TRUE":
			add(true, nil)
		case "0", "false", "FALSE":
			add(false, nil)
		default:
			add(nil, fmt.Errorf("%q is not a boolean", raw))
		}
	case "e":
		if formula {
			add(nil, fmt.Errorf("the formula's cached value is %s: correct the formula or replace it by a value", raw))
		} else {
			add(nil, fmt.Errorf("the cell holds the error %s: correct it", raw))
		}
	case "d":
		t, err := isoTime(raw)
		add(t, err)
	case "", "n":
		add(s.number(col, row, raw, style))
	default:
		add(nil, fmt.Errorf("unknown cell type %q", typ))
	}
}

// unescapeOOXML undoes the _xHHHH_ escapes OOXML uses for characters XML
// cannot carry (a carriage return is stored as _x000D_).
func unescapeOOXML(s string) string {
	if !strings.Contains(s, "_x") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		if i+7 <= len(s) && s[i] == '_' && s[i+1] == 'x' && s[i+6] == '_' {
			if n, err := strconv.ParseUint(s[i+2:i+6], 16, 16); err == nil {
				b.WriteRune(rune(n))
				i += 7
				continue
			}
		}
		b.WriteByte(s[i])
		i++
	}
	return b.String()
}

// number is a numeric cell's value: a time.Time when its style shows a
// date; the text the sheet shows when its style spells a whole number out
// digit by digit (a digit pattern: a phone's leading zero is kept, and the
// cell reads as text, as a CSV cell would); else its digits as a Number,
// noted (formatted) when the style shows them otherwise.
func (s *sheetStream) number(col, row int, raw string, style int) (Cell, error) {
	if style >= 0 && style < len(s.dateXf) && s.dateXf[style] {
		t, err := serialTime(raw, s.date1904)
		if err != nil {
			return nil, err
		}
		return t, nil
	}
	n, err := normaliseNumber(raw)
	if err != nil {
		return nil, err
	}
	if style < 0 || style >= len(s.showXf) || s.showXf[style].code == "" {
		return n, nil
	}
	show := s.showXf[style]
	if whole := strings.Trim(string(n), "0123456789") == ""; whole && show.digits {
		return n, nil
	} else if whole && show.pattern != nil {
		return showWhole(show.pattern, string(n)), nil
	}
	if s.formatted == nil {
		s.formatted = map[int]*formatNote{}
	}
	if f := s.formatted[col]; f != nil {
		f.cells++
	} else {
		s.formatted[col] = &formatNote{row: row, code: show.code, value: n, cells: 1}
	}
	return n, nil
}

// formatNote is the first cell of a column whose number a format shows
// otherwise than its digits, and how many such cells the column has.
type formatNote struct {
	row   int
	code  string
	value Number
	cells int
}
