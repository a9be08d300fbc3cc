package executor

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/migrate-tool/migrate/journal"
	"github.com/migrate-tool/migrate/plan"
	"github.com/migrate-tool/migrate/sandbox"
	"github.com/migrate-tool/migrate/transform"
)

// stepsPlan: parts refers to families (after:), orders comes after
// customers and checks its parts with exists: on LOGPART, which parts (an
// earlier wave) loads.
func stepsPlan() (*plan.Plan, *fakeRecords) {
	fam := step("families", "FAMILY_LOG")
	parts := step("parts", "LOGPART", "families")
	cust := step("customers", "CUSTOMERS", "families")
	orders := step("orders", "ORDERS", "customers")
	orders.Exists = []*plan.Exists{{Field: "PARTNAME", Entity: "LOGPART"}}
	f := &fakeRecords{Results: map[string][]transform.Result{
		"families":  {rec("families", "FAMILY_LOG", "F1", 2, map[string]any{"FAMILYNAME": "F1", "FAMILYDESC": "one"})},
		"parts":     {rec("parts", "LOGPART", "P1", 2, map[string]any{"PARTNAME": "P1", "PARTDES": "one", "FAMILYNAME": "F1"})},
		"customers": {rec("customers", "CUSTOMERS", "C1", 2, map[string]any{"CUSTNAME": "C1", "CUSTDES": "one"})},
		"orders":    {rec("orders", "ORDERS", "O1", 2, map[string]any{"CUSTNAME": "C1", "DETAILS": "O1"})},
	}}
	return testPlan(fam, parts, cust, orders), f
}

// --steps runs the steps named once those they depend on (after:, exists:
// on an earlier step's entity) are complete in the journal; otherwise
// nothing is sent and the error names both steps.
func TestApplySteps(t *testing.T) {
	t.Parallel()
	env := newSandbox(t, sandbox.Options{})
	p, f := stepsPlan()
	o := env.opts(t, p, f)
	tests := []struct {
		steps   []string
		depends string // the refusal's step it depends on; "" when it runs
		unknown bool
		left    string // the steps left unfinished after it
	}{
		{steps: []string{"parts"}, depends: "families"},
		{steps: []string{"prats"}, unknown: true},
		{steps: []string{"families"}, left: "parts,customers,orders"},
		{steps: []string{"orders", "customers"}, depends: "parts"},
		{steps: []string{"parts"}, left: "customers,orders"},
		{steps: []string{"orders", "customers"}},
	}
	for _, tt := range tests {
		o.Steps = tt.steps
		sum, err := runApply(context.Background(), o)
		var se *StepsError
		switch {
		case tt.unknown:
			if !errors.As(err, &se) || !strings.Contains(se.Error(), "no such step in the plan; did you mean parts?") {
				t.Fatalf("--steps %v: %v, want no such step", tt.steps, err)
			}
		case tt.depends != "":
			if !errors.As(err, &se) || se.Depends != tt.depends {
				t.Fatalf("--steps %v: %v, want a refusal for %s", tt.steps, err, tt.depends)
			}
		case err != nil:
			t.Fatalf("--steps %v: %v", tt.steps, err)
		default:
			if got := strings.Join(sum.Unfinished, ","); got != tt.left || sum.Complete != (tt.left == "") {
				t.Errorf("--steps %v: unfinished %q complete %v, want %q", tt.steps, got, sum.Complete, tt.left)
			}
		}
	}
	snap := env.sb.Snapshot()
	if len(snap["FAMILY_LOG"]) != 1 || len(snap["LOGPART"]) != 1 || len(snap["CUSTOMERS"]) != 1 || len(snap["ORDERS"]) != 1 {
		t.Errorf("the target holds %d families, %d parts, %d customers, %d orders; want one each",
			len(snap["FAMILY_LOG"]), len(snap["LOGPART"]), len(snap["CUSTOMERS"]), len(snap["ORDERS"]))
	}
	st, err := Status(o.Journal)
	if err != nil || !st.Complete || st.Interrupted || len(st.Unfinished) != 0 {
		t.Errorf("status after every step ran, in three runs: complete %v, interrupted %v, unfinished %v, %v", st.Complete, st.Interrupted, st.Unfinished, err)
	}
}

// A trial loads the first N records of each step; a record whose ref()
// finds nothing (its family is past the trial) is left out, neither sent
// nor journaled, and the full load afterwards sends it: every record once.
func TestApplyTrialThenFull(t *testing.T) {
	t.Parallel()
	env := newSandbox(t, sandbox.Options{})
	fam := step("families", "FAMILY_LOG")
	parts := step("parts", "LOGPART", "families")
	part := func(refs transform.Refs, id, family string, l int) transform.Result {
		k, ok := refs.Ref("families", family)
		if !ok {
			return transform.Result{Loc: loc("parts.csv", l), ID: id, Errors: []*transform.RowError{{Cell: "parts.csv:2", Message: "ref: no record"}}}
		}
		return rec("parts", "LOGPART", id, l, map[string]any{"PARTNAME": id, "PARTDES": id, "FAMILYNAME": k})
	}
	f := &fakeRecords{
		Results: map[string][]transform.Result{"families": {
			rec("families", "FAMILY_LOG", "F1", 2, map[string]any{"FAMILYNAME": "F1", "FAMILYDESC": "one"}),
			rec("families", "FAMILY_LOG", "F2", 3, map[string]any{"FAMILYNAME": "F2", "FAMILYDESC": "two"}),
		}},
		Build: map[string]func(transform.Refs) []transform.Result{"parts": func(refs transform.Refs) []transform.Result {
			return []transform.Result{part(refs, "P1", "F2", 2), part(refs, "P2", "F1", 3), part(refs, "P3", "F1", 4)}
		}},
	}
	o := env.opts(t, testPlan(fam, parts), f)
	o.Limit = 1
	sum := o.apply(t)
	if sum.Trial != 1 || sum.Complete || len(sum.Errors) != 0 {
		t.Errorf("trial: trial %d complete %v errors %v", sum.Trial, sum.Complete, sum.Errors)
	}
	if got := env.entities("LOGPART", "PARTNAME"); len(got) != 1 || got["P2"] == nil {
		t.Errorf("after the trial the target holds parts %v, want P2 (P1's family is past the trial)", slices.Sorted(maps.Keys(got)))
	}
	st, _ := journal.Load(o.Journal)
	if st.Record("parts", "P1") != nil || st.LastRun.Limit != 1 || len(st.Done) != 0 {
		t.Errorf("trial journal: P1 %v, last run %+v, done %v", st.Record("parts", "P1"), st.LastRun, st.Done)
	}

	o.Limit = 0
	sum = o.apply(t)
	if !sum.Complete || sum.Trial != 0 || len(sum.Errors) != 0 {
		t.Errorf("full load: complete %v trial %d errors %v", sum.Complete, sum.Trial, sum.Errors)
	}
	if got := env.entities("LOGPART", "PARTNAME"); len(got) != 3 || len(env.entities("FAMILY_LOG", "FAMILYNAME")) != 2 {
		t.Errorf("after the full load the target holds parts %v", slices.Sorted(maps.Keys(got)))
	}
}

// In a trial, an order whose line names, by a plain PARTNAME, a
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
	recs := &fakeRecords{Results: map[string][]transform.Result{
		"customers": {rec("customers", "CUSTOMERS", "C1", 2, map[string]any{"CUSTNAME": "C1", "CUSTDES": "Yarden"})},
		"orders":    {order("O0", 2, "P0"), order("O1", 3, "P1"), order("O2", 4, "P4"), order("O3", 5, "P2")},
	}, Build: map[string]func(transform.Refs) []transform.Result{
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
	sum := o.apply(t)
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
	st := loadJournal(t, o.Journal)
	for _, id := range []string{"O0", "O2"} {
		if r := st.Record("orders", id); r == nil || r.Status() != journal.Pending {
			t.Errorf("%s is journaled %v, want pending", id, r)
		}
	}

	// The full load sends O2 with its line once P4 is there, and O3. (O0
	// names P0, whose family no step loads: its line fails then, as it
	// must in a load that is no trial.)
	o.Limit = 0
	o.apply(t)
	got2 := env.entities("ORDERS", "DETAILS")
	for _, id := range []string{"O1", "O2", "O3"} {
		if n := len(lines(got2[id], "ORDERITEMS_SUBFORM")); n != 1 {
			t.Errorf("after the full load %s has %d lines, want 1", id, n)
		}
	}
}
