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
// part past the trial's limit (P4), or one the trial left out for a ref()
// past it (P0), is the full load's: pending, not sent (the server would
// refuse it now) and not failed. An order of parts the trial loaded is
// loaded.
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
		"orders":    {order("O0", 2, "P0"), order("O1", 3, "P1"), order("O2", 4, "P4"), order("O3", 5, "P2")},
	}, build: map[string]func(transform.Refs) []transform.Result{
		"parts": func(refs transform.Refs) []transform.Result {
			// P0's family is past the trial: its ref() finds nothing.
			refs.Ref("families", "F9")
			return []transform.Result{
				{ID: "P0", Loc: loc("parts.csv", 2), Errors: []*transform.RowError{{Step: "parts", Message: "ref: no families F9"}}},
				rec("parts", "LOGPART", "P1", 3, map[string]any{"PARTNAME": "P1", "PARTDES": "one"}),
				rec("parts", "LOGPART", "P2", 4, map[string]any{"PARTNAME": "P2", "PARTDES": "two"}),
				rec("parts", "LOGPART", "P3", 5, map[string]any{"PARTNAME": "P3", "PARTDES": "three"}),
				rec("parts", "LOGPART", "P4", 6, map[string]any{"PARTNAME": "P4", "PARTDES": "four"}), // past the limit
			}
		},
	}}
	o := env.opts(t, testPlan(customers, parts, orders), recs)
	o.Limit = 3
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
	if got.Committed != 1 || got.Pending != 2 || got.Failed != 0 || len(sum.Errors) != 0 {
		t.Fatalf("orders: %d committed, %d pending, %d failed, errors %v; want 1, 2, 0, none", got.Committed, got.Pending, got.Failed, sum.Errors)
	}
	if n := len(env.sb.Snapshot()["ORDERS"]); n != 1 {
		t.Errorf("the sandbox holds %d orders, want O1 alone", n)
	}
	st, err := journal.Load(o.Journal)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"O0", "O2"} {
		if r := st.Record("orders", id); r == nil || r.Status() != journal.Pending {
			t.Errorf("%s is journaled %v, want pending", id, r)
		}
	}

	// The full load sends O2 with its line once P4 is there, and O3. (O0
	// names P0, whose family no step loads: its line fails then, as it
	// must in a load that is no trial.)
	o.Limit = 0
	if _, err = runApply(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	got2 := env.entities("ORDERS", "DETAILS")
	for _, id := range []string{"O1", "O2", "O3"} {
		if n := len(lines(got2[id], "ORDERITEMS_SUBFORM")); n != 1 {
			t.Errorf("after the full load %s has %d lines, want 1", id, n)
		}
	}
}
