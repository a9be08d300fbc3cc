package source

import (
	"errors"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The byte scanner reads the rows of a worksheet straight from the
// inflated bytes, without building encoding/xml tokens: half the CPU of a
// dry run over a workbook went to encoding/xml's generic tokeniser.
//
// It understands only the well-formed subset worksheets are written in:
// start and end tags with plain ASCII names (an optional prefix, <x:c>),
// double- or single-quoted attribute values of printable ASCII without
// entities, and text with the five named entities and numeric character
// references. Anything else, and every error, sends the stretch it was
// reading (from the start of the row, or of the token between rows) to
// encoding/xml, so output and errors are those of encoding/xml by
// construction. FuzzSheetScanner and TestSheetScannerAgainstXML compare
// the two on random and mutated sheets.

// maxScanBytes is the most the scanner buffers for one row; a longer row
// is read by encoding/xml, which needs no more than a token at a time.
const maxScanBytes = 8 << 20

// sheetInput buffers the worksheet's bytes for both the scanner (which
// reads buf directly and may go back to mark) and encoding/xml (through
// ReadByte, from pos).
type sheetInput struct {
	r    io.Reader
	buf  []byte // buf[:len(buf)] holds data read and not yet dropped
	pos  int    // the next byte to read
	mark int    // the scanner's restart point: bytes from here are kept
	err  error  // the reader's error, once it has returned one
}

func newSheetInput(r io.Reader) *sheetInput {
	return &sheetInput{r: r, buf: make([]byte, 0, 64<<10)}
}

// ReadByte serves encoding/xml, which then does no buffering of its own.
func (in *sheetInput) ReadByte() (byte, error) {
	if in.pos >= len(in.buf) {
		in.mark = in.pos
		if !in.fill() {
			return 0, in.err
		}
	}
	b := in.buf[in.pos]
	in.pos++
	return b, nil
}

// Read makes sheetInput an io.Reader; encoding/xml reads with ReadByte.
func (in *sheetInput) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if in.pos >= len(in.buf) {
		in.mark = in.pos
		if !in.fill() {
			return 0, in.err
		}
	}
	n := copy(p, in.buf[in.pos:])
	in.pos += n
	return n, nil
}

// fill drops the bytes before mark and reads more. It reports whether
// there are new bytes; when not, the reader's error is in err, or the row
// has outgrown maxScanBytes.
func (in *sheetInput) fill() bool {
	if in.err != nil {
		return false
	}
	if in.mark > 0 {
		n := copy(in.buf, in.buf[in.mark:])
		in.buf = in.buf[:n]
		in.pos -= in.mark
		in.mark = 0
	}
	if len(in.buf) == cap(in.buf) {
		if 2*cap(in.buf) > maxScanBytes {
			return false
		}
		nb := make([]byte, len(in.buf), 2*cap(in.buf))
		copy(nb, in.buf)
		in.buf = nb
	}
	// Read until the buffer is full, so that a reader giving a few bytes
	// at a time does not make the scanner start its row over for each.
	got := false
	for zero := 0; len(in.buf) < cap(in.buf); {
		n, err := in.r.Read(in.buf[len(in.buf):cap(in.buf)])
		in.buf = in.buf[:len(in.buf)+n]
		if n > 0 {
			got, zero = true, 0
		} else if zero++; zero == 100 && err == nil {
			err = io.ErrNoProgress
		}
		if err != nil {
			in.err = err
			return got
		}
	}
	return got
}

// scanStatus is how the scanner ended.
type scanStatus int

const (
	scanRow  scanStatus = iota // a row was read
	scanEnd                    // </sheetData>: no more rows
	scanMore                   // the input ends inside the token: fill and retry
	scanSlow                   // leave it to encoding/xml
)

// tag is a start or end tag as the scanner sees it.
type tag struct {
	end, empty bool // </name>; <name/>
	local      []byte
	r, t, s    []byte // the first r, t and s attributes (any prefix)
	hasR, hasT bool
	hasS       bool
}

// fastNext reads up to the end of the next row, or to </sheetData>.
func (s *sheetStream) fastNext() (int, []rawCell, scanStatus) {
	in := s.in
	for {
		in.mark = in.pos
		n, st := s.scanToRow()
		if st == scanMore {
			in.pos = in.mark
			if !in.fill() {
				return 0, nil, scanSlow
			}
			continue
		}
		if st != scanRow {
			return 0, nil, st
		}
		return n, s.cells, scanRow
	}
}

// scanToRow skips to the next <row> and reads it, advancing mark over
// what lies between rows; it always starts over from mark.
func (s *sheetStream) scanToRow() (int, scanStatus) {
	in := s.in
	for {
		b := in.buf
		i := in.pos
		if i >= len(b) {
			return 0, scanMore
		}
		if b[i] != '<' {
			j, st := s.scanText(b, i, nil)
			if st != scanRow {
				return 0, st
			}
			in.pos = j
			in.mark = j
			continue
		}
		var t tag
		j, st := scanTag(b, i, &t)
		if st != scanRow {
			return 0, st
		}
		if !t.end && string(t.local) == "row" {
			n, st := s.scanRow(&t, j)
			return n, st
		}
		if t.end && string(t.local) == "sheetData" || t.empty && string(t.local) == "sheetData" {
			in.pos = j
			in.mark = j
			return 0, scanEnd
		}
		in.pos = j
		in.mark = j
	}
}

// scanRow reads the cells of the row whose start tag ends at i.
func (s *sheetStream) scanRow(start *tag, i int) (int, scanStatus) {
	n := s.row + 1
	if start.hasR {
		r, ok := smallInt(start.r)
		if !ok || r <= 0 || r > 1048576 {
			return 0, scanSlow
		}
		n = r
	}
	if n <= s.row {
		return 0, scanSlow
	}
	s.cells = s.cells[:0]
	b := s.in.buf
	if !start.empty {
		col := -1
	cells:
		for {
			var t tag
			j, st := s.scanToTag(b, i, nil, &t)
			if st != scanRow {
				return 0, st
			}
			i = j
			if t.end || t.empty {
				if string(t.local) == "row" {
					if t.empty {
						// <row/> inside a row: encoding/xml sees its end.
						break cells
					}
					break cells
				}
				if t.end {
					continue
				}
			}
			if string(t.local) != "c" {
				continue
			}
			col++
			if t.hasR {
				c, r, ok := cellIndexBytes(t.r)
				if !ok || r != 0 && r != n || c >= 16384 {
					return 0, scanSlow
				}
				col = c
			}
			if col >= 16384 {
				return 0, scanSlow
			}
			if t.empty {
				continue // <c/>: nothing to add
			}
			j, st = s.scanCell(&t, b, i, col, n)
			if st != scanRow {
				return 0, st
			}
			i = j
		}
	}
	s.row = n
	s.in.pos = i
	s.in.mark = i
	return n, scanRow
}

// scanCell reads one <c> element from i, after its start tag, as readCell
// does with tokens.
func (s *sheetStream) scanCell(start *tag, b []byte, i, col, row int) (int, scanStatus) {
	style := 0
	if start.hasS {
		style = atoiBytes(start.s)
	}
	var c cellTags
	s.vbuf = s.vbuf[:0]
	s.inl = s.inl[:0]
	for {
		var text *[]byte // where the cell's character data goes, if kept
		switch {
		case c.inValue():
			text = &s.vbuf
		case c.inT:
			text = &s.inl
		}
		var t tag
		j, st := s.scanToTag(b, i, text, &t)
		if st != scanRow {
			return 0, st
		}
		i = j
		if !t.end {
			c.open(string(t.local))
			if !t.empty {
				continue
			}
		}
		// An end tag, or the end half of <x/>.
		if c.depth == 0 {
			if string(t.local) == "c" {
				s.finishBytes(col, row, cellType(start.t), style, c.formula, c.hasV, c.inIS)
				return i, scanRow
			}
			return 0, scanSlow // encoding/xml words the error
		}
		c.close(string(t.local))
	}
}

// scanToTag reads from i inside an element up to the end of the next tag,
// into t: the character data before it is appended to *text when text is
// not nil (as scanText does), and passed over otherwise. It returns
// scanMore when the input ends first.
func (s *sheetStream) scanToTag(b []byte, i int, text *[]byte, t *tag) (int, scanStatus) {
	if i < len(b) && b[i] != '<' {
		j, st := s.scanText(b, i, text)
		if st != scanRow {
			return 0, st
		}
		i = j // at the '<' that ended the text
	}
	if i >= len(b) {
		return 0, scanMore
	}
	return scanTag(b, i, t)
}

// scanText reads character data from i up to the next '<'. With out, it
// appends the text there, entities replaced. It returns scanMore when the
// input ends first.
func (s *sheetStream) scanText(b []byte, i int, out *[]byte) (int, scanStatus) {
	start, seg := i, i
	for i < len(b) {
		c := b[i]
		if c >= 0x20 && c < utf8.RuneSelf && c != '<' && c != '&' && c != '>' {
			i++
			continue
		}
		switch {
		case c == '<':
			if out != nil {
				*out = append(*out, b[seg:i]...)
			}
			return i, scanRow
		case c == '&':
			r, j, st := scanEntity(b, i)
			if st != scanRow {
				return 0, st
			}
			if out != nil {
				*out = append(*out, b[seg:i]...)
				*out = utf8.AppendRune(*out, r)
			}
			i, seg = j, j
			continue
		case c == '>':
			if i-2 >= start && b[i-1] == ']' && b[i-2] == ']' {
				return 0, scanSlow // ]]> outside CDATA is an error
			}
		case c >= utf8.RuneSelf:
			r, size := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && size == 1 {
				if !utf8.FullRune(b[i:]) {
					return 0, scanMore
				}
				return 0, scanSlow
			}
			if !isXMLChar(r) {
				return 0, scanSlow
			}
			i += size
			continue
		case c != '\t' && c != '\n':
			return 0, scanSlow // \r is rewritten by encoding/xml; others are errors
		}
		i++
	}
	return 0, scanMore
}

// scanEntity reads &name; or &#N; or &#xH; at b[i]. Only the ones that
// encoding/xml turns into an allowed character are taken.
func scanEntity(b []byte, i int) (rune, int, scanStatus) {
	j := i + 1
	if j >= len(b) {
		return 0, 0, scanMore
	}
	if b[j] == '#' {
		j++
		base := rune(10)
		if j < len(b) && b[j] == 'x' {
			base = 16
			j++
		}
		var n rune
		digitsSeen := 0
		for ; j < len(b); j++ {
			c := b[j]
			var d rune
			switch {
			case '0' <= c && c <= '9':
				d = rune(c - '0')
			case base == 16 && 'a' <= c && c <= 'f':
				d = rune(c-'a') + 10
			case base == 16 && 'A' <= c && c <= 'F':
				d = rune(c-'A') + 10
			default:
				d = -1
			}
			if d < 0 {
				break
			}
			digitsSeen++
			if digitsSeen > 8 {
				return 0, 0, scanSlow
			}
			n = n*base + d
		}
		if j >= len(b) {
			return 0, 0, scanMore
		}
		if b[j] != ';' || digitsSeen == 0 || !isXMLChar(n) || n >= 0xD800 && n <= 0xDFFF {
			return 0, 0, scanSlow
		}
		return n, j + 1, scanRow
	}
	k := j
	for k < len(b) && k-j < 5 && b[k] >= 'a' && b[k] <= 'z' {
		k++
	}
	if k >= len(b) {
		return 0, 0, scanMore
	}
	if b[k] != ';' {
		return 0, 0, scanSlow
	}
	switch string(b[j:k]) {
	case "amp":
		return '&', k + 1, scanRow
	case "lt":
		return '<', k + 1, scanRow
	case "gt":
		return '>', k + 1, scanRow
	case "quot":
		return '"', k + 1, scanRow
	case "apos":
		return '\'', k + 1, scanRow
	}
	return 0, 0, scanSlow
}

func isXMLChar(r rune) bool {
	return r == 0x09 || r == 0x0A || r == 0x0D ||
		r >= 0x20 && r <= 0xD7FF ||
		r >= 0xE000 && r <= 0xFFFD ||
		r >= 0x10000 && r <= 0x10FFFF
}

// scanTag reads the tag at b[i] == '<' into t and returns the index after
// it.
func scanTag(b []byte, i int, t *tag) (int, scanStatus) {
	i++
	if i >= len(b) {
		return 0, scanMore
	}
	switch b[i] {
	case '/':
		t.end = true
		i++
	case '!', '?':
		return 0, scanSlow
	}
	local, j, st := scanName(b, i)
	if st != scanRow {
		return 0, st
	}
	t.local = local
	i = j
	if t.end {
		i = skipSpace(b, i)
		if i >= len(b) {
			return 0, scanMore
		}
		if b[i] != '>' {
			return 0, scanSlow
		}
		return i + 1, scanRow
	}
	for {
		i = skipSpace(b, i)
		if i >= len(b) {
			return 0, scanMore
		}
		switch b[i] {
		case '>':
			return i + 1, scanRow
		case '/':
			if i+1 >= len(b) {
				return 0, scanMore
			}
			if b[i+1] != '>' {
				return 0, scanSlow
			}
			t.empty = true
			return i + 2, scanRow
		}
		name, j, st := scanName(b, i)
		if st != scanRow {
			return 0, st
		}
		i = skipSpace(b, j)
		if i >= len(b) {
			return 0, scanMore
		}
		if b[i] != '=' {
			return 0, scanSlow
		}
		i = skipSpace(b, i+1)
		if i >= len(b) {
			return 0, scanMore
		}
		q := b[i]
		if q != '"' && q != '\'' {
			return 0, scanSlow
		}
		i++
		vs := i
		for {
			if i >= len(b) {
				return 0, scanMore
			}
			c := b[i]
			if c == q {
				break
			}
			if c < 0x20 || c >= utf8.RuneSelf || c == '<' || c == '&' {
				return 0, scanSlow
			}
			i++
		}
		val := b[vs:i]
		i++
		if len(name) == 1 {
			switch name[0] {
			case 'r':
				if !t.hasR {
					t.r, t.hasR = val, true
				}
			case 't':
				if !t.hasT {
					t.t, t.hasT = val, true
				}
			case 's':
				if !t.hasS {
					t.s, t.hasS = val, true
				}
			}
		}
	}
}

// scanName reads a name, [prefix:]local, of ASCII name characters and
// returns its local part.
func scanName(b []byte, i int) ([]byte, int, scanStatus) {
	start := i
	colon := -1
	for ; i < len(b); i++ {
		c := b[i]
		switch {
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_':
		case c >= '0' && c <= '9' || c == '-' || c == '.':
			if i == start || i == colon+1 {
				return nil, 0, scanSlow
			}
		case c == ':':
			if colon >= 0 || i == start {
				return nil, 0, scanSlow
			}
			colon = i
		case c >= utf8.RuneSelf:
			return nil, 0, scanSlow
		default:
			if i == start || i == colon+1 {
				return nil, 0, scanSlow
			}
			if colon >= 0 {
				return b[colon+1 : i], i, scanRow
			}
			return b[start:i], i, scanRow
		}
	}
	return nil, 0, scanMore
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\n' || b[i] == '\t' || b[i] == '\r') {
		i++
	}
	return i
}

// smallInt parses 1 to 7 decimal digits; anything else is left to
// strconv (through encoding/xml's path).
func smallInt(b []byte) (int, bool) {
	if len(b) == 0 || len(b) > 7 {
		return 0, false
	}
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

// atoiBytes is strconv.Atoi's value, 0 on error, as readCell takes a style.
func atoiBytes(b []byte) int {
	if n, ok := smallInt(b); ok {
		return n
	}
	n, _ := strconv.Atoi(string(b))
	return n
}

func cellIndexBytes(b []byte) (int, int, bool) {
	return cellIndex(string(b))
}

// cellType returns t as a string without allocating for the usual types.
func cellType(t []byte) string {
	switch string(t) {
	case "":
		return ""
	case "s":
		return "s"
	case "n":
		return "n"
	case "str":
		return "str"
	case "inlineStr":
		return "inlineStr"
	case "b":
		return "b"
	case "e":
		return "e"
	case "d":
		return "d"
	}
	return string(t)
}

// finishBytes is finish with the scanner's buffers.
func (s *sheetStream) finishBytes(col, row int, typ string, style int, formula, hasV, inIS bool) {
	add := func(v Cell, err error) {
		s.cells = append(s.cells, rawCell{col: col, val: v, err: err})
	}
	if typ == "inlineStr" || inIS && !hasV {
		if inIS {
			add(unescapeOOXML(string(s.inl)), nil)
		}
		return
	}
	if !hasV {
		if formula {
			add(nil, errors.New("the formula has no saved value: open the workbook in Excel, let it calculate and save it"))
		}
		return // a formatted but empty cell
	}
	raw := s.vbuf
	switch typ {
	case "s":
		i, ok := smallInt(trimSpaceBytes(raw))
		if !ok {
			var err error
			i, err = strconv.Atoi(strings.TrimSpace(string(raw)))
			ok = err == nil
		}
		if !ok {
			i = -1
		}
		add(s.sharedString(i, string(raw)))
	case "", "n":
		add(s.number(col, row, string(raw), style))
	default:
		s.buf.Reset()
		s.buf.Write(raw)
		s.finish(col, row, typ, style, formula, hasV, inIS, string(s.inl))
	}
}

func trimSpaceBytes(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t' || b[0] == '\n' || b[0] == '\r' || b[0] == '\v' || b[0] == '\f') {
		b = b[1:]
	}
	for len(b) > 0 {
		c := b[len(b)-1]
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' && c != '\v' && c != '\f' {
			break
		}
		b = b[:len(b)-1]
	}
	return b
}
