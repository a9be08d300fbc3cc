package verify

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"

	"github.com/migrate-tool/migrate/executor"
	"github.com/migrate-tool/migrate/journal"
)

// verify's workbook says what it cannot hold as every workbook of ours
// does (executor's TestWorkbooksSayWhatTheyCannotHold): a finding too long
// for a cell is cut, a control character replaced, both marked and kept
// whole beside it.
func TestWorkbookSaysWhatItCannotHold(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("ש", executor.MaxCellChars+10)
	ctrl := "bell\x07here"
	out := filepath.Join(t.TempDir(), "verify.xlsx")
	err := WriteWorkbook(&Result{Findings: []Finding{{Step: long, Record: ctrl}}}, out)
	var cc *executor.CellsChanged
	if !errors.As(err, &cc) {
		t.Fatalf("err %v, want *CellsChanged", err)
	}
	if len(cc.Cells) != 2 || cc.Cells[0].Sheet != "findings" || cc.Cells[0].Cell != "A2" || !cc.Cells[0].Cut ||
		cc.Cells[1].Cell != "B2" || !cc.Cells[1].Replaced || cc.Full != executor.FullValuesPath(out) {
		t.Fatalf("changed cells %+v, full %s", cc.Cells, cc.Full)
	}
	f, err := excelize.OpenFile(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	a2, _ := f.GetCellValue("findings", "A2")
	b2, _ := f.GetCellValue("findings", "B2")
	if a2 != long[:executor.MaxCellChars*2] || b2 != "bell\uFFFDhere" {
		t.Errorf("cells hold %d characters and %q", len([]rune(a2)), b2)
	}
	if id, _ := f.GetCellStyle("findings", "A2"); id == 0 {
		t.Error("findings!A2 is not marked")
	}
}

// A total whose sides differ is on a yellow fill; the plan's totals: have
// a sheet of their own.
func TestWorkbookMarksTotalsThatDiffer(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "verify.xlsx")
	res := &Result{Steps: []Step{{Name: "orders", Entity: "ORDERS", Totals: []ControlTotal{
		{What: "records", Source: "2", Target: "2"},
		{What: "sum PRICE", Source: "3.00", Target: "2.50"},
	}}}}
	res.Totals = []journal.TotalRow{{Step: "orders", Name: "value", Expr: "sum(PRICE)", Source: "9", Sent: "9", Target: "8"}}
	if err := WriteWorkbook(res, out); err != nil {
		t.Fatal(err)
	}
	f, err := excelize.OpenFile(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, c := range []struct {
		sheet, cell string
		marked      bool
	}{{"totals", "E2", false}, {"totals", "E3", true}, {"plan totals", "H2", true}} {
		id, _ := f.GetCellStyle(c.sheet, c.cell)
		if (id != 0) != c.marked {
			t.Errorf("%s!%s style %d, want marked %v", c.sheet, c.cell, id, c.marked)
		}
	}
	if v, _ := f.GetCellValue("plan totals", "H2"); v != "8" {
		t.Errorf("plan totals!H2 = %q", v)
	}
}
