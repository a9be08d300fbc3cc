package sourcetest

import (
	"errors"
	"io"
	"reflect"
	"testing"

	"github.com/migrate-tool/migrate/source"
)

// Open makes a source from rows of text: rows[0] is the header, the rest are
// data rows, laid out from line (or sheet row) 1 with nothing around them.
// It returns what source.Open would, for the file it wrote.
type Open func(t *testing.T, rows [][]string) (source.Reader, error)

// Conformance runs the tests every source.Reader passes, whatever its
// format. An empty cell may read as "" or nil: CSV keeps the empty string,
// a workbook has no cell at all.
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
		r := mustOpen(t, open, [][]string{{"A", "B", "C"}, {"x", "", "z"}, {"", "y", ""}})
		for _, want := range [][]string{{"x", "", "z"}, {"", "y", ""}} {
			row, err := r.Next()
			if err != nil {
				t.Fatal(err)
			}
			for c, w := range want {
				got := row.Cells[c]
				if w == "" && (got == nil || got == "") {
					continue
				}
				if got != w {
					t.Errorf("line %d column %d = %#v, want %q", row.Loc.Line, c, got, w)
				}
			}
		}
		expectEOF(t, r)
	})
	t.Run("ShortRow", func(t *testing.T) {
		r := mustOpen(t, open, [][]string{{"A", "B", "C"}, {"x"}})
		row, err := r.Next()
		if err != nil {
			t.Fatal(err)
		}
		if row.Get("A") != "x" || row.Get("B") != nil || row.Get("C") != nil || len(row.Cells) != 3 {
			t.Errorf("short row = %#v, want [x <nil> <nil>]", row.Cells)
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
