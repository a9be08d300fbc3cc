package executor

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/migrate-tool/migrate/journal"
	"github.com/migrate-tool/migrate/sandbox"
	"github.com/migrate-tool/migrate/transform"
)

func TestParentWith250Lines(t *testing.T) {
	t.Parallel()
	env := newSandbox(t, sandbox.Options{})
	parts := make([]string, 250)
	for i := range parts {
		parts[i] = fmt.Sprintf("P%d", i%3+1)
	}
	p, f := ordersPlan(orderWithLines("O1", 2, "C1", parts...), orderWithLines("O2", 3, "C1", "P1"))
	sum := env.opts(t, p, f).complete(t, "apply")
	orders := env.entities("ORDERS", "DETAILS")
	if n := len(lines(orders["O1"], "ORDERITEMS_SUBFORM")); n != 250 {
		t.Fatalf("O1 has %d lines, want 250", n)
	}
	if n := len(lines(orders["O2"], "ORDERITEMS_SUBFORM")); n != 1 {
		t.Fatalf("O2 has %d lines", n)
	}
	// 253 order sub-requests in three batches of at most 100 (+ 1 + 1 for
	// the other steps); the calls are those the server saw (with the
	// forms' warm-ups and the orders' watermark read).
	if sum.Requests != int(env.sb.Stats().Calls) || sum.Subrequests != 253+3+1 {
		t.Errorf("requests %d (the server saw %d) subrequests %d", sum.Requests, env.sb.Stats().Calls, sum.Subrequests)
	}
}

func TestLineFailsRestCommitted(t *testing.T) {
	t.Parallel()
	env := newSandbox(t, sandbox.Options{})
	p, f := ordersPlan(orderWithLines("O1", 2, "C1", "P1", "NOPE", "P2"), orderWithLines("O2", 3, "C1", "P3"))
	o := env.opts(t, p, f)
	sum := o.apply(t)
	orders := env.entities("ORDERS", "DETAILS")
	if got := lines(orders["O1"], "ORDERITEMS_SUBFORM"); len(got) != 2 || got[0]["PARTNAME"] != "P1" || got[1]["PARTNAME"] != "P2" {
		t.Fatalf("O1 lines: %v", got)
	}
	if len(lines(orders["O2"], "ORDERITEMS_SUBFORM")) != 1 {
		t.Fatal("O2 not loaded")
	}
	if sum.Complete || len(sum.Errors) != 1 {
		t.Fatalf("summary %+v", sum)
	}
	e := sum.Errors[0]
	if e.Step != "orders" || e.Record != "O1" || e.Location != "lines.csv:2001" || e.Message == "" {
		t.Errorf("error %+v", e)
	}
	st := stepOf(sum, "orders")
	if st.Committed != 1 || st.Failed != 1 {
		t.Errorf("orders %+v", st)
	}
	// The journal keeps the failing line's row, and what of the record
	// exists: what the failed rows' file (package report) gives.
	got, rows := failedRows(t, o.Journal, "orders", "O1")
	if len(rows) != 1 || !reflect.DeepEqual(rows[0].Header, []string{"Code", "Name", "Part", "Qty"}) || rows[0].Cells[2] != "NOPE" || rows[0].Loc != "lines.csv:2001" ||
		!strings.HasPrefix(got.Partly, "ORDERS(") || !strings.HasSuffix(got.Partly, " created with 2 of 3 lines") {
		t.Errorf("the journal keeps %+v, partly %q", rows, got.Partly)
	}
}

func stepOf(s *Summary, name string) StepSummary {
	for _, x := range s.Steps {
		if x.Name == name {
			return x
		}
	}
	return StepSummary{}
}

func TestParentFailsChildrenNot(t *testing.T) {
	t.Parallel()
	env := newSandbox(t, sandbox.Options{})
	p, f := ordersPlan(orderWithLines("O1", 2, "NOSUCH", "P1", "P2"), orderWithLines("O2", 3, "C1", "P1"))
	sum := env.opts(t, p, f).apply(t)
	orders := env.entities("ORDERS", "DETAILS")
	if _, ok := orders["O1"]; ok || len(orders) != 1 {
		t.Fatalf("orders: %v", orders)
	}
	if len(sum.Errors) != 1 || sum.Errors[0].Location != "orders.csv:2" || !strings.Contains(sum.Errors[0].Message, "NOSUCH") && sum.Errors[0].Message == "" {
		t.Fatalf("errors: %+v", sum.Errors)
	}
	t.Logf("parent message: %s", sum.Errors[0].Message)
}

func TestCrashThenResumeReconciles(t *testing.T) {
	t.Parallel()
	env := newSandbox(t, sandbox.Options{})
	p, f := ordersPlan(orderWithLines("O1", 2, "C1", "P1", "P2"), orderWithLines("O2", 3, "C1", "P3"))
	// Load parts and customers first, then lose the orders' answer after the
	// server committed it.
	o := loadPartsAndCustomers(t, env, p, f)
	env.client.FailNext.Store(true)
	sum, err := runApply(context.Background(), o)
	if !errors.Is(err, ErrInDoubt) || stepOf(sum, "orders").InDoubt != 2 {
		t.Fatalf("first apply: %v %+v", err, sum)
	}
	if n := len(env.sb.Snapshot()["ORDERS"]); n != 2 {
		t.Fatalf("the server should hold the 2 orders, holds %d", n)
	}
	sum, err = runApply(context.Background(), o)
	if err != nil || !sum.Complete || len(sum.Undecided) != 0 {
		t.Fatalf("resume: %v %+v", err, sum)
	}
	orders := env.sb.Snapshot()["ORDERS"]
	if len(orders) != 2 {
		t.Fatalf("duplicates: %d orders", len(orders))
	}
	if sum.Transactions != 0 {
		t.Errorf("resume wrote %d API transactions; everything was committed", sum.Transactions)
	}
	st, _ := journal.Load(o.Journal)
	for _, id := range []string{"O1", "O2"} {
		if r := st.Record("orders", id); r.Status() != journal.Committed || r.Key == "" {
			t.Errorf("%s: %v key %q", id, r.Status(), r.Key)
		}
	}
}

func TestCrashBeforeCommitResends(t *testing.T) {
	t.Parallel()
	env := newSandbox(t, sandbox.Options{})
	p := testPlan(step("customers", "CUSTOMERS"))
	f := &fakeRecords{Results: map[string][]transform.Result{"customers": {
		rec("customers", "CUSTOMERS", "C1", 2, map[string]any{"CUSTNAME": "C1", "CUSTDES": "One"}),
		rec("customers", "CUSTOMERS", "C2", 3, map[string]any{"CUSTNAME": "C2", "CUSTDES": "Two"}),
	}}}
	o := env.opts(t, p, f)
	// A cancelled context: the intent is journaled, nothing reaches the server.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	j, err := journal.Create(o.Journal, journal.Header{PlanHash: p.Hash, Target: Redact(o.Target), Steps: []journal.Step{{Name: "customers", Entity: "CUSTOMERS"}}})
	if err != nil {
		t.Fatal(err)
	}
	must(t, j.Append(journal.Entry{Kind: journal.KindIntent, Batch: j.NextBatch(), Subs: []journal.Sub{
		{ID: "1", Step: "customers", Rec: "C1", Op: journal.OpCreate, Meth: "POST", URL: "CUSTOMERS", Key: "'C1'"}}}))
	j.Close()
	_, _ = runApply(ctx, o)
	o.complete(t, "apply")
	if n := len(env.sb.Snapshot()["CUSTOMERS"]); n != 2 {
		t.Fatalf("customers: %d", n)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestRetryFailedAfterCorrection(t *testing.T) {
	t.Parallel()
	env := newSandbox(t, sandbox.Options{})
	p, f := ordersPlan(orderWithLines("O1", 2, "C1", "P1", "NOPE"), orderWithLines("O2", 3, "NOSUCH", "P1"), orderWithLines("O3", 4, "C1", "P2"))
	o := env.opts(t, p, f)
	o.apply(t)
	// Correct the source; without RetryFailed nothing is resent.
	f.Results["orders"] = []transform.Result{orderWithLines("O1", 2, "C1", "P1", "P3"), orderWithLines("O2", 3, "C1", "P1"), orderWithLines("O3", 4, "C1", "P2")}
	sum, err := runApply(context.Background(), o)
	if err != nil || sum.Requests != 0 || stepOf(sum, "orders").Failed != 2 {
		t.Fatalf("without retry: %v %+v", err, sum)
	}
	o.RetryFailed = true
	sum = o.complete(t, "retry")
	orders := env.entities("ORDERS", "DETAILS")
	if len(orders) != 3 {
		t.Fatalf("orders: %d", len(orders))
	}
	if got := lines(orders["O1"], "ORDERITEMS_SUBFORM"); len(got) != 2 || got[1]["PARTNAME"] != "P3" {
		t.Errorf("O1 lines %v", got)
	}
	if got := lines(orders["O2"], "ORDERITEMS_SUBFORM"); len(got) != 1 {
		t.Errorf("O2 lines %v", got)
	}
	if got := lines(orders["O3"], "ORDERITEMS_SUBFORM"); len(got) != 1 {
		t.Errorf("O3 lines %v", got)
	}
	// Exactly the failed work: O1's second line, and O2 with its line.
	if sum.Subrequests != 3 {
		t.Errorf("retry sent %d sub-requests, want 3", sum.Subrequests)
	}
}

func TestOldServers(t *testing.T) {
	t.Parallel()
	for _, v := range []struct {
		version  string
		requests int
	}{{"22.0", 3 + 1}, {"20.0", 1 + 1}} { // the batches, and the warm-up of CUSTOMERS before the first
		t.Run(v.version, func(t *testing.T) {
			t.Parallel()
			env := newSandbox(t, sandbox.Options{SystemVersion: v.version})
			p := testPlan(step("customers", "CUSTOMERS"))
			var rs []transform.Result
			for i := 0; i < 250; i++ {
				id := fmt.Sprintf("C%03d", i)
				rs = append(rs, rec("customers", "CUSTOMERS", id, i+2, map[string]any{"CUSTNAME": id, "CUSTDES": "n"}))
			}
			sum := env.opts(t, p, &fakeRecords{Results: map[string][]transform.Result{"customers": rs}}).complete(t, "apply")
			if sum.Requests != v.requests || sum.Requests != int(env.sb.Stats().Calls) || len(env.sb.Snapshot()["CUSTOMERS"]) != 250 {
				t.Errorf("requests %d (want %d, the server saw %d), customers %d", sum.Requests, v.requests, env.sb.Stats().Calls, len(env.sb.Snapshot()["CUSTOMERS"]))
			}
		})
	}
}
