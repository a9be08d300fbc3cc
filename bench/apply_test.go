package bench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/migrate-tool/migrate/executor"
	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/sandbox"
	"github.com/migrate-tool/migrate/source/sourcetest"
)

// notesPlan loads customers with 0 to 5 notes each (GENCUSTNOTES_SUBFORM),
// grouped from one row per note; a customer with no note has one row with
// an empty subject. Every note is a sub-request of its own (deep_insert:
// false): these benchmarks measure packing operations into calls, and
// their naive load is one request per entity and per line; deep inserts
// are measured in deep_test.go.
const notesPlan = "notes.yaml"

// linesOf is the number of notes of customer i: 0 to 5, 2.5 on average.
func linesOf(i int) int { return (i * 7) % 6 }

// writeNotes writes n customers' notes and the plan; it returns the plan's
// path and the number of sub-requests (entities and lines) the load makes.
func writeNotes(dir string, n int) (string, int, error) {
	type row struct{ code, name, subject string }
	var rows []row
	ops := 0
	for i := 0; i < n; i++ {
		code := fmt.Sprintf("N%07d", i)
		k := linesOf(i)
		ops += 1 + k
		if k == 0 {
			rows = append(rows, row{code, "Customer " + code, ""})
		}
		for j := 0; j < k; j++ {
			rows = append(rows, row{code, "Customer " + code, fmt.Sprintf("note %d of %s", j+1, code)})
		}
	}
	err := sourcetest.WriteCSV(filepath.Join(dir, "notes.csv"), len(rows), []string{"Code", "Name", "Subject"},
		func(r, c int) string {
			switch c {
			case 0:
				return rows[r].code
			case 1:
				return rows[r].name
			}
			return rows[r].subject
		})
	if err != nil {
		return "", 0, err
	}
	p := filepath.Join(dir, "plan.yaml")
	return p, ops, copyPlan(notesPlan, p)
}

// target is a sandbox behind httptest and a real odata.Client to it.
type target struct {
	sb     *sandbox.Server
	srv    *httptest.Server
	client *odata.Client
}

func newTarget(tb testing.TB, sbo sandbox.Options, cfg odata.Config) *target {
	tb.Helper()
	sb, err := sandbox.New(sbo)
	if err != nil {
		tb.Fatal(err)
	}
	srv := httptest.NewServer(sb)
	tb.Cleanup(srv.Close)
	cfg.BaseURL = srv.URL + sandbox.BasePath
	cfg.HTTPClient = srv.Client()
	cfg.Auth = odata.BasicAuth{User: "demo", Password: "demo"}
	c, err := odata.NewClient(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	c.SetVersion(version)
	return &target{sb: sb, srv: srv, client: c}
}

// runMode is how apply is run; naive is the consultant's script: one request per entity and per
// line (the executor at a batch size of one, one call at a time).
type runMode struct {
	name        string
	batchSize   int
	concurrency int
}

var (
	batched = runMode{"batched", 0, 0}
	naive   = runMode{"naive", 1, 1}
)

// applyRun is `migrate apply PLAN` against t, with the journal in dir.
func applyRun(ctx context.Context, tb testing.TB, t *target, planPath, journalPath string, m runMode) (*executor.Summary, time.Duration) {
	tb.Helper()
	run, err := prepare(ctx, planPath, sandbox.DemoMetadata())
	if err != nil {
		tb.Fatal(err)
	}
	defer run.Close()
	start := time.Now()
	sum, err := executor.Apply(ctx, run, executor.Options{Client: t.client, Journal: journalPath, Target: t.srv.URL + sandbox.BasePath,
		ToolVersion: "bench", BatchSize: m.batchSize, Concurrency: m.concurrency})
	d := time.Since(start)
	if err != nil {
		tb.Fatalf("%s: %v", m.name, err)
	}
	if !sum.Complete {
		tb.Fatalf("%s: not complete: %+v", m.name, sum)
	}
	return sum, d
}

// customers is the sandbox's customers and their notes' subjects, in a
// form that ignores server-assigned numbers: "CODE|name|s1;s2;...".
func customers(sb *sandbox.Server) []string {
	var out []string
	for _, e := range sb.Snapshot()["CUSTOMERS"] {
		var subj []string
		if l, ok := e["GENCUSTNOTES_SUBFORM"].([]map[string]any); ok {
			for _, n := range l {
				subj = append(subj, fmt.Sprint(n["SUBJECT"]))
			}
		}
		sort.Strings(subj)
		out = append(out, fmt.Sprintf("%v|%v|%s", e["CUSTNAME"], e["CUSTDES"], strings.Join(subj, ";")))
	}
	sort.Strings(out)
	return out
}

func sameData(a, b []string) error {
	if len(a) != len(b) {
		return fmt.Errorf("%d customers, the other load %d", len(a), len(b))
	}
	for i := range a {
		if a[i] != b[i] {
			return fmt.Errorf("customer %d differs: %q vs %q", i, a[i], b[i])
		}
	}
	return nil
}

// TestApplySmall checks the harness: batched and naive loads of 50
// customers give the same data, and the batched load fills its calls.
func TestApplySmall(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path, ops, err := writeNotes(dir, 50)
	if err != nil {
		t.Fatal(err)
	}
	var data [][]string
	for _, m := range []runMode{batched, naive} {
		tg := newTarget(t, sandbox.Options{}, odata.Config{})
		sum, _ := applyRun(context.Background(), t, tg, path, filepath.Join(dir, m.name+".journal"), m)
		if sum.Subrequests != ops {
			t.Fatalf("%s: %d sub-requests, want %d", m.name, sum.Subrequests, ops)
		}
		if m == naive && sum.Requests != ops+1 {
			t.Fatalf("naive: %d calls, want one per operation (%d) and the form's warm-up", sum.Requests, ops)
		}
		data = append(data, customers(tg.sb))
	}
	if len(data[0]) != 50 {
		t.Fatalf("%d customers in the sandbox, want 50", len(data[0]))
	}
	if err := sameData(data[0], data[1]); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkApplyVsNaive loads 1,000 customers with 0-5 notes (about 3,500
// operations) into a sandbox answering every call after 10 ms, batched by
// the executor and one request per entity and line, checks that both
// leave the same data, and reports the ratio of wall times.
func BenchmarkApplyVsNaive(b *testing.B) {
	b.ReportAllocs()
	dir := b.TempDir()
	path, ops, err := writeNotes(dir, 1000)
	if err != nil {
		b.Fatal(err)
	}
	var tb, tn time.Duration
	var calls [2]int
	for i := 0; i < b.N; i++ {
		var data [][]string
		for k, m := range []runMode{batched, naive} {
			tg := newTarget(b, sandbox.Options{Latency: 10 * time.Millisecond}, odata.Config{})
			sum, d := applyRun(context.Background(), b, tg, path, filepath.Join(dir, fmt.Sprintf("%s-%d.journal", m.name, i)), m)
			if sum.Subrequests != ops {
				b.Fatalf("%s: %d sub-requests, want %d", m.name, sum.Subrequests, ops)
			}
			calls[k] = sum.Requests
			if k == 0 {
				tb += d
			} else {
				tn += d
			}
			data = append(data, customers(tg.sb))
		}
		if err := sameData(data[0], data[1]); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(tn)/float64(tb), "speedup")
	b.ReportMetric(tb.Seconds()/float64(b.N), "batched-s")
	b.ReportMetric(tn.Seconds()/float64(b.N), "naive-s")
	b.ReportMetric(float64(calls[0]), "batched-calls")
	b.ReportMetric(float64(calls[1]), "naive-calls")
}

// BenchmarkOpsPerCall loads 20,000 customers with 0 to 5 notes each (about
// 70,000 operations) at the limit of 100 and reports the average number of
// sub-requests per call, for apply and for the dry run.
func BenchmarkOpsPerCall(b *testing.B) {
	b.ReportAllocs()
	dir := b.TempDir()
	path, ops, err := writeNotes(dir, 20_000)
	if err != nil {
		b.Fatal(err)
	}
	var avg, dry float64
	for i := 0; i < b.N; i++ {
		tg := newTarget(b, sandbox.Options{}, odata.Config{})
		sum, _ := applyRun(context.Background(), b, tg, path, filepath.Join(dir, fmt.Sprintf("run-%d.journal", i)), batched)
		if sum.Subrequests != ops {
			b.Fatalf("%d sub-requests, want %d", sum.Subrequests, ops)
		}
		avg = float64(sum.Subrequests) / float64(sum.Requests)
		ds, err := dryRun(context.Background(), path)
		if err != nil {
			b.Fatal(err)
		}
		dry = float64(ds.Subrequests) / float64(ds.Requests)
	}
	b.ReportMetric(avg, "ops/call")
	b.ReportMetric(dry, "dry-ops/call")
	b.ReportMetric(float64(ops), "ops")
}

// fastClock is time sped up: a minute passes in a minute/scale of real
// time, for the sandbox's calls-per-minute window and the client's pacing
// alike, so that a sustained rate shows in seconds.
type fastClock struct {
	start time.Time
	scale float64
}

func (c *fastClock) Now() time.Time {
	return c.start.Add(time.Duration(float64(time.Since(c.start)) * c.scale))
}

func (c *fastClock) Sleep(ctx context.Context, d time.Duration) error {
	return odata.RealClock{}.Sleep(ctx, time.Duration(float64(d)/c.scale))
}

// BenchmarkSustainedRate loads 2,000 customers (about 7,000 operations)
// into a sandbox that admits 100 calls a minute per user, as a hosted
// installation does, with the client pacing itself at the same limit.
// Time runs 10 times fast for both, so a "minute" is six seconds and a
// call is due every 60 ms; latency is 5 ms real. It reports operations per
// (scaled) minute as a percentage of limit × 100, over the span from the
// first call to the last (%-of-ceiling) and over the whole run. Speeding
// time up makes our own per-call cost, and any stall of a shared machine,
// 10 times larger relative to the pace than on a hosted installation.
func BenchmarkSustainedRate(b *testing.B) {
	b.ReportAllocs()
	const limit, scale = 100, 10.0
	dir := b.TempDir()
	path, ops, err := writeNotes(dir, 2000)
	if err != nil {
		b.Fatal(err)
	}
	var sustained, whole, throttled float64
	for i := 0; i < b.N; i++ {
		clk := &fastClock{start: time.Now(), scale: scale}
		var mu sync.Mutex
		var starts []time.Time
		hook := func(ci odata.CallInfo) {
			if strings.HasPrefix(ci.Path, "$batch") {
				mu.Lock()
				starts = append(starts, time.Now().Add(-ci.Duration))
				mu.Unlock()
			}
		}
		tg := newTarget(b, sandbox.Options{CallsPerMinute: limit, Now: clk.Now, Latency: 5 * time.Millisecond},
			odata.Config{CallsPerMinute: limit, Clock: clk, Hook: hook})
		sum, d := applyRun(context.Background(), b, tg, path, filepath.Join(dir, fmt.Sprintf("run-%d.journal", i)), batched)
		if sum.Subrequests != ops {
			b.Fatalf("%d sub-requests, want %d", sum.Subrequests, ops)
		}
		perCall := float64(sum.Subrequests) / float64(sum.Requests)
		ceiling := float64(limit * 100) // operations a minute
		whole = float64(sum.Subrequests) / (d.Seconds() * scale / 60) / ceiling
		// Sustained: calls started per minute between the first and the
		// last call, times the operations they carry.
		sort.Slice(starts, func(a, c int) bool { return starts[a].Before(starts[c]) })
		if n := len(starts); n > 1 {
			span := starts[n-1].Sub(starts[0]).Seconds() * scale / 60
			sustained = float64(n-1) / span * perCall / ceiling
			if os.Getenv("BENCH_DEBUG") != "" {
				b.Logf("calls %d (%d hooked), span %.2fs real, run %.2fs real, first call %.3fs after start", sum.Requests, n, starts[n-1].Sub(starts[0]).Seconds(), d.Seconds(), starts[0].Sub(clk.start).Seconds())
			}
		}
		throttled = float64(tg.sb.Stats().Throttled)
	}
	b.ReportMetric(sustained*100, "%-of-ceiling")
	b.ReportMetric(whole*100, "%-whole-run")
	b.ReportMetric(throttled, "429s")
}

// BenchmarkSandboxLoopback posts JSON batches of 100 customer creates to
// the sandbox on loopback from 4 goroutines and reports sub-requests/s.
// "raw" sends bodies encoded beforehand over plain net/http and only
// counts the answers, so the figure is the sandbox's (plus HTTP on
// loopback); "client" goes through odata.Client, which also encodes the
// requests and decodes every answer in the same process, on the same cores.
func BenchmarkSandboxLoopback(b *testing.B) {
	for _, mode := range []string{"raw", "client"} {
		b.Run(mode, func(b *testing.B) {
			b.ReportAllocs()
			tg := newTarget(b, sandbox.Options{}, odata.Config{})
			const per, workers, batchesPerOp = 100, 4, 50
			total := b.N * batchesPerOp
			bodies := make([][]byte, total)
			batches := make([][]odata.BatchRequest, total)
			for k := range bodies {
				reqs := make([]odata.BatchRequest, per)
				for i := range reqs {
					body := fmt.Sprintf(`{"CUSTNAME":"L%07d","CUSTDES":"loopback"}`, k*per+i)
					reqs[i] = odata.BatchRequest{ID: fmt.Sprint(i + 1), Method: "POST", URL: "CUSTOMERS", Body: []byte(body)}
				}
				var buf bytes.Buffer
				if err := odata.EncodeJSONBatch(&buf, reqs); err != nil {
					b.Fatal(err)
				}
				bodies[k], batches[k] = buf.Bytes(), reqs
			}
			url := tg.srv.URL + sandbox.BasePath + "/$batch"
			hc := tg.srv.Client()
			var next atomic.Int64
			errs := make(chan error, workers)
			var wg sync.WaitGroup
			b.ResetTimer()
			for w := 0; w < workers; w++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						k := int(next.Add(1)) - 1
						if k >= total {
							return
						}
						var err error
						if mode == "raw" {
							err = postRaw(hc, url, bodies[k])
						} else {
							var resps []odata.BatchResponse
							resps, err = tg.client.Batch(context.Background(), batches[k], odata.BatchOptions{ContinueOnError: true})
							for _, r := range resps {
								if err == nil && r.Status != 201 {
									err = fmt.Errorf("sub-request %s: status %d", r.ID, r.Status)
								}
							}
						}
						if err != nil {
							errs <- err
							return
						}
					}
				}()
			}
			wg.Wait()
			b.StopTimer()
			close(errs)
			if err := <-errs; err != nil {
				b.Fatal(err)
			}
			n := total * per
			b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "subreq/s")
			if got := len(tg.sb.Snapshot()["CUSTOMERS"]); got != n {
				b.Fatalf("sandbox holds %d customers, want %d", got, n)
			}
		})
	}
}

// postRaw posts one JSON batch and checks that it was answered 200 with
// no failed sub-request.
func postRaw(hc *http.Client, url string, body []byte) error {
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.SetBasicAuth("demo", "demo")
	req.Header.Set("Content-Type", "application/json;odata.continue-on-error=true")
	req.Header.Set("Accept", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK || bytes.Contains(data, []byte(`"error"`)) {
		return fmt.Errorf("batch answered %d: %.200s", resp.StatusCode, data)
	}
	return nil
}
