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
	"github.com/migrate-tool/migrate/sandbox"
)

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
