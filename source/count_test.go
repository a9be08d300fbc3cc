package source

import (
	"os"
	"path/filepath"
	"testing"
)

// TestCountRows: the cheap count of a progress bar's total, from a CSV's
// lines and a worksheet's dimension (workbooks written by LibreOffice Calc
// and by the example's writer), below the header row; unknown where the
// count would cost a read of its own or say nothing.
func TestCountRows(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	whole := filepath.Join(dir, "whole.xlsx") // its dimension is A1:XFD1048576
	book{sheets: []string{"S"}, sheetXML: []string{`<row r="1"><c r="A1" t="inlineStr"><is><t>A</t></is></c></row></sheetData>`}}.write(t, whole)
	const data = "../examples/plans/data/"
	for _, tt := range []struct {
		name string
		opts Options
		want int
		ok   bool
	}{
		{"csv", Options{Path: write("a.csv", "A,B\n1,2\n3,4\n")}, 2, true},
		{"csv without a last line end", Options{Path: write("b.csv", "A,B\n1,2\n3,4")}, 2, true},
		{"tsv", Options{Path: write("c.tsv", "A\tB\n1\t2\n")}, 1, true},
		{"header only", Options{Path: write("d.csv", "A,B\n")}, 0, true},
		{"LibreOffice workbook", Options{Path: data + "customer-phones.xlsx"}, 2, true},
		{"LibreOffice workbook, profile", Options{Path: data + "profile-lines.xlsx"}, 6, true},
		{"first sheet", Options{Path: data + "orders.xlsx"}, 7, true},
		{"named sheet", Options{Path: data + "orders.xlsx", Sheet: "Parts"}, 6, true},
		{"header below a title", Options{Path: data + "orders.xlsx", Sheet: "Parts", HeaderRow: 3}, 4, true},
		{"no such sheet", Options{Path: data + "orders.xlsx", Sheet: "Partz"}, 0, false},
		{"dimension of the whole sheet", Options{Path: whole}, 0, false},
		{"missing file", Options{Path: filepath.Join(dir, "none.csv")}, 0, false},
		{"not a source", Options{Path: write("e.json", "{}")}, 0, false},
		{"not a workbook", Options{Path: write("f.xlsx", "A,B\n")}, 0, false},
	} {
		n, ok := CountRows(tt.opts)
		if n != tt.want || ok != tt.ok {
			t.Errorf("%s: CountRows = %d, %v; want %d, %v", tt.name, n, ok, tt.want, tt.ok)
		}
	}
}
