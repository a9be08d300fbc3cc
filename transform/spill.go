package transform

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/migrate-tool/migrate/source"
)

// DefaultMemory is the memory a run aims to stay under when Options.Memory
// is 0 (`--memory`, docs/cli.md).
const DefaultMemory = 256 << 20

// spillShare is the part of the memory budget that one structure which
// grows with a source (a grouped step's rows, a linked source's index) may
// hold before it goes to a temporary file. Several may be built at once
// (a step's links, steps run side by side), and the Go heap needs room
// above what is live.
const spillShare = 8

// rowBytes estimates what a kept row costs in memory: the row, its cells
// and their text, and the map `row` is when expressions use it whole.
func rowBytes(row source.Row, asMap bool) int64 {
	n := int64(64 + 32*len(row.Cells))
	for _, c := range row.Cells {
		switch v := c.(type) {
		case string:
			n += int64(len(v))
		case source.Number:
			n += int64(len(v))
		}
	}
	if asMap {
		n += 48 + 64*int64(len(row.Cells))
	}
	return n
}

// rowStore keeps rows in a temporary file, as chains: each row records
// where the previous row of its chain (its group, or its link value) is,
// so a chain is read back by following the links from its last row, in
// one read a row. The rows of one chain come back in the order they were
// added. The file is removed by close.
type rowStore struct {
	f      *os.File
	w      *bufio.Writer
	size   int64 // bytes written
	header *source.Header
	enc    []byte
	rd     []byte
	// removed: the file's name is gone already (see newRowStore)
	removed bool
}

// chain is where the last row of a chain is, and how many rows it has;
// first and bytes say whether its rows stand together in the file (as a
// sorted source's groups do), to be read back in one read.
type chain struct {
	last    int64
	lastLen uint32
	n       uint32
	first   int64
	bytes   int64
}

func newChain() chain { return chain{last: -1} }

// chainHead is the link before each row: the previous row's offset and length.
const chainHead = 12

func newRowStore(h *source.Header) (*rowStore, error) {
	f, err := os.CreateTemp("", "migrate-rows-*")
	if err != nil {
		return nil, fmt.Errorf("a temporary file for the rows that do not fit in memory (--memory): %w", err)
	}
	// Removed at once where the system allows an open file to be (Unix):
	// then not even a killed run leaves it behind. Elsewhere close does.
	removed := os.Remove(f.Name()) == nil
	return &rowStore{f: f, w: bufio.NewWriterSize(f, 256<<10), header: h, removed: removed}, nil
}

func (s *rowStore) close() {
	if s == nil {
		return
	}
	s.f.Close()
	if !s.removed {
		os.Remove(s.f.Name())
	}
}

// add appends row to the chain c.
func (s *rowStore) add(c *chain, row source.Row) error {
	if row.Header != s.header {
		return errors.New("rows of two headers in one store")
	}
	b := s.enc[:0]
	b = binary.LittleEndian.AppendUint64(b, uint64(c.last))
	b = binary.LittleEndian.AppendUint32(b, c.lastLen)
	b = binary.AppendUvarint(b, uint64(row.Loc.Line))
	b = appendText(b, row.Loc.File)
	b = appendText(b, row.Loc.Sheet)
	b = binary.AppendUvarint(b, uint64(len(row.Cells)))
	for _, cell := range row.Cells {
		switch v := cell.(type) {
		case nil:
			b = append(b, 'z') // readers give "", tests nil
		case string:
			b = appendText(append(b, 's'), v)
		case source.Number:
			b = appendText(append(b, 'n'), string(v))
		case bool:
			if v {
				b = append(b, 't')
			} else {
				b = append(b, 'f')
			}
		case time.Time:
			t, err := v.MarshalBinary()
			if err != nil {
				return err
			}
			b = appendText(append(b, 'd'), string(t))
		default:
			return fmt.Errorf("a cell of type %T cannot be kept on disk", cell)
		}
	}
	s.enc = b
	if len(b) > 1<<31 {
		return errors.New("a row too large to keep on disk")
	}
	if _, err := s.w.Write(b); err != nil {
		return fmt.Errorf("writing the rows that do not fit in memory to %s: %w", s.f.Name(), err)
	}
	if c.n == 0 {
		c.first = s.size
	}
	c.last, c.lastLen, c.n, c.bytes = s.size, uint32(len(b)), c.n+1, c.bytes+int64(len(b))
	s.size += int64(len(b))
	return nil
}

func appendText(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

// rows reads the chain c back, in the order its rows were added.
func (s *rowStore) rows(c chain) ([]source.Row, error) {
	if err := s.w.Flush(); err != nil {
		return nil, fmt.Errorf("writing the rows that do not fit in memory to %s: %w", s.f.Name(), err)
	}
	out := make([]source.Row, c.n)
	if c.n > 1 && c.last+int64(c.lastLen)-c.first == c.bytes && c.bytes <= 4<<20 { // a larger group is read a row at a time, into a smaller buffer
		return s.stretch(c, out)
	}
	at, n := c.last, c.lastLen
	for i := int(c.n) - 1; i >= 0; i-- {
		if at < 0 {
			return nil, fmt.Errorf("%s: a chain of rows ends early", s.f.Name())
		}
		if cap(s.rd) < int(n) {
			s.rd = make([]byte, n)
		}
		b := s.rd[:n]
		if _, err := s.f.ReadAt(b, at); err != nil {
			return nil, fmt.Errorf("reading back the rows kept in %s: %w", s.f.Name(), err)
		}
		row, rest, err := s.decode(b[chainHead:])
		if err == nil && len(rest) > 0 {
			err = errDamagedRow
		}
		if err != nil {
			return nil, fmt.Errorf("reading back the rows kept in %s: %w", s.f.Name(), err)
		}
		out[i] = row
		at, n = int64(binary.LittleEndian.Uint64(b)), binary.LittleEndian.Uint32(b[8:])
	}
	return out, nil
}

// stretch reads a chain whose rows stand together in one read.
func (s *rowStore) stretch(c chain, out []source.Row) ([]source.Row, error) {
	if cap(s.rd) < int(c.bytes) {
		s.rd = make([]byte, c.bytes)
	}
	b := s.rd[:c.bytes]
	if _, err := s.f.ReadAt(b, c.first); err != nil {
		return nil, fmt.Errorf("reading back the rows kept in %s: %w", s.f.Name(), err)
	}
	for i := range out {
		if len(b) < chainHead {
			return nil, fmt.Errorf("reading back the rows kept in %s: %w", s.f.Name(), errDamagedRow)
		}
		row, rest, err := s.decode(b[chainHead:])
		if err != nil {
			return nil, fmt.Errorf("reading back the rows kept in %s: %w", s.f.Name(), err)
		}
		out[i], b = row, rest
	}
	return out, nil
}

var errDamagedRow = errors.New("a damaged row")

// decode reads one row's payload from b and returns what follows it.
func (s *rowStore) decode(b []byte) (source.Row, []byte, error) {
	row := source.Row{Header: s.header}
	uv := func() uint64 {
		v, k := binary.Uvarint(b)
		if k <= 0 {
			b = nil
			return 0
		}
		b = b[k:]
		return v
	}
	text := func() (string, bool) {
		n := uv()
		if uint64(len(b)) < n {
			return "", false
		}
		t := string(b[:n])
		b = b[n:]
		return t, true
	}
	var ok1, ok2 bool
	row.Loc.Line = int(uv())
	row.Loc.File, ok1 = text()
	row.Loc.Sheet, ok2 = text()
	n := uv()
	if !ok1 || !ok2 || n > uint64(len(b)) {
		return row, nil, errDamagedRow
	}
	row.Cells = make([]source.Cell, n)
	for i := range row.Cells {
		if len(b) == 0 {
			return row, nil, errDamagedRow
		}
		tag := b[0]
		b = b[1:]
		switch tag {
		case 'z':
			row.Cells[i] = nil
		case 't':
			row.Cells[i] = true
		case 'f':
			row.Cells[i] = false
		case 's', 'n', 'd':
			t, ok := text()
			if !ok {
				return row, nil, errDamagedRow
			}
			switch tag {
			case 's':
				row.Cells[i] = t
			case 'n':
				row.Cells[i] = source.Number(t)
			default:
				var tm time.Time
				if err := tm.UnmarshalBinary([]byte(t)); err != nil {
					return row, nil, errDamagedRow
				}
				row.Cells[i] = tm
			}
		default:
			return row, nil, errDamagedRow
		}
	}
	return row, b, nil
}

// memory is the run's memory budget.
func (p *Program) memory() int64 {
	if p.opts.Memory > 0 {
		return p.opts.Memory
	}
	return DefaultMemory
}
