package source_test

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/migrate-tool/migrate/source"
	"github.com/migrate-tool/migrate/source/sourcetest"
)

// TestXLSXAsExcelWritesIt reads a sheet laid out as Excel saves one: a
// title row above the header, blank cells absent from the XML, text in the
// shared strings, typed number, date and boolean cells beside blanks, a
// row that ends before the header does, an empty row, a formatted cell
// with no value and a formula whose cached text is empty. Every blank is
// "" and every typed cell keeps its type, with both the byte scanner and
// the encoding/xml reference, and cell places name the right column.
func TestXLSXAsExcelWritesIt(t *testing.T) {
	t.Parallel()
	date := time.Date(2026, 11, 10, 0, 0, 0, 0, time.UTC)
	wb := sourcetest.Workbook{Sheets: []sourcetest.Sheet{{Name: "Orders", Rows: [][]any{
		{"Open orders, November 2026"},
		{nil, "Order", "Customer", "Date", "Qty", "Paid", "Note"},
		{nil, "SO-1", "X5001", date, source.Number("12.5"), true, "Boxed"},
		{nil, "SO-1", nil, nil, source.Number("3")}, // ends at Qty
		nil, // an empty row
		{nil, "SO-2", "", date.Add(9*time.Hour + 30*time.Minute), nil, false, nil},
		{nil, "SO-3", sourcetest.Blank{}, nil, nil, nil, sourcetest.Formula{Expr: `IF(E7>0,"x","")`, Cached: ""}},
	}}}}
	p := filepath.Join(t.TempDir(), "orders.xlsx")
	if err := sourcetest.WriteWorkbook(p, wb); err != nil {
		t.Fatal(err)
	}
	xml := string(readPart(t, p, "xl/worksheets/sheet1.xml"))
	for _, absent := range []string{`r="A2"`, `r="C4"`, `r="D4"`, `r="F4"`, `r="G4"`, `r="5"`, `r="C6"`, `r="E6"`, `r="G6"`, `r="D7"`} {
		if strings.Contains(xml, absent) {
			t.Fatalf("the sheet XML has %s, which Excel leaves out:\n%s", absent, xml)
		}
	}
	for _, present := range []string{`<c r="E4"><v>3</v></c></row>`, `<c r="C7" s="1"/>`, `<c r="D3" s="1"><v>46336</v></c>`, `<c r="F3" t="b"><v>1</v></c>`, `t="s"`} {
		if !strings.Contains(xml, present) {
			t.Fatalf("the sheet XML lacks %s:\n%s", present, xml)
		}
	}
	want := []struct {
		line  int
		cells []source.Cell
	}{
		{3, []source.Cell{"SO-1", "X5001", date, source.Number("12.5"), true, "Boxed"}},
		{4, []source.Cell{"SO-1", "", "", source.Number("3"), "", ""}},
		{6, []source.Cell{"SO-2", "", date.Add(9*time.Hour + 30*time.Minute), "", false, ""}},
		{7, []source.Cell{"SO-3", "", "", "", "", ""}},
	}
	for _, rd := range xlsxReaders {
		t.Run(rd.name, func(t *testing.T) {
			t.Parallel()
			r, err := rd.open(source.Options{Name: "orders.xlsx", Path: p, Sheet: "Orders", HeaderRow: 2})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if got := r.Header().Names; !reflect.DeepEqual(got, []string{"Order", "Customer", "Date", "Qty", "Paid", "Note"}) {
				t.Fatalf("header %q", got)
			}
			for _, w := range want {
				row, err := r.Next()
				if err != nil {
					t.Fatalf("line %d: %v", w.line, err)
				}
				if row.Loc.Line != w.line || !reflect.DeepEqual(row.Cells, w.cells) {
					t.Errorf("line %d: %#v\nwant line %d: %#v", row.Loc.Line, row.Cells, w.line, w.cells)
				}
			}
			if _, err := r.Next(); err == nil {
				t.Error("a row after the last")
			}
			row := source.Row{Loc: source.Location{File: "orders.xlsx", Sheet: "Orders", Line: 4}, Header: r.Header()}
			if got := row.CellRef("Qty"); got != "orders.xlsx!Orders!E4" {
				t.Errorf(`CellRef("Qty") = %q, want orders.xlsx!Orders!E4`, got)
			}
		})
	}
}
