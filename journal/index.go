package journal

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"sort"
	"sync"

	"github.com/migrate-tool/migrate/internal/atomicfile"
)

// The index (JOURNAL.idx beside the journal) is what the journal knows,
// kept on disk so that apply, status and resume stay flat in the number of
// records, at hundreds of thousands of records as well as at ten. It holds
// the settled records (committed or skipped, nothing in flight: the bulk of a
// run) sorted by step and record id, with their status, key and counts, and a
// head: the state of every other record in full, the open batches, the
// counters, and which prefix of the journal it covers. A lean State
// (OpenIndexed, LoadIndexed) keeps the settled records there and in a small
// overlay of those settled since it was written; it looks one up by a binary
// search over the blocks' first keys and one read of a block.
//
// The index is a cache of the log, never the truth: it is written to a
// temporary file, fsynced and renamed; it carries a checksum of itself and
// of the journal's header line and of the bytes that end the prefix it
// covers. Missing, damaged, written by a crash mid-write, or covering
// something the journal does not hold, it is ignored and rebuilt from the
// log; trusted, only the lines after its prefix are replayed.

const (
	// indexMagic names the format: MIGIDX2 added each entry's source hash,
	// MIGIDX3 what it was written with, MIGIDX4 what its sub-form children
	// were written with; an index of another format is
	// rebuilt from the log.
	indexMagic   = "MIGIDX4\n"
	indexTrailer = "IDX!"
	footerLen    = 8*4 + 4 + 4
	blockSize    = 512
	// tailSpan is how much of the covered prefix's end the index checks.
	tailSpan   = 4 << 10
	cacheSlots = 4096 // blocks of the index kept in memory (2 MB)
)

// overlayMin is the fewest settled records kept in memory before they are
// written to the index; past it, an eighth of the index's size. (A
// variable: tests write indexes of a few records.)
var overlayMin = 64 << 10

// SetIndexEvery sets how many records may settle in memory before the
// index is written again (at least; past it, an eighth of the index):
// fewer costs more writes and less memory. It is for the whole process;
// set it before opening a journal.
func SetIndexEvery(n int) { overlayMin = max(n, 1) }

// IndexPath is the index of the journal at path.
func IndexPath(journal string) string { return journal + ".idx" }

// settled is a record that is committed or skipped with nothing in flight.
// gone marks, in the overlay, a record of the index that is no longer
// settled (work on it started again).
type settled struct {
	status   Status
	created  bool
	children int
	key      string
	rowHash  string
	srcHash  string // RecordEntry.SrcHash
	wrote    string // RecordEntry.Wrote
	filled   string // RecordEntry.Filled
	// linesHash: RecordEntry.LinesHash
	linesHash string
	wroteKids string // RecordEntry.WroteKids
	gone      bool
	// unreadable: the index could not be read; the record is in doubt.
	unreadable bool
}

// table is the settled records of an index file: entries sorted by step
// number and record id, in blocks of about 4 KB.
type table struct {
	f      *os.File
	n      int
	firsts []tkey  // each block's first entry
	offs   []int64 // each block's offset, then the end of the entries
	mu     sync.Mutex
	cache  [cacheSlots]cblock
}

type tkey struct {
	step int
	id   string
}

func (a tkey) less(b tkey) bool { return a.step < b.step || a.step == b.step && a.id < b.id }

type cblock struct {
	i int
	b []byte
}

// entry is one settled record as the index stores it.
type entry struct {
	tkey
	settled
}

func appendEntry(dst []byte, e *entry) []byte {
	dst = binary.AppendUvarint(dst, uint64(e.step))
	dst = appendStr(dst, e.id)
	st := byte('c')
	if e.status == Skipped {
		st = 's'
	}
	var fl byte
	if e.created {
		fl = 1
	}
	dst = append(dst, st, fl)
	dst = binary.AppendUvarint(dst, uint64(e.children))
	dst = appendStr(dst, e.key)
	dst = appendStr(dst, e.rowHash)
	dst = appendStr(dst, e.srcHash)
	dst = appendStr(dst, e.wrote)
	dst = appendStr(dst, e.filled)
	dst = appendStr(dst, e.linesHash)
	return appendStr(dst, e.wroteKids)
}

// rawOf is an index's string as the JSON it was (nil for "").
func rawOf(s string) json.RawMessage {
	if s == "" {
		return nil
	}
	return json.RawMessage(s)
}

func appendStr(dst []byte, s string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

var errIndex = errors.New("damaged index")

// decodeEntry decodes the entry at the start of b and returns its length.
func decodeEntry(b []byte, e *entry) (int, error) {
	i := 0
	uv := func() uint64 {
		v, n := binary.Uvarint(b[i:])
		if n <= 0 {
			i = -1
			return 0
		}
		i += n
		return v
	}
	str := func() string {
		n := uv()
		if i < 0 || uint64(len(b)-i) < n {
			i = -1
			return ""
		}
		s := string(b[i : i+int(n)])
		i += int(n)
		return s
	}
	e.step = int(uv())
	if i < 0 {
		return 0, errIndex
	}
	e.id = str()
	if i < 0 || len(b)-i < 2 {
		return 0, errIndex
	}
	e.status = Committed
	if b[i] == 's' {
		e.status = Skipped
	}
	e.created = b[i+1] == 1
	i += 2
	e.children = int(uv())
	if i < 0 {
		return 0, errIndex
	}
	for _, s := range []*string{&e.key, &e.rowHash, &e.srcHash, &e.wrote, &e.filled, &e.linesHash, &e.wroteKids} {
		if *s = str(); i < 0 {
			return 0, errIndex
		}
	}
	return i, nil
}

// block reads block i of the index, through a small cache.
func (t *table) block(i int) ([]byte, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	c := &t.cache[i%cacheSlots]
	if c.b != nil && c.i == i {
		return c.b, nil
	}
	b := make([]byte, t.offs[i+1]-t.offs[i])
	if _, err := t.f.ReadAt(b, t.offs[i]); err != nil {
		return nil, err
	}
	c.i, c.b = i, b
	return b, nil
}

// lookup finds the settled record (step, id) in the index.
func (t *table) lookup(step int, id string) (settled, bool, error) {
	if t == nil || len(t.firsts) == 0 {
		return settled{}, false, nil
	}
	k := tkey{step, id}
	i := sort.Search(len(t.firsts), func(i int) bool { return k.less(t.firsts[i]) }) - 1
	if i < 0 {
		return settled{}, false, nil
	}
	b, err := t.block(i)
	if err != nil {
		return settled{}, false, err
	}
	for len(b) > 0 {
		// Compare in place; decode (and allocate) only the one found.
		step, id, n, err := peekEntry(b)
		if err != nil {
			return settled{}, false, err
		}
		switch {
		case step == k.step && string(id) == k.id:
			var e entry
			if _, err := decodeEntry(b, &e); err != nil {
				return settled{}, false, err
			}
			return e.settled, true, nil
		case step > k.step || step == k.step && string(id) > k.id:
			return settled{}, false, nil
		}
		b = b[n:]
	}
	return settled{}, false, nil
}

// peekEntry reads the step and id of the entry at the start of b, and its
// length, without copying.
func peekEntry(b []byte) (step int, id []byte, n int, err error) {
	i := 0
	next := func() (uint64, bool) {
		v, k := binary.Uvarint(b[i:])
		if k <= 0 {
			return 0, false
		}
		i += k
		return v, true
	}
	skip := func() bool {
		l, ok := next()
		if !ok || uint64(len(b)-i) < l {
			return false
		}
		i += int(l)
		return true
	}
	st, ok := next()
	if !ok {
		return 0, nil, 0, errIndex
	}
	l, ok := next()
	if !ok || uint64(len(b)-i) < l {
		return 0, nil, 0, errIndex
	}
	id = b[i : i+int(l)]
	i += int(l)
	if len(b)-i < 2 {
		return 0, nil, 0, errIndex
	}
	i += 2
	// children, then key, row hash, source hash, what was written and
	// filled, the lines' hash and what the children were written with.
	if _, ok := next(); !ok || !skip() || !skip() || !skip() || !skip() || !skip() || !skip() || !skip() {
		return 0, nil, 0, errIndex
	}
	return int(st), id, i, nil
}

// each calls fn with every entry of the index, in order.
func (t *table) each(fn func(*entry) error) error { return t.eachFrom(-1, fn) }

// eachFrom is each from the block that holds the first entry of step on:
// the entries of earlier steps in that block come too.
func (t *table) eachFrom(step int, fn func(*entry) error) error {
	if t == nil || len(t.offs) == 0 {
		return nil
	}
	first := max(sort.Search(len(t.firsts), func(i int) bool { return t.firsts[i].step >= step })-1, 0)
	end := t.offs[len(t.offs)-1]
	r := bufio.NewReaderSize(io.NewSectionReader(t.f, t.offs[first], end-t.offs[first]), 64<<10)
	var buf []byte
	var e entry
	for i := first; i+1 < len(t.offs); i++ {
		n := int(t.offs[i+1] - t.offs[i])
		if cap(buf) < n {
			buf = make([]byte, n)
		}
		b := buf[:n]
		if _, err := io.ReadFull(r, b); err != nil {
			return err
		}
		for len(b) > 0 {
			k, err := decodeEntry(b, &e)
			if err != nil {
				return err
			}
			b = b[k:]
			if err := fn(&e); err != nil {
				return err
			}
		}
	}
	return nil
}

func (t *table) close() {
	if t != nil && t.f != nil {
		t.f.Close()
	}
}

// writeIndex writes an index of the entries of old merged with over (whose
// entries win; gone ones are left out) and the head, to a temporary file
// it then renames to path. It returns the new table, open for lookups.
func writeIndex(path string, old *table, over []entry, head []byte) (*table, error) {
	f, err := atomicfile.Create(path, 0o600)
	if err != nil {
		return nil, err
	}
	fail := func(err error) (*table, error) {
		f.Abort()
		return nil, err
	}
	sum := crc32.New(castagnoli)
	w := bufio.NewWriterSize(io.MultiWriter(f, sum), 256<<10)
	t := &table{}
	var (
		off     int64
		blockAt int64 = -1
		buf     []byte
	)
	put := func(e *entry) error {
		if blockAt < 0 || off-blockAt >= blockSize {
			blockAt = off
			t.firsts = append(t.firsts, tkey{e.step, e.id})
			t.offs = append(t.offs, off)
		}
		buf = appendEntry(buf[:0], e)
		off += int64(len(buf))
		t.n++
		_, err := w.Write(buf)
		return err
	}
	w.WriteString(indexMagic)
	off = int64(len(indexMagic))
	i := 0
	emitOver := func(upTo *tkey) error {
		for ; i < len(over) && (upTo == nil || over[i].less(*upTo)); i++ {
			if !over[i].gone {
				if err := put(&over[i]); err != nil {
					return err
				}
			}
		}
		return nil
	}
	err = old.each(func(e *entry) error {
		if err := emitOver(&e.tkey); err != nil {
			return err
		}
		if i < len(over) && over[i].tkey == e.tkey {
			return nil // replaced or gone
		}
		return put(e)
	})
	if err == nil {
		err = emitOver(nil)
	}
	if err != nil {
		return fail(err)
	}
	t.offs = append(t.offs, off)
	entriesEnd := off
	// The blocks' first keys, then the head, then the footer.
	buf = binary.AppendUvarint(buf[:0], uint64(len(t.firsts)))
	for b, k := range t.firsts {
		buf = binary.AppendUvarint(buf, uint64(k.step))
		buf = appendStr(buf, k.id)
		buf = binary.AppendUvarint(buf, uint64(t.offs[b]))
	}
	w.Write(buf)
	headAt := off + int64(len(buf))
	w.Write(head)
	var foot [footerLen]byte
	binary.LittleEndian.PutUint64(foot[0:], uint64(entriesEnd))
	binary.LittleEndian.PutUint64(foot[8:], uint64(entriesEnd))
	binary.LittleEndian.PutUint64(foot[16:], uint64(headAt))
	binary.LittleEndian.PutUint64(foot[24:], uint64(len(head)))
	w.Write(foot[:32])
	if err := w.Flush(); err != nil {
		return fail(err)
	}
	binary.LittleEndian.PutUint32(foot[32:], sum.Sum32())
	copy(foot[36:], indexTrailer)
	if _, err := f.Write(foot[32:]); err != nil {
		return fail(err)
	}
	kept, err := f.CommitOpen()
	if err != nil {
		return nil, err
	}
	t.f = kept
	return t, nil
}

// readIndex opens the index at path, checks it whole and returns its
// settled records (open for lookups) and its head.
func readIndex(path string) (*table, []byte, error) {
	f, err := atomicfile.OpenFile(path, os.O_RDONLY, 0) // replaced while open when the index is written again
	if err != nil {
		return nil, nil, err
	}
	t, head, err := checkIndex(f)
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	t.f = f
	return t, head, nil
}

func checkIndex(f *os.File) (*table, []byte, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	size := fi.Size()
	if size < int64(len(indexMagic))+footerLen {
		return nil, nil, errIndex
	}
	var foot [footerLen]byte
	if _, err := f.ReadAt(foot[:], size-footerLen); err != nil {
		return nil, nil, err
	}
	if string(foot[36:]) != indexTrailer {
		return nil, nil, errIndex
	}
	sum := crc32.New(castagnoli)
	if _, err := io.Copy(sum, io.NewSectionReader(f, 0, size-8)); err != nil {
		return nil, nil, err
	}
	if sum.Sum32() != binary.LittleEndian.Uint32(foot[32:]) {
		return nil, nil, errIndex
	}
	entriesEnd := int64(binary.LittleEndian.Uint64(foot[0:]))
	headAt := int64(binary.LittleEndian.Uint64(foot[16:]))
	headLen := int64(binary.LittleEndian.Uint64(foot[24:]))
	if entriesEnd < int64(len(indexMagic)) || headAt < entriesEnd || headAt+headLen != size-footerLen {
		return nil, nil, errIndex
	}
	magic := make([]byte, len(indexMagic))
	if _, err := f.ReadAt(magic, 0); err != nil || string(magic) != indexMagic {
		return nil, nil, errIndex
	}
	rest := make([]byte, headAt+headLen-entriesEnd)
	if _, err := f.ReadAt(rest, entriesEnd); err != nil {
		return nil, nil, err
	}
	sparse, head := rest[:headAt-entriesEnd], rest[headAt-entriesEnd:]
	t := &table{}
	nb, k := binary.Uvarint(sparse)
	if k <= 0 || nb > uint64(len(sparse)) {
		return nil, nil, errIndex
	}
	sparse = sparse[k:]
	for range nb {
		step, k := binary.Uvarint(sparse)
		if k <= 0 {
			return nil, nil, errIndex
		}
		sparse = sparse[k:]
		n, k := binary.Uvarint(sparse)
		if k <= 0 || n > uint64(len(sparse)-k) {
			return nil, nil, errIndex
		}
		id := string(sparse[k : k+int(n)])
		sparse = sparse[k+int(n):]
		off, k := binary.Uvarint(sparse)
		if k <= 0 {
			return nil, nil, errIndex
		}
		sparse = sparse[k:]
		if int64(off) < int64(len(indexMagic)) || int64(off) >= entriesEnd {
			return nil, nil, errIndex
		}
		t.firsts = append(t.firsts, tkey{int(step), id})
		t.offs = append(t.offs, int64(off))
	}
	if len(sparse) != 0 {
		return nil, nil, errIndex
	}
	t.offs = append(t.offs, entriesEnd)
	return t, bytes.Clone(head), nil
}

// removeStaleTemps removes index files a crash left half written: the
// writer's temporary files, and those of versions before it (.NAME-*).
func removeStaleTemps(path string) {
	atomicfile.RemoveStale(path, "."+filepath.Base(path)+"-")
}
