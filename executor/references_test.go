package executor

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	"github.com/migrate-tool/migrate/plan"
	"github.com/migrate-tool/migrate/sandbox"
	"github.com/migrate-tool/migrate/transform"
)

// A value of an exists: field resolves when the target holds it
// or an earlier step creates it; a step of the same wave does not count.
// Each unresolved value is listed once, at its first cell.
func TestCheckReferences(t *testing.T) {
	t.Parallel()
	env := newSandbox(t, sandbox.Options{})
	env.seedParts(t, rec("parts", "LOGPART", "B-100", 2, map[string]any{"PARTNAME": "B-100", "PARTDES": "Bolt"}))
	parts := step("parts", "LOGPART")
	orders := step("orders", "ORDERS", "parts")
	orders.Subforms = []*plan.Subform{{Name: "ORDERITEMS_SUBFORM", Exists: []*plan.Exists{{Field: "PARTNAME", Entity: "LOGPART", Pos: plan.Pos{File: "p.yaml", Line: 9, Col: 11}}}}}
	same := step("same", "ORDERS") // the same wave as parts: not "earlier"
	same.Subforms = orders.Subforms
	recs := &fakeRecords{Results: map[string][]transform.Result{
		"parts": {rec("parts", "LOGPART", "N-200", 2, map[string]any{"PARTNAME": "N-200", "PARTDES": "Nut"})},
		"orders": {
			rec("orders", "ORDERS", "O1", 2, map[string]any{"CUSTNAME": "C1"},
				line("ORDERITEMS_SUBFORM", 2, map[string]any{"PARTNAME": "B-100"}), // on the target
				line("ORDERITEMS_SUBFORM", 3, map[string]any{"PARTNAME": "N-200"}), // made by parts
				line("ORDERITEMS_SUBFORM", 4, map[string]any{"PARTNAME": "X-999"})),
			rec("orders", "ORDERS", "O2", 5, map[string]any{"CUSTNAME": "C1"},
				line("ORDERITEMS_SUBFORM", 5, map[string]any{"PARTNAME": "X-999"})),
		},
		"same": {rec("same", "ORDERS", "S1", 2, map[string]any{"CUSTNAME": "C1"},
			line("ORDERITEMS_SUBFORM", 7, map[string]any{"PARTNAME": "N-200"}))},
	}}
	tests := []struct {
		name          string
		online        bool
		wantLocs      []string
		wantMessage   string
		wantUnchecked int
		// wantRecords: the records that give an unresolved value, each
		// counted once however many it gives (O1 and O2 give X-999).
		wantRecords map[string]int
	}{
		{"with a target", true, []string{"lines.csv:4", "lines.csv:7"},
			`PARTNAME "X-999" is not in LOGPART on the target, and no earlier step creates it (given 2 times in all)`, 0,
			map[string]int{"orders": 2, "same": 1}},
		// Offline: B-100, X-999 and same's N-200 are not made by an earlier step.
		{"offline", false, nil, "", 3, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := env.opts(t, testPlan(parts, orders, same), recs)
			if !tt.online {
				o.Client = nil
			}
			got, err := runCheckReferences(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			var locs []string
			for _, e := range got.Unresolved {
				locs = append(locs, e.Location)
			}
			if len(locs) != len(tt.wantLocs) || got.Unchecked != tt.wantUnchecked {
				t.Fatalf("unresolved at %v, unchecked %d; want %v, %d", locs, got.Unchecked, tt.wantLocs, tt.wantUnchecked)
			}
			for i := range locs {
				if locs[i] != tt.wantLocs[i] {
					t.Errorf("unresolved at %v, want %v", locs, tt.wantLocs)
				}
			}
			if !reflect.DeepEqual(got.Records, tt.wantRecords) {
				t.Errorf("records giving unresolved values %v, want %v", got.Records, tt.wantRecords)
			}
			if tt.wantMessage != "" && (got.Unresolved[0].Message != tt.wantMessage || got.Unresolved[0].PlanLocation != "p.yaml:9:11") {
				t.Errorf("first: %+v", got.Unresolved[0])
			}
		})
	}
	// Nothing was written by the check.
	if n := len(env.sb.Snapshot()["LOGPART"]); n != 1 {
		t.Errorf("LOGPART holds %d parts, want the seeded 1", n)
	}
}

// A restarted server's forms are cold, and answer 404 to their
// first request. The check of exists: must not take that 404 for a part
// the target does not hold, which would stop apply for nothing.
func TestCheckReferencesColdForms(t *testing.T) {
	t.Parallel()
	env := newRestartable(t, sandbox.Options{Quirks: map[string]bool{sandbox.QuirkColdForms: true}})
	seedParts(t, env.sandboxEnv)
	env.restart(t)
	orders := step("orders", "ORDERS")
	orders.Subforms = []*plan.Subform{{Name: "ORDERITEMS_SUBFORM", Exists: []*plan.Exists{{Field: "PARTNAME", Entity: "LOGPART"}}}}
	recs := &fakeRecords{Results: map[string][]transform.Result{"orders": {
		rec("orders", "ORDERS", "O1", 2, map[string]any{"CUSTNAME": "C1"},
			line("ORDERITEMS_SUBFORM", 2, map[string]any{"PARTNAME": "P1"}),
			line("ORDERITEMS_SUBFORM", 3, map[string]any{"PARTNAME": "X-999"}),
			line("ORDERITEMS_SUBFORM", 4, map[string]any{"PARTNAME": "P2"})),
	}}}
	got, err := runCheckReferences(context.Background(), env.opts(t, testPlan(orders), recs))
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Unresolved) != 1 || got.Unresolved[0].Value != "X-999" || got.Checked != 3 {
		t.Errorf("unresolved %+v (checked %d), want X-999 alone of 3", got.Unresolved, got.Checked)
	}
}

// The exists: reads go at most 100 GETs to a call, also on a
// server before 21.0 whose calls take 1,000 writes.
func TestCheckReferencesReadsPerCall(t *testing.T) {
	t.Parallel()
	env := newSandbox(t, sandbox.Options{SystemVersion: "20.0"})
	orders := step("orders", "ORDERS")
	orders.Subforms = []*plan.Subform{{Name: "ORDERITEMS_SUBFORM", Exists: []*plan.Exists{{Field: "PARTNAME", Entity: "LOGPART"}}}}
	var kids []*transform.Child
	for i := range 150 {
		kids = append(kids, line("ORDERITEMS_SUBFORM", i+2, map[string]any{"PARTNAME": fmt.Sprintf("X-%03d", i)}))
	}
	recs := &fakeRecords{Results: map[string][]transform.Result{"orders": {rec("orders", "ORDERS", "O1", 2, map[string]any{"CUSTNAME": "C1"}, kids...)}}}
	log := &callLog{Client: env.client}
	o := env.opts(t, testPlan(orders), recs)
	o.Client = log
	got, err := runCheckReferences(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	// 100 and 50 GETs; the first 404s of LOGPART are confirmed once (a
	// warm-up, then the 100 again), after which its 404s are the truth.
	if len(got.Unresolved) != 150 || len(log.calls) != 4 {
		t.Errorf("%d unresolved in %d calls, want 150 in 4", len(got.Unresolved), len(log.calls))
	}
	for _, c := range log.calls {
		if len(c) > 100 {
			t.Errorf("a call of %d GETs, want at most 100", len(c))
		}
	}
}
