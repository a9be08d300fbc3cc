package executor

import (
	"context"
	"errors"
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
	f := &fakeRecords{results: map[string][]transform.Result{
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
		results: map[string][]transform.Result{"families": {
			rec("families", "FAMILY_LOG", "F1", 2, map[string]any{"FAMILYNAME": "F1", "FAMILYDESC": "one"}),
			rec("families", "FAMILY_LOG", "F2", 3, map[string]any{"FAMILYNAME": "F2", "FAMILYDESC": "two"}),
		}},
		build: map[string]func(transform.Refs) []transform.Result{"parts": func(refs transform.Refs) []transform.Result {
			return []transform.Result{part(refs, "P1", "F2", 2), part(refs, "P2", "F1", 3), part(refs, "P3", "F1", 4)}
		}},
	}
	o := env.opts(t, testPlan(fam, parts), f)
	o.Limit = 1
	sum, err := runApply(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Trial != 1 || sum.Complete || len(sum.Errors) != 0 {
		t.Errorf("trial: trial %d complete %v errors %v", sum.Trial, sum.Complete, sum.Errors)
	}
	if got := env.entities("LOGPART", "PARTNAME"); len(got) != 1 || got["P2"] == nil {
		t.Errorf("after the trial the target holds parts %v, want P2 (P1's family is past the trial)", keys(got))
	}
	st, _ := journal.Load(o.Journal)
	if st.Record("parts", "P1") != nil || st.LastRun.Limit != 1 || len(st.Done) != 0 {
		t.Errorf("trial journal: P1 %v, last run %+v, done %v", st.Record("parts", "P1"), st.LastRun, st.Done)
	}

	o.Limit = 0
	sum, err = runApply(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if !sum.Complete || sum.Trial != 0 || len(sum.Errors) != 0 {
		t.Errorf("full load: complete %v trial %d errors %v", sum.Complete, sum.Trial, sum.Errors)
	}
	if got := env.entities("LOGPART", "PARTNAME"); len(got) != 3 || len(env.entities("FAMILY_LOG", "FAMILYNAME")) != 2 {
		t.Errorf("after the full load the target holds parts %v", keys(got))
	}
}

func keys(m map[string]map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
