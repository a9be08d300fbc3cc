package executor

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/migrate-tool/migrate/journal"
	"github.com/migrate-tool/migrate/sandbox"
)

// Issue 12 item 4: two orders with the same header and lines, in doubt.
// undo leaves them and undoes the rest; resolve lists their candidates and
// records the user's decisions, which replay as outcomes.
func TestResolveAndUndoAroundDoubt(t *testing.T) {
	t.Parallel()
	env := newSandbox(t, sandbox.Options{})
	p, f := ordersPlan(sameHeaderOrder("O1", 2, "P1"), sameHeaderOrder("O2", 3, "P1"))
	p.Steps[2].Match = []string{"CUSTNAME"}
	o := loadPartsAndCustomers(t, env, p, f)
	env.client.failNext.Store(true) // the orders' answer is lost
	if _, err := runApply(context.Background(), o); !errors.Is(err, ErrInDoubt) {
		t.Fatal(err)
	}
	if sum, err := runApply(context.Background(), o); err != nil || stepOf(sum, "orders").InDoubt != 2 {
		t.Fatalf("resume: %v %+v", err, sum)
	}
	ctx := context.Background()
	ropts := ResolveOptions{Client: env.client, Metadata: env.md}

	list, err := InDoubt(ctx, o.Journal, ropts)
	if err != nil || len(list) != 2 {
		t.Fatalf("in doubt: %v %+v", err, list)
	}
	for _, d := range list {
		if !d.Create || len(d.Candidates) != 2 || d.Lines != 1 || !strings.Contains(string(d.Sent), `"CUSTNAME":"C1"`) {
			t.Errorf("%s: %+v", d.Record, d)
		}
	}

	sum, err := Undo(ctx, o.Journal, env.client, UndoOptions{Yes: true})
	if !errors.Is(err, ErrInDoubt) || strings.Join(sum.InDoubt, ",") != "orders/O1,orders/O2" {
		t.Fatalf("undo: %v %+v", err, sum)
	}
	snap := env.sb.Snapshot()
	if len(snap["ORDERS"]) != 2 || len(snap["LOGPART"]) != 0 || len(snap["CUSTOMERS"]) != 0 {
		t.Fatalf("undo left %d orders, %d parts, %d customers; want the 2 in doubt only", len(snap["ORDERS"]), len(snap["LOGPART"]), len(snap["CUSTOMERS"]))
	}

	key := list[1].Candidates[1].Key
	if _, err := Resolve(ctx, o.Journal, Decision{Step: "orders", Record: "O1", NotCreated: true}, ropts); err != nil {
		t.Fatal(err)
	}
	if _, err := Resolve(ctx, o.Journal, Decision{Step: "orders", Record: "O2", Key: strings.Trim(key, "'")}, ropts); err != nil {
		t.Fatal(err)
	}
	var de *DecisionError
	if _, err := Resolve(ctx, o.Journal, Decision{Step: "orders", Record: "O1", NotCreated: true}, ropts); !errors.As(err, &de) {
		t.Errorf("a second decision on O1: %v, want a DecisionError", err)
	}
	st, err := journal.Load(o.Journal)
	if err != nil {
		t.Fatal(err)
	}
	if r := st.Record("orders", "O1"); r.Status() != journal.Pending || len(r.Subs) != 0 {
		t.Errorf("O1 not created: %v %+v", r.Status(), r.Subs)
	}
	if r := st.Record("orders", "O2"); r.Key != key || !r.Created || r.Subs[""].ResultKey != key {
		t.Errorf("O2: key %q, want %q", r.Key, key)
	}
	// O2's line is still to be reconciled: resolve says so, with no key to choose.
	list, err = InDoubt(ctx, o.Journal, ropts)
	if err != nil || len(list) != 1 || list[0].Record != "O2" || list[0].Create || !strings.Contains(list[0].Note, "lines are in doubt") {
		t.Fatalf("after the decisions: %v %+v", err, list)
	}
}
