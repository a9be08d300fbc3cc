package source_test

import (
	"errors"
	"io"
	"reflect"
	"testing"

	"github.com/migrate-tool/migrate/source"
)

// A plan test's rows: counted from 1 (no header line), short rows padded
// with blank cells, each row its own copy.
func TestMemory(t *testing.T) {
	t.Parallel()
	r := source.NewMemory("given:orders", []string{"Order", "Qty"}, [][]source.Cell{{"SO1", "2"}, {"SO2"}})
	var rows []source.Row
	for {
		row, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, row)
	}
	if len(rows) != 2 || rows[0].Loc.String() != "given:orders:1" || rows[1].Loc.String() != "given:orders:2" {
		t.Fatalf("rows: %+v", rows)
	}
	if !reflect.DeepEqual(rows[1].Cells, []source.Cell{"SO2", ""}) || rows[0].Get("Qty") != "2" {
		t.Errorf("cells: %#v %#v", rows[0].Cells, rows[1].Cells)
	}
	if err := r.Close(); err != nil {
		t.Error(err)
	}
}
