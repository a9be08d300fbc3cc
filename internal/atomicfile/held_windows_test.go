package atomicfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	// Under Wine, the tests' temporary folders are removable too.
	"github.com/migrate-tool/migrate/internal/atomicfile/winetest"
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
			closeInExcel := winetest.HoldAsExcel(t, out)
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
