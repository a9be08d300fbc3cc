package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/read"
	"github.com/migrate-tool/migrate/sandbox"
	"github.com/migrate-tool/migrate/source/sourcetest"
)

// Reads cost almost nothing: `migrate diff` of a plan over a
// company that already holds 100,000 customers, and `migrate verify` of a
// load of 10,000 orders with their lines, each run as the real command in
// a child process (its peak resident set) against a sandbox in this one,
// whose call statistics count what the command cost.

// diffPlan upserts customers: what diff reads and classifies.
const diffPlan = "diff.yaml"

// phoneOf is customer i's phone; the file changes every tenth.
func phoneOf(i int, file bool) string {
	if file && i%10 == 0 {
		return fmt.Sprintf("04-%07d", i)
	}
	return fmt.Sprintf("03-%07d", i)
}

// writeCompany writes a sandbox state holding n customers, and the plan
// and file that upsert them all, a tenth with another phone.
func writeCompany(dir string, n int) (state, planPath string, err error) {
	rows := make([]map[string]any, n)
	for i := range rows {
		rows[i] = map[string]any{"CUSTNAME": fmt.Sprintf("C%07d", i), "CUSTDES": fmt.Sprintf("Customer %d", i), "PHONE": phoneOf(i, false), "CUST": i + 1}
	}
	b, err := json.Marshal(map[string]any{"version": 1, "counters": map[string]int{}, "data": map[string]any{"CUSTOMERS": rows}})
	if err != nil {
		return "", "", err
	}
	state = filepath.Join(dir, "state.json")
	if err := os.WriteFile(state, b, 0o644); err != nil {
		return "", "", err
	}
	err = sourcetest.WriteCSV(filepath.Join(dir, "customers.csv"), n, []string{"Code", "Name", "Phone"}, func(r, c int) string {
		switch c {
		case 0:
			return fmt.Sprintf("C%07d", r)
		case 1:
			return fmt.Sprintf("Customer %d", r)
		}
		return phoneOf(r, true)
	})
	if err != nil {
		return "", "", err
	}
	planPath = filepath.Join(dir, "plan.yaml")
	return state, planPath, copyPlan(diffPlan, planPath)
}

// childRun is one command run in a child process against a sandbox.
type childRun struct {
	out        []byte
	code       int
	hwm        int64
	secs, cpu  float64
	calls, sub int64 // the sandbox's HTTP calls and sub-requests during the run
}

// runChild runs the command (cli.Run) in a child process (TestCLIChild)
// with the environment env added, and returns what it printed, its exit
// code, peak resident set and times.
func runChild(args, env []string) (childRun, error) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestCLIChild$")
	cmd.Env = append(append(os.Environ(), env...), cliChildEnv+"="+strings.Join(args, "\n"))
	out, err := cmd.Output()
	if err != nil {
		return childRun{}, fmt.Errorf("child: %v\n%s", err, out)
	}
	i := bytes.LastIndex(out, []byte("\nCHILD "))
	if i < 0 {
		return childRun{}, fmt.Errorf("child printed no figure:\n%s", out)
	}
	r := childRun{out: out[:i]}
	if _, err := fmt.Sscanf(string(out[i+1:]), "CHILD %d %d %f %f", &r.code, &r.hwm, &r.secs, &r.cpu); err != nil {
		return childRun{}, err
	}
	return r, nil
}

// sandboxEnv points a child's command at the target t.
func sandboxEnv(t *target) []string {
	return []string{"MIGRATE_TARGET=" + t.srv.URL + sandbox.BasePath, "MIGRATE_USER=demo", "MIGRATE_PASSWORD=demo", "MIGRATE_AUTH=basic"}
}

// counted runs the command in a child and counts the sandbox's calls.
func counted(t *target, args []string) (childRun, error) {
	before := t.sb.Stats()
	r, err := runChild(args, sandboxEnv(t))
	after := t.sb.Stats()
	r.calls, r.sub = after.Calls-before.Calls, after.Subrequests-before.Subrequests
	return r, err
}

// BenchmarkDiffCustomers diffs 100,000 customers (a tenth with another
// phone) against a company that holds them all, and checks the counts.
func BenchmarkDiffCustomers(b *testing.B) {
	const n = 100_000
	dir := b.TempDir()
	state, planPath, err := writeCompany(dir, n)
	if err != nil {
		b.Fatal(err)
	}
	var r childRun
	for i := 0; i < b.N; i++ {
		tg := newTarget(b, sandbox.Options{StatePath: state}, odata.Config{})
		if r, err = counted(tg, []string{"diff", "--json", planPath}); err != nil {
			b.Fatal(err)
		}
		var got struct {
			Steps []struct{ Create, Update, Unchanged, Conflict, Missing int }
		}
		if err := json.Unmarshal(r.out, &got); err != nil || r.code != 0 || len(got.Steps) != 1 {
			b.Fatalf("exit %d: %v\n%.2000s", r.code, err, r.out)
		}
		if s := got.Steps[0]; s.Update != n/10 || s.Unchanged != n-n/10 || s.Create+s.Conflict+s.Missing != 0 {
			b.Fatalf("counts: %+v", s)
		}
	}
	reportChild(b, r)
}

// ordersPlan loads orders of three lines each for the customers and parts
// seedOrders makes.
const ordersPlan = "orders.yaml"

// BenchmarkVerifyOrders loads 10,000 orders of three lines each, then
// verifies the load, and checks every record and line matched.
func BenchmarkVerifyOrders(b *testing.B) {
	const n, perOrder = 10_000, 3
	dir := b.TempDir()
	err := sourcetest.WriteCSV(filepath.Join(dir, "lines.csv"), n*perOrder, []string{"Order", "Customer", "Date", "Part", "Qty", "Price"}, func(r, c int) string {
		switch c {
		case 0:
			return fmt.Sprintf("SO%07d", r/perOrder)
		case 1:
			return fmt.Sprintf("C%d", r/perOrder%10)
		case 2:
			return "2026-11-03"
		case 3:
			return fmt.Sprintf("P%d", r%perOrder)
		case 4:
			return fmt.Sprint(r%7 + 1)
		}
		return fmt.Sprintf("%d.%02d", r%50, r%100)
	})
	if err != nil {
		b.Fatal(err)
	}
	planPath := filepath.Join(dir, "plan.yaml")
	if err := copyPlan(ordersPlan, planPath); err != nil {
		b.Fatal(err)
	}
	var r childRun
	for i := 0; i < b.N; i++ {
		tg := newTarget(b, sandbox.Options{}, odata.Config{})
		seedOrders(b, tg)
		journalPath := filepath.Join(dir, fmt.Sprintf("run-%d.journal", i))
		sum, _ := applyRun(context.Background(), b, tg, planPath, journalPath, batched)
		if sum.Steps[0].Committed != n {
			b.Fatalf("load: %+v", sum.Steps[0])
		}
		if r, err = counted(tg, []string{"verify", "--json", journalPath}); err != nil {
			b.Fatal(err)
		}
		var got struct {
			Steps []struct {
				Records, Matched, Differ int
				Totals                   []struct{ What, Source, Target string }
			}
		}
		if err := json.Unmarshal(r.out, &got); err != nil || r.code != 0 || len(got.Steps) != 1 {
			b.Fatalf("exit %d: %v\n%.2000s", r.code, err, r.out)
		}
		s := got.Steps[0]
		if s.Records != n || s.Matched != n || s.Differ != 0 || len(s.Totals) < 2 || s.Totals[1].Target != fmt.Sprint(n*perOrder) {
			b.Fatalf("verify: %+v", s)
		}
	}
	reportChild(b, r)
}

// seedOrders makes the customers and parts the orders name.
func seedOrders(b *testing.B, t *target) {
	var reqs []odata.BatchRequest
	add := func(set, body string) {
		reqs = append(reqs, odata.BatchRequest{ID: fmt.Sprint(len(reqs) + 1), Method: "POST", URL: set, Body: []byte(body),
			Headers: map[string]string{"content-type": "application/json"}})
	}
	for i := 0; i < 10; i++ {
		add("CUSTOMERS", fmt.Sprintf(`{"CUSTNAME":"C%d","CUSTDES":"Customer %d"}`, i, i))
	}
	for i := 0; i < 3; i++ {
		add("LOGPART", fmt.Sprintf(`{"PARTNAME":"P%d","PARTDES":"Part %d"}`, i, i))
	}
	got, err := t.client.Batch(context.Background(), reqs, odata.BatchOptions{ContinueOnError: true})
	if err != nil {
		b.Fatal(err)
	}
	for _, g := range got {
		if g.Status != 201 {
			b.Fatalf("seeding: %d %s", g.Status, g.Body)
		}
	}
}

func reportChild(b *testing.B, r childRun) {
	b.ReportMetric(float64(r.calls), "calls")
	b.ReportMetric(float64(r.sub), "reads")
	b.ReportMetric(r.secs, "s")
	b.ReportMetric(float64(r.hwm)/(1<<20), "peak-MB")
	b.ReportMetric(r.cpu, "cpu-s")
}

// BenchmarkReadCustomers reads a company's 20,000 customers both ways the
// Reader can: by key (or-chains of 40 keys, 100 GETs a call) and as the
// whole set (package read: pages of 2,000 rows by key, a call a page), and counts the calls
// each takes. 20,000, not 100,000: the sandbox sorts the whole table for
// every page it serves, so 100 pages of 100,000 rows take it minutes that
// a server with an index does not spend.
func BenchmarkReadCustomers(b *testing.B) {
	const n = 20_000
	dir := b.TempDir()
	state, _, err := writeCompany(dir, n)
	if err != nil {
		b.Fatal(err)
	}
	tg := newTarget(b, sandbox.Options{StatePath: state}, odata.Config{})
	typ := sandbox.DemoMetadata().EntitySet("CUSTOMERS").Type
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("'C%07d'", i)
	}
	ctx := context.Background()
	for _, way := range []string{"keys", "all"} {
		b.Run(way, func(b *testing.B) {
			var calls int
			for i := 0; i < b.N; i++ {
				rd := &read.Keys{Send: read.Via(tg.client), Set: "CUSTOMERS", Type: typ, Select: []string{"CUSTDES", "PHONE"}}
				found := 0
				if way == "keys" {
					got, err := rd.ReadKeys(ctx, keys)
					if err != nil {
						b.Fatal(err)
					}
					for _, f := range got {
						if f.Status == 200 {
							found++
						}
					}
				} else {
					// The whole set in pages (package read), one call a page.
					pages, err := read.Pages(tg.client, read.Query{Set: "CUSTOMERS", Type: typ, Select: []string{"CUSTDES", "PHONE"}})
					if err != nil {
						b.Fatal(err)
					}
					rd.Calls = 0
					for {
						rows, err := pages.Next(ctx)
						if err != nil {
							b.Fatal(err)
						}
						if rows == nil {
							break
						}
						found += len(rows)
						rd.Calls++
					}
					rd.Calls++ // the empty page that ends it
				}
				if found != n {
					b.Fatalf("%s: %d customers read, want %d", way, found, n)
				}
				calls = rd.Calls
			}
			b.ReportMetric(float64(calls), "calls")
		})
	}
}
