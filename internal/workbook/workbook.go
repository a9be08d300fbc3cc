package workbook

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/xuri/excelize/v2"

	"github.com/migrate-tool/migrate/internal/atomicfile"
	"github.com/migrate-tool/migrate/internal/diag"
)

// What a workbook cannot hold. A cell holds at most
// 32,767 characters (UTF-16 units, as Excel counts them): excelize cuts a
// longer value. XML cannot carry control characters other than tab, line
// feed and carriage return, nor bytes that are not UTF-8: excelize writes
// U+FFFD for them. Both used to happen without a word. Every string a
// workbook of ours gets passes through Guard.Value, which makes the
// change itself, marks the cell, lists it on a sheet of its own and keeps
// the whole value in a CSV beside the workbook; the writer returns
// *CellsChanged, for the command to say so.

// MaxCellChars is the most a workbook cell holds, in UTF-16 units
// (excelize.TotalCellChars, Excel's limit).
const MaxCellChars = excelize.TotalCellChars

// NotesSheet lists the cells a workbook could not hold whole.
const NotesSheet = "cells not held whole"

// CellLoss is a value a workbook cell could not hold as it is.
type CellLoss struct {
	Sheet, Cell string
	Value       string // the whole value, as the CSV beside the workbook keeps it
	Cut         bool   // longer than MaxCellChars: the cell holds its start
	Replaced    bool   // characters XML cannot carry: U+FFFD in their place
}

// What says what happened to the cell, in words.
func (c CellLoss) What() string {
	var parts []string
	if c.Cut {
		parts = append(parts, fmt.Sprintf("cut to %d of its %d characters", MaxCellChars, len(utf16.Encode([]rune(c.Value)))))
	}
	if c.Replaced {
		parts = append(parts, "control characters (or bytes that are not UTF-8) shown as U+FFFD")
	}
	return strings.Join(parts, "; ")
}

// CellsChanged is what a workbook writer returns when it wrote the
// workbook, and the CSV of whole values beside it, but some cells hold
// less than their value: the files are complete, the command says so.
type CellsChanged struct {
	Workbook string     // the workbook written
	Notes    string     // its sheet that lists the cells
	Full     string     // the CSV beside it: sheet, cell, whole value
	Cells    []CellLoss // in the order written
}

func (e *CellsChanged) Error() string {
	cut, replaced := 0, 0
	for _, c := range e.Cells {
		if c.Cut {
			cut++
		}
		if c.Replaced {
			replaced++
		}
	}
	var what []string
	if cut > 0 {
		what = append(what, diag.Count(cut, "cell", "cells")+" longer than "+fmt.Sprint(MaxCellChars)+" characters cut")
	}
	if replaced > 0 {
		what = append(what, diag.Count(replaced, "cell", "cells")+" with control characters shown as U+FFFD")
	}
	return fmt.Sprintf("%s: %s (marked, and listed on its sheet %q); the whole values are in %s",
		e.Workbook, strings.Join(what, ", "), e.Notes, e.Full)
}

// FullValuesPath is the CSV beside workbook out that keeps the whole
// values of its changed cells: report.xlsx → report.full.csv.
func FullValuesPath(out string) string {
	return strings.TrimSuffix(out, filepath.Ext(out)) + ".full.csv"
}

// Guard is the one way a string reaches a workbook of ours.
type Guard struct {
	f      *excelize.File
	style  int // the mark of a changed cell, made with the first one
	losses []CellLoss
}

// NewGuard guards the cells written to f.
func NewGuard(f *excelize.File) *Guard { return &Guard{f: f} }

// Mark is the style of a changed cell. It is made only when a cell
// changes, so that a workbook that holds every value keeps its styles.
func (g *Guard) Mark() (int, error) {
	if g.style != 0 {
		return g.style, nil
	}
	var err error
	g.style, err = g.f.NewStyle(&excelize.Style{
		Fill: excelize.Fill{Type: "pattern", Pattern: 1, Color: []string{"F4B183"}},
		Font: &excelize.Font{Italic: true},
	})
	return g.style, err
}

// Value is s as the cell at col, row (1-based) of sheet can hold it, the
// change noted.
func (g *Guard) Value(sheet string, col, row int, s string) (string, bool) {
	held, cut, replaced := Text(s)
	if !cut && !replaced {
		return s, false
	}
	cell, _ := excelize.CoordinatesToCellName(col, row)
	g.losses = append(g.losses, CellLoss{Sheet: sheet, Cell: cell, Value: s, Cut: cut, Replaced: replaced})
	return held, true
}

// SetRow writes cells as row of sheet, each through Value.
func (g *Guard) SetRow(sheet string, row int, cells []string) error {
	vals := make([]any, len(cells))
	for i, c := range cells {
		vals[i], _ = g.Value(sheet, i+1, row, c)
	}
	cell, err := excelize.CoordinatesToCellName(1, row)
	if err != nil {
		return err
	}
	return g.f.SetSheetRow(sheet, cell, &vals)
}

// Text is s as a workbook cell holds it: characters XML cannot
// carry replaced by U+FFFD (replaced), then cut to MaxCellChars UTF-16
// units, never inside a pair (cut).
func Text(s string) (held string, cut, replaced bool) {
	units := 0
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || !xmlChar(r) {
			r, replaced = utf8.RuneError, true
		}
		n := 1
		if r >= 0x10000 {
			n = 2
		}
		if units+n > MaxCellChars {
			cut = true
			break
		}
		units += n
		b.WriteRune(r)
		i += size
	}
	if !cut && !replaced {
		return s, false, false
	}
	return b.String(), cut, replaced
}

// xmlChar is XML 1.0's Char production, what a workbook's XML can carry.
func xmlChar(r rune) bool {
	return r == 0x09 || r == 0x0A || r == 0x0D ||
		r >= 0x20 && r <= 0xD7FF ||
		r >= 0xE000 && r <= 0xFFFD ||
		r >= 0x10000 && r <= 0x10FFFF
}

// Save marks the changed cells (over any other style: the change matters
// more), lists them on a sheet of their own, writes the workbook and the
// CSV of whole values beside it (both 0600), and returns *CellsChanged
// when anything changed. marked says the cells were marked as written
// (streamed sheets, which cannot be styled afterwards).
func (g *Guard) Save(out string, marked bool) error {
	notes := NotesSheet
	if len(g.losses) > 0 {
		if !marked {
			style, err := g.Mark()
			if err != nil {
				return err
			}
			for _, l := range g.losses {
				if err := g.f.SetCellStyle(l.Sheet, l.Cell, l.Cell, style); err != nil {
					return err
				}
			}
		}
		// A step of that name keeps its sheet: the notes take another.
		for idx, _ := g.f.GetSheetIndex(notes); idx >= 0; idx, _ = g.f.GetSheetIndex(notes) {
			notes += "_"
		}
		if _, err := g.f.NewSheet(notes); err != nil {
			return err
		}
		full := filepath.Base(FullValuesPath(out))
		if err := setRow(g.f, notes, 1, []string{"sheet", "cell", "what", "the whole value"}); err != nil {
			return err
		}
		for i, l := range g.losses {
			if err := setRow(g.f, notes, i+2, []string{l.Sheet, l.Cell, l.What(), "in " + full + ", row " + fmt.Sprint(i+2)}); err != nil {
				return err
			}
		}
	}
	if err := Save(g.f, out); err != nil {
		return err
	}
	full := FullValuesPath(out)
	if len(g.losses) == 0 {
		// One left by an earlier workbook of this name would speak of
		// cells this one does not have.
		if err := os.Remove(full); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	}
	err := atomicfile.Write(full, 0o600, func(w io.Writer) error {
		cw := &SafeCSV{NewCSVWriter(w)}
		cw.Write([]string{"sheet", "cell", "value"})
		for _, l := range g.losses {
			cw.Write([]string{l.Sheet, l.Cell, l.Value})
		}
		cw.Flush()
		return cw.Error()
	})
	if err != nil {
		return err
	}
	return &CellsChanged{Workbook: out, Notes: notes, Full: full, Cells: g.losses}
}

// BOM starts every CSV we write: without it Excel reads UTF-8 as the
// machine's code page, and Hebrew comes out as mojibake. Our readers (package
// source) drop it.
const BOM = "\uFEFF"

// NewCSVWriter is a CSV writer on w that has written the BOM first.
func NewCSVWriter(w io.Writer) *csv.Writer {
	_, _ = io.WriteString(w, BOM) // an error stays with w: csv.Writer.Error reports the next
	return csv.NewWriter(w)
}

// SafeCSV writes cells that a spreadsheet program would run as a formula
// (=, +, -, @, and tab or carriage return before one) with a leading
// apostrophe: the report holds the customer's own cells and the server's
// messages, and opening it must never run what they contain (CSV
// injection). A cell that is a plain number ("-5", "+3.5") is written as
// it is, so that a corrected report reads back the same values.
type SafeCSV struct{ *csv.Writer }

// Write writes cells as one record, each neutralised; an error stays in
// the writer: Error() after Flush.
func (w *SafeCSV) Write(cells []string) {
	out := make([]string, len(cells))
	for i, c := range cells {
		out[i] = neutraliseFormula(c)
	}
	_ = w.Writer.Write(out) // the error stays in the writer: Error() after Flush
}

func neutraliseFormula(c string) string {
	if c == "" || !strings.ContainsRune("=+-@\t\r", rune(c[0])) {
		return c
	}
	if _, err := strconv.ParseFloat(c, 64); err == nil && c[0] != '\t' && c[0] != '\r' {
		return c
	}
	return "'" + c
}

// Save writes f to out through atomicfile, mode 0600: every
// workbook the tool writes (reports, diffs, exports, created keys) holds
// the customer's data.
func Save(f *excelize.File, out string) error {
	return atomicfile.Write(out, 0o600, func(w io.Writer) error {
		_, err := f.WriteTo(w)
		return err
	})
}

func setRow(f *excelize.File, sheet string, row int, cells []string) error {
	vals := make([]any, len(cells))
	for i, c := range cells {
		vals[i] = c
	}
	cell, err := excelize.CoordinatesToCellName(1, row)
	if err != nil {
		return err
	}
	return f.SetSheetRow(sheet, cell, &vals)
}

// SheetName makes a step name a valid sheet name (31 characters, no []:*?/\).
func SheetName(s string) string {
	s = strings.Map(func(r rune) rune {
		if strings.ContainsRune(`[]:*?/\`, r) {
			return '_'
		}
		return r
	}, s)
	if r := []rune(s); len(r) > 31 {
		s = string(r[:31])
	}
	if s == "" {
		s = "step"
	}
	return s
}
