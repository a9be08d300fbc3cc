package executor

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/xuri/excelize/v2"

	"github.com/migrate-tool/migrate/source"
)

func TestWorkbookText(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("א", MaxCellChars+5)
	// An emoji is two UTF-16 units: one that would end past the limit is
	// left out whole, never half a pair.
	pair := strings.Repeat("a", MaxCellChars-1) + "😀b"
	for _, c := range []struct {
		name, in, want string
		cut, replaced  bool
	}{
		{"plain", "שלום, world", "שלום, world", false, false},
		{"tab, line feed, carriage return", "a\tb\nc\rd", "a\tb\nc\rd", false, false},
		{"at the limit", long[:MaxCellChars*2], long[:MaxCellChars*2], false, false},
		{"past the limit", long, long[:MaxCellChars*2], true, false},
		{"a pair across the limit", pair, strings.Repeat("a", MaxCellChars-1), true, false},
		{"control characters", "a\x00b\x1bc\x0bd", "a\uFFFDb\uFFFDc\uFFFDd", false, true},
		{"not UTF-8", "a\xffb", "a\uFFFDb", false, true},
		{"U+FFFE", "a\uFFFEb", "a\uFFFDb", false, true},
		{"both", "\x07" + long, "\uFFFD" + long[:(MaxCellChars-1)*2], true, true},
	} {
		got, cut, replaced := WorkbookText(c.in)
		if got != c.want || cut != c.cut || replaced != c.replaced {
			t.Errorf("%s: got %d units (cut %v, replaced %v), want %d (cut %v, replaced %v)", c.name,
				len(utf16.Encode([]rune(got))), cut, replaced, len(utf16.Encode([]rune(c.want))), c.cut, c.replaced)
		}
	}
}

// Every workbook we write says what it could not hold: the cell marked,
// a sheet listing it, the whole value in OUT.full.csv (0600, with a BOM),
// and *CellsChanged for the command to say so. Before,
// excelize cut and replaced without a word.
func TestWorkbooksSayWhatTheyCannotHold(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("ש", MaxCellChars+10)
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
			return WriteDiff(&DiffResult{Steps: []DiffStep{{Name: "orders"}}, Records: []DiffRecord{{Step: "orders", Location: long, Key: ctrl, Action: DiffUpdate}}}, out)
		}},
		{"export", "ORDERS", func(out string) error {
			_, err := WriteExport(out, Export{Rows: &rowsOf{h: source.NewHeader([]string{"NOTE", "TEXT"}), rows: [][]source.Cell{{long, ctrl}}},
				Key: []string{"NOTE"}, Entity: ExportSheet{Name: "ORDERS", Columns: []string{"NOTE", "TEXT"}}})
			return err
		}},
	} {
		t.Run(w.name, func(t *testing.T) {
			t.Parallel()
			out := filepath.Join(t.TempDir(), w.name+".xlsx")
			err := w.write(out)
			var cc *CellsChanged
			if !errors.As(err, &cc) {
				t.Fatalf("err %v, want *CellsChanged", err)
			}
			if len(cc.Cells) != 2 || cc.Cells[0].Cell != "A2" || !cc.Cells[0].Cut || cc.Cells[1].Cell != "B2" || !cc.Cells[1].Replaced || cc.Full != FullValuesPath(out) {
				var where []string
				for _, c := range cc.Cells {
					where = append(where, fmt.Sprintf("%s!%s cut %v replaced %v", c.Sheet, c.Cell, c.Cut, c.Replaced))
				}
				t.Fatalf("changed cells %q, full %s", where, cc.Full)
			}
			if msg := cc.Error(); !strings.Contains(msg, "1 cell longer than 32767 characters cut, 1 cell with control characters shown as U+FFFD") || !strings.Contains(msg, w.name+".full.csv") {
				t.Errorf("message %q", msg)
			}
			f, err := excelize.OpenFile(out)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			a2, _ := f.GetCellValue(w.sheet, "A2")
			b2, _ := f.GetCellValue(w.sheet, "B2")
			if a2 != long[:MaxCellChars*2] || b2 != "bell\uFFFDhere" {
				t.Errorf("cells hold %d characters and %q", len([]rune(a2)), b2)
			}
			for _, c := range []string{"A2", "B2"} {
				if id, _ := f.GetCellStyle(w.sheet, c); id == 0 {
					t.Errorf("%s!%s is not marked", w.sheet, c)
				}
			}
			notes, err := f.GetRows(notesSheet)
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
	if err := os.WriteFile(FullValuesPath(out), []byte("sheet,cell,value\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := WriteDiff(&DiffResult{Steps: []DiffStep{{Name: "orders"}}, Records: []DiffRecord{{Step: "orders", Location: "a\tb\nשלום", Action: DiffCreate}}}, out); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(FullValuesPath(out)); !os.IsNotExist(err) {
		t.Errorf("a CSV of whole values beside a whole workbook: %v", err)
	}
	f, err := excelize.OpenFile(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if idx, _ := f.GetSheetIndex(notesSheet); idx >= 0 {
		t.Error("a notes sheet in a whole workbook")
	}
}

// A step named like the notes sheet keeps its sheet; the notes take
// another name, which the message gives.
func TestWorkbookNotesBesideAStepOfTheirName(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "report.xlsx")
	err := writeTables(out, []*table{{name: notesSheet, header: []string{"NOTE"}, rows: [][]string{{"a\x00b", notesSheet, "x.csv:2", "", "refused"}}}}, reportColumns)
	var cc *CellsChanged
	if !errors.As(err, &cc) || cc.Notes != notesSheet+"_" || !strings.Contains(cc.Error(), `sheet "`+notesSheet+`_"`) {
		t.Fatalf("err %v", err)
	}
	f, err := excelize.OpenFile(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if v, _ := f.GetCellValue(notesSheet, "B2"); v != notesSheet {
		t.Errorf("the step's sheet was overwritten: B2 %q", v)
	}
	if v, _ := f.GetCellValue(notesSheet+"_", "B2"); v != "A2" {
		t.Errorf("notes: B2 %q, want A2", v)
	}
}
