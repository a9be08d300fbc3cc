package executor

import (
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/migrate-tool/migrate/plan"
	"github.com/migrate-tool/migrate/source"
)

// scripted is a reader that plays a list of (row, error) answers, then
// keeps returning the last error.
type scripted struct {
	answers []prefetched
	i       int
	closed  int
	nexts   int
}

func (s *scripted) Header() *source.Header { return source.NewHeader([]string{"A"}) }
func (s *scripted) Next() (source.Row, error) {
	s.nexts++
	if s.i >= len(s.answers) {
		return source.Row{}, s.answers[len(s.answers)-1].err
	}
	a := s.answers[s.i]
	s.i++
	return a.row, a.err
}
func (s *scripted) Close() error { s.closed++; return nil }

func rowAt(n int) source.Row {
	return source.Row{Loc: source.Location{File: "f.csv", Line: n}, Cells: []source.Cell{fmt.Sprint(n)}}
}

func openPrefetched(s *scripted) source.Reader {
	rd, err := prefetch(func(*plan.Source) (source.Reader, error) { return s, nil })(&plan.Source{File: "Data.XLSX"})
	if err != nil {
		panic(err)
	}
	if _, ok := rd.(*prefetchReader); !ok {
		panic("a workbook is not read ahead")
	}
	return rd
}

// TestPrefetchKeepsTheStream: rows, row-only errors with their rows and the
// error that ends the stream come out exactly as the inner reader gave them.
func TestPrefetchKeepsTheStream(t *testing.T) {
	t.Parallel()
	bad := &source.Error{File: "f.csv", Line: 3, RowOnly: true, Err: errors.New("extra field")}
	fatal := &source.Error{File: "f.csv", Line: 400, Err: errors.New("bare quote")}
	tests := []struct {
		name string
		n    int   // rows before the end
		end  error // how the stream ends
	}{
		{"empty", 0, io.EOF},
		{"one chunk", 5, io.EOF},
		{"exact chunks", 2 * prefetchChunk, io.EOF},
		{"many chunks", 3*prefetchChunk + 7, io.EOF},
		{"fatal error", prefetchChunk + 1, fatal},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := &scripted{}
			for i := 0; i < tc.n; i++ {
				var err error
				if i%50 == 3 {
					err = bad
				}
				s.answers = append(s.answers, prefetched{rowAt(i + 2), err})
			}
			s.answers = append(s.answers, prefetched{err: tc.end})
			rd := openPrefetched(s)
			if rd.Header().Names[0] != "A" {
				t.Fatal("header lost")
			}
			for i := 0; i < tc.n; i++ {
				row, err := rd.Next()
				if row.Loc.Line != i+2 || row.Cells[0] != fmt.Sprint(i+2) {
					t.Fatalf("row %d is %+v", i, row)
				}
				if want := s.answers[i].err; err != want {
					t.Fatalf("row %d: error %v, want %v", i, err, want)
				}
			}
			for k := 0; k < 2; k++ {
				if _, err := rd.Next(); err != tc.end {
					t.Fatalf("after the rows: %v, want %v (every time)", err, tc.end)
				}
			}
			if err := rd.Close(); err != nil || s.closed != 1 {
				t.Fatalf("Close: %v, inner closed %d times", err, s.closed)
			}
			if s.nexts != tc.n+1 {
				t.Fatalf("inner Next called %d times, want %d (none after the end)", s.nexts, tc.n+1)
			}
			if _, err := rd.Next(); !errors.Is(err, source.ErrClosed) {
				t.Fatalf("Next after Close: %v, want ErrClosed", err)
			}
		})
	}
}

// TestPrefetchCloseEarly: closing in the middle stops the reading
// goroutine before the inner reader is closed, and reads no further.
func TestPrefetchCloseEarly(t *testing.T) {
	t.Parallel()
	s := &scripted{}
	for i := 0; i < 10*prefetchChunk; i++ {
		s.answers = append(s.answers, prefetched{row: rowAt(i + 2)})
	}
	s.answers = append(s.answers, prefetched{err: io.EOF})
	rd := openPrefetched(s)
	if row, err := rd.Next(); err != nil || row.Loc.Line != 2 {
		t.Fatalf("first row %+v, %v", row, err)
	}
	if err := rd.Close(); err != nil {
		t.Fatal(err)
	}
	if s.closed != 1 {
		t.Fatalf("inner closed %d times, want 1", s.closed)
	}
	// At most the chunk taken, one waiting in the channel and one being
	// built when Close came.
	if s.nexts > 3*prefetchChunk {
		t.Fatalf("read %d rows ahead of a reader closed after one", s.nexts)
	}
	if err := rd.Close(); err != nil || s.closed != 1 {
		t.Fatalf("second Close: %v, inner closed %d times", err, s.closed)
	}
}

// TestPrefetchCloseUnstarted: a reader closed before any Next starts no
// goroutine and closes the inner one.
func TestPrefetchCloseUnstarted(t *testing.T) {
	t.Parallel()
	s := &scripted{answers: []prefetched{{err: io.EOF}}}
	rd := openPrefetched(s)
	if err := rd.Close(); err != nil || s.closed != 1 || s.nexts != 0 {
		t.Fatalf("Close: %v, closed %d, nexts %d", err, s.closed, s.nexts)
	}
}

// TestPrefetchOnlyWorkbooks: CSV readers are handed through as they are.
func TestPrefetchOnlyWorkbooks(t *testing.T) {
	t.Parallel()
	s := &scripted{answers: []prefetched{{err: io.EOF}}}
	for file, want := range map[string]bool{"a.csv": false, "b.tsv": false, "c.xlsx": true, "d.XLSM": true} {
		rd, err := prefetch(func(*plan.Source) (source.Reader, error) { return s, nil })(&plan.Source{File: file})
		if err != nil {
			t.Fatal(err)
		}
		if _, got := rd.(*prefetchReader); got != want {
			t.Errorf("%s read ahead: %v, want %v", file, got, want)
		}
	}
	failing := func(*plan.Source) (source.Reader, error) { return nil, errors.New("no such file") }
	if _, err := prefetch(failing)(&plan.Source{File: "x.xlsx"}); err == nil || err.Error() != "no such file" {
		t.Fatalf("open error %v, want it passed on", err)
	}
}
