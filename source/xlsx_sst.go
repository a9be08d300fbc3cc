package source

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"unicode/utf8"
)

// sharedStrings is a workbook's shared-string table, stored compactly (all
// texts in one buffer, one end offset each: 4 bytes a string instead of a
// 16-byte string header and an allocation) and read lazily, as far as the
// cells read so far refer: `validate`, which reads header rows only, reads
// a few strings of a table of millions, and a sheet's rows read it once,
// in step. Excel writes the strings in the order cells first use them, so
// reading on demand reads ahead little.
//
// The part is read with a byte scanner: <si>, <t> (text inside <rPh> and
// <phoneticPr>, phonetic hints, is not the text), the five entities and
// numeric references, CDATA, comments and processing instructions, with
// line ends normalised as encoding/xml does. Rich-text runs (<r>) are read
// as the concatenation of their <t>.
//
// Several readers of one workbook share it, so every look-up takes its lock.
type sharedStrings struct {
	part string
	mu   sync.Mutex
	rc   io.ReadCloser // the part, open until it was read to its end
	in   *bufio.Reader
	// The texts, unescaped (_xHHHH_ decoded), one after another in chunks
	// of at most sstChunk bytes (a text never straddles two), so the table
	// grows without copying what it holds: chunk k holds the positions from
	// k*sstChunk. ends[i] is the position where text i ends; it starts
	// where text i-1 ends, or at its chunk's start when it did not fit in
	// the chunk before. A text longer than a chunk is kept in big.
	chunks [][]byte
	ends   []uint32
	pos    uint32 // where the next text goes
	text   int64  // bytes of text held
	big    map[int]string
	err    error // the part could not be read further
	// scanner state between strings
	tag, scratch []byte
}

func newSharedStrings(part string, rc io.ReadCloser) *sharedStrings {
	return &sharedStrings{part: part, rc: rc, in: bufio.NewReaderSize(rc, 64<<10)}
}

// errNoSharedString is a cell that refers past the end of the table.
var errNoSharedString = errors.New("no such shared string")

// get returns shared string i, reading the part as far as needed.
func (s *sharedStrings) get(i int) (string, error) {
	if s == nil || i < 0 {
		return "", errNoSharedString
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for i >= len(s.ends) && s.rc != nil {
		if err := s.readOne(); err != nil {
			s.stop(err)
		}
	}
	if i < len(s.ends) {
		return s.at(i), nil
	}
	if s.err != nil {
		return "", s.err
	}
	return "", errNoSharedString
}

// sstChunk is the size of the chunks of text.
const sstChunk = 1 << 20

// at returns text i, which has been read.
func (s *sharedStrings) at(i int) string {
	start, end := uint32(0), s.ends[i]
	if i > 0 {
		start = s.ends[i-1]
	}
	if start == end {
		return s.big[i] // "" unless it is a long text
	}
	// A text that did not fit after the one before starts its own chunk.
	if c := (end - 1) / sstChunk * sstChunk; c > start {
		start = c
	}
	k := start / sstChunk
	return string(s.chunks[k][start-k*sstChunk : end-k*sstChunk])
}

// stop closes the part; err (nil at its end) is kept for later look-ups.
func (s *sharedStrings) stop(err error) {
	if err != io.EOF {
		s.err = err
	}
	s.rc.Close()
	s.rc, s.in, s.tag, s.scratch = nil, nil, nil, nil
}

func (s *sharedStrings) close() {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.rc != nil {
		s.stop(io.EOF)
	}
}

// overBudget is the error of a table past maxSharedStringBytes.
func (s *sharedStrings) overBudget() error {
	return limitError{fmt.Sprintf("%s: the shared strings need more than %d MiB of memory (%d strings read): the workbook is damaged or built to exhaust memory; open it in a spreadsheet program and save it again, or save the sheet as CSV",
		s.part, maxSharedStringBytes>>20, len(s.ends))}
}

// used is the memory the table takes, counted as allocated; extra bytes of
// text and one more string are about to be added.
func (s *sharedStrings) used(extra int) int64 {
	offsets := cap(s.ends)
	if len(s.ends) == offsets {
		offsets = 2*offsets + 1 // append is about to grow it
	}
	return s.text + int64(extra) + int64(offsets)*sstEntryOverhead
}

// readOne reads up to the end of the next <si> and appends its text;
// io.EOF at the end of the part.
func (s *sharedStrings) readOne() error {
	inSI, inT, skip := false, false, 0
	s.scratch = s.scratch[:0]
	for {
		// Text up to the next markup.
		chunk, err := s.readText()
		if inT {
			if s.used(len(s.scratch)+len(chunk)) > maxSharedStringBytes {
				return s.overBudget()
			}
			var cerr error
			if s.scratch, cerr = appendCharData(s.scratch, chunk); cerr != nil {
				return s.fail(cerr)
			}
		}
		if err != nil {
			if err == io.EOF && inSI {
				return s.fail(io.ErrUnexpectedEOF)
			}
			if err == io.EOF {
				return io.EOF
			}
			return s.fail(err)
		}
		// The markup: a tag, or a comment, CDATA or processing instruction.
		if s.tag, err = s.readMarkup(s.tag[:0]); err != nil {
			return s.fail(noEOF(err))
		}
		tag := s.tag[:len(s.tag)-1]
		switch {
		case bytes.HasPrefix(tag, []byte("!--")):
			if err := s.skipTo(tag, "--"); err != nil {
				return err
			}
			continue
		case bytes.HasPrefix(tag, []byte("![CDATA[")):
			for !bytes.HasSuffix(s.tag, []byte("]]>")) {
				if s.tag, err = s.readMarkup(s.tag); err != nil {
					return s.fail(noEOF(err))
				}
			}
			if inT {
				data := s.tag[len("![CDATA[") : len(s.tag)-3]
				if s.used(len(s.scratch)+len(data)) > maxSharedStringBytes {
					return s.overBudget()
				}
				s.scratch = appendNewlines(s.scratch, data)
			}
			continue
		case bytes.HasPrefix(tag, []byte("?")):
			if err := s.skipTo(tag, "?"); err != nil {
				return err
			}
			continue
		case bytes.HasPrefix(tag, []byte("!")):
			continue // a DOCTYPE: Excel writes none
		}
		for openQuote(s.tag) { // a '>' inside an attribute's value
			if s.tag, err = s.readMarkup(s.tag); err != nil {
				return s.fail(noEOF(err))
			}
		}
		tag = s.tag[:len(s.tag)-1]
		end := len(tag) > 0 && tag[0] == '/'
		if end {
			tag = tag[1:]
		}
		empty := len(tag) > 0 && tag[len(tag)-1] == '/'
		name := tag
		if i := bytes.IndexAny(name, " \t\r\n/"); i >= 0 {
			name = name[:i]
		}
		if i := bytes.IndexByte(name, ':'); i >= 0 {
			name = name[i+1:]
		}
		switch string(name) {
		case "si":
			switch {
			case empty && !end:
				return s.add(nil)
			case end:
				if inSI {
					return s.add(s.scratch)
				}
			default:
				inSI = true
				s.scratch = s.scratch[:0]
			}
		case "rPh", "phoneticPr":
			switch {
			case empty:
			case end:
				skip--
			default:
				skip++
			}
		case "t":
			inT = !end && !empty && inSI && skip == 0
		}
	}
}

// skipTo reads past the end of a comment ("--") or processing
// instruction ("?"): markup that ends in end followed by '>'.
func (s *sharedStrings) skipTo(tag []byte, end string) error {
	var err error
	for len(tag) < 1+len(end) || !bytes.HasSuffix(tag, []byte(end)) {
		if s.tag, err = s.readMarkup(s.tag); err != nil {
			return s.fail(noEOF(err))
		}
		tag = s.tag[:len(s.tag)-1]
	}
	return nil
}

// add appends one string, decoding Excel's _xHHHH_ escapes once here
// rather than at every cell.
func (s *sharedStrings) add(text []byte) error {
	t := unescapeOOXML(string(text))
	if s.used(len(t)) > maxSharedStringBytes {
		return s.overBudget()
	}
	s.text += int64(len(t))
	switch {
	case len(t) > sstChunk:
		if s.big == nil {
			s.big = make(map[int]string)
		}
		s.big[len(s.ends)] = t
	case len(t) > 0:
		k := s.pos / sstChunk
		if s.pos-k*sstChunk+uint32(len(t)) > sstChunk {
			k++
			s.pos = k * sstChunk
		}
		for uint32(len(s.chunks)) <= k {
			s.chunks = append(s.chunks, nil)
		}
		s.chunks[k] = append(s.chunks[k], t...)
		s.pos += uint32(len(t))
	}
	s.ends = append(s.ends, s.pos)
	return nil
}

func (s *sharedStrings) fail(err error) error {
	return fmt.Errorf("%s: %w", s.part, err)
}

// readText returns the input up to the next '<' (which is read too), valid
// until the next read; at the end of the input, what is left and io.EOF.
func (s *sharedStrings) readText() ([]byte, error) {
	chunk, err := s.in.ReadSlice('<')
	if err == nil {
		return chunk[:len(chunk)-1], nil
	}
	if err != bufio.ErrBufferFull {
		return chunk, err
	}
	long := append([]byte(nil), chunk...)
	for {
		chunk, err = s.in.ReadSlice('<')
		long = append(long, chunk...)
		switch err {
		case bufio.ErrBufferFull:
			continue
		case nil:
			return long[:len(long)-1], nil
		}
		return long, err
	}
}

// readMarkup appends to dst the input up to and including the next '>'.
func (s *sharedStrings) readMarkup(dst []byte) ([]byte, error) {
	for {
		chunk, err := s.in.ReadSlice('>')
		dst = append(dst, chunk...)
		if err != bufio.ErrBufferFull {
			return dst, err
		}
	}
}

// openQuote reports whether a tag read up to a '>' is inside a quoted
// attribute value there.
func openQuote(tag []byte) bool {
	var q byte
	for _, c := range tag {
		switch {
		case q == 0 && (c == '"' || c == '\''):
			q = c
		case c == q:
			q = 0
		}
	}
	return q != 0
}

func noEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// appendCharData appends character data with its entities decoded and its
// line ends normalised (\r\n and \r are \n), as encoding/xml reads it.
func appendCharData(dst, data []byte) ([]byte, error) {
	for len(data) > 0 {
		i := bytes.IndexByte(data, '&')
		if i < 0 {
			return appendNewlines(dst, data), nil
		}
		dst = appendNewlines(dst, data[:i])
		data = data[i:]
		j := bytes.IndexByte(data, ';')
		if j < 0 {
			return dst, fmt.Errorf("an unterminated entity %q", truncate(data))
		}
		ent := string(data[1:j])
		data = data[j+1:]
		switch ent {
		case "amp":
			dst = append(dst, '&')
		case "lt":
			dst = append(dst, '<')
		case "gt":
			dst = append(dst, '>')
		case "quot":
			dst = append(dst, '"')
		case "apos":
			dst = append(dst, '\'')
		default:
			r, ok := charRef(ent)
			if !ok {
				return dst, fmt.Errorf("an invalid entity &%s;", ent)
			}
			dst = utf8.AppendRune(dst, r)
		}
	}
	return dst, nil
}

func charRef(ent string) (rune, bool) {
	if len(ent) < 2 || ent[0] != '#' {
		return 0, false
	}
	var n uint64
	var err error
	if ent[1] == 'x' {
		n, err = strconv.ParseUint(ent[2:], 16, 32)
	} else {
		n, err = strconv.ParseUint(ent[1:], 10, 32)
	}
	if err != nil || n > utf8.MaxRune || !isXMLChar(rune(n)) {
		return 0, false
	}
	return rune(n), true
}

func appendNewlines(dst, data []byte) []byte {
	for {
		i := bytes.IndexByte(data, '\r')
		if i < 0 {
			return append(dst, data...)
		}
		dst = append(dst, data[:i]...)
		dst = append(dst, '\n')
		data = data[i+1:]
		if len(data) > 0 && data[0] == '\n' {
			data = data[1:]
		}
	}
}

func truncate(b []byte) string {
	if len(b) > 12 {
		b = b[:12]
	}
	return string(b)
}
