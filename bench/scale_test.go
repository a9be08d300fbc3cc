package bench

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/migrate-tool/migrate/sandbox"
	"github.com/migrate-tool/migrate/source/sourcetest"
)

// Apply, status and resume at scale: the real command
// in a child process (its whole peak resident set), against a sandbox in
// this process, so that the sandbox's own memory does not count.

// scaleShape is a plan that apply loads: one step of customers, or
// customers and their orders, each order's customer by ref().
type scaleShape struct {
	name  string
	steps int
}

var scaleShapes = []scaleShape{{"one-step", 1}, {"ref", 2}}

// writeScale writes the sources and the plan of sh for rows customers (and
// as many orders), against target.
func writeScale(dir string, sh scaleShape, rows int, target string) error {
	if err := writePairs(filepath.Join(dir, "customers.csv"), rows, "Code", "N%07d", "Name", "Customer number %d", 1); err != nil {
		return err
	}
	plan := planHeadAt("bench-scale", target) + `sources:
  customers: {file: customers.csv}
  orders: {file: orders.csv}
` + customersSteps + `      CUSTDES: row.Name
`
	if sh.steps == 2 {
		// Each order's customer is another's, all over the file: ref()
		// is read everywhere.
		err := sourcetest.WriteCSV(filepath.Join(dir, "orders.csv"), rows, []string{"No", "Cust"}, func(r, c int) string {
			if c == 0 {
				return fmt.Sprintf("O%07d", r)
			}
			return fmt.Sprintf("N%07d", (r*7)%rows)
		})
		if err != nil {
			return err
		}
		plan += `  - name: orders
    entity: ORDERS
    source: orders
    id: row.No
    fields:
      CUSTNAME: ref("customers", row.Cust)
      DETAILS: row.No
`
	} else {
		plan = strings.Replace(plan, "  orders: {file: orders.csv}\n", "", 1)
	}
	return os.WriteFile(filepath.Join(dir, "plan.yaml"), []byte(plan), 0o644)
}

// countingTarget is a sandbox that counts the $batch calls it answers.
type countingTarget struct {
	srv   *httptest.Server
	calls atomic.Int64
}

func newCountingTarget(tb testing.TB) *countingTarget {
	sb, err := sandbox.New(sandbox.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	t := &countingTarget{}
	t.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/$batch") {
			t.calls.Add(1)
		}
		sb.ServeHTTP(w, r)
	}))
	tb.Cleanup(t.srv.Close)
	return t
}

// scaleRun is one command's figures.
type scaleRun struct {
	peak       int64
	secs, cpu  float64
	calls      int64
	committed  int
	complete   bool
	stepCounts int
}

// runScale runs the command args (PLAN and JOURNAL stand for the paths)
// in a child process and checks its JSON summary.
func runScale(t *countingTarget, dir string, args []string) (scaleRun, error) {
	var run scaleRun
	args = append([]string(nil), args...)
	for i, a := range args {
		switch a {
		case "PLAN":
			args[i] = filepath.Join(dir, "plan.yaml")
		case "JOURNAL":
			args[i] = filepath.Join(dir, "run.journal")
		}
	}
	before := t.calls.Load()
	// The plan names the target too, but credentials go only to a host
	// the user named.
	out, code, hwm, secs, cpu, err := childCommand(args, "MIGRATE_TARGET="+t.srv.URL+sandbox.BasePath, "MIGRATE_USER=demo", "MIGRATE_PASSWORD=demo")
	if err != nil {
		return run, err
	}
	run.peak, run.secs, run.cpu, run.calls = hwm, secs, cpu, t.calls.Load()-before
	var sum struct {
		Complete bool
		Steps    []struct{ Committed, Failed int }
	}
	if err := json.Unmarshal(out, &sum); err != nil {
		return run, fmt.Errorf("%v (exit %d)\n%s", err, code, out)
	}
	run.complete, run.stepCounts = sum.Complete, len(sum.Steps)
	for _, s := range sum.Steps {
		run.committed += s.Committed
		if s.Failed > 0 {
			return run, fmt.Errorf("%s: %d failed\n%s", args[0], s.Failed, out)
		}
	}
	if code != 0 {
		return run, fmt.Errorf("%s: exit %d\n%s", args[0], code, out)
	}
	return run, nil
}

// TestScaleSmall checks the harness on 500 rows of each shape: apply loads
// every record, status says so, and a resume sends nothing.
func TestScaleSmall(t *testing.T) {
	for _, sh := range scaleShapes {
		t.Run(sh.name, func(t *testing.T) {
			if testing.Short() {
				t.Skip("runs the command in child processes")
			}
			runs := scaleSequence(t, sh, 500)
			if runs[0].calls == 0 || runs[2].calls != 0 {
				t.Fatalf("apply made %d calls, the resume %d; want some, then none", runs[0].calls, runs[2].calls)
			}
		})
	}
}

// scaleSequence is apply, status, then apply again (a resume of a complete
// journal) of sh at rows.
func scaleSequence(tb testing.TB, sh scaleShape, rows int) [3]scaleRun {
	dir, err := os.MkdirTemp("", "migrate-scale-")
	if err != nil {
		tb.Fatal(err)
	}
	defer os.RemoveAll(dir)
	t := newCountingTarget(tb)
	if err := writeScale(dir, sh, rows, t.srv.URL+sandbox.BasePath); err != nil {
		tb.Fatal(err)
	}
	var runs [3]scaleRun
	for i, args := range [][]string{
		{"apply", "--json", "--journal", "JOURNAL", "PLAN"},
		{"status", "--json", "JOURNAL"},
		{"apply", "--json", "--journal", "JOURNAL", "PLAN"},
	} {
		r, err := runScale(t, dir, args)
		if err != nil {
			tb.Fatal(err)
		}
		if !r.complete || r.committed != rows*sh.steps || r.stepCounts != sh.steps {
			tb.Fatalf("%v: %d of %d records committed over %d steps, complete %v", args, r.committed, rows*sh.steps, r.stepCounts, r.complete)
		}
		runs[i] = r
	}
	if runs[2].calls != 0 {
		tb.Fatalf("the resume of a complete journal made %d calls", runs[2].calls)
	}
	return runs
}

// BenchmarkScale reports the peak memory (MB) and time (s) of apply,
// status and the resume of the complete journal, at 100k and 1M customers
// (and as many orders for "ref").
func BenchmarkScale(b *testing.B) {
	for _, sh := range scaleShapes {
		for _, rows := range []int{100_000, 1_000_000} {
			b.Run(fmt.Sprintf("%s/%dk", sh.name, rows/1000), func(b *testing.B) {
				if testing.Short() && rows > 100_000 {
					b.Skip("-short: 1M rows skipped")
				}
				var runs [3]scaleRun
				for i := 0; i < b.N; i++ {
					runs = scaleSequence(b, sh, rows)
				}
				for i, name := range []string{"apply", "status", "resume"} {
					b.ReportMetric(float64(runs[i].peak)/(1<<20), name+"-MB")
					b.ReportMetric(runs[i].secs, name+"-s")
				}
				b.ReportMetric(float64(runs[0].calls), "apply-calls")
			})
		}
	}
}

// childCommand runs the command args in a child process (TestCLIChild)
// with env added, and returns its output, exit code, peak resident set,
// and the seconds and CPU seconds the command took.
func childCommand(args []string, env ...string) (out []byte, code int, hwm int64, secs, cpu float64, err error) {
	r, err := runChild(args, env)
	return r.out, r.code, r.hwm, r.secs, r.cpu, err
}
