package executor

import (
	"context"
	"testing"

	"github.com/migrate-tool/migrate/journal"
	"github.com/migrate-tool/migrate/plan"
	"github.com/migrate-tool/migrate/sandbox"
	"github.com/migrate-tool/migrate/transform"
)

func TestDeepInsert(t *testing.T) {
	t.Parallel()
	env := newSandbox(t, sandbox.Options{})
	p, f := ordersPlan(orderWithLines("O1", 2, "C1", "P1", "P2"), orderWithLines("O2", 3, "C1", "P3"))
	p.Steps[2].DeepInsert = true
	sum, err := Apply(context.Background(), env.opts(t, p, f))
	if err != nil || !sum.Complete {
		t.Fatalf("%v %+v", err, sum)
	}
	orders := env.entities("ORDERS", "DETAILS")
	if len(lines(orders["O1"], "ORDERITEMS_SUBFORM")) != 2 || len(lines(orders["O2"], "ORDERITEMS_SUBFORM")) != 1 {
		t.Fatalf("orders %v", orders)
	}
	// One sub-request per order, lines inside its body.
	if sum.Subrequests != 3+1+2 {
		t.Errorf("subrequests %d", sum.Subrequests)
	}
}

// TestUndoLinesAppendedToExisting: lines an upsert appended to an order
// that existed before are deleted by undo; the order stays.
func TestUndoLinesAppendedToExisting(t *testing.T) {
	t.Parallel()
	env := newSandbox(t, sandbox.Options{})
	p, f := ordersPlan(rec("orders", "ORDERS", "O1", 2, map[string]any{"ORDNAME": "SO1", "CUSTNAME": "C1", "DETAILS": "a"},
		line("ORDERITEMS_SUBFORM", 2, map[string]any{"PARTNAME": "P1", "TQUANT": dec("1")})))
	if _, err := Apply(context.Background(), env.opts(t, p, f)); err != nil {
		t.Fatal(err)
	}
	before := env.sb.Snapshot()
	up := step("orders", "ORDERS")
	up.Mode = plan.ModeUpsert
	f2 := &fakeRecords{results: map[string][]transform.Result{"orders": {rec("orders", "ORDERS", "O1", 2, map[string]any{"ORDNAME": "SO1", "CUSTNAME": "C1", "DETAILS": "a"},
		line("ORDERITEMS_SUBFORM", 2, map[string]any{"PARTNAME": "P2", "TQUANT": dec("2")}),
		line("ORDERITEMS_SUBFORM", 3, map[string]any{"PARTNAME": "P3", "TQUANT": dec("3")}))}}}
	o := env.opts(t, testPlan(up), f2)
	if sum, err := Apply(context.Background(), o); err != nil || !sum.Complete {
		t.Fatalf("%v %+v", err, sum)
	}
	if n := len(lines(env.entities("ORDERS", "ORDNAME")["SO1"], "ORDERITEMS_SUBFORM")); n != 3 {
		t.Fatalf("%d lines after upsert", n)
	}
	st, _ := journal.Load(o.Journal)
	if r := st.Record("orders", "O1"); r.Created || r.Subs["0"].ResultKey != "2" {
		t.Fatalf("journal: created=%v line key %q", r.Created, r.Subs["0"].ResultKey)
	}
	us, err := Undo(context.Background(), o.Journal, env.client, UndoOptions{Yes: true})
	if err != nil || us.Done != 2 {
		t.Fatalf("%v %+v", err, us)
	}
	if after := env.sb.Snapshot(); !equalJSON(before, after) {
		t.Fatalf("undo left %v", after["ORDERS"])
	}
}
