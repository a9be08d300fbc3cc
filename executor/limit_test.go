package executor

import (
	"context"
	"testing"

	"github.com/migrate-tool/migrate/journal"
	"github.com/migrate-tool/migrate/plan"
	"github.com/migrate-tool/migrate/sandbox"
	"github.com/migrate-tool/migrate/transform"
)

// Issue 24: in a trial, an order whose line names, by a plain PARTNAME, a
// part past the trial's limit is the full load's: pending, not sent (the
// server would refuse it now) and not failed. An order of parts the trial
// loaded is loaded.
func TestTrialLeavesPendingWhatNamesPastTheLimit(t *testing.T) {
	t.Parallel()
	env := newSandbox(t, sandbox.Options{})
	parts := step("parts", "LOGPART")
	parts.Fields = []*plan.Field{{Name: "PARTNAME"}, {Name: "PARTDES"}}
	orders := step("orders", "ORDERS", "parts")
	orders.Fields = []*plan.Field{{Name: "CUSTNAME"}, {Name: "DETAILS"}}
	orders.Subforms = []*plan.Subform{{Name: "ORDERITEMS_SUBFORM", Fields: []*plan.Field{{Name: "PARTNAME"}, {Name: "TQUANT"}}}}
	customers := step("customers", "CUSTOMERS")
	customers.Fields = []*plan.Field{{Name: "CUSTNAME"}, {Name: "CUSTDES"}}
	orders.After = append(orders.After, "customers")
	order := func(id string, l int, part string) transform.Result {
		return rec("orders", "ORDERS", id, l, map[string]any{"CUSTNAME": "C1", "DETAILS": id},
			line("ORDERITEMS_SUBFORM", l, map[string]any{"PARTNAME": part, "TQUANT": 1}))
	}
	recs := &fakeRecords{results: map[string][]transform.Result{
		"customers": {rec("customers", "CUSTOMERS", "C1", 2, map[string]any{"CUSTNAME": "C1", "CUSTDES": "Yarden"})},
		"parts": {
			rec("parts", "LOGPART", "P1", 2, map[string]any{"PARTNAME": "P1", "PARTDES": "one"}),
			rec("parts", "LOGPART", "P2", 3, map[string]any{"PARTNAME": "P2", "PARTDES": "two"}),
			rec("parts", "LOGPART", "P3", 4, map[string]any{"PARTNAME": "P3", "PARTDES": "three"}), // past the limit
		},
		"orders": {order("O1", 2, "P1"), order("O2", 3, "P3"), order("O3", 4, "P2")},
	}}
	o := env.opts(t, testPlan(customers, parts, orders), recs)
	o.Limit = 2
	sum, err := runApply(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	var got StepSummary
	for _, s := range sum.Steps {
		if s.Name == "orders" {
			got = s
		}
	}
	if got.Committed != 1 || got.Pending != 1 || got.Failed != 0 || len(sum.Errors) != 0 {
		t.Fatalf("orders: %d committed, %d pending, %d failed, errors %v; want 1, 1, 0, none", got.Committed, got.Pending, got.Failed, sum.Errors)
	}
	if n := len(env.sb.Snapshot()["ORDERS"]); n != 1 {
		t.Errorf("the sandbox holds %d orders, want O1 alone", n)
	}
	st, err := journal.Load(o.Journal)
	if err != nil {
		t.Fatal(err)
	}
	if r := st.Record("orders", "O2"); r == nil || r.Status() != journal.Pending {
		t.Errorf("O2 is journaled %v, want pending", r)
	}

	// The full load sends it, once P3 is there.
	o.Limit = 0
	if sum, err = runApply(context.Background(), o); err != nil || !sum.Complete {
		t.Fatalf("the full load: complete %v, %v", sum != nil && sum.Complete, err)
	}
	if n := len(env.sb.Snapshot()["ORDERS"]); n != 3 {
		t.Errorf("after the full load the sandbox holds %d orders, want 3", n)
	}
}
