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
	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/sandbox"
	"github.com/migrate-tool/migrate/transform"
	"github.com/migrate-tool/migrate/undo"
)

// lookAlikesInDoubt loads two orders with the same header and lines whose
// answer is lost, so that a resume leaves both in doubt; before runs once
// parts and customers are loaded, before the orders are sent.
func lookAlikesInDoubt(t *testing.T, env *fixture.Env, before func()) executortest.Run {
	t.Helper()
	p, f := fixture.OrdersPlan(sameHeaderOrder("O1", 2, "P1"), sameHeaderOrder("O2", 3, "P1"))
	p.Steps[2].Match = []string{"CUSTNAME"}
	o := executortest.PartsAndCustomersFirst(t, env, p, f)
	if before != nil {
		before()
	}
	env.Client.FailNext.Store(true) // the orders' answer is lost
	if _, err := executortest.ApplyRun(context.Background(), o); !errors.Is(err, executor.ErrInDoubt) {
		t.Fatal(err)
	}
	if sum, err := executortest.ApplyRun(context.Background(), o); err != nil || inDoubt(sum, "orders") != 2 {
		t.Fatalf("resume: %v %+v", err, sum)
	}
	return o
}

// sameHeaderOrder is an order whose header is the same for every one of
// them, with a line of each of parts.
func sameHeaderOrder(id string, l int, parts ...string) transform.Result {
	var kids []*transform.Child
	for i, p := range parts {
		kids = append(kids, fixture.Line("ORDERITEMS_SUBFORM", l*1000+i, map[string]any{"PARTNAME": p, "TQUANT": fixture.Dec("1")}))
	}
	return fixture.Rec("orders", "ORDERS", id, l, map[string]any{"CUSTNAME": "C1", "DETAILS": "same"}, kids...)
}

// inDoubt is how many records of step sum counts in doubt.
func inDoubt(sum *executor.Summary, step string) int {
	for _, s := range sum.Steps {
		if s.Name == step {
			return s.InDoubt
		}
	}
	return -1
}

// Two orders with the same header and lines, in doubt.
// undo leaves them and undoes the rest; resolve lists their candidates and
// records the user's decisions, which replay as outcomes.
func TestResolveAndUndoAroundDoubt(t *testing.T) {
	t.Parallel()
	env := fixture.New(t, sandbox.Options{})
	o := lookAlikesInDoubt(t, env, nil)
	ctx := context.Background()
	ropts := Options{Client: env.Client, Metadata: env.MD}

	list, err := InDoubt(ctx, o.Journal, ropts)
	if err != nil || len(list) != 2 {
		t.Fatalf("in doubt: %v %+v", err, list)
	}
	for _, d := range list {
		if !d.Create || len(d.Candidates) != 2 || d.Lines != 1 || !strings.Contains(string(d.Sent), `"CUSTNAME":"C1"`) {
			t.Errorf("%s: %+v", d.Record, d)
		}
	}

	sum, err := undo.Undo(ctx, o.Journal, env.Client, undo.Options{Yes: true})
	if !errors.Is(err, executor.ErrInDoubt) || strings.Join(sum.InDoubt, ",") != "orders/O1,orders/O2" {
		t.Fatalf("undo: %v %+v", err, sum)
	}
	snap := env.SB.Snapshot()
	if len(snap["ORDERS"]) != 2 || len(snap["LOGPART"]) != 0 || len(snap["CUSTOMERS"]) != 0 {
		t.Fatalf("undo left %d orders, %d parts, %d customers; want the 2 in doubt only", len(snap["ORDERS"]), len(snap["LOGPART"]), len(snap["CUSTOMERS"]))
	}

	key := list[1].Candidates[1].Key
	if _, err := Decide(ctx, o.Journal, Decision{Step: "orders", Record: "O1", NotCreated: true}, ropts); err != nil {
		t.Fatal(err)
	}
	if _, err := Decide(ctx, o.Journal, Decision{Step: "orders", Record: "O2", Key: strings.Trim(key, "'")}, ropts); err != nil {
		t.Fatal(err)
	}
	var de *DecisionError
	if _, err := Decide(ctx, o.Journal, Decision{Step: "orders", Record: "O1", NotCreated: true}, ropts); !errors.As(err, &de) {
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

// Before, resolve --key took an order made before the run, not among
// the record's candidates, and undo then deleted it. A key is taken only
// when resolve lists it as a candidate; any other is refused, naming them.
func TestResolveKeyAmongCandidates(t *testing.T) {
	t.Parallel()
	env := fixture.New(t, sandbox.Options{})
	ctx := context.Background()
	var before map[string]map[string]any
	o := lookAlikesInDoubt(t, env, func() {
		// An order of the customer's made before the run: never the run's own.
		if _, err := env.Client.Batch(ctx, []odata.BatchRequest{{ID: "1", Method: "POST", URL: "ORDERS",
			Body: []byte(`{"CUSTNAME":"C1","DETAILS":"same"}`), Headers: map[string]string{"content-type": "application/json"}}}, executor.BatchOptions); err != nil {
			t.Fatal(err)
		}
		before = env.Entities("ORDERS", "ORDNAME")
	})
	ropts := Options{Client: env.Client, Metadata: env.MD}
	list, err := InDoubt(ctx, o.Journal, ropts)
	if err != nil || len(list) != 2 || len(list[0].Candidates) != 2 {
		t.Fatalf("in doubt: %v %+v", err, list)
	}
	var handMade string
	for k := range before {
		handMade = k
	}
	var de *DecisionError
	_, err = Decide(ctx, o.Journal, Decision{Step: "orders", Record: "O1", Key: handMade}, ropts)
	if !errors.As(err, &de) || !strings.Contains(err.Error(), "is not a candidate of orders/O1: give one of "+list[0].Candidates[0].Key+", "+list[0].Candidates[1].Key) {
		t.Fatalf("the order made before the run: %v, want it refused naming the candidates", err)
	}
	_, err = Decide(ctx, o.Journal, Decision{Step: "orders", Record: "O2", Key: "SO404"}, ropts)
	if !errors.As(err, &de) || !strings.Contains(err.Error(), "the target answered 404") {
		t.Fatalf("a key that names nothing: %v", err)
	}
	if _, err := Decide(ctx, o.Journal, Decision{Step: "orders", Record: "O1", Key: list[0].Candidates[0].Key}, ropts); err != nil {
		t.Fatalf("a candidate: %v", err)
	}
	st, err := journal.Load(o.Journal)
	if err != nil || st.Record("orders", "O1").Key != list[0].Candidates[0].Key {
		t.Fatalf("O1 after the decision: %v", err)
	}
	if r := st.Record("orders", "O2"); r.Subs[""].ResultKey != "" || !r.Subs[""].InDoubt() {
		t.Errorf("O2 changed: %+v", r.Subs[""])
	}
}

// TestKeyLiteral: a key typed to resolve --key is spelt as odata.EntityKey spells
// the key of the same document, however it was typed.
func TestKeyLiteral(t *testing.T) {
	t.Parallel()
	md := sandbox.DemoMetadata()
	orders, invoices := md.EntitySet("ORDERS").Type, md.EntitySet("AINVOICES").Type
	for _, tc := range []struct {
		t           *odata.EntityType
		typed, want string
	}{
		{orders, "SO26000002", "'SO26000002'"},
		{orders, " SO 1 ", "'SO%201'"},
		{orders, "'SO 1'", "'SO%201'"},
		{orders, "'SO%201'", "'SO%201'"},
		{orders, "O'Neil & Co", "'O''Neil%20%26%20Co'"},
		{invoices, "DEBIT='D',IVNUM='IV 1',IVTYPE='A'", "IVNUM='IV%201',IVTYPE='A',DEBIT='D'"},
	} {
		if got := keyLiteral(tc.t, tc.typed); got != tc.want {
			t.Errorf("keyLiteral(%s, %q) = %q, want %q", tc.t.Name, tc.typed, got, tc.want)
		}
	}
}
