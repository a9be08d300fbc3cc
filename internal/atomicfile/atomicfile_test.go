package atomicfile

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/migrate-tool/migrate/internal/atomicfile/linktest"
)

// TestWriteDoesNotFollowLinks: links planted at the name the outputs used
// as their temporary file (.NAME.tmp) and at guesses of the new one stay
// as they were, and so do the files they point to (any file the
// user could write could be overwritten); a link at the target itself is
// replaced by the file, not written through.
func TestWriteDoesNotFollowLinks(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	out := filepath.Join(dir, "report.xlsx")
	var planted []linktest.Link
	for _, name := range []string{".report.xlsx.tmp", ".report.xlsx.tmp-", ".report.xlsx.tmp-1"} {
		planted = append(planted, linktest.Plant(t, filepath.Join(dir, name)))
	}
	if err := WriteFile(out, []byte("customer data"), 0o600); err != nil {
		t.Fatal(err)
	}
	atTarget := linktest.Plant(t, filepath.Join(dir, "linked.csv"))
	if err := WriteFile(atTarget.At, []byte("customer data"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, l := range planted {
		l.Untouched(t)
	}
	atTarget.TargetUntouched(t)
	for _, p := range []string{out, atTarget.At} {
		fi, err := os.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		if !fi.Mode().IsRegular() {
			t.Errorf("%s is %v, want a regular file", p, fi.Mode())
		}
		if b, _ := os.ReadFile(p); string(b) != "customer data" {
			t.Errorf("%s holds %q", p, b)
		}
	}
}

// TestWriteModes: the file has the mode asked for, whatever the umask
// made of a plain create.
func TestWriteModes(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("no Unix modes")
	}
	dir := t.TempDir()
	for _, perm := range []fs.FileMode{0o600, 0o644} {
		p := filepath.Join(dir, perm.String())
		if err := WriteFile(p, []byte("x"), perm); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != perm {
			t.Errorf("mode %v, want %v", fi.Mode().Perm(), perm)
		}
	}
}

// TestFailureLeavesNothing: a writer that fails, an Abort, and a rename
// that cannot happen leave the target as it was and no temporary file.
func TestFailureLeavesNothing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	out := filepath.Join(dir, "out.csv")
	if err := os.WriteFile(out, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	if err := Write(out, 0o600, func(w io.Writer) error {
		io.WriteString(w, "half")
		return boom
	}); !errors.Is(err, boom) {
		t.Fatalf("Write: %v, want boom", err)
	}
	f, err := Create(out, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(f, "half")
	f.Abort()
	f.Abort()
	if err := f.Commit(); err == nil {
		t.Error("Commit after Abort succeeded")
	}
	// The target is a folder: the rename fails.
	sub := filepath.Join(dir, "folder")
	if err := os.MkdirAll(filepath.Join(sub, "x"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(sub, []byte("x"), 0o600); err == nil {
		t.Error("writing over a folder succeeded")
	}
	leftAsItWas(t, out)
}

// TestOpenNoFollow: a link is refused and left as it was; a file is opened.
func TestOpenNoFollow(t *testing.T) {
	t.Parallel()
	l := linktest.Plant(t, filepath.Join(t.TempDir(), "run.journal.lock"))
	if f, err := OpenNoFollow(l.At, os.O_RDWR|os.O_CREATE, 0o600); err == nil {
		f.Close()
		t.Fatal("opened through a symbolic link")
	}
	l.Untouched(t)
	f, err := OpenNoFollow(l.Target, os.O_RDWR, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
}

// TestReplaceRefused: where the target cannot be replaced (Windows
// answers "Access is denied" while Excel has the workbook open;
// TestReplaceHeldByExcel holds one open for real), the target is left as
// it was and no temporary file stays beside it; on Windows the error says
// to close it in Excel. Not parallel: it replaces rename while it runs.
func TestReplaceRefused(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "report.xlsx")
	if err := os.WriteFile(out, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	rename = func(from, to string) error {
		return &os.LinkError{Op: "rename", Old: from, New: to, Err: fs.ErrPermission}
	}
	defer func() { rename = renameOver }()
	err := WriteFile(out, []byte("new"), 0o600)
	if err == nil || !errors.Is(err, fs.ErrPermission) {
		t.Fatalf("WriteFile = %v, want permission denied", err)
	}
	if advice := strings.Contains(err.Error(), "close it in Excel"); advice != (runtime.GOOS == "windows") {
		t.Errorf("WriteFile = %v: the advice to close it in Excel is for Windows only", err)
	}
	leftAsItWas(t, out)
}

// leftAsItWas checks that out still holds "old" and that no temporary
// file stays in its folder.
func leftAsItWas(t *testing.T, out string) {
	t.Helper()
	if b, _ := os.ReadFile(out); string(b) != "old" {
		t.Errorf("the target holds %q", b)
	}
	ents, _ := os.ReadDir(filepath.Dir(out))
	for _, e := range ents {
		if strings.Contains(e.Name(), ".tmp") {
			t.Errorf("left behind: %s", e.Name())
		}
	}
}
