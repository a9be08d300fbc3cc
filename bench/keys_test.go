package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/migrate-tool/migrate/sandbox"
)

// keysShape is one step of customers whose entity key comes from the file:
// every key is checked against every earlier row's (the duplicate-key
// check), under --memory 64MB.
var keysShape = shape{name: "keys-64MB", args: []string{"plan", "--sandbox", "--json", "--memory", "64MB", "PLAN"},
	write: func(dir string, rows int) (int, int, error) {
		if err := writePairs(filepath.Join(dir, "customers.csv"), rows, "Code", "N%08d", "Name", "Customer number %d", 1); err != nil {
			return 0, 0, err
		}
		return rows, 0, writePlan(dir, `sources:
  customers: {file: customers.csv}
`+customersSteps+`      CUSTDES: row.Name
`)
	}}

// TestKeysShapeSmall checks the harness of BenchmarkHistory on a few rows.
func TestKeysShapeSmall(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	recs, kids, err := keysShape.write(dir, 3000)
	if err != nil {
		t.Fatal(err)
	}
	hwm, _, _, err := shapePeak(keysShape, dir, recs, kids)
	if err != nil || hwm <= 0 {
		t.Fatalf("peak %d: %v", hwm, err)
	}
}

// BenchmarkHistory reports the dry run's peak memory (peak-MB), time (s)
// and CPU time (cpu-s) for 1, 5 and 10 million keyed rows under --memory
// 64MB: past their share of the budget the keys go to disk, so the peak
// stays flat. -short runs 100k rows only.
func BenchmarkHistory(b *testing.B) {
	for _, rows := range []int{100_000, 1_000_000, 5_000_000, 10_000_000} {
		b.Run(fmt.Sprintf("%dk", rows/1000), func(b *testing.B) {
			if testing.Short() && rows > 100_000 {
				b.Skip("-short: large files skipped")
			}
			benchShape(b, keysShape, rows)
		})
	}
}

// BenchmarkHistoryApply reports apply's peak memory (peak-MB), time (s)
// and calls over N keyed customers under --memory 64MB, against a sandbox
// in this process (its memory not counted): a load of 10 million rows
// should stay within the budget. Skipped under -short; 10M
// rows take over half an hour.
func BenchmarkHistoryApply(b *testing.B) {
	for _, rows := range []int{1_000_000, 10_000_000} {
		b.Run(fmt.Sprintf("%dk", rows/1000), func(b *testing.B) {
			if testing.Short() {
				b.Skip("-short: large loads skipped")
			}
			dir, err := os.MkdirTemp("", "migrate-history-apply-")
			if err != nil {
				b.Fatal(err)
			}
			defer os.RemoveAll(dir)
			t := newCountingTarget(b)
			if err := writeScale(dir, scaleShapes[0], rows, t.srv.URL+sandbox.BasePath); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			var r scaleRun
			for i := 0; i < b.N; i++ {
				if r, err = runScale(t, dir, []string{"apply", "--json", "--memory", "64MB", "--journal", "JOURNAL", "PLAN"}); err != nil {
					b.Fatal(err)
				}
				if !r.complete || r.committed != rows {
					b.Fatalf("%d of %d records committed, complete %v", r.committed, rows, r.complete)
				}
			}
			b.ReportMetric(float64(r.peak)/(1<<20), "peak-MB")
			b.ReportMetric(r.secs, "s")
			b.ReportMetric(float64(r.calls), "calls")
		})
	}
}
