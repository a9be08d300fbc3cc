package resolve

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/migrate-tool/migrate/executor"
	"github.com/migrate-tool/migrate/executor/executortest"
	"github.com/migrate-tool/migrate/executor/fixture"
	"github.com/migrate-tool/migrate/journal"
	"github.com/migrate-tool/migrate/sandbox"
	"github.com/migrate-tool/migrate/transform"
)

// TestWaive: a failed record that will never load is closed
// with its reason; the run is then complete with one waived, and apply
// --retry-failed never sends it, even when its row now gives a record.
func TestWaive(t *testing.T) {
	t.Parallel()
	env := fixture.New(t, sandbox.Options{})
	total := transform.Result{Loc: fixture.Loc("customers.csv", 9), Errors: []*transform.RowError{{Cell: "customers.csv:9", Field: "CUSTNAME", Message: "required"}}}
	recs := &fixture.Records{Results: map[string][]transform.Result{"customers": {
		fixture.Rec("customers", "CUSTOMERS", "C1", 2, map[string]any{"CUSTNAME": "C1", "CUSTDES": "Alpha"}), total}}}
	o := executortest.Handmade(t, env, fixture.Plan(fixture.Step("customers", "CUSTOMERS")), recs)
	if sum, err := executortest.ApplyRun(context.Background(), o); err != nil || sum.Complete || sum.Steps[0].Failed != 1 {
		t.Fatalf("apply: %v %+v", err, sum)
	}

	for _, c := range []struct {
		name string
		refs []executor.RecordRef
		want string
	}{
		{"committed", []executor.RecordRef{{Step: "customers", Record: "C1"}}, "customers/C1 is committed, not failed"},
		{"unknown record", []executor.RecordRef{{Step: "customers", Record: "customers.csv:90"}}, "did you mean customers/customers.csv:9?"},
		{"unknown step", []executor.RecordRef{{Step: "custmers", Record: "customers.csv:9"}}, "did you mean customers/customers.csv:9?"},
		{"one good one bad", []executor.RecordRef{{Step: "customers", Record: "customers.csv:9"}, {Step: "customers", Record: "C1"}}, "nothing was waived"},
	} {
		_, err := Waive(o.Journal, c.refs, "the export's total line")
		var de *DecisionError
		if !errors.As(err, &de) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want a DecisionError saying %q", c.name, err, c.want)
		}
	}
	if _, err := Waive(o.Journal, []executor.RecordRef{{Step: "customers", Record: "customers.csv:9"}}, " "); err == nil {
		t.Error("a waive without a reason was recorded")
	}
	if sum, err := executor.Status(o.Journal); err != nil || sum.Steps[0].Failed != 1 || sum.Steps[0].Waived != 0 {
		t.Fatalf("refused waives changed the journal: %v %+v", err, sum)
	}

	got, err := Waive(o.Journal, []executor.RecordRef{{Step: "customers", Record: "customers.csv:9"}}, "the export's total line")
	if err != nil || len(got) != 1 || got[0].Location != "customers.csv:9" {
		t.Fatalf("waive: %v %+v", err, got)
	}
	sum, err := executor.Status(o.Journal)
	if err != nil || !sum.Complete || sum.Steps[0].Failed != 0 || sum.Steps[0].Waived != 1 || len(sum.Errors) != 0 {
		t.Fatalf("status after the waive: %v %+v", err, sum)
	}
	if len(sum.Waived) != 1 || sum.Waived[0] != (executor.WaivedRecord{Step: "customers", Record: "customers.csv:9", Location: "customers.csv:9", Reason: "the export's total line"}) {
		t.Errorf("waived: %+v", sum.Waived)
	}
	if _, err := Waive(o.Journal, []executor.RecordRef{{Step: "customers", Record: "customers.csv:9"}}, "again"); err == nil || !strings.Contains(err.Error(), "waived already") {
		t.Errorf("a second waive: %v", err)
	}

	// The row now gives a record under the same id: still never sent.
	recs.Results["customers"][1] = fixture.Rec("customers", "CUSTOMERS", "customers.csv:9", 9, map[string]any{"CUSTNAME": "TOTAL", "CUSTDES": "Total"})
	o.RetryFailed = true
	if sum, err := executortest.ApplyRun(context.Background(), o); err != nil || !sum.Complete || sum.Steps[0].Waived != 1 {
		t.Fatalf("apply --retry-failed: %v %+v", err, sum)
	}
	if _, sent := env.Entities("CUSTOMERS", "CUSTNAME")["TOTAL"]; sent {
		t.Error("apply --retry-failed sent the waived record")
	}
	// A row error again: the record stays waived, not failed.
	recs.Results["customers"][1] = total
	if sum, err := executortest.ApplyRun(context.Background(), o); err != nil || !sum.Complete || sum.Steps[0].Waived != 1 || sum.Steps[0].Failed != 0 {
		t.Fatalf("apply --retry-failed over the same row error: %v %+v", err, sum)
	}
	st, err := journal.Load(o.Journal)
	if err != nil || st.Record("customers", "customers.csv:9").Reason != "the export's total line" {
		t.Fatalf("the journal lost the reason: %v", err)
	}
}

// TestWaivePartlyLoaded: an order created with some of its lines is failed
// but not waivable: what exists would stay on the target unaccounted for.
func TestWaivePartlyLoaded(t *testing.T) {
	t.Parallel()
	env := fixture.New(t, sandbox.Options{})
	p, f := fixture.DeepOrders(fixture.OrderWithLines("O1", 2, "C1", "P1", "X9", "P2"))
	o := executortest.Handmade(t, env, p, f)
	if sum, err := executortest.ApplyRun(context.Background(), o); err != nil || len(sum.Errors) != 1 || sum.Errors[0].Partly == "" {
		t.Fatalf("apply: %v %+v", err, sum)
	}
	_, err := Waive(o.Journal, []executor.RecordRef{{Step: "orders", Record: "O1"}}, "dropped")
	var de *DecisionError
	if !errors.As(err, &de) || !strings.Contains(err.Error(), "orders/O1 is partly loaded (ORDERS(") || !strings.Contains(err.Error(), "created with 2 of 3 lines") {
		t.Fatalf("waive of a partly loaded order: %v", err)
	}
}
