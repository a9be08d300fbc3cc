package atomicfile

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	// Under Wine, the tests' temporary folders are removable.
	_ "github.com/migrate-tool/migrate/internal/atomicfile/winetest"
)

// TestReplaceHeldByExcel: a report open in Excel, which opens a workbook
// letting others read it but not delete or rename it (no
// FILE_SHARE_DELETE), cannot be replaced. The error says to close it in
// Excel, the report is left as it was and no temporary file stays beside
// it; once Excel lets go, the same write succeeds.
func TestReplaceHeldByExcel(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"report.xlsx", "failed rows.csv", "דוח.xlsx"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			out := filepath.Join(t.TempDir(), name)
			if err := os.WriteFile(out, []byte("old"), 0o600); err != nil {
				t.Fatal(err)
			}
			closeInExcel := holdAsExcel(t, out)
			err := WriteFile(out, []byte("new"), 0o600)
			if err == nil || !strings.Contains(err.Error(), "close it in Excel") || !strings.Contains(err.Error(), out) {
				t.Fatalf("WriteFile = %v, want the advice to close %s in Excel", err, out)
			}
			leftAsItWas(t, out)
			closeInExcel()
			if err := WriteFile(out, []byte("new"), 0o600); err != nil {
				t.Fatalf("once closed in Excel: %v", err)
			}
			if b, _ := os.ReadFile(out); string(b) != "new" {
				t.Errorf("once closed in Excel, it holds %q", b)
			}
		})
	}
}

// holdAsExcel opens path as Excel holds a workbook it has open (others
// may read it, not write, rename or delete it) until the function it
// returns is called, or the test ends.
func holdAsExcel(t *testing.T, path string) func() {
	t.Helper()
	p, err := syscall.UTF16PtrFromString(path)
	if err != nil {
		t.Fatal(err)
	}
	h, err := syscall.CreateFile(p, syscall.GENERIC_READ|syscall.GENERIC_WRITE, syscall.FILE_SHARE_READ, nil, syscall.OPEN_EXISTING, syscall.FILE_ATTRIBUTE_NORMAL, 0)
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	release := func() {
		if !closed {
			closed = true
			syscall.CloseHandle(h)
		}
	}
	t.Cleanup(release)
	return release
}
