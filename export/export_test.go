package export

import (
	"io"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/migrate-tool/migrate/source"
)

// An export read back by the source readers gives the values it was
// given: numbers (a 16-digit one as its text), dates, blanks, and the
// lines of a sub-form keyed by their parent.
func TestWriteExportReadsBack(t *testing.T) {
	t.Parallel()
	day := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	rows := func() source.Reader {
		return source.NewMemory("orders", []string{"ORDNAME", "PRICE", "BIG", "CURDATE", "NOTE", "ORDERITEMS_SUBFORM"}, [][]source.Cell{
			{"SO1", source.Number("12.10"), source.Number("1234567890123456"), day, "", []any{
				map[string]any{"PARTNAME": "P1", "TQUANT": source.Number("2")},
				map[string]any{"PARTNAME": "P2", "TQUANT": source.Number("0.5")},
			}},
			{"SO2", source.Number("-3"), "", "", "=1+1", []any{}},
		})
	}
	e := func() Export {
		return Export{Rows: rows(), Key: []string{"ORDNAME"},
			Entity: Sheet{Name: "ORDERS", Columns: []string{"ORDNAME", "PRICE", "BIG", "CURDATE", "NOTE"}},
			Subs:   []Sheet{{Name: "ORDERITEMS_SUBFORM", Columns: []string{"PARTNAME", "TQUANT"}}}}
	}
	for _, tc := range []struct {
		file                string
		main, lines         source.Options
		wantMain, wantLines [][]source.Cell
	}{
		{file: "out.xlsx", main: source.Options{Sheet: "ORDERS"}, lines: source.Options{Sheet: "ORDERITEMS_SUBFORM"},
			wantMain:  [][]source.Cell{{"SO1", source.Number("12.1"), "1234567890123456", day, ""}, {"SO2", source.Number("-3"), "", "", "=1+1"}},
			wantLines: [][]source.Cell{{"SO1", "P1", source.Number("2")}, {"SO1", "P2", source.Number("0.5")}}},
		{file: "out.csv", lines: source.Options{Name: "out.ORDERITEMS_SUBFORM.csv"},
			wantMain:  [][]source.Cell{{"SO1", "12.10", "1234567890123456", "2026-03-01T00:00:00+00:00", ""}, {"SO2", "-3", "", "", "=1+1"}},
			wantLines: [][]source.Cell{{"SO1", "P1", "2"}, {"SO1", "P2", "0.5"}}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			dir := t.TempDir()
			out := filepath.Join(dir, tc.file)
			written, err := Write(out, e())
			main, lines := out, filepath.Join(dir, "out.ORDERITEMS_SUBFORM.csv")
			if tc.file == "out.xlsx" {
				main, lines = out+" (sheet ORDERS)", out+" (sheet ORDERITEMS_SUBFORM)"
			}
			if want := []Written{{Name: "ORDERS", Rows: 2, To: main}, {Name: "ORDERITEMS_SUBFORM of ORDERS", Rows: 2, To: lines}}; err != nil || !reflect.DeepEqual(written, want) {
				t.Fatalf("Write: %+v %v, want %+v", written, err, want)
			}
			read := func(o source.Options, defName string) (*source.Header, [][]source.Cell) {
				if o.Name == "" {
					o.Name = defName
				}
				o.Path = filepath.Join(dir, o.Name)
				r, err := source.Open(o)
				if err != nil {
					t.Fatal(err)
				}
				defer r.Close()
				var got [][]source.Cell
				for {
					row, err := r.Next()
					if err == io.EOF {
						return r.Header(), got
					}
					if err != nil {
						t.Fatal(err)
					}
					got = append(got, append([]source.Cell(nil), row.Cells...))
				}
			}
			h, got := read(tc.main, tc.file)
			if !reflect.DeepEqual(h.Names, []string{"ORDNAME", "PRICE", "BIG", "CURDATE", "NOTE"}) || !reflect.DeepEqual(got, tc.wantMain) {
				t.Errorf("entity: %v\n%#v\nwant %#v", h.Names, got, tc.wantMain)
			}
			h, got = read(tc.lines, tc.file)
			if !reflect.DeepEqual(h.Names, []string{"ORDNAME", "PARTNAME", "TQUANT"}) || !reflect.DeepEqual(got, tc.wantLines) {
				t.Errorf("lines: %v\n%#v\nwant %#v", h.Names, got, tc.wantLines)
			}
			left, _ := filepath.Glob(filepath.Join(dir, ".*tmp"))
			if len(left) > 0 {
				t.Errorf("temporary files left: %v", left)
			}
		})
	}
	if _, err := Write(filepath.Join(t.TempDir(), "out.txt"), e()); err == nil {
		t.Error("an export to .txt was written")
	}
}
