//go:build unix

package transform

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/migrate-tool/migrate/plan"
)

// A named pipe would block file() for ever (nobody writes to it), and a
// device can be read without end: both are refused before anything is
// opened.
func TestFileRefusesPipesAndDevices(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe.pdf"), 0o644); err != nil {
		t.Skipf("no named pipes here: %v", err)
	}
	opts := testOptions()
	opts.AllowOutside = true
	prog := mustCompile(t, &plan.Plan{Dir: dir}, nil, opts)
	for src, want := range map[string]string{
		`file("pipe.pdf")`:  "is a named pipe",
		`file("/dev/zero")`: "is a device or socket",
	} {
		done := make(chan error, 1)
		go func() {
			_, err := evalWith(prog, src, nil)
			done <- err
		}()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%s: err = %v, want %q", src, err, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s blocked", src)
		}
	}
}
