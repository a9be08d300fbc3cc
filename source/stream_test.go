package source_test

import (
	"io"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"

	"github.com/migrate-tool/migrate/source"
	"github.com/migrate-tool/migrate/source/sourcetest"
)

var cols10 = []string{"Code", "Name", "Qty", "Price", "Date", "Group", "Unit", "Weight", "Note", "Active"}

func gen(row, col int) string {
	switch col {
	case 0:
		return "P-" + strconv.Itoa(row)
	case 2:
		return strconv.Itoa(row % 1000)
	case 3:
		return strconv.Itoa(row%997) + ".25"
	case 8:
		return "a note about part " + strconv.Itoa(row) + ", with a comma"
	}
	return "value " + strconv.Itoa(col)
}

// readAll reads every row and returns the count and the largest heap in
// use, measured after a collection every `every` rows. Rows are dropped as
// they are read, so a reader that holds nothing back keeps the heap flat.
func readAll(t testing.TB, r source.Reader, every int) (rows int, base, peak uint64) {
	var ms runtime.MemStats
	for {
		_, err := r.Next()
		if err == io.EOF {
			return rows, base, peak
		}
		if err != nil {
			t.Fatal(err)
		}
		rows++
		if rows%every == 0 {
			runtime.GC()
			runtime.ReadMemStats(&ms)
			if base == 0 {
				base = ms.HeapInuse
			}
			peak = max(peak, ms.HeapInuse)
		}
	}
}

// TestStreamingMemory reads 200k rows from each format and checks the heap
// does not grow with the rows read: at most 4 MiB above what it was after
// the first 20k rows (the whole CSV is about 20 MiB).
func TestStreamingMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("writes and reads 200k-row files")
	}
	const n = 200_000
	dir := t.TempDir()
	for _, tc := range []struct {
		name  string
		write func(string, int, []string, func(int, int) string) error
		cols  []string
	}{
		{"data.csv", sourcetest.WriteCSV, cols10},
		{"data.xlsx", sourcetest.WriteXLSX, cols10[:4]},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(dir, tc.name)
			if err := tc.write(p, n, tc.cols, gen); err != nil {
				t.Fatal(err)
			}
			r, err := source.Open(source.Options{Name: tc.name, Path: p})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			rows, base, peak := readAll(t, r, 20_000)
			if rows != n {
				t.Fatalf("read %d rows, want %d", rows, n)
			}
			t.Logf("heap in use: %d KiB after 20k rows, at most %d KiB up to %d rows", base>>10, peak>>10, n)
			if peak > base+4<<20 {
				t.Errorf("heap grew from %d KiB to %d KiB while streaming: rows are being kept", base>>10, peak>>10)
			}
		})
	}
}

func benchmark(b *testing.B, name string, write func(string, int, []string, func(int, int) string) error) {
	const n = 20_000
	p := filepath.Join(b.TempDir(), name)
	if err := write(p, n, cols10, gen); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r, err := source.Open(source.Options{Name: name, Path: p})
		if err != nil {
			b.Fatal(err)
		}
		rows := 0
		for {
			_, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			rows++
		}
		r.Close()
		if rows != n {
			b.Fatalf("read %d rows", rows)
		}
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "rows/s")
}

func BenchmarkCSV(b *testing.B)  { benchmark(b, "bench.csv", sourcetest.WriteCSV) }
func BenchmarkXLSX(b *testing.B) { benchmark(b, "bench.xlsx", sourcetest.WriteXLSX) }
