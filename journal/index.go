package journal

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"hash/fnv"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/migrate-tool/migrate/internal/atomicfile"
	"github.com/migrate-tool/migrate/internal/bloom"
)

// The index is what the journal knows, kept on disk so that apply, status
// and resume stay flat in the number of records, at ten million records as
// well as at ten. It holds the settled records (committed or skipped,
// nothing in flight: the bulk of a run) with their status, key and what
// they were written with, and a head: the state of every other record in
// full, the open batches, the counters, and which prefix of the journal it
// covers. A lean State (OpenIndexed, LoadIndexed) keeps the settled
// records there and in a small overlay of those settled since it was
// written.
//
// The settled records lie in runs, as the duplicate-key spill's keys do:
// files beside the journal (JOURNAL.idx.rN), each sorted by step and record
// id in blocks of about 8 KB, written once under a name never used before
// and never changed after. A run keeps in memory the first key of each
// block and a Bloom filter, about 1.5 bytes a record: a lookup reads one
// block of each run whose filter admits the record, the newest first (a
// newer run's entry of a record wins, and a gone one, a record no longer
// settled, hides the older). When the overlay fills, it becomes a run;
// eight runs of a level are merged into one of the next, so a record is
// rewritten a few times in all, never the whole index at every write. The
// head is the file JOURNAL.idx: small, read whole and closed, naming the
// runs it covers with their sizes and checksums.
//
// The index is a cache of the log, never the truth: every file of it is
// written to a temporary file, fsynced and renamed; each carries a
// checksum of itself, and the head a checksum of the journal's header line
// and of the bytes that end the prefix it covers. Missing, damaged,
// written by a crash mid-write, naming a run that is not there or not the
// one it wrote, or covering something the journal does not hold, it is
// ignored and rebuilt from the log; trusted, only the lines after its
// prefix are replayed. Runs no head names (a crash between writing a run
// and the head, or the runs a merge replaced) are removed by the next run
// that holds the journal's lock. No file of the index is replaced while
// it is open: Windows could not.

const (
	// headMagic names the head's format: MIGIDX5 keeps the settled
	// records in runs (MIGRUN1); an index of another format is rebuilt
	// from the log.
	headMagic  = "MIGIDX5\n"
	runMagic   = "MIGRUN1\n"
	headFooter = 8 + 4 + 4   // the head's length, checksum, trailer
	runFooter  = 8*3 + 4 + 4 // entries' end, filter's start, count, checksum, trailer
	trailer    = "IDX!"
	blockSize  = 32 << 10
	// tailSpan is how much of the covered prefix's end the index checks.
	tailSpan   = 4 << 10
	cacheSlots = 4 // blocks of a run kept in memory
	// mergeWidth runs of a level are merged into one of the next.
	mergeWidth = 8
)

// filterMax is the most entries a run keeps a Bloom filter of. A larger
// run (a million records and more) is looked in by its range and one read
// of a block: its filter would hold most of the process's memory at ten
// million records (1.25 bytes each). (A variable: tests make it small.)
var filterMax = 1 << 20

// overlayMin is how many settled records are kept in memory before they
// are written to a run. (A variable: tests write runs of a few records.)
var overlayMin = 16 << 10

// SetIndexEvery sets how many records may settle in memory before they are
// written to the index: fewer costs more writes and less memory. It is for
// the whole process; set it before opening a journal.
func SetIndexEvery(n int) { overlayMin = max(n, 1) }

// IndexPath is the index of the journal at path (its head; the runs are
// named after it).
func IndexPath(journal string) string { return journal + ".idx" }

// runPrefix begins the name of every run of the index whose head is idx.
func runPrefix(idx string) string { return filepath.Base(idx) + ".r" }

// settled is a record that is committed or skipped with nothing in flight.
// gone marks, in the overlay and in a run, a record of an older run that
// is no longer settled (work on it started again).
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

type tkey struct {
	step int
	id   string
}

func (a tkey) less(b tkey) bool { return a.step < b.step || a.step == b.step && a.id < b.id }

// hash is the key's hash for the runs' filters: the same in every process.
func (a tkey) hash() [2]uint64 {
	h := fnv.New128a()
	var b [binary.MaxVarintLen64]byte
	h.Write(b[:binary.PutUvarint(b[:], uint64(a.step))])
	h.Write([]byte(a.id))
	var sum [16]byte
	h.Sum(sum[:0])
	return [2]uint64{binary.LittleEndian.Uint64(sum[:8]), binary.LittleEndian.Uint64(sum[8:])}
}

// entry is one settled record as a run stores it.
type entry struct {
	tkey
	settled
}

func appendEntry(dst []byte, e *entry) []byte {
	dst = binary.AppendUvarint(dst, uint64(e.step))
	dst = appendStr(dst, e.id)
	st := byte('c')
	switch {
	case e.gone:
		st = 'g'
	case e.status == Skipped:
		st = 's'
	}
	var fl byte
	if e.created {
		fl = 1
	}
	dst = append(dst, st, fl)
	dst = binary.AppendUvarint(dst, uint64(e.children))
	for _, s := range []string{e.key, e.rowHash, e.srcHash, e.wrote, e.filled, e.linesHash, e.wroteKids} {
		dst = appendStr(dst, s)
	}
	return dst
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

// reader reads an entry's fields from b; i is -1 once anything was short.
type reader struct {
	b []byte
	i int
}

func (r *reader) uv() uint64 {
	if r.i < 0 {
		return 0
	}
	v, n := binary.Uvarint(r.b[r.i:])
	if n <= 0 {
		r.i = -1
		return 0
	}
	r.i += n
	return v
}

func (r *reader) bytes() []byte {
	n := r.uv()
	if r.i < 0 || uint64(len(r.b)-r.i) < n {
		r.i = -1
		return nil
	}
	s := r.b[r.i : r.i+int(n)]
	r.i += int(n)
	return s
}

// decodeEntry decodes the entry at the start of b and returns its length.
func decodeEntry(b []byte, e *entry) (int, error) {
	r := reader{b: b}
	e.step = int(r.uv())
	e.id = string(r.bytes())
	if r.i < 0 || len(b)-r.i < 2 {
		return 0, errIndex
	}
	e.status, e.gone = Committed, false
	switch b[r.i] {
	case 's':
		e.status = Skipped
	case 'g':
		e.gone = true
	}
	e.created = b[r.i+1] == 1
	r.i += 2
	e.children = int(r.uv())
	for _, s := range []*string{&e.key, &e.rowHash, &e.srcHash, &e.wrote, &e.filled, &e.linesHash, &e.wroteKids} {
		*s = string(r.bytes())
	}
	if r.i < 0 {
		return 0, errIndex
	}
	return r.i, nil
}

// peekEntry reads the step and id of the entry at the start of b, and its
// length, without copying.
func peekEntry(b []byte) (step int, id []byte, n int, err error) {
	r := reader{b: b}
	step = int(r.uv())
	id = r.bytes()
	if r.i < 0 || len(b)-r.i < 2 {
		return 0, nil, 0, errIndex
	}
	r.i += 2
	// children, then key, row hash, source hash, what was written and
	// filled, the lines' hash and what the children were written with.
	r.uv()
	for range 7 {
		r.bytes()
	}
	if r.i < 0 {
		return 0, nil, 0, errIndex
	}
	return step, id, r.i, nil
}

// table is one run: settled records sorted by step number and record id,
// in blocks of about blockSize.
type table struct {
	f     *os.File // nil until read, and after release
	dir   string   // the journal's folder
	name  string
	level int
	n     int // entries, gone ones included
	size  int64
	sum   uint32
	keys  []byte        // each block's first key: step and id, as uvarints and bytes
	keyAt []uint32      // where each block's first key begins in keys
	offs  []int64       // each block's offset, then the end of the entries
	bloom *bloom.Filter // nil for a run past filterMax
	last  []byte        // the last entry's key, as keys holds each first
	mu    sync.Mutex
	cache [cacheSlots]cblock
	// shared: a copy of the state (Clone) reads the run too; removed: its
	// name is gone (a merge replaced it) and only its open file reads it.
	shared, removed atomic.Bool
}

type cblock struct {
	i int
	b []byte
}

// runRef names a run in the head, with what it must be.
type runRef struct {
	Name  string `json:"name"`
	Level int    `json:"level"`
	N     int    `json:"n"`
	Size  int64  `json:"size"`
	Sum   uint32 `json:"crc"`
}

func (t *table) ref() runRef {
	return runRef{Name: t.name, Level: t.level, N: t.n, Size: t.size, Sum: t.sum}
}

// key is the first key of block i as keys holds it.
func (t *table) key(i int) []byte {
	if i+1 < len(t.keyAt) {
		return t.keys[t.keyAt[i]:t.keyAt[i+1]]
	}
	return t.keys[t.keyAt[i]:]
}

// first is the first key of block i.
func (t *table) first(i int) (int, []byte) {
	r := reader{b: t.key(i)}
	step := int(r.uv())
	return step, r.bytes()
}

// appendKey appends a record's key as a run's blocks' first keys and its
// last key hold it: the step, then the id.
func appendKey(dst []byte, step int, id string) []byte {
	return appendStr(binary.AppendUvarint(dst, uint64(step)), id)
}

// after says whether k comes after the run's last entry.
func (t *table) after(k tkey) bool {
	r := reader{b: t.last}
	step := int(r.uv())
	return cmpKey(step, r.bytes(), k) < 0
}

// cmpKey compares (step, id) with k.
func cmpKey(step int, id []byte, k tkey) int {
	switch {
	case step != k.step:
		if step < k.step {
			return -1
		}
		return 1
	}
	return strings.Compare(string(id), k.id)
}

// block reads block i of the run, through a small cache.
func (t *table) block(i int) ([]byte, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	c := &t.cache[i%cacheSlots]
	if c.b != nil && c.i == i {
		return c.b, nil
	}
	f, err := t.fileLocked()
	if err != nil {
		return nil, err
	}
	b := make([]byte, t.offs[i+1]-t.offs[i])
	if _, err := f.ReadAt(b, t.offs[i]); err != nil {
		return nil, err
	}
	c.i, c.b = i, b
	return b, nil
}

// lookup finds the entry of (step, id) in the run; a gone one is found too.
func (t *table) lookup(k tkey, h [2]uint64) (entry, bool, error) {
	if len(t.keyAt) == 0 || t.bloom != nil && !t.bloom.MayHave(h) || t.after(k) {
		return entry{}, false, nil
	}
	i := sort.Search(len(t.keyAt), func(i int) bool {
		step, id := t.first(i)
		return cmpKey(step, id, k) > 0
	}) - 1
	if i < 0 {
		return entry{}, false, nil
	}
	b, err := t.block(i)
	if err != nil {
		return entry{}, false, err
	}
	for len(b) > 0 {
		// Compare in place; decode (and allocate) only the one found.
		step, id, n, err := peekEntry(b)
		if err != nil {
			return entry{}, false, err
		}
		switch c := cmpKey(step, id, k); {
		case c == 0:
			var e entry
			if _, err := decodeEntry(b, &e); err != nil {
				return entry{}, false, err
			}
			return e, true, nil
		case c > 0:
			return entry{}, false, nil
		}
		b = b[n:]
	}
	return entry{}, false, nil
}

// cursor reads a run's entries in order.
type cursor struct {
	t   *table
	r   *bufio.Reader
	blk int    // the next block to read
	b   []byte // what is left of the block read
	buf []byte
	e   entry
	ok  bool // e is an entry not taken yet
	age int  // the run's place: higher is newer
}

// cursor starts a cursor at the block that holds the first entry of step
// (the entries of earlier steps in that block come too).
func (t *table) cursor(step, age int) (*cursor, error) {
	first := 0
	if step >= 0 {
		first = max(sort.Search(len(t.keyAt), func(i int) bool { s, _ := t.first(i); return s >= step })-1, 0)
	}
	c := &cursor{t: t, blk: first, age: age}
	if first < len(t.keyAt) {
		f, err := t.file()
		if err != nil {
			return nil, err
		}
		end := t.offs[len(t.offs)-1]
		c.r = bufio.NewReaderSize(io.NewSectionReader(f, t.offs[first], end-t.offs[first]), 64<<10)
	}
	return c, nil
}

// file is the run's file, opened when first read.
func (t *table) file() (*os.File, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.fileLocked()
}

func (t *table) fileLocked() (*os.File, error) {
	if t.f == nil {
		f, err := atomicfile.OpenFile(filepath.Join(t.dir, t.name), os.O_RDONLY, 0)
		if err != nil {
			return nil, err
		}
		t.f = f
	}
	return t.f, nil
}

// release closes the run's file; the next read opens it again. Only for a
// run a head names: the file of one a merge replaced is gone.
func (t *table) release() {
	if !t.removed.Load() {
		t.closeFile()
	}
}

// closeFile closes the run's file, if open.
func (t *table) closeFile() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.f != nil {
		t.f.Close()
		t.f = nil
	}
}

// next moves to the next entry; c.ok is false at the end.
func (c *cursor) next() error {
	c.ok = false
	for len(c.b) == 0 {
		if c.r == nil || c.blk+1 >= len(c.t.offs) {
			return nil
		}
		n := int(c.t.offs[c.blk+1] - c.t.offs[c.blk])
		if cap(c.buf) < n {
			c.buf = make([]byte, n)
		}
		c.b = c.buf[:n]
		if _, err := io.ReadFull(c.r, c.b); err != nil {
			return err
		}
		c.blk++
	}
	k, err := decodeEntry(c.b, &c.e)
	if err != nil {
		return err
	}
	c.b, c.ok = c.b[k:], true
	return nil
}

// runs is the index's runs, oldest first. A runs value never changes once
// made: writing the index makes a new one, so that a copy of the state
// (Snapshot) keeps reading the runs it had.
type runs struct {
	list []*table
}

// count is how many entries the runs hold, a record counted once a run
// it is in (an upper bound of the settled records).
func (x *runs) count() int {
	n := 0
	if x != nil {
		for _, t := range x.list {
			n += t.n
		}
	}
	return n
}

// lookup finds the settled record (step, id), the newest run first.
func (x *runs) lookup(step int, id string) (settled, bool, error) {
	if x == nil || len(x.list) == 0 {
		return settled{}, false, nil
	}
	k := tkey{step, id}
	h := k.hash()
	for i := len(x.list) - 1; i >= 0; i-- {
		e, ok, err := x.list[i].lookup(k, h)
		if err != nil || ok {
			return e.settled, ok && !e.gone, err
		}
	}
	return settled{}, false, nil
}

// merge calls fn with the entries of tables in order, each record once:
// its newest entry, gone ones too when keepGone is set.
func merge(tables []*table, step int, keepGone bool, fn func(*entry) error) error {
	cs := make([]*cursor, 0, len(tables))
	for age, t := range tables {
		c, err := t.cursor(step, age)
		if err != nil {
			return err
		}
		if err := c.next(); err != nil {
			return err
		}
		cs = append(cs, c)
	}
	for {
		var least *cursor
		for _, c := range cs {
			if c.ok && (least == nil || c.e.tkey.less(least.e.tkey) || c.e.tkey == least.e.tkey && c.age > least.age) {
				least = c
			}
		}
		if least == nil {
			return nil
		}
		k := least.e.tkey
		if keepGone || !least.e.gone {
			if err := fn(&least.e); err != nil {
				return err
			}
		}
		for _, c := range cs {
			for c.ok && c.e.tkey == k {
				if err := c.next(); err != nil {
					return err
				}
			}
		}
	}
}

// each calls fn with every settled record of the runs, in order.
func (x *runs) each(fn func(*entry) error) error { return x.eachFrom(-1, fn) }

// eachFrom is each from the block that holds the first entry of step on:
// records of earlier steps may come first.
func (x *runs) eachFrom(step int, fn func(*entry) error) error {
	if x == nil {
		return nil
	}
	return merge(x.list, step, false, fn)
}

// runWriter writes one run.
type runWriter struct {
	f       *atomicfile.File
	w       *bufio.Writer
	sum     hash.Hash32
	t       *table
	off     int64
	blockAt int64
	buf     []byte
}

// newRunWriter starts the run named name in dir, of about n entries.
func newRunWriter(dir, name string, level, n int) (*runWriter, error) {
	f, err := atomicfile.Create(filepath.Join(dir, name), 0o600)
	if err != nil {
		return nil, err
	}
	sum := crc32.New(castagnoli)
	w := &runWriter{f: f, sum: sum, w: bufio.NewWriterSize(io.MultiWriter(f, sum), 256<<10), blockAt: -1,
		t: &table{dir: dir, name: name, level: level}}
	switch {
	case n <= filterMax/mergeWidth:
		w.t.bloom = bloom.New(n, bloom.BitsPerKey)
	case n <= filterMax:
		// The largest runs with a filter hold most of the entries that
		// have one: a leaner filter halves what they keep in memory.
		w.t.bloom = bloom.New(n, bloom.LeanBitsPerKey)
	}
	w.w.WriteString(runMagic)
	w.off = int64(len(runMagic))
	return w, nil
}

func (w *runWriter) put(e *entry) error {
	t := w.t
	if w.blockAt < 0 || w.off-w.blockAt >= blockSize {
		w.blockAt = w.off
		t.keyAt = append(t.keyAt, uint32(len(t.keys)))
		t.keys = appendKey(t.keys, e.step, e.id)
		t.offs = append(t.offs, w.off)
	}
	if t.bloom != nil {
		t.bloom.Add(e.tkey.hash())
	}
	w.buf = appendEntry(w.buf[:0], e)
	w.off += int64(len(w.buf))
	t.n++
	_, err := w.w.Write(w.buf)
	return err
}

// finish writes the blocks' first keys, the filter and the footer, and
// commits the run, open for lookups.
func (w *runWriter) finish() (*table, error) {
	t := w.t
	if t.n > 0 {
		// w.buf holds the last entry put.
		step, id, _, _ := peekEntry(w.buf)
		t.last = appendKey(nil, step, string(id))
	}
	t.offs = append(t.offs, w.off)
	entriesEnd := w.off
	buf := binary.AppendUvarint(w.buf[:0], uint64(len(t.keyAt)))
	for b := range t.keyAt {
		buf = append(buf, t.key(b)...)
		buf = binary.AppendUvarint(buf, uint64(t.offs[b]))
	}
	bloomAt := entriesEnd + int64(len(buf))
	if t.bloom != nil {
		buf, _ = t.bloom.AppendBinary(buf)
	}
	var foot [runFooter]byte
	binary.LittleEndian.PutUint64(foot[0:], uint64(entriesEnd))
	binary.LittleEndian.PutUint64(foot[8:], uint64(bloomAt))
	binary.LittleEndian.PutUint64(foot[16:], uint64(t.n))
	buf = append(buf, foot[:24]...)
	w.w.Write(buf)
	if err := w.w.Flush(); err != nil {
		w.f.Abort()
		return nil, err
	}
	t.sum = w.sum.Sum32()
	binary.LittleEndian.PutUint32(foot[24:], t.sum)
	copy(foot[28:], trailer)
	if _, err := w.f.Write(foot[24:]); err != nil {
		w.f.Abort()
		return nil, err
	}
	t.size = entriesEnd + int64(len(buf)) + 8
	kept, err := w.f.CommitOpen()
	if err != nil {
		return nil, err
	}
	t.f = kept
	return t, nil
}

func (w *runWriter) abort() { w.f.Abort() }

// openRun opens the run ref names in dir and checks it whole against ref
// and its own checksum.
func openRun(dir string, ref runRef) (*table, error) {
	if ref.Name == "" || filepath.Base(ref.Name) != ref.Name {
		return nil, errIndex
	}
	f, err := atomicfile.OpenFile(filepath.Join(dir, ref.Name), os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	// Opened again when first read: a state that never reads it (status)
	// holds no file open.
	defer f.Close()
	t, err := checkRun(f, ref)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ref.Name, err)
	}
	t.dir, t.name, t.level = dir, ref.Name, ref.Level
	return t, nil
}

func checkRun(f *os.File, ref runRef) (*table, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	size := fi.Size()
	if size != ref.Size || size < int64(len(runMagic))+runFooter {
		return nil, errIndex
	}
	var foot [runFooter]byte
	if _, err := f.ReadAt(foot[:], size-runFooter); err != nil {
		return nil, err
	}
	if string(foot[28:]) != trailer {
		return nil, errIndex
	}
	sum := crc32.New(castagnoli)
	if _, err := io.Copy(sum, io.NewSectionReader(f, 0, size-8)); err != nil {
		return nil, err
	}
	if s := sum.Sum32(); s != binary.LittleEndian.Uint32(foot[24:]) || s != ref.Sum {
		return nil, errIndex
	}
	entriesEnd := int64(binary.LittleEndian.Uint64(foot[0:]))
	bloomAt := int64(binary.LittleEndian.Uint64(foot[8:]))
	n := binary.LittleEndian.Uint64(foot[16:])
	if entriesEnd < int64(len(runMagic)) || bloomAt < entriesEnd || bloomAt > size-runFooter || n != uint64(ref.N) {
		return nil, errIndex
	}
	magic := make([]byte, len(runMagic))
	if _, err := f.ReadAt(magic, 0); err != nil || string(magic) != runMagic {
		return nil, errIndex
	}
	rest := make([]byte, size-runFooter-entriesEnd)
	if _, err := f.ReadAt(rest, entriesEnd); err != nil {
		return nil, err
	}
	sparse, filter := rest[:bloomAt-entriesEnd], rest[bloomAt-entriesEnd:]
	t := &table{n: int(n), size: size, sum: ref.Sum}
	if len(filter) > 0 {
		var ok bool
		if t.bloom, ok = bloom.Decode(filter); !ok {
			return nil, errIndex
		}
	} else if n <= uint64(filterMax) {
		return nil, errIndex
	}
	r := reader{b: sparse}
	nb := r.uv()
	if r.i < 0 || nb > uint64(len(sparse)) {
		return nil, errIndex
	}
	for range nb {
		step := r.uv()
		id := r.bytes()
		off := r.uv()
		if r.i < 0 || int64(off) < int64(len(runMagic)) || int64(off) >= entriesEnd {
			return nil, errIndex
		}
		t.keyAt = append(t.keyAt, uint32(len(t.keys)))
		t.keys = appendKey(t.keys, int(step), string(id))
		t.offs = append(t.offs, int64(off))
	}
	if r.i != len(sparse) {
		return nil, errIndex
	}
	t.offs = append(t.offs, entriesEnd)
	if nb > 0 {
		// The last entry's key, from the last block.
		b := make([]byte, entriesEnd-t.offs[nb-1])
		if _, err := f.ReadAt(b, t.offs[nb-1]); err != nil {
			return nil, err
		}
		for len(b) > 0 {
			step, id, k, err := peekEntry(b)
			if err != nil {
				return nil, err
			}
			t.last = appendKey(t.last[:0], step, string(id))
			b = b[k:]
		}
	}
	return t, nil
}

// writeHead writes the index's head file at path.
func writeHead(path string, head []byte) error {
	var foot [headFooter]byte
	binary.LittleEndian.PutUint64(foot[0:], uint64(len(head)))
	sum := crc32.New(castagnoli)
	sum.Write([]byte(headMagic))
	sum.Write(head)
	sum.Write(foot[:8])
	binary.LittleEndian.PutUint32(foot[8:], sum.Sum32())
	copy(foot[12:], trailer)
	return atomicfile.Write(path, 0o600, func(w io.Writer) error {
		for _, b := range [][]byte{[]byte(headMagic), head, foot[:]} {
			if _, err := w.Write(b); err != nil {
				return err
			}
		}
		return nil
	})
}

// readHead reads the index's head file at path and checks it whole.
func readHead(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if len(b) < len(headMagic)+headFooter || string(b[:len(headMagic)]) != headMagic || string(b[len(b)-4:]) != trailer {
		return nil, fmt.Errorf("%s: %w", path, errIndex)
	}
	foot := b[len(b)-headFooter:]
	n := binary.LittleEndian.Uint64(foot)
	if n != uint64(len(b)-len(headMagic)-headFooter) || crc32.Checksum(b[:len(b)-8], castagnoli) != binary.LittleEndian.Uint32(foot[8:]) {
		return nil, fmt.Errorf("%s: %w", path, errIndex)
	}
	return bytes.Clone(b[len(headMagic) : len(headMagic)+int(n)]), nil
}

// flush makes the runs of x with over (sorted, gone ones included) written
// as a new run, then merged as the levels fill, beside the head idx. It
// returns the new runs, the tables it replaced (whose files go once a head
// no longer names them: drop) and those it made (whose files go if no head
// ever names them: discard); on an error nothing written is left.
func (x *runs) flush(idx string, next *int, over []entry) (_ *runs, dropped, made []*table, _ error) {
	var list []*table
	if x != nil {
		list = append(list, x.list...)
	}
	dir, base := filepath.Dir(idx), runPrefix(idx)
	fail := func(err error) (*runs, []*table, []*table, error) {
		discard(made)
		return nil, nil, nil, err
	}
	// write writes a run of about n entries at level, put by fill.
	write := func(level, n int, fill func(put func(*entry) error) error) error {
		*next++
		w, err := newRunWriter(dir, base+strconv.Itoa(*next), level, n)
		if err != nil {
			return err
		}
		if err := fill(w.put); err != nil {
			w.abort()
			return err
		}
		t, err := w.finish()
		if err != nil {
			return err
		}
		made = append(made, t)
		list = append(list, t)
		return nil
	}
	if len(over) > 0 {
		err := write(0, len(over), func(put func(*entry) error) error {
			for i := range over {
				// A gone record hides an older run's entry: with none,
				// it need not be written.
				if over[i].gone && len(list) == 0 {
					continue
				}
				if err := put(&over[i]); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return fail(err)
		}
	}
	for len(list) > 0 {
		level, from := list[len(list)-1].level, len(list)-1
		for from > 0 && list[from-1].level == level {
			from--
		}
		if len(list)-from < mergeWidth {
			break
		}
		n := 0
		for _, t := range list[from:] {
			n += t.n
		}
		merged := list[from:]
		list = list[:from:from]
		// Merged into the oldest, a gone record has nothing left to hide.
		if err := write(level+1, n, func(put func(*entry) error) error { return merge(merged, -1, from > 0, put) }); err != nil {
			return fail(err)
		}
		dropped = append(dropped, merged...)
	}
	return &runs{list: list}, dropped, made, nil
}

// discard closes and removes runs no head names.
func discard(tables []*table) {
	for _, t := range tables {
		t.release()
		os.Remove(filepath.Join(t.dir, t.name))
	}
}

// openRuns checks the runs the head names, in dir; an error when any is
// not there or not as named.
func openRuns(dir string, refs []runRef) (*runs, error) {
	x := &runs{}
	for _, ref := range refs {
		t, err := openRun(dir, ref)
		if err != nil {
			return nil, err
		}
		x.list = append(x.list, t)
	}
	return x, nil
}

func (x *runs) refs() []runRef {
	if x == nil {
		return nil
	}
	out := make([]runRef, len(x.list))
	for i, t := range x.list {
		out[i] = t.ref()
	}
	return out
}

// share marks the runs as read by a copy of the state too.
func (x *runs) share() {
	if x != nil {
		for _, t := range x.list {
			t.shared.Store(true)
		}
	}
}

// drop removes the file of a run a merge replaced. A copy of the state
// that reads it keeps it open first: on Unix the name goes and the file
// stays; on Windows, where it was opened to allow this, it goes once the
// last handle closes. Otherwise it is closed and goes at once.
func (t *table) drop() {
	if t.shared.Load() {
		if _, err := t.file(); err != nil {
			return // left for the next run to remove
		}
		t.removed.Store(true)
	} else {
		t.release()
	}
	os.Remove(filepath.Join(t.dir, t.name))
}

// closeRemoved closes the files of the runs a merge replaced (drop),
// kept open for a copy of the state.
func (x *runs) closeRemoved() {
	if x == nil {
		return
	}
	for _, t := range x.list {
		if t.removed.Load() {
			t.closeFile()
		}
	}
}

// release closes the runs' files (Journal.Close); a later read opens them
// again.
func (x *runs) release() {
	if x != nil {
		for _, t := range x.list {
			t.release()
		}
	}
}

// removeStaleIndex removes what a crash or a merge left of the index of
// the journal at path: its writers' temporary files, and the runs keep
// does not hold (all of them when keep is nil). Only under the journal's
// lock: another writer's files would go too.
func removeStaleIndex(path string, keep *runs) {
	idx := IndexPath(path)
	base := filepath.Base(idx)
	// The writers' temporaries: the head's, the runs' (.NAME.rN.tmp-) and
	// those of versions before (.NAME-*).
	atomicfile.RemoveStale(idx, "."+base+"-", "."+base+".r")
	held := map[string]bool{}
	if keep != nil {
		for _, t := range keep.list {
			held[t.name] = true
		}
	}
	dir := filepath.Dir(idx)
	des, _ := os.ReadDir(dir)
	prefix := runPrefix(idx)
	for _, de := range des {
		name := de.Name()
		if rest, ok := strings.CutPrefix(name, prefix); ok && !held[name] {
			if _, err := strconv.Atoi(rest); err == nil {
				os.Remove(filepath.Join(dir, name))
			}
		}
	}
}
