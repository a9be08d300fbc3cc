package source_test

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"testing"

	"github.com/migrate-tool/migrate/source"
	"github.com/migrate-tool/migrate/source/sourcetest"
	"github.com/xuri/excelize/v2"
)

func TestConformanceCSV(t *testing.T) {
	t.Parallel()
	sourcetest.Conformance(t, func(t *testing.T, rows [][]string) (source.Reader, error) {
		p := filepath.Join(t.TempDir(), "data.csv")
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		w := csv.NewWriter(f)
		if err := w.WriteAll(rows); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		return source.Open(source.Options{Name: "data.csv", Path: p})
	})
}

func TestConformanceXLSX(t *testing.T) {
	t.Parallel()
	sourcetest.Conformance(t, func(t *testing.T, rows [][]string) (source.Reader, error) {
		p := filepath.Join(t.TempDir(), "data.xlsx")
		writeSheet(t, p, "Data", rows)
		return source.Open(source.Options{Name: "data.xlsx", Path: p})
	})
}

// writeSheet writes rows of text from A1, with "" as no cell.
func writeSheet(t *testing.T, path, sheet string, rows [][]string) {
	t.Helper()
	f := excelize.NewFile()
	defer f.Close()
	if err := f.SetSheetName("Sheet1", sheet); err != nil {
		t.Fatal(err)
	}
	for r, row := range rows {
		for c, v := range row {
			if v == "" {
				continue
			}
			cell, _ := excelize.CoordinatesToCellName(c+1, r+1)
			if err := f.SetCellStr(sheet, cell, v); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := f.SaveAs(path); err != nil {
		t.Fatal(err)
	}
}
