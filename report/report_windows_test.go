package report

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/migrate-tool/migrate/executor/executortest"
	"github.com/migrate-tool/migrate/internal/atomicfile/winetest"
	"github.com/migrate-tool/migrate/sandbox"
)

// TestReportHeldByExcel: `migrate report --out` of a report the user has
// open in Excel from the last time (Excel does not let it be renamed over)
// fails saying to close it in Excel, leaves the open report as it was and
// no temporary file beside it; once closed, the same report is written.
func TestReportHeldByExcel(t *testing.T) {
	t.Parallel()
	o, _ := executortest.NewTarget(t, sandbox.Options{}).Load(t, ordersFiles(3, false, "O1,C1,NOSUCH-PART,1"))
	for _, name := range []string{"failed rows.xlsx", "failed.csv"} {
		dir := t.TempDir()
		out := filepath.Join(dir, name)
		if n, _, err := Report(o.Journal, out); err != nil || n != 1 {
			t.Fatalf("%s: report %d %v", name, n, err)
		}
		before, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		closeInExcel := winetest.HoldAsExcel(t, out)
		_, _, err = Report(o.Journal, out)
		if err == nil || !strings.Contains(err.Error(), out+" cannot be replaced") || !strings.Contains(err.Error(), "close it in Excel") {
			t.Errorf("%s: report while Excel holds it: %v, want the advice to close it in Excel", name, err)
		}
		if after, _ := os.ReadFile(out); !bytes.Equal(after, before) {
			t.Errorf("%s: the report Excel holds changed", name)
		}
		ents, _ := os.ReadDir(dir)
		if len(ents) != 1 {
			t.Errorf("%s: the folder holds %d files, want the report alone: %v", name, len(ents), ents)
		}
		closeInExcel()
		if n, _, err := Report(o.Journal, out); err != nil || n != 1 {
			t.Errorf("%s: report once closed in Excel: %d %v", name, n, err)
		}
	}
}
