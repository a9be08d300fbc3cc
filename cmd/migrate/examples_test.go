package main

import (
	"archive/zip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/migrate-tool/migrate/internal/golden"
	"github.com/migrate-tool/migrate/source/sourcetest"
)

// TestExampleWorkbooks holds the example workbooks to what a spreadsheet
// program writes: each is made from testdata/workbooks/NAME.txt by
// sourcetest's writer, blank cells absent from the sheets, and must hold
// the same parts. -update rewrites examples/plans/data/NAME.xlsx.
func TestExampleWorkbooks(t *testing.T) {
	t.Parallel()
	golden.Each(t, "testdata/workbooks/*.txt", nil, func(t *testing.T, spec string) {
		name := strings.TrimSuffix(filepath.Base(spec), ".txt") + ".xlsx"
		text, err := os.ReadFile(spec)
		if err != nil {
			t.Fatal(err)
		}
		wb, err := sourcetest.ParseWorkbook(string(text))
		if err != nil {
			t.Fatalf("%s: %v", spec, err)
		}
		example := filepath.Join("../../examples/plans/data", name)
		if golden.Updating() {
			if err := sourcetest.WriteWorkbook(example, wb); err != nil {
				t.Fatal(err)
			}
			return
		}
		want, err := wb.Parts()
		if err != nil {
			t.Fatal(err)
		}
		z, err := zip.OpenReader(example)
		if err != nil {
			t.Fatal(err)
		}
		defer z.Close()
		if len(z.File) != len(want) {
			t.Errorf("%s has %d parts, want %d (go test -update rewrites it)", example, len(z.File), len(want))
		}
		for i, f := range z.File {
			if i >= len(want) {
				break
			}
			rc, err := f.Open()
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(rc)
			rc.Close()
			if err != nil {
				t.Fatal(err)
			}
			if f.Name != want[i].Name || string(got) != want[i].Body {
				t.Errorf("%s: part %s differs from %s's %s (go test -update rewrites it)\n got: %s\nwant: %s", example, f.Name, spec, want[i].Name, got, want[i].Body)
			}
		}
	})
}
