package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/migrate-tool/migrate/cmd/migrate/cli"
	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/sandbox"
	"github.com/migrate-tool/migrate/source/sourcetest"
)

// The fewest calls. Orders of five lines go as deep
// inserts, up to 100 a call; the naive script deep-inserts one order per
// request, one request at a time. Both are the real command (cli.Run) in
// a child process against one sandbox answering every call after 10 ms,
// so the figures are the command's own wall time and its whole peak RSS.

// orderLines is the number of lines of every order of the dataset.
const orderLines = 5

// writeOrders writes n orders of orderLines lines (one row a line, an
// order's rows together) and two plans: plan.yaml as a user writes it
// (deep insert by default), naive.yaml the script's shape (one call at a
// time, one order per call). The orders carry their numbers, so the data
// of two loads compares field for field and every call is an order's.
func writeOrders(dir string, n int) error {
	parts := []string{"B-100", "N-200", "W-300", "T-400", "T-401"}
	err := sourcetest.WriteCSV(filepath.Join(dir, "orders.csv"), n*orderLines, []string{"OrderNo", "Customer", "Part", "Qty"},
		func(r, c int) string {
			switch c {
			case 0:
				return fmt.Sprintf("SO%07d", r/orderLines)
			case 1:
				return "C1"
			case 2:
				return parts[r%orderLines]
			}
			return fmt.Sprint(1 + r%7)
		})
	if err != nil {
		return err
	}
	plan, err := os.ReadFile(filepath.Join("testdata", "deep.yaml"))
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "plan.yaml"), plan, 0o644); err != nil {
		return err
	}
	// The naive load: one sub-request a call, one call at a time.
	naive := strings.Replace(string(plan), "  auth: basic\n", "  auth: basic\n  batch_size: 1\n  concurrency: 1\n", 1)
	return os.WriteFile(filepath.Join(dir, "naive.yaml"), []byte(naive), 0o644)
}

// seedOrderRefs creates the customer and the parts the orders name.
func seedOrderRefs(ctx context.Context, c *odata.Client) error {
	reqs := []odata.BatchRequest{{ID: "1", Method: "POST", URL: "CUSTOMERS", Body: json.RawMessage(`{"CUSTNAME":"C1","CUSTDES":"Bench"}`)}}
	for i, p := range []string{"B-100", "N-200", "W-300", "T-400", "T-401"} {
		reqs = append(reqs, odata.BatchRequest{ID: fmt.Sprint(i + 2), Method: "POST", URL: "LOGPART", Body: json.RawMessage(`{"PARTNAME":"` + p + `","PARTDES":"part"}`)})
	}
	resps, err := c.Batch(ctx, reqs, odata.BatchOptions{})
	if err != nil {
		return err
	}
	for _, r := range resps {
		if r.Status != 201 {
			return fmt.Errorf("seeding: status %d: %s", r.Status, r.Body)
		}
	}
	return nil
}

// deepRun is one apply of the dataset: the command's figures and the
// sandbox's orders afterwards.
type deepRun struct {
	calls, subs int
	secs, cpu   float64
	peak        int64
	orders      []string
}

// ordersTarget is a fresh sandbox answering every call after latency,
// holding the customer and the parts the orders name.
func ordersTarget(tb testing.TB, latency time.Duration) *target {
	tg := newTarget(tb, sandbox.Options{Latency: latency}, odata.Config{})
	if err := seedOrderRefs(context.Background(), tg.client); err != nil {
		tb.Fatal(err)
	}
	return tg
}

// applyDeep runs `migrate apply PLANFILE --target URL --json` in a child
// process (TestCLIChild) against a fresh sandbox with the given latency.
func applyDeep(tb testing.TB, dir, planFile string, n int, latency time.Duration) (deepRun, error) {
	tg := ordersTarget(tb, latency)
	defer tg.srv.Close()
	sb, url := tg.sb, tg.srv.URL+sandbox.BasePath
	journal := filepath.Join(dir, strings.TrimSuffix(planFile, ".yaml")+".journal")
	os.Remove(journal)
	args := []string{"apply", filepath.Join(dir, planFile), "--target", url, "--journal", journal, "--json"}
	child, err := runChild(args, []string{"MIGRATE_USER=demo", "MIGRATE_PASSWORD=demo"})
	if err != nil {
		return deepRun{}, err
	}
	run := deepRun{peak: child.hwm, secs: child.secs, cpu: child.cpu}
	code, out := child.code, child.out
	var sum struct {
		Requests, Subrequests int
		Complete              bool
	}
	if err := json.Unmarshal(out, &sum); err != nil || code != 0 || !sum.Complete {
		return deepRun{}, fmt.Errorf("%s: exit %d, %v\n%s", planFile, code, err, out)
	}
	run.calls, run.subs = sum.Requests, sum.Subrequests
	run.orders = orders(sb)
	if len(run.orders) != n {
		return deepRun{}, fmt.Errorf("%s: %d orders in the sandbox, want %d", planFile, len(run.orders), n)
	}
	return run, nil
}

// orders is the sandbox's orders as "ORDNAME|CUSTNAME|part:qty;...", lines
// in line order.
func orders(sb *sandbox.Server) []string {
	var out []string
	for _, e := range sb.Snapshot()["ORDERS"] {
		var ls []string
		if l, ok := e["ORDERITEMS_SUBFORM"].([]map[string]any); ok {
			for _, x := range l {
				ls = append(ls, fmt.Sprintf("%v:%v:%v", x["KLINE"], x["PARTNAME"], x["TQUANT"]))
			}
		}
		if len(ls) != orderLines {
			ls = append(ls, fmt.Sprintf("(%d lines)", len(ls)))
		}
		out = append(out, fmt.Sprintf("%v|%v|%s", e["ORDNAME"], e["CUSTNAME"], strings.Join(ls, ";")))
	}
	sort.Strings(out)
	return out
}

// TestDeepOrdersSmall checks the harness: 120 orders as deep inserts take
// two calls, one order a call for the naive script, the same data. (Not
// parallel: the credentials are in the environment, as for the binary.)
func TestDeepOrdersSmall(t *testing.T) {
	dir := t.TempDir()
	if err := writeOrders(dir, 120); err != nil {
		t.Fatal(err)
	}
	var runs []deepRun
	for _, p := range []string{"plan.yaml", "naive.yaml"} {
		tg := ordersTarget(t, 0)
		sb, url := tg.sb, tg.srv.URL+sandbox.BasePath
		t.Setenv("MIGRATE_USER", "demo")
		t.Setenv("MIGRATE_PASSWORD", "demo")
		var out, errOut bytes.Buffer
		code := cli.Run(context.Background(), []string{"apply", filepath.Join(dir, p), "--target", url, "--journal", filepath.Join(dir, p+".journal"), "--json"}, nil, &out, &errOut)
		var sum struct{ Requests, Subrequests int }
		if err := json.Unmarshal(out.Bytes(), &sum); err != nil || code != 0 {
			t.Fatalf("%s: exit %d %v\n%s\n%s", p, code, err, out.String(), errOut.String())
		}
		runs = append(runs, deepRun{calls: sum.Requests, subs: sum.Subrequests, orders: orders(sb)})
	}
	// Each run's calls are its batches and one warm-up of the form
	// before its first write (a cold form answers 404 to its first call).
	if runs[0].calls != 2+1 || runs[0].subs != 120 {
		t.Errorf("deep: %d calls, %d sub-requests; want 3 and 120", runs[0].calls, runs[0].subs)
	}
	if runs[1].calls != 120+1 || runs[1].subs != 120 {
		t.Errorf("naive: %d calls, %d sub-requests; want 121 and 120", runs[1].calls, runs[1].subs)
	}
	if len(runs[0].orders) != 120 || strings.Join(runs[0].orders, "\n") != strings.Join(runs[1].orders, "\n") {
		t.Errorf("the loads differ:\n%v\n%v", runs[0].orders[:2], runs[1].orders[:2])
	}
}

// BenchmarkDeepInsertVsNaive loads 2,000 orders of 5 lines at 10 ms a call,
// as deep inserts (the default) and as the naive script, checks both leave
// the same orders, and reports documents a call, calls, wall time (the
// command's own), CPU time and peak RSS of each, and the speed-up. The
// 100k case runs the default alone, for its calls and memory at scale.
func BenchmarkDeepInsertVsNaive(b *testing.B) {
	for _, n := range []int{2000, 100_000} {
		b.Run(fmt.Sprintf("%dk", n/1000), func(b *testing.B) {
			if testing.Short() && n > 2000 {
				b.Skip("-short: 100k orders skipped")
			}
			dir, err := os.MkdirTemp("", "migrate-deep-")
			if err != nil {
				b.Fatal(err)
			}
			defer os.RemoveAll(dir)
			if err := writeOrders(dir, n); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				deep, err := applyDeep(b, dir, "plan.yaml", n, 10*time.Millisecond)
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(n)/float64(deep.calls), "docs/call")
				b.ReportMetric(float64(deep.calls), "calls")
				b.ReportMetric(deep.secs, "s")
				b.ReportMetric(deep.cpu, "cpu-s")
				b.ReportMetric(float64(deep.peak)/(1<<20), "peak-MB")
				if n > 2000 {
					continue
				}
				naive, err := applyDeep(b, dir, "naive.yaml", n, 10*time.Millisecond)
				if err != nil {
					b.Fatal(err)
				}
				if strings.Join(deep.orders, "\n") != strings.Join(naive.orders, "\n") {
					b.Fatal("the deep and naive loads left different orders")
				}
				b.ReportMetric(float64(naive.calls), "naive-calls")
				b.ReportMetric(naive.secs, "naive-s")
				b.ReportMetric(float64(naive.peak)/(1<<20), "naive-peak-MB")
				b.ReportMetric(naive.secs/deep.secs, "speedup")
			}
		})
	}
}
