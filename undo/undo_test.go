package undo

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/migrate-tool/migrate/executor"
	"github.com/migrate-tool/migrate/executor/executortest"
	"github.com/migrate-tool/migrate/executor/fixture"
	"github.com/migrate-tool/migrate/journal"
	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/plan"
	"github.com/migrate-tool/migrate/sandbox"
	"github.com/migrate-tool/migrate/transform"
)

func TestCheckTarget(t *testing.T) {
	t.Parallel()
	const demo = "https://erp.example.com/odata/Priority/tabula.ini/demo"
	for _, c := range []struct {
		name, journal, now string
		refused            bool
	}{
		{"same", demo, demo, false},
		{"trailing slash", demo, demo + "/", false},
		{"language code", demo, "https://erp.example.com/odata/Priority/tabula.ini,2/demo", false},
		{"credentials", demo, "https://u:secret@erp.example.com/odata/Priority/tabula.ini/demo", false},
		{"journal without a target", "", demo, false},
		{"another company", demo, "https://erp.example.com/odata/Priority/tabula.ini/other", true},
		{"another server", demo, "https://erp2.example.com/odata/Priority/tabula.ini/demo", true},
		{"another scheme", demo, "http://erp.example.com/odata/Priority/tabula.ini/demo", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			err := executor.CheckTarget("run.journal", journal.Header{Target: c.journal}, c.now)
			var te *executor.TargetError
			if got := errors.As(err, &te); got != c.refused {
				t.Fatalf("refused %v, want %v (%v)", got, c.refused, err)
			}
			if c.refused && (!strings.Contains(err.Error(), c.journal) || !strings.Contains(err.Error(), "nothing was sent") || strings.Contains(err.Error(), "secret")) {
				t.Errorf("message: %v", err)
			}
		})
	}
}

// TestUndoRefusesAnotherTarget: the MIGRATE_TARGET=<other company>
// undo --yes. Nothing is sent, nothing changes, the error names both.
func TestUndoRefusesAnotherTarget(t *testing.T) {
	t.Parallel()
	env := fixture.New(t, sandbox.Options{})
	o := executortest.Demo(t, env)
	loaded := env.SB.Snapshot()
	calls := env.Client.Calls.Load()
	other := env.Srv.URL + "/odata/Priority/tabula.ini/other"
	for _, yes := range []bool{false, true} {
		sum, err := Undo(context.Background(), o.Journal, env.Client, Options{Yes: yes, Target: other})
		var te *executor.TargetError
		if !errors.As(err, &te) || sum != nil || te.Was != o.Target || te.Now != other {
			t.Fatalf("yes=%v: %v %+v", yes, err, sum)
		}
	}
	if env.Client.Calls.Load() != calls || !reflect.DeepEqual(loaded, env.SB.Snapshot()) {
		t.Fatal("undo against another target sent something")
	}
	// A resume of the run there is refused too (apply --retry-failed).
	o2 := o
	o2.Target, o2.RetryFailed, o2.AllowPlanChange = other, true, true
	if _, err := executortest.ApplyRun(context.Background(), o2); !errors.As(err, new(*executor.TargetError)) {
		t.Fatalf("apply against another target: %v", err)
	}
	if sum := mustUndo(t, o.Journal, env.Client, Options{Yes: true, Target: o.Target}); sum.Done != 4 || sum.Target != o.Target {
		t.Fatalf("undo on its own target: %+v", sum)
	}
}

// replaceRun loads order SO1 with two lines, then (in a journal of its
// own) replaces them with one and changes DETAILS. It returns the
// sandbox's state before the replace and the replace's journal.
func replaceRun(t *testing.T, env *fixture.Env) (map[string][]map[string]any, string) {
	t.Helper()
	p, f := fixture.OrdersPlan(fixture.SO1("orders",
		fixture.Line("ORDERITEMS_SUBFORM", 2, map[string]any{"PARTNAME": "P1", "TQUANT": fixture.Dec("1"), "PRICE": fixture.Dec("2.50")}),
		fixture.ItemLine(3, "P2", "4")))
	executortest.Handmade(t, env, p, f).Apply(t)
	before := env.SB.Snapshot()
	up := fixture.Step("orders", "ORDERS")
	up.Mode = plan.ModeUpdate
	l := fixture.ItemLine(2, "P2", "5")
	l.Replace = true
	rf := &fixture.Records{Results: map[string][]transform.Result{"orders": {
		fixture.Rec("orders", "ORDERS", "SO1", 2, map[string]any{"ORDNAME": "SO1", "DETAILS": "b"}, l)}}}
	o := executortest.Handmade(t, env, fixture.Plan(up), rf)
	o.Complete(t, "replace")
	if got := fixture.Lines(env.Entities("ORDERS", "ORDNAME")["SO1"], "ORDERITEMS_SUBFORM"); len(got) != 1 {
		t.Fatalf("after replace: %v", got)
	}
	return before, o.Journal
}

// TestUndoRecreatesReplacedLines: the lines lines: replace deleted come
// back exactly (keys included), also when the answer to the re-creates is
// lost: the next undo finds them instead of adding them twice, or sends
// them again if they never arrived, and leaves nothing in doubt.
func TestUndoRecreatesReplacedLines(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name         string
		lose, unsent bool
	}{{"answered", false, false}, {"answer lost", true, false}, {"lost before arriving", true, true}} {
		t.Run(c.name, func(t *testing.T) {
			lose := c.lose
			t.Parallel()
			env := fixture.New(t, sandbox.Options{})
			before, jpath := replaceRun(t, env)
			if list := mustUndo(t, jpath, env.Client, Options{}); len(list.Actions) != 4 || len(list.Warnings) != 0 {
				t.Fatalf("listing: %+v", list)
			}
			client := &fixture.LoseOnce{Batcher: env.Client, Unsent: c.unsent, Lose: func(reqs []odata.BatchRequest) bool {
				return lose && reqs[0].Method == "POST"
			}}
			opts := Options{Yes: true, Target: env.Srv.URL + sandbox.BasePath}
			sum, err := Undo(context.Background(), jpath, client, opts)
			if lose {
				if !errors.Is(err, executor.ErrInDoubt) {
					t.Fatalf("lost answer: %v %+v", err, sum)
				}
				sum, err = Undo(context.Background(), jpath, client, opts)
			}
			if err != nil || sum.Failed != 0 {
				t.Fatalf("undo: %v %+v", err, sum)
			}
			if after := env.SB.Snapshot(); !reflect.DeepEqual(before["ORDERS"], after["ORDERS"]) {
				t.Fatalf("after undo:\n%v\nbefore:\n%v", after["ORDERS"], before["ORDERS"])
			}
			if again := mustUndo(t, jpath, client, opts); len(again.Actions) != 0 {
				t.Fatalf("undo again: %+v", again)
			}
			if st, err := journal.Load(jpath); err != nil || len(st.InDoubtSubs()) != 0 {
				t.Fatalf("left in doubt: %v %+v", err, st.InDoubtSubs())
			}
		})
	}
}

// TestUndoSkipsChangedRecords: a record whose fields are no longer what
// the run left is left alone unless Force; a field the run did not write
// does not count.
func TestUndoSkipsChangedRecords(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		patch   string // applied behind the run's back
		force   bool
		skipped string // "" none
	}{
		{"unchanged", "", false, ""},
		{"a field the run did not write", `{"PARTDES": "Hand-edited"}`, false, ""},
		{"a field the run wrote", `{"BARCODE": "555"}`, false, `parts P1: LOGPART('P1') changed since the run: BARCODE is now "555", the run wrote "999"; left alone`},
		{"forced", `{"BARCODE": "555"}`, true, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			env := fixture.New(t, sandbox.Options{})
			o := executortest.Barcode(t, env, plan.ModeUpdate)
			o.Apply(t)
			if c.patch != "" {
				resps, err := env.Client.Batch(context.Background(), []odata.BatchRequest{{ID: "1", Method: "PATCH", URL: "LOGPART('P1')",
					Body: []byte(c.patch), Headers: map[string]string{"content-type": "application/json"}}}, executor.BatchOptions)
				if err != nil || resps[0].Status != 200 {
					t.Fatalf("patch behind the run's back: %v %+v", err, resps)
				}
			}
			sum := mustUndo(t, o.Journal, env.Client, Options{Yes: true, Force: c.force, Target: o.Target})
			barcode := env.Entities("LOGPART", "PARTNAME")["P1"]["BARCODE"]
			if c.skipped == "" {
				if len(sum.Skipped) != 0 || sum.Done != 1 || barcode != "111" {
					t.Fatalf("want undone: %+v, BARCODE %v", sum, barcode)
				}
				return
			}
			if len(sum.Skipped) != 1 || !strings.HasPrefix(sum.Skipped[0], c.skipped) || sum.Done != 0 || barcode != "555" {
				t.Fatalf("want skipped %q: %+v, BARCODE %v", c.skipped, sum, barcode)
			}
		})
	}
}

// TestUndoToleratesWhatTheServerFills: the run wrote CDES with CUSTNAME;
// the server filled CDES from the customer instead. That is what the run
// left, not a change made since: undo deletes the order.
func TestUndoToleratesWhatTheServerFills(t *testing.T) {
	t.Parallel()
	env := fixture.New(t, sandbox.Options{})
	p, f := fixture.OrdersPlan(fixture.Rec("orders", "ORDERS", "O1", 2, map[string]any{"ORDNAME": "SO1", "CUSTNAME": "C1", "CDES": "Typed by hand"}))
	o := executortest.Handmade(t, env, p, f)
	o.Apply(t)
	if got := env.Entities("ORDERS", "ORDNAME")["SO1"]["CDES"]; got != "Acme" {
		t.Fatalf("the sandbox no longer fills CDES (%v): this test needs another filled field", got)
	}
	st, err := journal.Load(o.Journal)
	if err != nil {
		t.Fatal(err)
	}
	if s := st.Record("orders", "O1").Subs[""]; string(s.Filled) != `{"CDES":"Acme"}` {
		t.Fatalf("journaled as filled: %s", s.Filled)
	}
	if sum := mustUndo(t, o.Journal, env.Client, Options{Yes: true, Target: o.Target}); len(sum.Skipped) != 0 || len(env.SB.Snapshot()["ORDERS"]) != 0 {
		t.Fatalf("undo: %+v", sum)
	}
}

// Undo without --force leaves alone a document whose lines or
// text someone changed since the run, not only one whose header changed;
// and its preview is what --yes does.
func TestUndoLeavesADocumentWhoseLinesOrTextChanged(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		change func(doc, kline string) odata.BatchRequest
		says   string
	}{
		{"a line's price", func(doc, kline string) odata.BatchRequest {
			return odata.BatchRequest{Method: "PATCH", URL: doc + "/ORDERITEMS_SUBFORM(" + kline + ")", Body: []byte(`{"PRICE":7}`)}
		}, "PRICE is now 7, the run wrote 2"},
		{"the text", func(doc, _ string) odata.BatchRequest {
			return odata.BatchRequest{Method: "PATCH", URL: doc + "/ORDERSTEXT_SUBFORM", Body: []byte(`{"TEXT":"Deliver slowly"}`)}
		}, `ORDERSTEXT_SUBFORM TEXT is now "Deliver slowly", the run wrote "Deliver fast"`},
		{"a line added", func(doc, _ string) odata.BatchRequest {
			return odata.BatchRequest{Method: "POST", URL: doc + "/ORDERITEMS_SUBFORM", Body: []byte(`{"PARTNAME":"P1","TQUANT":1}`)}
		}, "is a line the run did not write"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			env, o, ord := executortest.Retried(t)
			var kline string
			for _, l := range fixture.Lines(env.Entities("ORDERS", "ORDNAME")[ord], "ORDERITEMS_SUBFORM") {
				if l["PARTNAME"] == "P2" {
					kline = fmt.Sprint(l["KLINE"])
				}
			}
			env.Behind(t, c.change("ORDERS('"+ord+"')", kline))
			opts := Options{Target: o.Target, Metadata: fixture.MetadataOf(env.MD)}
			preview := mustUndo(t, o.Journal, env.Client, opts)
			opts.Yes = true
			sum := mustUndo(t, o.Journal, env.Client, opts)
			if len(sum.Skipped) != 1 || !strings.HasPrefix(sum.Skipped[0], "orders O1: ORDERS('"+ord+"') changed since the run: ") || !strings.Contains(sum.Skipped[0], c.says) {
				t.Fatalf("skipped %q, want the order named with %q", sum.Skipped, c.says)
			}
			if n := len(env.SB.Snapshot()["ORDERS"]); n != 1 {
				t.Fatalf("undo deleted the changed order: %d left", n)
			}
			// The preview listed exactly what --yes did.
			if !reflect.DeepEqual(preview.Skipped, sum.Skipped) || len(preview.Actions) != len(sum.Actions) {
				t.Fatalf("preview %+v\n--yes %+v", preview, sum)
			}
			for i := range sum.Actions {
				if preview.Actions[i].URL != sum.Actions[i].URL || preview.Actions[i].Done {
					t.Errorf("action %d: preview %+v, --yes %+v", i, preview.Actions[i], sum.Actions[i])
				}
			}
		})
	}
}

// TestUndoUnchangedDeepInsertAfterRetry: the order as the run finally
// left it (a line loaded by --retry-failed, a text inside the deep
// insert) is undone whole, by the one comparison.
func TestUndoUnchangedDeepInsertAfterRetry(t *testing.T) {
	t.Parallel()
	sum := undoRetried(t, func(env *fixture.Env) executor.Client { return env.Client })
	if len(sum.Skipped) != 0 || sum.Failed != 0 {
		t.Fatalf("%+v", sum)
	}
}

// Undo settles the run's work in doubt itself, by reading,
// and undoes what it finds to be the run's: no apply, which would also
// re-create what undo deleted.
func TestUndoSettlesWorkInDoubt(t *testing.T) {
	t.Parallel()
	for _, preview := range []bool{true, false} {
		t.Run(fmt.Sprint("preview=", preview), func(t *testing.T) {
			t.Parallel()
			env := fixture.New(t, sandbox.Options{})
			p, f := fixture.OrdersPlan(fixture.OrderWithLines("O1", 2, "C1", "P1", "P2"), fixture.OrderWithLines("O2", 3, "C1", "P3"))
			o := executortest.PartsAndCustomersFirst(t, env, p, f)
			env.Client.FailNext.Store(true) // the orders' answer is lost
			if _, err := executortest.ApplyRun(context.Background(), o); !errors.Is(err, executor.ErrInDoubt) {
				t.Fatalf("apply: %v", err)
			}
			if st, _ := journal.Load(o.Journal); len(st.InDoubtSubs()) == 0 {
				t.Fatal("nothing in doubt")
			}
			sum := mustUndo(t, o.Journal, env.Client, Options{Yes: !preview, Target: o.Target, Metadata: fixture.MetadataOf(env.MD)})
			if len(sum.InDoubt) != 0 {
				t.Fatalf("undo: %+v", sum)
			}
			deletes := 0
			for _, a := range sum.Actions {
				if strings.HasPrefix(a.URL, "ORDERS(") && a.Method == "DELETE" {
					deletes++
				}
			}
			if deletes != 2 {
				t.Fatalf("actions %+v: want both orders deleted", sum.Actions)
			}
			snap := env.SB.Snapshot()
			st, err := journal.Load(o.Journal)
			if err != nil {
				t.Fatal(err)
			}
			if preview {
				if len(snap["ORDERS"]) != 2 || len(st.InDoubtSubs()) == 0 {
					t.Fatalf("the preview changed something: %d orders, journal in doubt %d", len(snap["ORDERS"]), len(st.InDoubtSubs()))
				}
				return
			}
			if len(snap["ORDERS"]) != 0 || len(snap["LOGPART"]) != 0 || len(snap["CUSTOMERS"]) != 0 || len(st.InDoubtSubs()) != 0 {
				t.Fatalf("undo left %d orders, %d parts, %d customers, %d in doubt", len(snap["ORDERS"]), len(snap["LOGPART"]), len(snap["CUSTOMERS"]), len(st.InDoubtSubs()))
			}
		})
	}
}

// TestUndoLinesWithAHiddenField: the server hides a field of every line
// (field-level permissions); the lines are found by the fields read back,
// as apply's reconciliation finds them, and the order is undone.
func TestUndoLinesWithAHiddenField(t *testing.T) {
	t.Parallel()
	sum := undoRetried(t, func(env *fixture.Env) executor.Client { return fixture.Hiding{Batcher: env.Client, Field: "PRICE"} })
	if len(sum.Skipped) != 0 {
		t.Fatalf("%+v", sum)
	}
}
