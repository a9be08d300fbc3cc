package sourcetest

import (
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/migrate-tool/migrate/source"
)

// Open makes a source from rows of text: rows[0] is the header, the rest are
// data rows, laid out from line (or sheet row) 1 with nothing around them.
// It returns what source.Open would, for the file it wrote.
type Open func(t *testing.T, rows [][]string) (source.Reader, error)

// Conformance runs the tests every source.Reader passes, whatever its
// format. A blank cell reads as "" exactly, never nil: an empty CSV field,
// a cell a workbook leaves out of its XML, a cell past the end of a short
// row. open writes "" as a blank cell the way its format stores one
// (nothing between delimiters, no <c> element).
func Conformance(t *testing.T, open Open) {
	t.Run("Header", func(t *testing.T) {
		r := mustOpen(t, open, [][]string{{"Code", "Name", "Price"}, {"A1", "Bolt", "1.5"}})
		if got, want := r.Header().Names, []string{"Code", "Name", "Price"}; !reflect.DeepEqual(got, want) {
			t.Errorf("Header().Names = %q, want %q", got, want)
		}
		if i, ok := r.Header().Index("Price"); !ok || i != 2 {
			t.Errorf(`Header().Index("Price") = %d, %v; want 2, true`, i, ok)
		}
	})
	t.Run("RowsAndLocations", func(t *testing.T) {
		data := [][]string{
			{"Code", "Name"},
			{"A1", "Bolt"},
			{"B2", "שלום"},
			{"C3", "with, comma and \"quotes\""},
		}
		r := mustOpen(t, open, data)
		for i, want := range data[1:] {
			row, err := r.Next()
			if err != nil {
				t.Fatalf("row %d: %v", i+1, err)
			}
			if row.Header != r.Header() {
				t.Errorf("row %d: Header is not the reader's header", i+1)
			}
			if row.Loc.Line != i+2 {
				t.Errorf("row %d: Loc.Line = %d, want %d", i+1, row.Loc.Line, i+2)
			}
			if row.Loc.String() == "" || row.CellRef("Name") == "" {
				t.Errorf("row %d: empty location", i+1)
			}
			for c, name := range data[0] {
				if got := row.Get(name); got != want[c] {
					t.Errorf("row %d: Get(%q) = %#v, want %q", i+1, name, got, want[c])
				}
			}
		}
		expectEOF(t, r)
	})
	t.Run("EmptyCells", func(t *testing.T) {
		// A workbook leaves blank cells out of its XML; they read as "",
		// as CSV's empty fields do.
		r := mustOpen(t, open, [][]string{{"A", "B", "C", "D", "E"}, {"x", "", "", "", "z"}, {"", "y", "", "w", ""}})
		expectRows(t, r, []wantRow{
			{2, []string{"x", "", "", "", "z"}},
			{3, []string{"", "y", "", "w", ""}},
		})
	})
	t.Run("ShortRow", func(t *testing.T) {
		// A row whose last cells are blank is shorter than the header in
		// both formats: "x" alone on its line, or a <row> with one cell.
		r := mustOpen(t, open, [][]string{{"A", "B", "C"}, {"x"}, {"", "y"}})
		expectRows(t, r, []wantRow{
			{2, []string{"x", "", ""}},
			{3, []string{"", "y", ""}},
		})
	})
	t.Run("BlankRowsKeepLocations", func(t *testing.T) {
		// Rows without any value are skipped, and the rows after them keep
		// their own line: a location still points at the right place.
		r := mustOpen(t, open, [][]string{{"A", "B", "C"}, {"", "", ""}, {"", "", "z"}, {}, {"x"}})
		rows := expectRows(t, r, []wantRow{
			{3, []string{"", "", "z"}},
			{5, []string{"x", "", ""}},
		})
		if len(rows) == 2 {
			if got := rows[0].CellRef("C"); !strings.HasSuffix(got, "3") {
				t.Errorf(`CellRef("C") = %q, want the place of line 3`, got)
			}
		}
	})
	t.Run("GetBlank", func(t *testing.T) {
		r := mustOpen(t, open, [][]string{{"A", "B"}, {"x"}})
		row, err := r.Next()
		if err != nil {
			t.Fatal(err)
		}
		if got := row.Get("B"); got != "" {
			t.Errorf(`Get("B") of a short row = %#v, want ""`, got)
		}
		row.Cells = row.Cells[:1] // a row built shorter than the header
		if got := row.Get("B"); got != "" {
			t.Errorf(`Get("B") past the row's cells = %#v, want ""`, got)
		}
		if got := row.Get("Z"); got != nil {
			t.Errorf(`Get("Z") of no such column = %#v, want nil`, got)
		}
	})
	t.Run("HeaderOnly", func(t *testing.T) {
		r := mustOpen(t, open, [][]string{{"A", "B"}})
		if len(r.Header().Names) != 2 {
			t.Errorf("header = %q", r.Header().Names)
		}
		expectEOF(t, r)
	})
	t.Run("Empty", func(t *testing.T) {
		r, err := open(t, nil)
		if err == nil {
			r.Close()
			t.Fatal("opening an empty source succeeded; want ErrNoHeader")
		}
		if !errors.Is(err, source.ErrNoHeader) {
			t.Errorf("error = %v, want ErrNoHeader", err)
		}
		var se *source.Error
		if !errors.As(err, &se) || se.File == "" {
			t.Errorf("error %v is not a *source.Error with the file", err)
		}
	})
	t.Run("CloseTwice", func(t *testing.T) {
		r, err := open(t, [][]string{{"A"}, {"1"}})
		if err != nil {
			t.Fatal(err)
		}
		if err := r.Close(); err != nil {
			t.Errorf("first Close: %v", err)
		}
		if err := r.Close(); err != nil {
			t.Errorf("second Close: %v", err)
		}
		if _, err := r.Next(); !errors.Is(err, source.ErrClosed) {
			t.Errorf("Next after Close = %v, want ErrClosed", err)
		}
	})
	t.Run("DuplicateHeader", func(t *testing.T) {
		r, err := open(t, [][]string{{"A", "B", "A"}, {"1", "2", "3"}})
		if err == nil {
			r.Close()
			t.Fatal("duplicate names accepted")
		}
		var se *source.Error
		if !errors.As(err, &se) || se.Line != 1 {
			t.Errorf("error %v: want a *source.Error on line 1", err)
		}
	})
}

// wantRow is a row a test expects: its line and its cells, all text.
type wantRow struct {
	line  int
	cells []string
}

// expectRows reads the rows that are left and compares them with want
// exactly: a blank cell must be "", not nil.
func expectRows(t *testing.T, r source.Reader, want []wantRow) []source.Row {
	t.Helper()
	var rows []source.Row
	for _, w := range want {
		row, err := r.Next()
		if err != nil {
			t.Fatalf("the row at line %d: %v", w.line, err)
		}
		rows = append(rows, row)
		if row.Loc.Line != w.line {
			t.Errorf("row at line %d, want %d", row.Loc.Line, w.line)
		}
		wantCells := make([]source.Cell, len(w.cells))
		for i, c := range w.cells {
			wantCells[i] = c
		}
		if !reflect.DeepEqual(row.Cells, wantCells) {
			t.Errorf("line %d: cells %#v, want %#v", w.line, row.Cells, wantCells)
		}
	}
	expectEOF(t, r)
	return rows
}

func mustOpen(t *testing.T, open Open, rows [][]string) source.Reader {
	t.Helper()
	r, err := open(t, rows)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

func expectEOF(t *testing.T, r source.Reader) {
	t.Helper()
	for i := 0; i < 3; i++ {
		if row, err := r.Next(); err != io.EOF {
			t.Fatalf("Next after the last row = %+v, %v; want io.EOF every time", row, err)
		}
	}
}
