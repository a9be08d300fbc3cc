package transform

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"

	"github.com/migrate-tool/migrate/internal/bloom"
)

// The keys a step's rows gave, past what memory may hold (seenKeys.max),
// go to sorted runs in temporary files, as the grouped rows do (spill.go).
// Each run keeps in memory a Bloom filter (internal/bloom: 10 bits a key
// in a run written from memory, 6 in a merged one, which holds the most
// keys) and the first key of each block (16 bytes a 204 keys): under a
// byte a key in all, so that ten million keys take some 9 MB. A lookup
// reads one block of each run whose filter admits the key (1 in 100 of the
// others do, 1 in 13 in a merged run), and runs are merged eight of a size
// at a time, so that few are looked in.

const (
	keyEntrySize  = 20  // a key's two hashes and its line, little-endian
	keyBlockLen   = 204 // keys a block holds: 4,080 bytes, one read
	keyMergeWidth = 8   // runs of one level merged into one of the next
)

// keyEntry is a key's hash and the line of the row that gave it.
type keyEntry struct {
	h    [2]uint64
	line uint32
}

func hashLess(a, b [2]uint64) bool { return a[0] < b[0] || a[0] == b[0] && a[1] < b[1] }

// keyRun is one sorted run of keys in a temporary file.
type keyRun struct {
	f       *os.File
	removed bool // the file's name is gone already (newKeyRunWriter)
	n       int
	level   int
	index   [][2]uint64 // the first key of each block
	bloom   *bloom.Filter
}

// find looks h up: the line of the row that gave it.
func (k *keyRun) find(h [2]uint64, buf []byte) (uint32, bool, error) {
	if !k.bloom.MayHave(h) {
		return 0, false, nil
	}
	blk := sort.Search(len(k.index), func(i int) bool { return hashLess(h, k.index[i]) }) - 1
	if blk < 0 {
		return 0, false, nil
	}
	count := min(keyBlockLen, k.n-blk*keyBlockLen)
	b := buf[:count*keyEntrySize]
	if _, err := k.f.ReadAt(b, int64(blk)*keyBlockLen*keyEntrySize); err != nil {
		return 0, false, err
	}
	j := sort.Search(count, func(j int) bool { return !hashLess(entryHash(b, j), h) })
	if j < count && entryHash(b, j) == h {
		return binary.LittleEndian.Uint32(b[j*keyEntrySize+16:]), true, nil
	}
	return 0, false, nil
}

func entryHash(b []byte, j int) [2]uint64 {
	o := j * keyEntrySize
	return [2]uint64{binary.LittleEndian.Uint64(b[o:]), binary.LittleEndian.Uint64(b[o+8:])}
}

func (k *keyRun) close() {
	k.f.Close()
	if !k.removed {
		os.Remove(k.f.Name())
	}
}

// keyRunWriter writes a run of n keys, given in order.
type keyRunWriter struct {
	run *keyRun
	w   *bufio.Writer
	enc [keyEntrySize]byte
}

func newKeyRunWriter(n, level int) (*keyRunWriter, error) {
	f, err := os.CreateTemp("", "migrate-keys-*")
	if err != nil {
		return nil, fmt.Errorf("a temporary file for the keys that do not fit in memory (--memory): %w", err)
	}
	// As the rows' store: removed at once where an open file may be.
	removed := os.Remove(f.Name()) == nil
	return &keyRunWriter{run: &keyRun{f: f, removed: removed, level: level, bloom: bloom.New(n, keyFilterBits(level))},
		w: bufio.NewWriterSize(f, 64<<10)}, nil
}

// keyFilterBits is what the filter of a run of level spends a key.
func keyFilterBits(level int) int {
	if level == 0 {
		return bloom.BitsPerKey
	}
	return bloom.LeanBitsPerKey
}

func (w *keyRunWriter) add(e keyEntry) error {
	k := w.run
	if k.n%keyBlockLen == 0 {
		k.index = append(k.index, e.h)
	}
	k.n++
	k.bloom.Add(e.h)
	binary.LittleEndian.PutUint64(w.enc[0:], e.h[0])
	binary.LittleEndian.PutUint64(w.enc[8:], e.h[1])
	binary.LittleEndian.PutUint32(w.enc[16:], e.line)
	_, err := w.w.Write(w.enc[:])
	return err
}

func (w *keyRunWriter) finish() (*keyRun, error) {
	if err := w.w.Flush(); err != nil {
		w.run.close()
		return nil, err
	}
	return w.run, nil
}

// keyRuns are the runs of one set of keys.
type keyRuns struct {
	runs []*keyRun
	buf  []byte
}

func (s *keyRuns) find(h [2]uint64) (uint32, bool, error) {
	if s.buf == nil {
		s.buf = make([]byte, keyBlockLen*keyEntrySize)
	}
	for i := len(s.runs) - 1; i >= 0; i-- { // the newest first
		if line, ok, err := s.runs[i].find(h, s.buf); err != nil || ok {
			return line, ok, err
		}
	}
	return 0, false, nil
}

// add writes the keys in memory as a run, then merges the runs that fill
// a level.
func (s *keyRuns) add(mem map[[2]uint64]uint32) error {
	es := make([]keyEntry, 0, len(mem))
	for h, line := range mem {
		es = append(es, keyEntry{h, line})
	}
	slices.SortFunc(es, func(a, b keyEntry) int {
		switch {
		case hashLess(a.h, b.h):
			return -1
		case hashLess(b.h, a.h):
			return 1
		}
		return 0
	})
	w, err := newKeyRunWriter(len(es), 0)
	if err != nil {
		return err
	}
	for _, e := range es {
		if err := w.add(e); err != nil {
			w.run.close()
			return err
		}
	}
	run, err := w.finish()
	if err != nil {
		return err
	}
	s.runs = append(s.runs, run)
	for {
		level, from := s.runs[len(s.runs)-1].level, len(s.runs)-1
		for from > 0 && s.runs[from-1].level == level {
			from--
		}
		if len(s.runs)-from < keyMergeWidth {
			return nil
		}
		merged, err := mergeKeyRuns(s.runs[from:], level+1)
		if err != nil {
			return err
		}
		for _, r := range s.runs[from:] {
			r.close()
		}
		s.runs = append(s.runs[:from], merged)
	}
}

// mergeKeyRuns writes runs as one, in order: their keys are distinct.
func mergeKeyRuns(runs []*keyRun, level int) (*keyRun, error) {
	n := 0
	for _, r := range runs {
		n += r.n
	}
	w, err := newKeyRunWriter(n, level)
	if err != nil {
		return nil, err
	}
	type cursor struct {
		rd   *bufio.Reader
		left int  // keys not read yet
		ok   bool // cur is a key not written yet
		cur  keyEntry
	}
	var buf [keyEntrySize]byte
	next := func(c *cursor) error {
		c.ok = c.left > 0
		if !c.ok {
			return nil
		}
		c.left--
		if _, err := io.ReadFull(c.rd, buf[:]); err != nil {
			return err
		}
		c.cur = keyEntry{[2]uint64{binary.LittleEndian.Uint64(buf[0:]), binary.LittleEndian.Uint64(buf[8:])}, binary.LittleEndian.Uint32(buf[16:])}
		return nil
	}
	cs := make([]*cursor, 0, len(runs))
	for _, r := range runs {
		c := &cursor{rd: bufio.NewReaderSize(io.NewSectionReader(r.f, 0, int64(r.n)*keyEntrySize), 32<<10), left: r.n}
		if err := next(c); err != nil {
			w.run.close()
			return nil, err
		}
		cs = append(cs, c)
	}
	for {
		var least *cursor
		for _, c := range cs {
			if c.ok && (least == nil || hashLess(c.cur.h, least.cur.h)) {
				least = c
			}
		}
		if least == nil {
			break
		}
		if err := w.add(least.cur); err != nil {
			w.run.close()
			return nil, err
		}
		if err := next(least); err != nil {
			w.run.close()
			return nil, err
		}
	}
	return w.finish()
}

// memBytes is what the runs keep in memory: their filters and indexes.
func (s *keyRuns) memBytes() int64 {
	var n int64
	for _, r := range s.runs {
		n += int64(r.bloom.Bytes()) + int64(len(r.index))*16
	}
	return n
}

func (s *keyRuns) close() {
	if s == nil {
		return
	}
	for _, r := range s.runs {
		r.close()
	}
	s.runs = nil
}
