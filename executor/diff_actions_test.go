package executor

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/migrate-tool/migrate/internal/golden"
	"github.com/migrate-tool/migrate/plan"
	"github.com/migrate-tool/migrate/sandbox"
	"github.com/migrate-tool/migrate/transform"
)

// TestDiffOfEveryAction diffs a plan against a company that already holds
// parts P1 and P2: an upsert that changes P1's description to Hebrew,
// leaves P2 alone and creates P3; an insert of P2 again (a conflict); an
// update of P9, which is not there (missing); an order for customer C9,
// which no step creates and the target lacks (an unresolved reference);
// and a row error. What the diff finds is held to what the sandbox holds,
// and nothing is written. (Its page is package report's TestDiffPage,
// drawn from what this diff found.)
func TestDiffOfEveryAction(t *testing.T) {
	t.Parallel()
	env := newSandbox(t, sandbox.Options{})
	seedParts(t, env)
	before := env.sb.Snapshot()

	parts := step("parts", "LOGPART")
	parts.Mode = plan.ModeUpsert
	again := step("again", "LOGPART", "parts")
	fixes := step("fixes", "LOGPART", "parts")
	fixes.Mode = plan.ModeUpdate
	orders := step("orders", "ORDERS", "parts")
	orders.Exists = []*plan.Exists{{Field: "CUSTNAME", Entity: "CUSTOMERS"}}
	p := testPlan(parts, again, fixes, orders)
	p.Name = "חלקים"
	bad := transform.Result{Loc: loc("parts.csv", 5), Errors: []*transform.RowError{{Step: "parts", Loc: loc("parts.csv", 5),
		Cell: "parts.csv:5", Field: "BARCODE", Value: "<b>x</b>", Message: "BARCODE: longer than MaxLength 16"}}}
	recs := &fakeRecords{Results: map[string][]transform.Result{
		"parts": {
			rec("parts", "LOGPART", "P1", 2, map[string]any{"PARTNAME": "P1", "PARTDES": "בורג משושה", "BARCODE": "1"}),
			rec("parts", "LOGPART", "P2", 3, map[string]any{"PARTNAME": "P2", "PARTDES": "part P2", "BARCODE": "2"}),
			rec("parts", "LOGPART", "P3", 4, map[string]any{"PARTNAME": "P3", "PARTDES": "part P3"}),
			bad,
		},
		"again":  {rec("again", "LOGPART", "P2", 2, map[string]any{"PARTNAME": "P2", "PARTDES": "part P2"})},
		"fixes":  {rec("fixes", "LOGPART", "P9", 2, map[string]any{"PARTNAME": "P9", "PARTDES": "nowhere"})},
		"orders": {rec("orders", "ORDERS", "O1", 2, map[string]any{"CUSTNAME": "C9", "DETAILS": "legacy 77"})},
	}}
	o := env.opts(t, p, recs)
	o.Journal = ""
	refs, err := runCheckReferences(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	res, err := runDiff(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	held := env.entities("LOGPART", "PARTNAME")
	if fmt.Sprint(env.sb.Snapshot()) != fmt.Sprint(before) {
		t.Error("the diff wrote to the target")
	}
	if _, ok := held["P3"]; ok {
		t.Fatal("P3 is on the target: the test proves nothing")
	}
	steps := map[string]DiffStep{}
	for _, s := range res.Steps {
		steps[s.Name] = s
	}
	if s := steps["parts"]; s.Create != 1 || s.Update != 1 || s.Unchanged != 1 || s.Conflict+s.Missing != 0 {
		t.Errorf("parts %+v, want P3 created, P1 updated, P2 unchanged", s)
	}
	if s := steps["again"]; s.Conflict != 1 || s.Create+s.Update+s.Missing != 0 {
		t.Errorf("again %+v, want P2 a conflict", s)
	}
	if s := steps["fixes"]; s.Missing != 1 || s.Create+s.Update+s.Conflict != 0 {
		t.Errorf("fixes %+v, want P9 missing", s)
	}
	var old json.RawMessage
	for _, r := range res.Records {
		if r.Key == "'P1'" {
			old = r.Fields["PARTDES"].Old
		}
	}
	if want, _ := json.Marshal(held["P1"]["PARTDES"]); string(old) != string(want) {
		t.Errorf("P1's description as the target holds it: %s, the sandbox %s", old, want)
	}
	if len(refs.Unresolved) != 1 || refs.Unresolved[0].Value != "C9" || refs.Unresolved[0].Location != "orders.csv:2" {
		t.Errorf("unresolved %+v, want C9 at orders.csv:2", refs.Unresolved)
	}
	if res.Summary == nil || len(res.Summary.Errors) != 1 || res.Summary.Errors[0].Location != "parts.csv:5" {
		t.Errorf("row errors %+v, want the one of parts.csv:5", res.Summary)
	}
	// What it found is what package report's TestDiffPage draws: held to
	// it here, so that the page's golden is the page of this diff.
	found, err := json.MarshalIndent(struct {
		Result     *DiffResult
		Unresolved []RecordError
	}{res, refs.Unresolved}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "../report/testdata/diff-input.json", append(found, '\n'))
}
