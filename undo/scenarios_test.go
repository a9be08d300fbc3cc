package undo

import (
	"context"
	"reflect"
	"testing"

	"github.com/migrate-tool/migrate/executor/executortest"
	"github.com/migrate-tool/migrate/executor/fixture"
	"github.com/migrate-tool/migrate/journal"
	"github.com/migrate-tool/migrate/plan"
	"github.com/migrate-tool/migrate/sandbox"
	"github.com/migrate-tool/migrate/transform"
)

// TestUndoLinesAppendedToExisting: lines an upsert appended to an order
// that existed before are deleted by undo; the order stays.
func TestUndoLinesAppendedToExisting(t *testing.T) {
	t.Parallel()
	env := fixture.New(t, sandbox.Options{})
	p, f := fixture.OrdersPlan(fixture.SO1("orders", fixture.ItemLine(2, "P1", "1")))
	executortest.Handmade(t, env, p, f).Apply(t)
	before := env.SB.Snapshot()
	up := fixture.Step("orders", "ORDERS")
	up.Mode = plan.ModeUpsert
	f2 := &fixture.Records{Results: map[string][]transform.Result{"orders": {fixture.SO1("orders", fixture.ItemLine(2, "P2", "2"), fixture.ItemLine(3, "P3", "3"))}}}
	o := executortest.Handmade(t, env, fixture.Plan(up), f2)
	o.Complete(t, "apply")
	if n := len(fixture.Lines(env.Entities("ORDERS", "ORDNAME")["SO1"], "ORDERITEMS_SUBFORM")); n != 3 {
		t.Fatalf("%d lines after upsert", n)
	}
	st, _ := journal.Load(o.Journal)
	if r := st.Record("orders", "O1"); r.Created || r.Subs["0"].ResultKey != "2" {
		t.Fatalf("journal: created=%v line key %q", r.Created, r.Subs["0"].ResultKey)
	}
	us := mustUndo(t, o.Journal, env.Client, Options{Yes: true})
	if us.Done != 2 {
		t.Fatalf("%+v", us)
	}
	if after := env.SB.Snapshot(); !fixture.EqualJSON(before, after) {
		t.Fatalf("undo left %v", after["ORDERS"])
	}
}

// TestDeepInsertKeyExists: a document whose key exists before the run (a
// 409) is someone else's: nothing is read back or completed, the record
// fails, and the document keeps its lines.
func TestDeepInsertKeyExists(t *testing.T) {
	t.Parallel()
	env := fixture.New(t, sandbox.Options{})
	p, f := fixture.DeepOrders(fixture.Keyed(fixture.OrderWithLines("O1", 2, "C1", "P1"), "SO-1"))
	executortest.Handmade(t, env, p, f).Apply(t)
	st := fixture.Step("orders", "ORDERS")
	st.DeepInsert = true
	o := executortest.Handmade(t, env, fixture.Plan(st), &fixture.Records{Results: map[string][]transform.Result{"orders": {fixture.Keyed(fixture.OrderWithLines("O9", 2, "C1", "P1", "P2"), "SO-1")}}})
	sum := o.Apply(t)
	if s := sum.Steps[0]; s.Failed != 1 || len(sum.Errors) != 1 || sum.Errors[0].Partly != "" {
		t.Fatalf("%+v %+v", s, sum.Errors)
	}
	if parts := fixture.LineParts(env.Entities("ORDERS", "ORDNAME")["SO-1"]); parts != "P1" {
		t.Errorf("SO-1 holds %s", parts)
	}
	if us, err := Undo(context.Background(), o.Journal, env.Client, Options{Yes: true}); err != nil || us.Done != 0 {
		t.Errorf("undo of the failed run: %v %+v", err, us)
	}
	if n := len(env.SB.Snapshot()["ORDERS"]); n != 1 {
		t.Errorf("%d orders after undo", n)
	}
}

// TestUndoAfterRounding: a server that rounds a price to its Scale and
// answers it as a string holds what the run left, to undo: the run
// journals the value the server answered where it is not the one sent
// (rounded), so undo, which has no metadata, finds nothing changed.
func TestUndoAfterRounding(t *testing.T) {
	t.Parallel()
	env := fixture.New(t, sandbox.Options{Quirks: map[string]bool{sandbox.QuirkNumbersAsStrings: true, sandbox.QuirkRealMetadata: true}})
	env.MD = fixture.ServedMetadata(t, env.Client)
	p := fixture.Plan(fixture.Step("parts", "LOGPART"))
	o := executortest.Handmade(t, env, p, &fixture.Records{Results: map[string][]transform.Result{"parts": {
		fixture.Rec("parts", "LOGPART", "P1", 2, map[string]any{"PARTNAME": "P1", "PARTDES": "Bolt", "PRICE": fixture.Dec("1.254")}),
	}}})
	o.Apply(t)
	u, err := Undo(context.Background(), o.Journal, env.Client, Options{Yes: true, Target: o.Target, Metadata: fixture.MetadataOf(o.Prepared.Metadata)})
	if err != nil || len(u.Skipped) > 0 || u.Done != 1 {
		t.Fatalf("undo: %v, done %d, skipped %q", err, u.Done, u.Skipped)
	}
}

// TestOddKeysRoundTrip: keys with a quote, a space, an ampersand, a
// percent sign, a plus, a slash, a hash, a question mark and Hebrew are
// written, their notes added by key in batches of their own, read back
// (upsert-free resume) and deleted by undo.
func TestOddKeysRoundTrip(t *testing.T) {
	t.Parallel()
	env := fixture.New(t, sandbox.Options{})
	before := len(env.SB.Snapshot()["CUSTOMERS"])
	keys := []string{"O'Neil & Co", "50% + x/y#z?", "לקוח 1", "a''b,c=d"}
	var recs []transform.Result
	for i, k := range keys {
		recs = append(recs, fixture.Rec("customers", "CUSTOMERS", string(rune('a'+i)), i+2, map[string]any{"CUSTNAME": k, "CUSTDES": "x"},
			fixture.Line("GENCUSTNOTES_SUBFORM", i+2, map[string]any{"SUBJECT": "hello " + k})))
	}
	p := fixture.Plan(fixture.Step("customers", "CUSTOMERS"))
	f := &fixture.Records{Results: map[string][]transform.Result{"customers": recs}}
	o := executortest.Handmade(t, env, p, f)
	o.BatchSize = 1 // each note follows in its own batch, addressed by the key
	o.Complete(t, "apply")
	held := env.Entities("CUSTOMERS", "CUSTNAME")
	for _, k := range keys {
		notes := fixture.Lines(held[k], "GENCUSTNOTES_SUBFORM")
		if len(notes) != 1 || notes[0]["SUBJECT"] != "hello "+k {
			t.Errorf("customer %q holds %v", k, held[k])
		}
	}
	us := mustUndo(t, o.Journal, env.Client, Options{Yes: true})
	if us.Done != len(keys) || len(env.SB.Snapshot()["CUSTOMERS"]) != before {
		t.Fatalf("undo %+v", us)
	}
}

func TestUndoRestoresSnapshot(t *testing.T) {
	t.Parallel()
	env := fixture.New(t, sandbox.Options{})
	// Something that was there before the run stays.
	pre := fixture.Plan(fixture.Step("customers", "CUSTOMERS"))
	pf := &fixture.Records{Results: map[string][]transform.Result{"customers": {fixture.Rec("customers", "CUSTOMERS", "C0", 2, map[string]any{"CUSTNAME": "C0", "CUSTDES": "Old"})}}}
	executortest.Handmade(t, env, pre, pf).Apply(t)
	before := env.SB.Snapshot()
	o := executortest.Demo(t, env)
	list := mustUndo(t, o.Journal, env.Client, Options{})
	if len(list.Actions) != 4 || list.Actions[0].URL == "" || list.Done != 0 {
		t.Fatalf("listing: %+v", list)
	}
	if reflect.DeepEqual(before, env.SB.Snapshot()) {
		t.Fatal("listing must not change anything")
	}
	us := mustUndo(t, o.Journal, env.Client, Options{Yes: true})
	if us.Done != 4 {
		t.Fatalf("undo: %+v", us)
	}
	if after := env.SB.Snapshot(); !reflect.DeepEqual(before, after) {
		t.Fatalf("after undo:\n%v\nbefore:\n%v", after, before)
	}
	// Undo again: nothing left to do.
	us = mustUndo(t, o.Journal, env.Client, Options{Yes: true})
	if len(us.Actions) != 0 {
		t.Fatalf("second undo: %+v", us)
	}
}
