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

// TestWaive: a failed record that will never load is closed
// with its reason; the run is then complete with one waived, and apply
// --retry-failed never sends it, even when its row now gives a record.
func TestWaive(t *testing.T) {
	t.Parallel()
	env := newSandbox(t, sandbox.Options{})
	total := transform.Result{Loc: loc("customers.csv", 9), Errors: []*transform.RowError{{Cell: "customers.csv:9", Field: "CUSTNAME", Message: "required"}}}
	recs := &fakeRecords{Results: map[string][]transform.Result{"customers": {
		rec("customers", "CUSTOMERS", "C1", 2, map[string]any{"CUSTNAME": "C1", "CUSTDES": "Alpha"}), total}}}
	o := env.opts(t, testPlan(step("customers", "CUSTOMERS")), recs)
	if sum, err := runApply(context.Background(), o); err != nil || sum.Complete || sum.Steps[0].Failed != 1 {
		t.Fatalf("apply: %v %+v", err, sum)
	}

	for _, c := range []struct {
		name string
		refs []RecordRef
		want string
	}{
		{"committed", []RecordRef{{"customers", "C1"}}, "customers/C1 is committed, not failed"},
		{"unknown record", []RecordRef{{"customers", "customers.csv:90"}}, "did you mean customers/customers.csv:9?"},
		{"unknown step", []RecordRef{{"custmers", "customers.csv:9"}}, "did you mean customers/customers.csv:9?"},
		{"one good one bad", []RecordRef{{"customers", "customers.csv:9"}, {"customers", "C1"}}, "nothing was waived"},
	} {
		_, err := Waive(o.Journal, c.refs, "the export's total line")
		var de *DecisionError
		if !errors.As(err, &de) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want a DecisionError saying %q", c.name, err, c.want)
		}
	}
	if _, err := Waive(o.Journal, []RecordRef{{"customers", "customers.csv:9"}}, " "); err == nil {
		t.Error("a waive without a reason was recorded")
	}
	if sum, err := Status(o.Journal); err != nil || sum.Steps[0].Failed != 1 || sum.Steps[0].Waived != 0 {
		t.Fatalf("refused waives changed the journal: %v %+v", err, sum)
	}

	got, err := Waive(o.Journal, []RecordRef{{"customers", "customers.csv:9"}}, "the export's total line")
	if err != nil || len(got) != 1 || got[0].Location != "customers.csv:9" {
		t.Fatalf("waive: %v %+v", err, got)
	}
	sum, err := Status(o.Journal)
	if err != nil || !sum.Complete || sum.Steps[0].Failed != 0 || sum.Steps[0].Waived != 1 || len(sum.Errors) != 0 {
		t.Fatalf("status after the waive: %v %+v", err, sum)
	}
	if len(sum.Waived) != 1 || sum.Waived[0] != (WaivedRecord{Step: "customers", Record: "customers.csv:9", Location: "customers.csv:9", Reason: "the export's total line"}) {
		t.Errorf("waived: %+v", sum.Waived)
	}
	if _, err := Waive(o.Journal, []RecordRef{{"customers", "customers.csv:9"}}, "again"); err == nil || !strings.Contains(err.Error(), "waived already") {
		t.Errorf("a second waive: %v", err)
	}

	// The row now gives a record under the same id: still never sent.
	recs.Results["customers"][1] = rec("customers", "CUSTOMERS", "customers.csv:9", 9, map[string]any{"CUSTNAME": "TOTAL", "CUSTDES": "Total"})
	o.RetryFailed = true
	if sum, err := runApply(context.Background(), o); err != nil || !sum.Complete || sum.Steps[0].Waived != 1 {
		t.Fatalf("apply --retry-failed: %v %+v", err, sum)
	}
	if _, sent := env.entities("CUSTOMERS", "CUSTNAME")["TOTAL"]; sent {
		t.Error("apply --retry-failed sent the waived record")
	}
	// A row error again: the record stays waived, not failed.
	recs.Results["customers"][1] = total
	if sum, err := runApply(context.Background(), o); err != nil || !sum.Complete || sum.Steps[0].Waived != 1 || sum.Steps[0].Failed != 0 {
		t.Fatalf("apply --retry-failed over the same row error: %v %+v", err, sum)
	}
	st, err := journal.Load(o.Journal)
	if err != nil || st.Record("customers", "customers.csv:9").Reason != "the export's total line" {
		t.Fatalf("the journal lost the reason: %v", err)
	}
}

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
	// Waived, it is no longer named.
	if _, err := Waive(o.Journal, []RecordRef{{"customers", "customers.csv:9"}}, "total"); err != nil {
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

// TestWaivePartlyLoaded: an order created with some of its lines is failed
// but not waivable: what exists would stay on the target unaccounted for.
func TestWaivePartlyLoaded(t *testing.T) {
	t.Parallel()
	env := newSandbox(t, sandbox.Options{})
	p, f := deepOrders(orderWithLines("O1", 2, "C1", "P1", "X9", "P2"))
	o := env.opts(t, p, f)
	if sum, err := runApply(context.Background(), o); err != nil || len(sum.Errors) != 1 || sum.Errors[0].Partly == "" {
		t.Fatalf("apply: %v %+v", err, sum)
	}
	_, err := Waive(o.Journal, []RecordRef{{"orders", "O1"}}, "dropped")
	var de *DecisionError
	if !errors.As(err, &de) || !strings.Contains(err.Error(), "orders/O1 is partly loaded (ORDERS(") || !strings.Contains(err.Error(), "created with 2 of 3 lines") {
		t.Fatalf("waive of a partly loaded order: %v", err)
	}
}
