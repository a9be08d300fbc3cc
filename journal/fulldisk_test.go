package journal

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// fullDisk is a journal file on a disk with room bytes left: a write that
// does not fit writes what fits and fails with ENOSPC, as write(2) does.
// truncFails and syncFails make those calls fail as well.
type fullDisk struct {
	file
	room       int
	truncFails int // how many Truncate calls fail
	syncFails  bool
}

func (d *fullDisk) Write(p []byte) (int, error) {
	if len(p) <= d.room {
		d.room -= len(p)
		return d.file.Write(p)
	}
	n, err := d.file.Write(p[:d.room])
	d.room -= n
	if err == nil {
		err = &os.PathError{Op: "write", Path: "/tmp/.run.journal.new-123", Err: syscall.ENOSPC}
	}
	return n, err
}

func (d *fullDisk) Truncate(size int64) error {
	if d.truncFails > 0 {
		d.truncFails--
		return syscall.EIO
	}
	return d.file.Truncate(size)
}

func (d *fullDisk) Sync() error {
	if d.syncFails {
		return syscall.EIO
	}
	return d.file.Sync()
}

func skipped(id string) Entry {
	return Entry{Kind: KindRecord, Record: &RecordEntry{Step: "customers", ID: id, Status: Skipped}}
}

// TestShortWrite: a disk that fills in the middle of a line never damages
// the journal. The part of the lines that reached the file is
// cut back before anything else is appended (at once, or when cutting
// failed, before the next append); the failed Append counts for nothing;
// once space is back the journal takes appends again and replays with
// every line whole and nothing torn, in the middle or at the end. The
// error names the journal, not a temporary file, and says to run again.
func TestShortWrite(t *testing.T) {
	t.Parallel()
	line, _ := EncodeLine(skipped("C2"))
	tests := []struct {
		name       string
		room       int // bytes left when C2..C3 are appended
		truncFails int
		entries    []Entry
	}{
		{"in the first line", 10, 0, []Entry{skipped("C2")}},
		{"at a line boundary of a two-line append", len(line), 0, []Entry{skipped("C2"), skipped("C3")}},
		{"in the second line", len(line) + 7, 0, []Entry{skipped("C2"), skipped("C3")}},
		{"nothing fits", 0, 0, []Entry{skipped("C2")}},
		{"cutting back fails once", 10, 1, []Entry{skipped("C2")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "run.journal")
			j, err := Create(path, testHeader())
			must(t, err)
			must(t, j.Append(skipped("C1")))
			before, _ := os.ReadFile(path)
			disk := &fullDisk{file: j.f, room: tc.room, truncFails: tc.truncFails}
			j.f = disk

			err = j.Append(tc.entries...)
			var fe *FileError
			if !errors.As(err, &fe) || !fe.Resumable() || !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("Append on a full disk: %v, want a resumable *FileError wrapping ENOSPC", err)
			}
			if msg := err.Error(); !strings.HasPrefix(msg, path+":") || strings.Contains(msg, ".new-") || !strings.Contains(msg, "run again") {
				t.Errorf("message %q: must name the journal, not a temporary file, and say what to do", msg)
			}
			if tc.truncFails == 0 {
				if now, _ := os.ReadFile(path); string(now) != string(before) {
					t.Errorf("the short write was not cut back:\n%q", now[len(before):])
				}
			}
			if got := j.Counts("customers"); got != (Counts{Skipped: 1}) {
				t.Errorf("live state after the failed append: %+v, want only C1", got)
			}

			disk.room = 1 << 20 // space is back
			must(t, j.Append(skipped("C4")))
			must(t, j.Close())
			st, err := Load(path)
			if err != nil {
				t.Fatalf("replay after a full disk: %v", err)
			}
			if st.Torn || st.Entries != 3 || st.Record("customers", "C2") != nil || st.Record("customers", "C3") != nil ||
				st.Record("customers", "C4").Status() != Skipped {
				t.Errorf("replay: torn=%v entries=%d C2=%v C3=%v", st.Torn, st.Entries, st.Record("customers", "C2"), st.Record("customers", "C3"))
			}
		})
	}
}

// TestShortWriteThatCannotBeCut: when the torn bytes cannot be cut off,
// nothing more is appended after them; they stay the file's last line,
// which replay ignores and the next Open cuts before its first append.
func TestShortWriteThatCannotBeCut(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "run.journal")
	j, err := Create(path, testHeader())
	must(t, err)
	must(t, j.Append(skipped("C1")))
	j.f = &fullDisk{file: j.f, room: 10, truncFails: 1 << 30}
	if err := j.Append(skipped("C2")); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("first append: %v", err)
	}
	j.f.(*fullDisk).room = 1 << 20
	if err := j.Append(skipped("C3")); err == nil || !strings.Contains(err.Error(), "cutting off a torn last line") {
		t.Fatalf("an append after torn bytes that cannot be cut: %v, want refused", err)
	}
	must(t, j.Close())

	st, err := Load(path)
	if err != nil || !st.Torn || st.Entries != 2 {
		t.Fatalf("replay: %v torn=%v entries=%d", err, st != nil && st.Torn, st.Entries)
	}
	j, _, err = Open(path)
	must(t, err)
	must(t, j.Append(skipped("C3")))
	must(t, j.Close())
	st, err = Load(path)
	if err != nil || st.Torn || st.Record("customers", "C3") == nil || st.Record("customers", "C2") != nil {
		t.Fatalf("after the next run: %v torn=%v", err, st.Torn)
	}
}

// TestFailedSyncIsSticky: after a failed fsync the kernel may have dropped
// the lines and a later fsync would report nothing, so the journal refuses
// every later append rather than call anything durable.
func TestFailedSyncIsSticky(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "run.journal")
	j, err := Create(path, testHeader())
	must(t, err)
	disk := &fullDisk{file: j.f, room: 1 << 20, syncFails: true}
	j.f = disk
	err = j.Append(skipped("C1"))
	var fe *FileError
	if !errors.As(err, &fe) || fe.Op != "sync" || !fe.Resumable() {
		t.Fatalf("failed fsync: %v", err)
	}
	disk.syncFails = false
	if err := j.Append(skipped("C2")); !errors.As(err, &fe) {
		t.Fatalf("an append after a failed fsync: %v, want refused", err)
	}
	if err := j.Sync(); err == nil {
		t.Fatal("Sync after a failed fsync reports success")
	}
	j.Close()
	if _, err := Load(path); err != nil {
		t.Fatalf("replay: %v", err)
	}
}

// TestTornLineInTheMiddle: older versions appended after the
// torn start of a line that a full disk cut short. Replay ignores those
// torn bytes, as it ignores a torn last line, and reads the whole line
// after them; damage of any other kind in the middle is still refused.
func TestTornLineInTheMiddle(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "run.journal")
	writeRun(t, path)
	full, _ := os.ReadFile(path)
	clean, err := Load(path)
	must(t, err)
	lines := bytes.SplitAfter(full, []byte("\n"))
	torn := lines[2] // the start of a line that did not fit
	tests := []struct {
		name   string
		prefix []byte
		mended bool
	}{
		{"1 byte", torn[:1], true},
		{"5 bytes of the checksum", torn[:5], true},
		{"checksum and space", torn[:9], true},
		{"into the JSON", torn[:40], true},
		{"all but the newline", torn[:len(torn)-1], true},
		{"not the start of a line", []byte("xyz"), false},
		{"a line's middle", torn[20:40], false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			for i, l := range lines {
				if i == 3 {
					buf.Write(tc.prefix)
				}
				buf.Write(l)
			}
			size := int64(buf.Len())
			st, err := Replay(&buf)
			if !tc.mended {
				var ce *CorruptError
				if !errors.As(err, &ce) || ce.Line != 4 {
					t.Fatalf("got %v, want line 4 damaged", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("replay: %v", err)
			}
			if len(st.Mended) != 1 || st.Mended[0] != 4 || st.Torn || st.Entries != clean.Entries || st.ValidSize != size {
				t.Errorf("mended %v torn %v entries %d (want %d) size %d (want %d)", st.Mended, st.Torn, st.Entries, clean.Entries, st.ValidSize, size)
			}
			for _, step := range []string{"customers", "orders"} {
				if st.Counts(step) != clean.Counts(step) {
					t.Errorf("%s: %+v, want %+v", step, st.Counts(step), clean.Counts(step))
				}
			}
		})
	}
}
