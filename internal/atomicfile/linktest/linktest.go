// Package linktest plants symbolic links for the tests that prove an
// output or a lock is never written through one.
package linktest

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
)

// precious is what a planted link's target holds; it must stay so.
const precious = "precious"

// Link is a symbolic link planted at At, to a file outside the test's
// folder that holds "precious".
type Link struct{ At, Target string }

// Plant plants a Link at at. Where links cannot be made without a
// privilege (Windows) or at all (a FAT or exFAT volume) the test is
// skipped.
func Plant(t testing.TB, at string) Link {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links need a privilege on Windows")
	}
	l := Link{At: at, Target: filepath.Join(t.TempDir(), "victim")}
	if err := os.WriteFile(l.Target, []byte(precious), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(l.Target, at); err != nil {
		if errors.Is(err, errors.ErrUnsupported) || errors.Is(err, syscall.ENOSYS) || errors.Is(err, syscall.EPERM) {
			// A volume without links (FAT, exFAT): none can be planted.
			t.Skipf("this volume makes no symbolic links: %v", err)
		}
		t.Fatal(err)
	}
	return l
}

// TargetUntouched fails the test when the link's target changed.
func (l Link) TargetUntouched(t testing.TB) {
	t.Helper()
	if b, err := os.ReadFile(l.Target); err != nil || string(b) != precious {
		t.Errorf("the target of the link planted at %s now holds %q (%v)", l.At, b, err)
	}
}

// Untouched fails the test when the link, or its target, changed.
func (l Link) Untouched(t testing.TB) {
	t.Helper()
	l.TargetUntouched(t)
	if fi, err := os.Lstat(l.At); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("the link planted at %s was replaced or removed (%v)", l.At, err)
	}
}
