package report

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/migrate-tool/migrate/executor"
	"github.com/migrate-tool/migrate/transform"
)

// What migrate mapping writes, the plan reads back: in a workbook and in
// a CSV, Hebrew, quotes and commas included, mode 0600.
func TestWriteMappingReadsBack(t *testing.T) {
	t.Parallel()
	rows := []executor.MappingRow{
		{MapRow: transform.MapRow{Map: "units", Source: "יח'", Count: 3, Cells: "a.csv:2, a.csv:3", Target: "EA", Confirmed: true}},
		{MapRow: transform.MapRow{Map: "units", Source: `ק"ג, נטו`, Count: 1, Cells: "a.csv:4", Target: "KG"}, Note: executor.NoteNew},
		// What a spreadsheet would run as a formula is written quoted in a
		// CSV, and read back as it was.
		{MapRow: transform.MapRow{Map: "units", Source: "-", Count: 1, Cells: "a.csv:5", Target: "=NONE", Confirmed: true}},
		{MapRow: transform.MapRow{Map: "units", Source: "@home", Count: 1, Cells: "a.csv:6", Target: "-5"}},
	}
	for _, name := range []string{"m.xlsx", "m.csv"} {
		out := filepath.Join(t.TempDir(), name)
		if err := WriteMapping(out, rows); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		// Windows has no Unix modes: there the file is only there.
		if fi, err := os.Stat(out); err != nil || (runtime.GOOS != "windows" && fi.Mode().Perm() != 0o600) {
			t.Errorf("%s: mode %v, %v", name, fi.Mode(), err)
		}
		got, before, err := executor.ReadMapping(out)
		if err != nil || !before || len(got) != len(rows) {
			t.Fatalf("%s: %+v %v %v", name, got, before, err)
		}
		for i, r := range got {
			r.Loc = rows[i].Loc
			if r != rows[i].MapRow {
				t.Errorf("%s row %d = %+v, want %+v", name, i, r, rows[i].MapRow)
			}
		}
	}
	if _, before, err := executor.ReadMapping(filepath.Join(t.TempDir(), "none.csv")); before || err != nil {
		t.Errorf("no file: %v %v", before, err)
	}
}
