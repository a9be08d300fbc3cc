package verify

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	"github.com/migrate-tool/migrate/executor/executortest"
	"github.com/migrate-tool/migrate/executor/fixture"
	"github.com/migrate-tool/migrate/journal"
	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/plan"
	"github.com/migrate-tool/migrate/sandbox"
)

// What verify compares is what the run finally left, each
// line by its content, texts included, and what it cannot read is said.

func TestVerifyComparesTheFinalStateAfterARetry(t *testing.T) {
	t.Parallel()
	env, o, ord := executortest.Retried(t)
	verify := func() *Result {
		t.Helper()
		return verifyRun(t, env, o, env.Client)
	}
	res := verify()
	if len(res.Findings) != 0 {
		t.Fatalf("after the retry: %+v", res.Findings)
	}
	orders := res.Steps[2]
	want := []ControlTotal{
		{What: "records", Source: "1", Target: "1"},
		{What: "lines ORDERITEMS_SUBFORM", Source: "3", Target: "3"},
		{What: "sum ORDERITEMS_SUBFORM.PRICE", Source: "8", Target: "8"},
		{What: "sum ORDERITEMS_SUBFORM.TQUANT", Source: "3", Target: "3"},
	}
	if orders.Matched != 1 || !reflect.DeepEqual(orders.Totals, want) {
		t.Fatalf("orders: %+v", orders)
	}
	if res.TotalsDiffer() {
		t.Fatal("totals differ")
	}

	// A user changes the text inside the deep insert, a line's price, and
	// adds a line the run never wrote.
	var kline any
	for _, l := range fixture.Lines(env.Entities("ORDERS", "ORDNAME")[ord], "ORDERITEMS_SUBFORM") {
		if l["PARTNAME"] == "P2" {
			kline = l["KLINE"]
		}
	}
	doc := "ORDERS('" + ord + "')"
	env.Behind(t,
		odata.BatchRequest{Method: "PATCH", URL: doc + "/ORDERSTEXT_SUBFORM", Body: []byte(`{"TEXT":"Deliver slowly"}`)},
		odata.BatchRequest{Method: "PATCH", URL: fmt.Sprintf("%s/ORDERITEMS_SUBFORM(%v)", doc, kline), Body: []byte(`{"PRICE":7}`)},
		odata.BatchRequest{Method: "POST", URL: doc + "/ORDERITEMS_SUBFORM", Body: []byte(`{"PARTNAME":"P1","TQUANT":1,"PRICE":2}`)},
	)
	res = verify()
	got := map[string]string{}
	for _, f := range res.Findings {
		got[f.Problem+" "+f.Field] = f.Sent + " → " + f.Found
	}
	wantFindings := map[string]string{
		"differs TEXT":  `"Deliver fast" → "Deliver slowly"`,
		"differs PRICE": `2 → 7`,
		"extra ":        "",
	}
	for k, v := range wantFindings {
		g, ok := got[k]
		if !ok || k != "extra " && g != v {
			t.Errorf("finding %q: got %q (all: %+v)", k, g, res.Findings)
		}
	}
	if len(res.Findings) != 3 {
		t.Errorf("findings: %+v", res.Findings)
	}
	if !res.TotalsDiffer() || res.Steps[2].Differ != 1 {
		t.Errorf("totals after an extra line: %+v", res.Steps[2])
	}
}

// TestVerifyUpsertUnchanged: an upsert that found a record holding what
// the plan wants sends nothing for it; a field changed behind its back
// afterwards is a difference all the same.
func TestVerifyUpsertUnchanged(t *testing.T) {
	t.Parallel()
	env := fixture.New(t, sandbox.Options{})
	seed, sf := fixture.PartsPlan(plan.ModeInsert, fixture.Part("P1", 2, "111"))
	executortest.Handmade(t, env, seed, sf).Complete(t, "seed")
	up, uf := fixture.PartsPlan(plan.ModeUpsert, fixture.Part("P1", 2, "111"))
	o := executortest.Handmade(t, env, up, uf)
	o.Complete(t, "upsert")
	env.Behind(t, odata.BatchRequest{Method: "PATCH", URL: "LOGPART('P1')", Body: []byte(`{"BARCODE":"555"}`)})
	res := verifyRun(t, env, o, env.Client)
	want := []Finding{{Step: "parts", Record: "P1", Location: "parts.csv:2", URL: "LOGPART('P1')", Field: "BARCODE", Problem: Differs, Sent: `"111"`, Found: `"555"`}}
	if !reflect.DeepEqual(res.Findings, want) || res.Steps[0].Differ != 1 {
		t.Fatalf("findings %+v, step %+v", res.Findings, res.Steps[0])
	}
}

// TestVerifyNotVerifiable: a record whose every field written the server
// hides from its answers is not "matched": nothing of it was compared.
func TestVerifyNotVerifiable(t *testing.T) {
	t.Parallel()
	env := fixture.New(t, sandbox.Options{})
	p, f := fixture.PartsPlan(plan.ModeInsert, fixture.Rec("parts", "LOGPART", "P1", 2, map[string]any{"PARTNAME": "P1", "PARTDES": "Bolt"}))
	o := executortest.Handmade(t, env, p, f)
	o.Complete(t, "load")
	res := verifyRun(t, env, o, fixture.Hiding{Batcher: env.Client, Field: "PARTDES"})
	if s := res.Steps[0]; s.Matched != 0 || s.Differ != 0 || s.NotVerifiable != 1 || res.Differences() != 0 {
		t.Fatalf("step %+v, findings %+v", s, res.Findings)
	}
	want := []Finding{
		{Step: "parts", Record: "P1", Location: "parts.csv:2", URL: "LOGPART('P1')", Field: "PARTDES", Problem: NotReadable, Sent: `"Bolt"`},
		{Step: "parts", Record: "P1", Location: "parts.csv:2", URL: "LOGPART('P1')", Problem: NotVerifiable, Detail: "nothing the run wrote is returned on read (field-level permissions)"},
	}
	if !reflect.DeepEqual(res.Findings, want) {
		t.Fatalf("findings:\n got %+v\nwant %+v", res.Findings, want)
	}
}

// TestCarriedChildrenPaths: a deep insert's children get the paths the
// engine gave them (children of one sub-form contiguous, in the order
// sent), around the texts the journal names by path, a text too long to
// compare included: a line sent again on its own replaces the right one.
func TestCarriedChildrenPaths(t *testing.T) {
	t.Parallel()
	s := &journal.SubState{Sub: journal.Sub{
		Lines: []byte(`{"ORDERITEMS_SUBFORM":[{"PARTNAME":"P1"},{"PARTNAME":"P2"}],"EXTFILES_SUBFORM":[{"EXTFILEDES":"d"}]}`),
		Texts: []byte(`{"0":{"ORDERSTEXT_SUBFORM":{}},"3":{"ORDERSTEXT2":{"TEXT":"x"}}}`),
	}}
	var got []string
	for _, c := range s.Carried() {
		got = append(got, c.Path+" "+c.Nav)
	}
	want := []string{"0 ORDERSTEXT_SUBFORM", "1 ORDERITEMS_SUBFORM", "2 ORDERITEMS_SUBFORM", "3 ORDERSTEXT2", "4 EXTFILES_SUBFORM"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("paths %q, want %q", got, want)
	}
}

// TestVerifyComparesHeldFieldsAfterAResume: an upsert of a part that
// holds its description already patches only its barcode, and verify
// compares the description too, so a change to it behind the run's back
// is found; also when the PATCH's answer was lost and the resume found
// it committed (it used to journal the record without what it found
// held, and verify then said nothing of the description).
func TestVerifyComparesHeldFieldsAfterAResume(t *testing.T) {
	t.Parallel()
	for _, drop := range []string{"", sandbox.FaultDropAfterCommit, sandbox.FaultDropBeforeCommit} {
		t.Run("drop="+drop, func(t *testing.T) {
			t.Parallel()
			env := fixture.New(t, sandbox.Options{})
			executortest.Seed(t, env, fixture.Part("P1", 2, "111"))
			p, recs := fixture.PartsPlan(plan.ModeUpsert, fixture.Part("P1", 2, "999"))
			r := executortest.Handmade(t, env, p, recs)
			if drop != "" {
				env.SB.DropNextWrites(1, drop)
				if _, err := executortest.ApplyRun(context.Background(), r); err == nil {
					t.Fatal("the apply whose batch was dropped finished")
				}
			}
			r.Apply(t)
			if res := verifyRun(t, env, r, env.Client); len(res.Findings) != 0 {
				t.Fatalf("after the load: %+v", res.Findings)
			}
			env.Behind(t, odata.BatchRequest{Method: "PATCH", URL: "LOGPART('P1')", Body: []byte(`{"PARTDES":"Changed"}`)})
			res := verifyRun(t, env, r, env.Client)
			if len(res.Findings) != 1 || res.Findings[0].Field != "PARTDES" || res.Findings[0].Found != `"Changed"` {
				t.Fatalf("after the description changed: %+v", res.Findings)
			}
		})
	}
}
