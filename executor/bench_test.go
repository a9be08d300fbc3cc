package executor

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/sandbox"
	"github.com/migrate-tool/migrate/transform"
)

// oneByOne is the naive loader: one request per entity and per line.
type oneByOne struct{ c Client }

func (n oneByOne) Batch(ctx context.Context, reqs []odata.BatchRequest, opts odata.BatchOptions) ([]odata.BatchResponse, error) {
	return n.c.Batch(ctx, reqs, opts)
}

func benchOrders(n int) []transform.Result {
	var out []transform.Result
	for i := 0; i < n; i++ {
		out = append(out, orderWithLines(fmt.Sprintf("O%04d", i), i+2, "C1", "P1", "P2", "P3"))
	}
	return out
}

// BenchmarkApplyVsNaive loads 100 orders of 3 lines (400 operations) into a
// sandbox with 10ms latency per call, batched (the executor) and naive
// (batches of one: one call per entity or line, the way a hand-written
// loader works), and reports the speed-up.
func BenchmarkApplyVsNaive(b *testing.B) {
	b.ReportAllocs()
	var batched, naive time.Duration
	for i := 0; i < b.N; i++ {
		for _, mode := range []string{"batched", "naive"} {
			env := newSandbox(b, sandbox.Options{Latency: 10 * time.Millisecond})
			p, f := ordersPlan(benchOrders(100)...)
			o := env.opts(b, p, f)
			o.Journal = filepath.Join(b.TempDir(), mode+".journal")
			if mode == "naive" {
				o.BatchSize = 1
				o.Concurrency = 1
				o.Client = oneByOne{env.client}
			}
			start := time.Now()
			sum, err := runApply(context.Background(), o)
			if err != nil || !sum.Complete {
				b.Fatalf("%s: %v %+v", mode, err, sum)
			}
			if mode == "batched" {
				batched += time.Since(start)
			} else {
				naive += time.Since(start)
			}
		}
	}
	b.ReportMetric(float64(naive)/float64(batched), "speedup")
	b.ReportMetric(float64(batched.Milliseconds())/float64(b.N), "batched-ms")
	b.ReportMetric(float64(naive.Milliseconds())/float64(b.N), "naive-ms")
}
