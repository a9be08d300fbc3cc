package journal

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/migrate-tool/migrate/internal/atomicfile"
	json "github.com/segmentio/encoding/json"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// ErrExists is returned by Create when the journal file already exists
// (resume it with Open instead).
var ErrExists = errors.New("journal already exists")

// CorruptError is a damaged line that is not the last one: something other
// than a crash changed the file, and guessing would risk duplicates.
type CorruptError struct {
	Path   string
	Line   int
	Reason string
	// NotJournal: the file's first line is none of a journal's (a plan
	// or a source given for a journal): nothing is damaged.
	NotJournal bool
}

func (e *CorruptError) Error() string {
	p := e.Path
	if p == "" {
		p = "journal"
	}
	if e.NotJournal {
		switch ext := strings.ToLower(filepath.Ext(p)); ext {
		case ".yaml", ".yml":
			return fmt.Sprintf("%s is a plan, not a journal: give the journal apply wrote from it (%s beside it, or the one --journal named)", p, strings.TrimSuffix(p, filepath.Ext(p))+".journal")
		}
		return fmt.Sprintf("%s is not a journal (its first line is none of a journal's): give the journal apply wrote (PLAN.journal beside the plan, or the one --journal named)", p)
	}
	return fmt.Sprintf("%s:%d: %s; the journal is damaged: restore it from a copy, or start a new journal and reconcile by hand", p, e.Line, e.Reason)
}

// file is what a journal writes through: *os.File, or in tests a file that
// fails as a full disk does.
type file interface {
	io.Writer
	io.Seeker
	Truncate(size int64) error
	Sync() error
	Close() error
}

// FileError is a journal that cannot be created, read or written: a full
// disk, a read-only file or folder. It names the journal, never the
// temporary file a new journal is written to first.
type FileError struct {
	Path string
	Op   string // "create", "open", "lock", "write" or "sync"
	Err  error
}

func (e *FileError) Error() string {
	switch e.Op {
	case "write", "sync":
		return fmt.Sprintf("%s: writing the journal: %v; the run stopped and the journal holds everything up to this point: free space (or make it writable), then run again to resume", e.Path, e.Err)
	}
	return fmt.Sprintf("%s: cannot %s the journal: %v", e.Path, e.Op, e.Err)
}

func (e *FileError) Unwrap() error { return e.Err }

// Resumable reports a failure in the middle of a run: what was done is in
// the journal, and the next run resumes once the disk takes writes again.
func (e *FileError) Resumable() bool { return e.Op == "write" || e.Op == "sync" }

// fileError wraps err for the journal at path; an *fs.PathError's own path
// is dropped (it may be the temporary file), its cause kept.
func fileError(path, op string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return &FileError{Path: path, Op: op, Err: err}
}

// Journal is an open journal file, appended to by one process. Append is
// safe for concurrent use; appends that overlap share one fsync (group
// commit), each still returning only once its own lines are on disk.
type Journal struct {
	// syncMu is held for an fsync and by Close; it is taken before mu.
	syncMu sync.Mutex
	synced uint64 // the last write generation an fsync covered (syncMu)
	mu     sync.Mutex
	gen    uint64 // write generation: one per Append that wrote (mu)
	f      file
	lock   *lock
	path   string
	batch  int
	buf    []byte
	// size is the length of the file up to its last whole line (mu).
	size int64
	// tornAt is where a torn tail starts; it is cut off before the next append.
	tornAt int64
	torn   bool
	// failed is sticky: after a failed fsync the kernel may have dropped
	// the lines it could not write and a later fsync would say nothing,
	// so no later append may claim to be durable (syncMu).
	failed error
	// live is the state with every appended line folded in, so that the
	// executor never replays the file it is writing (Counts, State).
	live *State
	// chained: the header says the lines are hash-chained; seq is the
	// number the next line gets, prev the SHA-256 of the last whole line
	// (mu).
	chained bool
	seq     int
	prev    [sha256.Size]byte
}

// Create starts a new journal at path with its header. It refuses to
// overwrite an existing file.
//
// The file appears at path only once its header is on disk: the header is
// written to a temporary file beside it, which is then linked into place.
// A crash while creating leaves no journal (at most a stray temporary
// file), never an empty one that every later apply would refuse as
// damaged (found by the crash campaign, crashtest/).
func Create(path string, h Header) (*Journal, error) { return create(path, h, false) }

func create(path string, h Header, lean bool) (*Journal, error) {
	lk, err := acquire(path)
	if err != nil {
		return nil, err
	}
	if _, err := os.Lstat(path); err == nil {
		lk.release()
		return nil, fmt.Errorf("%s: %w", path, ErrExists)
	}
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := atomicfile.CreateTemp(dir, "."+base+".new-*")
	if err != nil {
		lk.release()
		return nil, fileError(path, "create", err)
	}
	tmp := f.Name()
	fail := func(err error) (*Journal, error) {
		f.Close()
		os.Remove(tmp)
		lk.release()
		return nil, err
	}
	if err := f.Chmod(0o600); err != nil {
		return fail(fileError(path, "create", err))
	}
	h.Chained = true
	j := &Journal{f: f, path: path, live: newState(), chained: true, seq: 1}
	if lean {
		// An index left by an earlier journal of this name describes
		// another log: its checksums would refuse it, but it goes now.
		os.Remove(IndexPath(path))
		removeStaleIndex(path, nil)
		j.live.lean, j.live.over, j.live.idxPath = true, map[string]*settled{}, IndexPath(path)
	}
	if err := j.Append(Entry{Kind: KindHeader, Header: &h}); err != nil {
		var fe *FileError
		if errors.As(err, &fe) {
			fe.Op = "create" // nothing was done: not a run to resume
		}
		return fail(err)
	}
	// A hard link refuses an existing path, as O_EXCL did; where links are
	// not supported (FAT, exFAT), rename (the existence check above stands
	// in).
	if err := link(tmp, path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fail(fmt.Errorf("%s: %w", path, ErrExists))
		}
		if err := renameOpen(tmp, path); err != nil {
			// Where an open file cannot be renamed (Windows on a FAT or
			// exFAT stick: a sharing violation), it is closed, renamed
			// and opened again at its name.
			if err := j.f.Close(); err != nil {
				return fail(fileError(path, "create", err))
			}
			if err := os.Rename(tmp, path); err != nil {
				os.Remove(tmp)
				lk.release()
				return nil, fileError(path, "create", err)
			}
			if j.f, err = atomicfile.OpenFile(path, os.O_RDWR, 0o600); err == nil {
				_, err = j.f.Seek(0, io.SeekEnd)
			}
			if err != nil {
				// The journal holds its header: the next apply opens it.
				lk.release()
				return nil, fileError(path, "open", err)
			}
		}
	} else {
		os.Remove(tmp)
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync() // the new name survives a power cut too
		d.Close()
	}
	j.lock = lk
	return j, nil
}

// link and renameOpen are os.Link and os.Rename of the open temporary
// file; tests make them fail as a FAT volume on Windows does.
var link, renameOpen = os.Link, os.Rename

// Open replays an existing journal and opens it for appending. A torn last
// line is cut off before the next append.
//
// The journal stays locked until Close: a second Open or Create of it, in
// this process or another, fails with a *LockedError.
func Open(path string) (*Journal, *State, error) { return open(path, false) }

func open(path string, lean bool) (*Journal, *State, error) {
	lk, err := acquire(path)
	if err != nil {
		return nil, nil, err
	}
	fail := func(err error) (*Journal, *State, error) {
		lk.release()
		return nil, nil, err
	}
	f, err := atomicfile.OpenFile(path, os.O_RDWR, 0o600)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fail(err)
		}
		return fail(fileError(path, "open", err))
	}
	var st *State
	if lean {
		st, err = loadLean(f, path, true)
		if err == nil && st.lean {
			removeStaleIndex(path, st.idx)
		}
	} else {
		st, err = replay(f, path)
	}
	if err != nil {
		f.Close()
		return fail(err)
	}
	j := &Journal{f: f, lock: lk, path: path, batch: st.LastBatch, size: st.ValidSize, tornAt: st.ValidSize, torn: st.Torn, live: st.Clone()}
	st.idxPath = "" // the live state writes the index, the copy never
	if st.Header.Chained {
		// A resumed run's lines go on from the last whole line.
		last, err := lastLine(f, st.ValidSize)
		if err != nil {
			f.Close()
			return fail(fileError(path, "open", err))
		}
		j.chained, j.seq, j.prev = true, st.Entries+1, sha256.Sum256(last)
	}
	if _, err := f.Seek(st.ValidSize, io.SeekStart); err != nil {
		f.Close()
		return fail(fileError(path, "open", err))
	}
	return j, st, nil
}

// Load replays a journal read-only (status, report, undo listing).
func Load(path string) (*State, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return replay(f, path)
}

// ReadHeader reads a journal's first line only: what a command checks
// before it sends anything (the target), without replaying a long run.
func ReadHeader(path string) (Header, error) {
	f, err := os.Open(path)
	if err != nil {
		return Header{}, err
	}
	defer f.Close()
	line, err := bufio.NewReaderSize(f, 64<<10).ReadBytes('\n')
	if err != nil && err != io.EOF {
		return Header{}, err
	}
	st, err := replay(bytes.NewReader(line), path)
	if err != nil {
		return Header{}, err
	}
	return st.Header, nil
}

// Path is the journal's file name.
func (j *Journal) Path() string { return j.path }

// NextBatch returns a new batch number, unique within the journal.
func (j *Journal) NextBatch() int {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.batch++
	return j.batch
}

// Append writes entries as lines and fsyncs them before returning: when it
// returns nil, they survive a crash.
func (j *Journal) Append(entries ...Entry) error {
	mine, err := j.write(entries)
	if err != nil {
		return err
	}
	return j.sync(mine)
}

// AppendUnsynced writes entries without waiting for an fsync: they reach
// the disk with the next Append, Sync or Close. Lines stay in file order,
// so any later Append that returns nil has made these durable too. Use it
// for entries whose loss in a crash costs only a reconciliation on resume
// (a batch's outcome): the write-ahead intent must go through Append.
func (j *Journal) AppendUnsynced(entries ...Entry) error {
	_, err := j.write(entries)
	return err
}

// Sync makes everything written so far durable.
func (j *Journal) Sync() error {
	j.mu.Lock()
	g := j.gen
	j.mu.Unlock()
	return j.sync(g)
}

// write encodes entries, writes them and folds them into the live state;
// it returns their write generation for sync.
func (j *Journal) write(entries []Entry) (uint64, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.f == nil {
		return 0, errors.New("journal is closed")
	}
	if j.failed != nil {
		return 0, j.failed
	}
	if j.torn {
		// A torn line is cut off before anything follows it: a line
		// appended after it would turn it into damage in the middle.
		if err := j.cut(j.tornAt); err != nil {
			return 0, fileError(j.path, "write", fmt.Errorf("cutting off a torn last line: %w", err))
		}
	}
	j.buf = j.buf[:0]
	seq, prev := j.seq, j.prev
	for i := range entries {
		e := &entries[i]
		if j.chained && e.Kind != KindHeader {
			c := *e // the caller's entry stays as it was
			c.Seq, c.Prev = seq, hex.EncodeToString(prev[:])
			e = &c
		}
		start := len(j.buf)
		var err error
		j.buf, err = appendLine(j.buf, e)
		if err != nil {
			return 0, err
		}
		if j.chained {
			prev = sha256.Sum256(j.buf[start : len(j.buf)-1])
			seq++
		}
	}
	if _, err := j.f.Write(j.buf); err != nil {
		// A short write (a full disk) leaves part of the lines in the
		// file: cut them back now, or at the latest before the next
		// append. None of these entries counts as written.
		j.torn, j.tornAt = true, j.size
		if cerr := j.cut(j.size); cerr != nil {
			err = fmt.Errorf("%w (cutting it back: %v)", err, cerr)
		}
		return 0, fileError(j.path, "write", err)
	}
	j.size += int64(len(j.buf))
	j.seq, j.prev = seq, prev
	j.fold(j.buf)
	j.gen++
	if err := j.live.ioErr; err != nil {
		return j.gen, err
	}
	return j.gen, nil
}

// cut truncates the file to size and writes on from there; mu is held.
func (j *Journal) cut(size int64) error {
	if err := j.f.Truncate(size); err != nil {
		return err
	}
	if _, err := j.f.Seek(size, io.SeekStart); err != nil {
		return err
	}
	j.torn = false
	return nil
}

// sync returns once write generation mine is on disk: an fsync started
// after it was written covers it, so appends that arrive while one fsync
// runs wait for it and then share the next.
func (j *Journal) sync(mine uint64) error {
	j.syncMu.Lock()
	defer j.syncMu.Unlock()
	if j.synced >= mine {
		return nil
	}
	j.mu.Lock()
	f, upTo, failed := j.f, j.gen, j.failed
	j.mu.Unlock()
	switch {
	case failed != nil:
		return failed
	case f == nil:
		return errors.New("journal is closed")
	}
	if err := f.Sync(); err != nil {
		err = fileError(j.path, "sync", err)
		j.mu.Lock()
		j.failed = err
		j.mu.Unlock()
		return err
	}
	j.synced = upTo
	return nil
}

// fold applies written lines to the live state exactly as a replay of the
// file would (same decoding, same rules).
func (j *Journal) fold(buf []byte) {
	st := j.live
	st.Torn = false
	for len(buf) > 0 {
		i := bytes.IndexByte(buf, '\n')
		line, whole := buf[:i], buf[:i+1]
		buf = buf[i+1:]
		if st.apply(line) != "" {
			// Replay would call this line damaged; the state goes on as
			// replay of the lines before it would. No index covers it.
			st.Torn = true
			st.idxPath = ""
			continue
		}
		st.feed(whole)
		st.ValidSize += int64(len(line)) + 1
		st.Entries++
		st.maybeIndex()
	}
}

// Counts is State().Counts(step) as of the last Append; it is safe to call
// while other goroutines append.
func (j *Journal) Counts(step string) Counts {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.live.Counts(step)
}

// Snapshot is a copy of the state as of the last Append (what Load would
// return after it), safe to call while other goroutines append.
func (j *Journal) Snapshot() *State {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.live.Clone()
}

// Release closes the files of the runs a merge replaced since st was
// copied (Snapshot, OpenIndexed), kept open for it to read: on Windows a
// file goes only once closed, so the journal's folder could not be
// removed while the process lives. Call it once nothing reads st, nor any
// other copy taken before the same merge: their reads of those runs fail.
func (st *State) Release() {
	if st != nil {
		st.idx.closeRemoved()
	}
}

// State is the journal's own state as of the last Append, without a copy:
// call it once appending is over (after Close); it is what Load of the
// file would return.
func (j *Journal) State() *State {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.live.tidy()
	return j.live
}

// Close closes the file.
func (j *Journal) Close() error {
	j.syncMu.Lock()
	defer j.syncMu.Unlock()
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.f == nil {
		return nil
	}
	var err error
	if j.synced < j.gen && j.failed == nil {
		// An append wrote but has not reached its fsync yet.
		if err = j.f.Sync(); err == nil {
			j.synced = j.gen
		} else {
			err = fileError(j.path, "sync", err)
		}
	}
	if cerr := j.f.Close(); err == nil && cerr != nil {
		err = fileError(j.path, "write", cerr)
	}
	if err == nil && j.failed == nil && !j.torn && j.live.Entries > j.live.indexed {
		// What the next resume or status reads first.
		j.live.writeIndex()
	}
	// The runs are named by the index: read again, they open again.
	// Closed, the folder can be removed (Windows keeps a file that is
	// open).
	j.live.idx.release()
	j.f = nil
	j.lock.release()
	return err
}

// lineFlags are json.Marshal's: the bytes of a line are those
// encoding/json wrote before (a line's hash chains the next one).
const lineFlags = json.EscapeHTML | json.SortMapKeys

// appendLine encodes one entry as "crc32c-hex SP json LF".
func appendLine(dst []byte, e *Entry) ([]byte, error) {
	start := len(dst)
	if err := e.checkTimes(); err != nil {
		return dst, fmt.Errorf("journal entry: %w", err)
	}
	dst = append(dst, "00000000 "...) // the checksum's place
	out, err := json.Append(dst, e, lineFlags)
	if err != nil {
		return dst[:start], fmt.Errorf("journal entry: %w", err)
	}
	sum := crc32.Checksum(out[start+9:], castagnoli)
	var hex [8]byte
	s := strconv.AppendUint(hex[:0], uint64(sum), 16)
	copy(out[start+8-len(s):start+8], s)
	return append(out, '\n'), nil
}

// Fold applies entries to st as an Append to its journal would, by the
// rules of a replay, and writes nothing: the dry run reconciles the work
// in doubt of the journal it would resume on a copy of its state, in
// memory.
func (st *State) Fold(entries ...Entry) error {
	var line []byte
	for i := range entries {
		var err error
		if line, err = appendLine(line[:0], &entries[i]); err != nil {
			return err
		}
		if why := st.apply(line[:len(line)-1]); why != "" {
			return fmt.Errorf("journal entry: %s", why)
		}
		st.Entries++
	}
	return nil
}

// EncodeLine returns one journal line for e (tests and tools that build journals).
func EncodeLine(e Entry) ([]byte, error) { return appendLine(nil, &e) }

// lastLine reads back the last whole line of the file's first size bytes,
// without its newline: what the next line of a resumed run chains from.
func lastLine(f io.ReaderAt, size int64) ([]byte, error) {
	if size == 0 {
		return nil, nil
	}
	const chunk = 64 << 10
	end := size - 1 // the last line's newline
	var line []byte
	for start := end; start > 0; {
		from := max(start-chunk, 0)
		buf := make([]byte, start-from)
		if _, err := f.ReadAt(buf, from); err != nil {
			return nil, err
		}
		if i := bytes.LastIndexByte(buf, '\n'); i >= 0 {
			return append(buf[i+1:], line...), nil
		}
		line = append(buf, line...)
		start = from
	}
	return line, nil
}
