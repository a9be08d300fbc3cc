package scratch

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

type runM func() int

func (f runM) Run() int { return f() }

// TestMainInMemory: the run's temporary folder is in memory on Linux, its own,
// and gone after; a TMPDIR given is kept.
func TestMainInMemory(t *testing.T) {
	if os.Getenv("TMPDIR") != "" {
		t.Skip("TMPDIR is set: Main keeps it")
	}
	var during string
	code := Main(runM(func() int {
		during = os.TempDir()
		if err := os.WriteFile(filepath.Join(during, "x"), []byte("x"), 0o600); err != nil {
			t.Error(err)
		}
		return 3
	}))
	if code != 3 {
		t.Errorf("exit code %d, want m's 3", code)
	}
	if os.Getenv("TMPDIR") != "" {
		t.Errorf("TMPDIR still set after: %q", os.Getenv("TMPDIR"))
	}
	if _, ok := inMemory(); !ok {
		if runtime.GOOS == "linux" {
			t.Logf("no /dev/shm to write to: %s", during)
		}
		return
	}
	if filepath.Dir(during) != "/dev/shm" {
		t.Errorf("temporary folder %s, want one in /dev/shm", during)
	}
	if _, err := os.Stat(during); !os.IsNotExist(err) {
		t.Errorf("%s left behind: %v", during, err)
	}
}

// TestGivenTMPDIRKept: a TMPDIR given is where the files go.
func TestGivenTMPDIRKept(t *testing.T) {
	given := t.TempDir()
	t.Setenv("TMPDIR", given)
	var during string
	Main(runM(func() int { during = os.TempDir(); return 0 }))
	if during != given {
		t.Errorf("temporary folder %s, want the given %s", during, given)
	}
}
