package profile

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/migrate-tool/migrate/source"
	"github.com/migrate-tool/migrate/source/sourcetest"
)

// BenchmarkRun profiles 100,000 rows of six columns: a key, a reference
// to it, a number, a date, and two texts.
func BenchmarkRun(b *testing.B) {
	dir := b.TempDir()
	path := filepath.Join(dir, "rows.csv")
	const rows = 100_000
	if err := sourcetest.WriteCSV(path, rows, []string{"Code", "Parent", "Qty", "Date", "Name", "Note"}, func(row, col int) string {
		switch col {
		case 0:
			return fmt.Sprintf("P-%06d", row)
		case 1:
			return fmt.Sprintf("P-%06d", row/2)
		case 2:
			return fmt.Sprint(row % 1000)
		case 3:
			return fmt.Sprintf("%02d/%02d/2026", row%28+1, row%12+1)
		case 4:
			return fmt.Sprintf("Part number %d", row)
		}
		return "see the drawing"
	}); err != nil {
		b.Fatal(err)
	}
	in := Input{Name: "rows", File: "rows.csv", Open: func() (source.Reader, error) { return source.Open(source.Options{Path: path}) },
		Uses: []Use{{Column: "Code", Field: "PARTNAME", Key: true, Direct: true, Type: "Edm.String", MaxLength: 22}}}
	opts := Options{Sources: []Input{in}, Refs: []Ref{{Source: "rows", Column: "Parent", ToSource: "rows", ToColumn: "Code"}}}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := Run(context.Background(), opts); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}
