package report

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/migrate-tool/migrate/executor"
	"github.com/migrate-tool/migrate/export"
	"github.com/migrate-tool/migrate/internal/workbook"
	"github.com/migrate-tool/migrate/journal"
	"github.com/migrate-tool/migrate/source"
	"github.com/migrate-tool/migrate/verify"
)

// Every workbook we write says what it could not hold: the cell marked,
// a sheet listing it, the whole value in OUT.full.csv (0600, with a BOM),
// and *workbook.CellsChanged for the command to say so. Before,
// excelize cut and replaced without a word.
func TestWorkbooksSayWhatTheyCannotHold(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("ש", workbook.MaxCellChars+10)
	ctrl := "bell\x07here"
	for _, w := range []struct {
		name  string
		sheet string
		write func(out string) error
	}{
		{"report", "orders", func(out string) error {
			return writeTables(out, []*table{{name: "orders", header: []string{"NOTE", "TEXT"}, rows: [][]string{{long, ctrl, "orders", "orders.csv:2", "", "refused"}}}}, reportColumns)
		}},
		{"diff", "orders", func(out string) error {
			return WriteDiff(&executor.DiffResult{Steps: []executor.DiffStep{{Name: "orders"}}, Records: []executor.DiffRecord{{Step: "orders", Location: long, Key: ctrl, Action: executor.DiffUpdate}}}, out)
		}},
		{"verify", "findings", func(out string) error {
			return WriteVerify(&verify.Result{Findings: []verify.Finding{{Step: long, Record: ctrl}}}, out)
		}},
		{"export", "ORDERS", func(out string) error {
			_, err := export.Write(out, export.Export{Rows: source.NewMemory("rows", []string{"NOTE", "TEXT"}, [][]source.Cell{{long, ctrl}}),
				Key: []string{"NOTE"}, Entity: export.Sheet{Name: "ORDERS", Columns: []string{"NOTE", "TEXT"}}})
			return err
		}},
	} {
		t.Run(w.name, func(t *testing.T) {
			t.Parallel()
			out := filepath.Join(t.TempDir(), w.name+".xlsx")
			err := w.write(out)
			var cc *workbook.CellsChanged
			if !errors.As(err, &cc) {
				t.Fatalf("err %v, want *workbook.CellsChanged", err)
			}
			if len(cc.Cells) != 2 || cc.Cells[0].Cell != "A2" || !cc.Cells[0].Cut || cc.Cells[1].Cell != "B2" || !cc.Cells[1].Replaced || cc.Full != workbook.FullValuesPath(out) {
				var where []string
				for _, c := range cc.Cells {
					where = append(where, fmt.Sprintf("%s!%s cut %v replaced %v", c.Sheet, c.Cell, c.Cut, c.Replaced))
				}
				t.Fatalf("changed cells %q, full %s", where, cc.Full)
			}
			if msg := cc.Error(); !strings.Contains(msg, "1 cell longer than 32767 characters cut, 1 cell with control characters shown as U+FFFD") || !strings.Contains(msg, w.name+".full.csv") {
				t.Errorf("message %q", msg)
			}
			f := openBook(t, out)
			a2, _ := f.GetCellValue(w.sheet, "A2")
			b2, _ := f.GetCellValue(w.sheet, "B2")
			if a2 != long[:workbook.MaxCellChars*2] || b2 != "bell\uFFFDhere" {
				t.Errorf("cells hold %d characters and %q", len([]rune(a2)), b2)
			}
			for _, c := range []string{"A2", "B2"} {
				if id, _ := f.GetCellStyle(w.sheet, c); id == 0 {
					t.Errorf("%s!%s is not marked", w.sheet, c)
				}
			}
			notes, err := f.GetRows(workbook.NotesSheet)
			if err != nil || len(notes) != 3 || notes[1][0] != w.sheet || notes[1][1] != "A2" || !strings.Contains(notes[1][2], "cut to 32767 of its 32777 characters") || !strings.Contains(notes[2][2], "U+FFFD") {
				t.Errorf("notes sheet %q, %v", notes, err)
			}
			data, err := os.ReadFile(cc.Full)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.HasPrefix(data, []byte("\uFEFF")) {
				t.Error("the CSV of whole values has no BOM")
			}
			rows, err := csv.NewReader(bytes.NewReader(bytes.TrimPrefix(data, []byte("\uFEFF")))).ReadAll()
			if err != nil || len(rows) != 3 || rows[1][2] != long || rows[2][2] != ctrl || rows[2][0] != w.sheet || rows[2][1] != "B2" {
				t.Errorf("whole values: %d rows, %v", len(rows), err)
			}
			if fi, err := os.Stat(cc.Full); err != nil || fi.Mode().Perm() != 0o600 && os.PathSeparator == '/' {
				t.Errorf("%s: %v %v", cc.Full, fi.Mode(), err)
			}
		})
	}
}

// A workbook that holds every value whole has no notes and no CSV beside.
func TestWorkbookWholeHasNoNotes(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "diff.xlsx")
	// One left by an earlier diff of this name goes: it would speak of
	// cells this workbook does not have.
	if err := os.WriteFile(workbook.FullValuesPath(out), []byte("sheet,cell,value\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := WriteDiff(&executor.DiffResult{Steps: []executor.DiffStep{{Name: "orders"}}, Records: []executor.DiffRecord{{Step: "orders", Location: "a\tb\nשלום", Action: executor.DiffCreate}}}, out); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(workbook.FullValuesPath(out)); !os.IsNotExist(err) {
		t.Errorf("a CSV of whole values beside a whole workbook: %v", err)
	}
	f := openBook(t, out)
	if idx, _ := f.GetSheetIndex(workbook.NotesSheet); idx >= 0 {
		t.Error("a notes sheet in a whole workbook")
	}
}

// A step named like the notes sheet keeps its sheet; the notes take
// another name, which the message gives.
func TestWorkbookNotesBesideAStepOfTheirName(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "report.xlsx")
	err := writeTables(out, []*table{{name: workbook.NotesSheet, header: []string{"NOTE"}, rows: [][]string{{"a\x00b", workbook.NotesSheet, "x.csv:2", "", "refused"}}}}, reportColumns)
	var cc *workbook.CellsChanged
	if !errors.As(err, &cc) || cc.Notes != workbook.NotesSheet+"_" || !strings.Contains(cc.Error(), `sheet "`+workbook.NotesSheet+`_"`) {
		t.Fatalf("err %v", err)
	}
	f := openBook(t, out)
	if v, _ := f.GetCellValue(workbook.NotesSheet, "B2"); v != workbook.NotesSheet {
		t.Errorf("the step's sheet was overwritten: B2 %q", v)
	}
	if v, _ := f.GetCellValue(workbook.NotesSheet+"_", "B2"); v != "A2" {
		t.Errorf("notes: B2 %q, want A2", v)
	}
}

// A total whose sides differ is on a yellow fill; the plan's totals: have
// a sheet of their own.
func TestVerifyWorkbookMarksTotalsThatDiffer(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "verify.xlsx")
	res := &verify.Result{Steps: []verify.Step{{Name: "orders", Entity: "ORDERS", Totals: []verify.ControlTotal{
		{What: "records", Source: "2", Target: "2"},
		{What: "sum PRICE", Source: "3.00", Target: "2.50"},
	}}}}
	res.Totals = []journal.TotalRow{{Step: "orders", Name: "value", Expr: "sum(PRICE)", Source: "9", Sent: "9", Target: "8"}}
	if err := WriteVerify(res, out); err != nil {
		t.Fatal(err)
	}
	f := openBook(t, out)
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
