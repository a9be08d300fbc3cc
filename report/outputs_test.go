package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"

	"github.com/migrate-tool/migrate/export"
	"github.com/migrate-tool/migrate/internal/atomicfile/linktest"
	"github.com/migrate-tool/migrate/internal/workbook"
	"github.com/migrate-tool/migrate/source"
)

// TestOutputsDoNotFollowLinks: every output the executor writes (HTML
// pages, report and created-keys tables as .xlsx and .csv, workbooks,
// exports as .xlsx and .csv) leaves a symbolic link planted at the fixed
// temporary name it used to write through (.NAME.tmp) as it was, and the
// file it points to unchanged; the output is mode 0600, as it
// holds the customer's rows, and no temporary file stays behind.
func TestOutputsDoNotFollowLinks(t *testing.T) {
	t.Parallel()
	tables := []*table{{name: "orders", header: []string{"CUSTNAME"}, rows: [][]string{{"C1", "failed"}}}}
	cases := []struct {
		name  string
		out   string
		write func(out string) error
	}{
		{"html page", "report.html", func(out string) error { return WriteHTMLFile(out, &RunReport{}) }},
		{"report xlsx", "report.xlsx", func(out string) error { return writeTables(out, tables, []string{"status"}) }},
		{"report csv", "report.csv", func(out string) error { return writeTables(out, tables, []string{"status"}) }},
		{"workbook", "diff.xlsx", func(out string) error {
			f := excelize.NewFile()
			defer f.Close()
			return workbook.Save(f, out)
		}},
		{"export xlsx", "export.xlsx", exportOneRow},
		{"export csv", "export.csv", exportOneRow},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			planted := linktest.Plant(t, filepath.Join(dir, "."+tc.out+".tmp"))
			out := filepath.Join(dir, tc.out)
			if err := tc.write(out); err != nil {
				t.Fatal(err)
			}
			planted.Untouched(t)
			fi, err := os.Stat(out)
			if err != nil {
				t.Fatal(err)
			}
			if fi.Mode().Perm() != 0o600 {
				t.Errorf("%s: mode %v, want 0600", tc.out, fi.Mode().Perm())
			}
			ents, _ := os.ReadDir(dir)
			for _, e := range ents {
				if strings.Contains(e.Name(), ".tmp-") {
					t.Errorf("left behind: %s", e.Name())
				}
			}
		})
	}
}

// exportOneRow exports one row of one column to out.
func exportOneRow(out string) error {
	_, err := export.Write(out, export.Export{Rows: source.NewMemory("orders", []string{"ORDNAME"}, [][]source.Cell{{"SO1"}}),
		Key: []string{"ORDNAME"}, Entity: export.Sheet{Name: "orders", Columns: []string{"ORDNAME"}}})
	return err
}
