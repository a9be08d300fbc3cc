package executor

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/migrate-tool/migrate/journal"
	"github.com/migrate-tool/migrate/sandbox"
	"github.com/migrate-tool/migrate/transform"
)

// TestAllowPlanChangeOnce: a changed plan accepted once with
// --allow-plan-change is the journal's from then on: the next run of the
// same plan is not refused; another change is.
func TestAllowPlanChangeOnce(t *testing.T) {
	t.Parallel()
	env := newSandbox(t, sandbox.Options{})
	recs := &fakeRecords{Results: map[string][]transform.Result{"customers": {
		rec("customers", "CUSTOMERS", "C1", 2, map[string]any{"CUSTNAME": "C1", "CUSTDES": "Alpha"})}}}
	p := testPlan(step("customers", "CUSTOMERS"))
	o := env.opts(t, p, recs)
	if _, err := runApply(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	p.Hash = "h2"
	var stale *StaleError
	if _, err := runApply(context.Background(), o); !errors.As(err, &stale) {
		t.Fatalf("a changed plan: %v, want a StaleError", err)
	}
	o.AllowPlanChange = true
	if _, err := runApply(context.Background(), o); err != nil {
		t.Fatalf("allowed: %v", err)
	}
	o.AllowPlanChange = false
	for _, load := range []func(string) (*journal.State, error){journal.Load, journal.LoadIndexed} {
		if st, err := load(o.Journal); err != nil || st.Header.PlanHash != "h2" {
			t.Fatalf("the journal's plan hash: %v %q, want the accepted h2", err, st.Header.PlanHash)
		}
	}
	if sum, err := runApply(context.Background(), o); err != nil || !sum.Complete {
		t.Fatalf("the same changed plan again, without --allow-plan-change: %v", err)
	}
	p.Hash = "h3"
	if _, err := runApply(context.Background(), o); !errors.As(err, &stale) || !strings.Contains(err.Error(), "hash h2") {
		t.Fatalf("another change: %v, want a StaleError from h2", err)
	}
}

// TestChangedAndGone: a resume counts, per step, the
// committed records whose source rows changed since they were loaded (and
// does not send them), and journals the failed records whose rows the
// source no longer gives, which status then names.
func TestChangedAndGone(t *testing.T) {
	t.Parallel()
	env := newSandbox(t, sandbox.Options{})
	c1 := rec("customers", "CUSTOMERS", "C1", 2, map[string]any{"CUSTNAME": "C1", "CUSTDES": "Alpha"})
	c2 := rec("customers", "CUSTOMERS", "C2", 3, map[string]any{"CUSTNAME": "C2", "CUSTDES": "Beta"})
	total := transform.Result{Loc: loc("customers.csv", 9), Errors: []*transform.RowError{{Cell: "customers.csv:9", Field: "CUSTNAME", Message: "required"}}}
	recs := &fakeRecords{Results: map[string][]transform.Result{"customers": {c1, c2, total}}}
	o := env.opts(t, testPlan(step("customers", "CUSTOMERS")), recs)
	if sum, err := runApply(context.Background(), o); err != nil || sum.Steps[0].Changed != 0 {
		t.Fatalf("apply: %v %+v", err, sum)
	}
	if sum, err := Status(o.Journal); err != nil || len(sum.Gone) != 0 {
		t.Fatalf("status: %v, gone %+v; want none", err, sum.Gone)
	}

	// C1's row changed, the total line was deleted.
	changed := rec("customers", "CUSTOMERS", "C1", 2, map[string]any{"CUSTNAME": "C1", "CUSTDES": "Alpha 2"})
	changed.Record.Row.Cells[1] = "Alpha 2"
	recs.Results["customers"] = []transform.Result{changed, c2}
	sum, err := runApply(context.Background(), o)
	if err != nil || sum.Steps[0].Changed != 1 || sum.Steps[0].Committed != 2 {
		t.Fatalf("resume: %v %+v", err, sum)
	}
	if got := env.entities("CUSTOMERS", "CUSTNAME")["C1"]["CUSTDES"]; got != "Alpha" {
		t.Errorf("C1 on the target: %v; a changed committed record is not sent", got)
	}
	for name, sum := range map[string]*Summary{"apply": sum, "status": statusOf(t, o.Journal)} {
		if len(sum.Gone) != 1 || sum.Gone[0] != (RecordRef{"customers", "customers.csv:9"}) {
			t.Errorf("%s: gone %+v, want the total line", name, sum.Gone)
		}
	}
	// Waived (as resolve --waive journals it), it is no longer named.
	jr, _, err := journal.Open(o.Journal)
	if err != nil {
		t.Fatal(err)
	}
	err = jr.Append(journal.Entry{Kind: journal.KindRecord, Record: &journal.RecordEntry{
		Step: "customers", ID: "customers.csv:9", Status: journal.Waived, Reason: "total"}})
	if cerr := jr.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	if sum := statusOf(t, o.Journal); len(sum.Gone) != 0 || !sum.Complete {
		t.Errorf("after the waive: gone %+v, complete %v", sum.Gone, sum.Complete)
	}
}

func statusOf(t *testing.T, journal string) *Summary {
	t.Helper()
	sum, err := Status(journal)
	if err != nil {
		t.Fatal(err)
	}
	return sum
}
