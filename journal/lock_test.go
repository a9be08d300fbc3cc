package journal

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/migrate-tool/migrate/internal/atomicfile/linktest"
)

// TestOneWriterAtATime: while a journal is open for writing, a second Open
// or Create of it is refused with the holder's pid and start time (two
// applies on one journal once sent 1,907 orders for 1,000 rows). A read-only
// Load is not blocked, and InUse names the holder. Close lets go and leaves
// no lock file behind. The OS locks open files, not processes, so the
// refusal shows within one process too.
func TestOneWriterAtATime(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "run.journal")
	j, err := Create(path, testHeader())
	must(t, err)

	refused := func(what string, err error) {
		t.Helper()
		var le *LockedError
		if !errors.As(err, &le) {
			t.Fatalf("%s while the journal is open: %v, want a *LockedError", what, err)
		}
		if le.Holder.PID != os.Getpid() || le.Holder.Started.IsZero() || le.Path != path {
			t.Errorf("%s: holder %+v, path %s", what, le.Holder, le.Path)
		}
		msg := le.Error()
		for _, want := range []string{path, "pid " + strconv.Itoa(os.Getpid()), "started "} {
			if !strings.Contains(msg, want) {
				t.Errorf("%s: message %q lacks %q", what, msg, want)
			}
		}
	}
	_, _, err = Open(path)
	refused("Open", err)
	_, err = Create(path, testHeader())
	refused("Create", err)

	if _, err := Load(path); err != nil {
		t.Errorf("Load (status, report) is blocked by the writer: %v", err)
	}
	if h, busy := InUse(path); !busy || h.PID != os.Getpid() {
		t.Errorf("InUse while open: %v %+v", busy, h)
	}
	// The probe must not stand in the writer's way.
	must(t, j.Append(Entry{Kind: KindRecord, Record: &RecordEntry{Step: "customers", ID: "C1", Status: Skipped}}))
	must(t, j.Close())

	if _, busy := InUse(path); busy {
		t.Error("InUse after Close")
	}
	// Windows cannot remove a file its holder has open: there it stays, empty.
	if b, err := os.ReadFile(LockPath(path)); runtime.GOOS != "windows" && !os.IsNotExist(err) || len(b) > 0 {
		t.Errorf("Close left the lock file naming a holder: %q %v", b, err)
	}
	j, st, err := Open(path)
	must(t, err)
	if st.Record("customers", "C1").Status() != Skipped {
		t.Error("the reopened journal lost its entry")
	}
	must(t, j.Close())
}

// TestStaleLockFile: a holder killed with SIGKILL leaves its lock file with
// its pid in it, but the OS has dropped the lock: the next run takes it.
func TestStaleLockFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "run.journal")
	writeRun(t, path)
	must(t, os.WriteFile(LockPath(path), []byte(`{"pid":99999,"host":"gone","started":"2026-11-23T11:00:00Z"}`+"\n"), 0o600))
	if _, busy := InUse(path); busy {
		t.Error("a lock file nobody locks reads as in use")
	}
	j, _, err := Open(path)
	must(t, err)
	must(t, j.Close())
}

// refusedWhileRewritten is the refusal of a run that finds the journal at
// path locked by a new holder whose lock file still names dead; the holder
// writes live over it at the refused run's pause number writeAt. It gives
// the refusal and the pauses taken.
func refusedWhileRewritten(t *testing.T, path, dead, live string, writeAt int) (*LockedError, int) {
	t.Helper()
	writeRun(t, path)
	must(t, os.WriteFile(LockPath(path), []byte(dead), 0o600))
	// The new holder: the file locked, the dead holder's pid still in it.
	f, err := os.OpenFile(LockPath(path), os.O_RDWR, 0)
	must(t, err)
	defer f.Close()
	must(t, lockFile(f, true))
	defer unlockFile(f)

	pauses := 0
	_, err = acquireWaiting(path, func() {
		// It writes itself over the file while the refused run pauses.
		if pauses++; pauses == writeAt {
			must(t, f.Truncate(0))
			_, err := f.WriteAt([]byte(live), 0)
			must(t, err)
		}
	})
	var le *LockedError
	if !errors.As(err, &le) {
		t.Fatalf("acquire while locked: %v, want a *LockedError", err)
	}
	return le, pauses
}

// TestRefusalNamesTheLiveHolder: a run killed with SIGKILL leaves its pid
// in the lock file; the next run locks the file and only then writes
// itself over it. A run refused in between must not name the dead one
// (two runs started at once did, in the crash campaign): the holder is
// read again after a pause, and named once it reads the same twice.
func TestRefusalNamesTheLiveHolder(t *testing.T) {
	t.Parallel()
	dead := `{"pid":99999,"host":"gone","started":"2026-11-23T11:00:00Z"}` + "\n"
	live := `{"pid":12345,"host":"here","started":"2026-11-23T12:00:00Z"}` + "\n"
	le, pauses := refusedWhileRewritten(t, filepath.Join(t.TempDir(), "run.journal"), dead, live, 1)
	if le.Holder.PID != 12345 || !strings.Contains(le.Error(), "pid 12345 on here") {
		t.Errorf("the refusal names %+v (%v), want the live holder, pid 12345", le.Holder, le)
	}
	if pauses != 2 {
		t.Errorf("%d pauses, want 2 (stale name, then the live one read twice)", pauses)
	}
}

// TestRefusalSkipsAKilledHoldersName: under load the new holder may not
// have written itself for several of the refused run's looks; a name of a
// process of this machine that is gone (a holder killed before) is never
// taken for the holder, however often it is read.
func TestRefusalSkipsAKilledHoldersName(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("the dead pid is found by the unix kill(pid, 0)")
	}
	gone := exec.Command(os.Args[0], "-test.run=^$")
	must(t, gone.Run()) // a process of this machine, exited
	host, _ := os.Hostname()
	dead := fmt.Sprintf(`{"pid":%d,"host":%q,"started":"2026-11-23T11:00:00Z"}`+"\n", gone.Process.Pid, host)
	live := fmt.Sprintf(`{"pid":%d,"host":%q,"started":"2026-11-23T12:00:00Z"}`+"\n", os.Getpid(), host)
	// The live holder writes itself only after five looks.
	le, _ := refusedWhileRewritten(t, filepath.Join(t.TempDir(), "run.journal"), dead, live, 5)
	if le.Holder.PID != os.Getpid() {
		t.Errorf("the refusal names %+v (%v), want the live holder, pid %d", le.Holder, le, os.Getpid())
	}
}

// TestLockDoesNotFollowLinks: a symbolic link planted at the lock's name
// refuses the run (as another holder would) and leaves the link and its
// target as they were: the lock used to open it, write the holder into the
// target and empty it on release, so a planted link could destroy any file
// the user may write. InUse does not read through it
// either.
func TestLockDoesNotFollowLinks(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "run.journal")
	planted := linktest.Plant(t, LockPath(path))
	if j, err := Create(path, testHeader()); err == nil {
		j.Close()
		t.Fatal("Create went through a symbolic link at the lock")
	} else if !strings.HasPrefix(err.Error(), path) {
		t.Errorf("the refusal does not name the journal: %v", err)
	}
	if _, busy := InUse(path); busy {
		t.Error("InUse read the holder through the link")
	}
	planted.Untouched(t)
	if _, err := os.Lstat(path); err == nil {
		t.Error("a journal was created")
	}
}
