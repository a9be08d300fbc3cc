package source_test

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/migrate-tool/migrate/source"
	"github.com/migrate-tool/migrate/source/sourcetest"
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

// The workbooks are written as Excel writes them, blank cells absent, and
// read both by the byte scanner and by the encoding/xml reference.
func TestConformanceXLSX(t *testing.T) {
	t.Parallel()
	for _, rd := range xlsxReaders {
		t.Run(rd.name, func(t *testing.T) {
			t.Parallel()
			sourcetest.Conformance(t, func(t *testing.T, rows [][]string) (source.Reader, error) {
				p := filepath.Join(t.TempDir(), "data.xlsx")
				writeExcelSheet(t, p, "Data", rows)
				return rd.open(source.Options{Name: "data.xlsx", Path: p})
			})
		})
	}
}

// xlsxReaders are the two ways a worksheet is read: the byte scanner that
// Open uses, and the encoding/xml reference it is held to.
var xlsxReaders = []struct {
	name string
	open func(source.Options) (source.Reader, error)
}{
	{"scanner", source.Open},
	{"reference", source.OpenXLSXReference},
	{"files", filesOpen},
}

// filesOpen opens through a Files of its own, opening the workbook a
// second time through it first, as a run reads a header and then the rows.
func filesOpen(opts source.Options) (source.Reader, error) {
	files := &source.Files{}
	if r, err := files.Open(opts); err == nil {
		r.Close()
	}
	r, err := files.Open(opts)
	if err != nil {
		files.Close()
		return nil, err
	}
	return closeBoth{r, files}, nil
}

type closeBoth struct {
	source.Reader
	files *source.Files
}

func (c closeBoth) Close() error {
	err := c.Reader.Close()
	if ferr := c.files.Close(); err == nil {
		err = ferr
	}
	return err
}

// writeExcelSheet writes rows of text from A1 as Excel would, with "" as
// no cell, and checks that the sheet's XML holds exactly the cells with
// text: a blank cell that slipped in as <c r="B2"/> would hide what the
// readers do with absent ones.
func writeExcelSheet(t *testing.T, path, sheet string, rows [][]string) {
	t.Helper()
	sh := sourcetest.Sheet{Name: sheet}
	want := 0
	for _, row := range rows {
		cells := make([]any, len(row))
		for c, v := range row {
			cells[c] = v
			if v != "" {
				want++
			}
		}
		sh.Rows = append(sh.Rows, cells)
	}
	if err := sourcetest.WriteWorkbook(path, sourcetest.Workbook{Sheets: []sourcetest.Sheet{sh}}); err != nil {
		t.Fatal(err)
	}
	xml := readPart(t, path, "xl/worksheets/sheet1.xml")
	if got := len(cellElement.FindAll(xml, -1)); got != want {
		t.Fatalf("the sheet XML has %d cells, want %d (one per value):\n%s", got, want, xml)
	}
	if got := len(sharedRef.FindAll(xml, -1)); got != want {
		t.Fatalf("the sheet XML has %d shared-string cells, want %d:\n%s", got, want, xml)
	}
}

var (
	cellElement = regexp.MustCompile(`<c[ >/]`)
	sharedRef   = regexp.MustCompile(`<c r="[A-Z]+[0-9]+" t="s"><v>[0-9]+</v></c>`)
)

// readPart returns one part of the workbook at path.
func readPart(t *testing.T, path, name string) []byte {
	t.Helper()
	b, err := sourcetest.ReadPart(path, name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
