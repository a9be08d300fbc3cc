package journal

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestCreateAppearsWithItsHeader: a journal exists at its path only with
// its header on disk. A process killed while creating one used to leave an
// empty file that every later apply refused as damaged ("empty journal: no
// header"); now it leaves at most a temporary file, which does not stand
// in the way (found by the crash campaign, crashtest/).
func TestCreateAppearsWithItsHeader(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "run.journal")
	// What a kill in the middle of Create leaves behind now.
	stray := filepath.Join(dir, ".run.journal.new-123")
	if err := os.WriteFile(stray, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	j, err := Create(path, testHeader())
	if err != nil {
		t.Fatal(err)
	}
	st, err := Load(path)
	if err != nil || st.Header.PlanHash != testHeader().PlanHash {
		t.Fatalf("Load right after Create: %v, header %+v", err, st)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(j.Append(Entry{Kind: KindIntent, Batch: j.NextBatch(), Subs: []Sub{{ID: "1", Step: "s", Rec: "r", Op: OpCreate, Meth: "POST", URL: "X"}}}))
	must(j.Close())
	st, err = Load(path)
	if err != nil || st.Entries != 2 {
		t.Fatalf("appends after Create must reach the file at path: %v, %d entries", err, st.Entries)
	}
	fi, err := os.Stat(path)
	must(err)
	// Windows has no modes (its folder's ACL guards it), nor has a FAT or
	// exFAT volume (every file shows 0777).
	if fi.Mode().Perm() != 0o600 && runtime.GOOS != "windows" && fi.Mode().Perm() != 0o777 {
		t.Errorf("mode %v, want 0600 (the journal names the target)", fi.Mode().Perm())
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".new-") && e.Name() != filepath.Base(stray) {
			t.Errorf("Create left its temporary file %s", e.Name())
		}
	}
}

// TestCreateThatFailsLeavesNothing: a Create that cannot write its header
// (here a date JSON cannot hold; in the field a kill or a full disk) leaves
// no file at the journal's path, so the next apply starts afresh instead of
// refusing an empty journal as damaged.
func TestCreateThatFailsLeavesNothing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "run.journal")
	bad := testHeader()
	bad.Created = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)
	if _, err := Create(path, bad); err == nil {
		t.Fatal("a header JSON cannot encode must fail")
	}
	if _, err := os.Lstat(path); !os.IsNotExist(err) {
		t.Fatalf("a failed Create left %s behind (%v): the next apply would call it damaged", path, err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("a failed Create left %d files", len(entries))
	}
	j, err := Create(path, testHeader())
	if err != nil {
		t.Fatalf("Create after a failed one: %v", err)
	}
	j.Close()
}

// TestCreateOnAVolumeWithoutLinks: where hard links are refused and an
// open file cannot be renamed (Windows on a FAT or exFAT stick), Create
// closes its temporary file, renames it and opens it again: the journal
// appears with its header, takes appends, and no temporary file stays.
func TestCreateOnAVolumeWithoutLinks(t *testing.T) {
	oldLink, oldRename := link, renameOpen
	t.Cleanup(func() { link, renameOpen = oldLink, oldRename })
	link = func(from, to string) error {
		return &os.LinkError{Op: "link", Old: from, New: to, Err: errors.ErrUnsupported}
	}
	renameOpen = func(from, to string) error {
		return &os.LinkError{Op: "rename", Old: from, New: to, Err: errors.New("The process cannot access the file because it is being used by another process.")}
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "run.journal")
	for _, lean := range []bool{false, true} {
		os.Remove(path)
		var j *Journal
		var err error
		if lean {
			j, err = CreateIndexed(path, Header{Plan: "p"})
		} else {
			j, err = Create(path, Header{Plan: "p"})
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := j.Append(Entry{Kind: KindIntent, Batch: j.NextBatch(), Subs: []Sub{{ID: "1", Step: "s", Rec: "r", Op: OpCreate, Meth: "POST", URL: "X"}}}); err != nil {
			t.Fatal(err)
		}
		if err := j.Close(); err != nil {
			t.Fatal(err)
		}
		st, err := Load(path)
		if err != nil || st.Entries != 2 || st.Header.Plan != "p" {
			t.Fatalf("lean %v: %v, %d entries, header %+v", lean, err, st.Entries, st.Header)
		}
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if strings.Contains(e.Name(), ".new-") {
				t.Errorf("Create left its temporary file %s", e.Name())
			}
		}
	}
}
