package executor

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/migrate-tool/migrate/journal"
	"github.com/migrate-tool/migrate/plan"
	"github.com/migrate-tool/migrate/sandbox"
	"github.com/migrate-tool/migrate/transform"
)

// TestDryRunSendsWhatApplySends runs the dry run against a sandbox that
// already holds data (it reads, writes nothing), then apply with a
// recording client, and compares the batches byte for byte: the dry run is
// apply's own loop, so they must be the same.
func TestDryRunSendsWhatApplySends(t *testing.T) {
	t.Parallel()
	part := func(id string, l int, fields map[string]any) transform.Result {
		fields["PARTNAME"] = id
		return rec("parts", "LOGPART", id, l, fields)
	}
	order := func(step, name string, l int, details string, replace bool, parts ...string) transform.Result {
		var kids []*transform.Child
		for i, p := range parts {
			c := line("ORDERITEMS_SUBFORM", l*100+i, map[string]any{"PARTNAME": p, "TQUANT": dec("1")})
			c.Replace = replace
			kids = append(kids, c)
		}
		return rec(step, "ORDERS", name, l, map[string]any{"ORDNAME": name, "CUSTNAME": "C1", "DETAILS": details}, kids...)
	}
	seedParts := []transform.Result{
		part("P1", 2, map[string]any{"PARTDES": "Bolt", "BARCODE": "111"}),
		part("P2", 3, map[string]any{"PARTDES": "Nut", "BARCODE": "222"}),
	}
	withMode := func(s *plan.Step, m plan.Mode) *plan.Step { s.Mode = m; return s }
	cases := []struct {
		name  string
		seed  map[string][]transform.Result // applied first (steps parts, customers, orders)
		steps []*plan.Step
		recs  map[string][]transform.Result
		// want: strings the recorded batches hold, and must not
		want, not []string
	}{{
		name: "insert",
		// One step per wave: apply runs the steps of a wave at once.
		steps: []*plan.Step{step("parts", "LOGPART"), step("customers", "CUSTOMERS", "parts"), step("orders", "ORDERS", "customers")},
		recs: map[string][]transform.Result{
			"parts":     partsAndCustomers(3),
			"customers": {rec("customers", "CUSTOMERS", "C1", 2, map[string]any{"CUSTNAME": "C1", "CUSTDES": "Acme"})},
			"orders":    {order("orders", "SO1", 2, "a", false, "P1", "P2", "P3"), order("orders", "SO2", 3, "b", false, "P1")},
		},
		want: []string{`"url":"$1/ORDERITEMS_SUBFORM"`},
	}, {
		name:  "upsert on a sandbox holding some of the keys",
		seed:  map[string][]transform.Result{"parts": seedParts},
		steps: []*plan.Step{withMode(step("parts", "LOGPART"), plan.ModeUpsert)},
		recs: map[string][]transform.Result{"parts": {
			part("P1", 2, map[string]any{"PARTDES": "Bolt", "BARCODE": "999"}), // one field changed
			part("P2", 3, map[string]any{"PARTDES": "Nut", "BARCODE": "222"}),  // unchanged
			part("P3", 4, map[string]any{"PARTDES": "New"}),                    // absent
		}},
		want: []string{`"method":"GET","url":"LOGPART?$filter=PARTNAME%20eq%20'P1'%20or%20PARTNAME%20eq%20'P2'%20or%20PARTNAME%20eq%20'P3'&$select=PARTNAME,BARCODE,PARTDES"`, `"method":"PATCH","url":"LOGPART('P1')"`, `"body":{"BARCODE":"999"}`,
			`"method":"POST","url":"LOGPART"`},
		not: []string{`"url":"LOGPART('P2')","headers"`, `"PARTDES":"Bolt"`},
	}, {
		name:  "update",
		seed:  map[string][]transform.Result{"parts": seedParts},
		steps: []*plan.Step{withMode(step("parts", "LOGPART"), plan.ModeUpdate)},
		recs: map[string][]transform.Result{"parts": {
			part("P1", 2, map[string]any{"PARTDES": "Bolt M6"}),
			part("P2", 3, map[string]any{"PARTDES": "Nut", "BARCODE": "223"}),
		}},
		want: []string{`"body":{"PARTDES":"Bolt M6"}`, `"body":{"BARCODE":"223"}`},
		not:  []string{`"POST"`},
	}, {
		name: "upsert of what an earlier step of the run inserted",
		steps: []*plan.Step{step("parts", "LOGPART"), withMode(step("prices", "LOGPART", "parts"), plan.ModeUpsert),
			withMode(step("names", "LOGPART", "prices"), plan.ModeUpdate)},
		recs: map[string][]transform.Result{
			"parts":  seedParts,
			"prices": {rec("prices", "LOGPART", "P1", 2, map[string]any{"PARTNAME": "P1", "BARCODE": "111", "PRICE": dec("2.5")})},
			"names":  {rec("names", "LOGPART", "P2", 2, map[string]any{"PARTNAME": "P2", "PARTDES": "Hex nut"})},
		},
		want: []string{`"method":"PATCH","url":"LOGPART('P1')"`, `"body":{"PRICE":2.5}`, `"method":"PATCH","url":"LOGPART('P2')"`, `"body":{"PARTDES":"Hex nut"}`},
	}, {
		name: "lines: replace",
		seed: map[string][]transform.Result{
			"parts":     partsAndCustomers(3),
			"customers": {rec("customers", "CUSTOMERS", "C1", 2, map[string]any{"CUSTNAME": "C1", "CUSTDES": "Acme"})},
			"orders":    {order("orders", "SO1", 2, "a", false, "P1", "P2")},
		},
		steps: []*plan.Step{withMode(step("orders", "ORDERS"), plan.ModeUpsert)},
		recs:  map[string][]transform.Result{"orders": {order("orders", "SO1", 2, "b", true, "P3")}},
		want: []string{`"method":"GET","url":"ORDERS?$filter=ORDNAME%20eq%20'SO1'&$select=ORDNAME,CUSTNAME,DETAILS&$expand=ORDERITEMS_SUBFORM"`, `"method":"DELETE","url":"ORDERS('SO1')/ORDERITEMS_SUBFORM(`,
			`"body":{"DETAILS":"b"}`, `"method":"POST","url":"ORDERS('SO1')/ORDERITEMS_SUBFORM"`},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			env := newSandbox(t, sandbox.Options{})
			if tc.seed != nil {
				seed, sf := ordersPlan()
				sf.Results = map[string][]transform.Result{}
				for k, v := range tc.seed {
					sf.Results[k] = v
				}
				seed.Hash = "seed"
				env.opts(t, seed, sf).complete(t, "seed")
			}
			before := env.sb.Snapshot()
			p := testPlan(tc.steps...)
			o := env.opts(t, p, &fakeRecords{Results: tc.recs})
			o.BatchSize = 4
			planDir := filepath.Join(t.TempDir(), "plan")
			o.OutDir = planDir
			sum, err := runDryRun(context.Background(), o)
			if err != nil || !sum.Complete || sum.Unread != 0 {
				t.Fatalf("plan: %v %+v", err, sum)
			}
			if after := env.sb.Snapshot(); !reflect.DeepEqual(before, after) {
				t.Fatal("the dry run changed the sandbox")
			}
			o.OutDir = ""
			o.Concurrency = 1
			sent := filepath.Join(t.TempDir(), "apply")
			os.MkdirAll(sent, 0o755)
			// apply is another process: a client of its own, whose forms
			// the dry run's reads have not warmed.
			o.Client = &recorder{inner: env.client.Another(), dir: sent}
			as, err := runApply(context.Background(), o)
			if err != nil || !as.Complete {
				t.Fatalf("apply: %v %+v", err, as)
			}
			planned, applied := batchFiles(t, planDir), batchFiles(t, sent)
			if !reflect.DeepEqual(planned, applied) {
				t.Errorf("the dry run planned\n%s\napply sent\n%s", strings.Join(planned, "\n"), strings.Join(applied, "\n"))
			}
			if sum.Requests != as.Requests || sum.Subrequests != as.Subrequests || sum.Transactions != as.Transactions {
				t.Errorf("plan counted %d/%d/%d, apply %d/%d/%d", sum.Requests, sum.Subrequests, sum.Transactions, as.Requests, as.Subrequests, as.Transactions)
			}
			all := strings.Join(applied, "\n")
			for _, w := range tc.want {
				if !strings.Contains(all, w) {
					t.Errorf("the batches lack %s:\n%s", w, all)
				}
			}
			for _, w := range tc.not {
				if strings.Contains(all, w) {
					t.Errorf("the batches hold %s:\n%s", w, all)
				}
			}
		})
	}
}

// batchFiles lists a folder's batch files as "name: body".
func batchFiles(t *testing.T, dir string) []string {
	t.Helper()
	files, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(dir, f.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, f.Name()+": "+string(b))
	}
	return out
}

// TestDryRunOffline: without a target nothing is read; the reads apply
// would make are counted, upsert is predicted as inserts and update as a
// change of every field.
func TestDryRunOffline(t *testing.T) {
	t.Parallel()
	parts := []transform.Result{
		rec("parts", "LOGPART", "P1", 2, map[string]any{"PARTNAME": "P1", "PARTDES": "Bolt"}),
		rec("parts", "LOGPART", "P2", 3, map[string]any{"PARTNAME": "P2", "PARTDES": "Nut", "BARCODE": "222"}),
	}
	for _, tc := range []struct {
		mode plan.Mode
		want []string
	}{
		{plan.ModeUpsert, []string{`"method":"POST","url":"LOGPART"`, `"body":{"PARTDES":"Bolt","PARTNAME":"P1"}`}},
		{plan.ModeUpdate, []string{`"method":"PATCH","url":"LOGPART('P2')"`, `"body":{"BARCODE":"222","PARTDES":"Nut"}`}},
	} {
		t.Run(string(tc.mode), func(t *testing.T) {
			env := newSandbox(t, sandbox.Options{})
			s := step("parts", "LOGPART")
			s.Mode = tc.mode
			o := env.opts(t, testPlan(s), &fakeRecords{Results: map[string][]transform.Result{"parts": parts}})
			o.Client = nil
			o.OutDir = t.TempDir()
			sum, err := runDryRun(context.Background(), o)
			if err != nil || !sum.Complete || sum.Unread != 2 || sum.Requests != 2 || sum.Subrequests != 1+2 || sum.Transactions != 2 {
				t.Fatalf("%v %+v", err, sum)
			}
			all := strings.Join(batchFiles(t, o.OutDir), "\n")
			for _, w := range tc.want {
				if !strings.Contains(all, w) {
					t.Errorf("the batches lack %s:\n%s", w, all)
				}
			}
		})
	}
}

// TestDryRunCountsTransactionsAsMetered: the service meters each entity
// and each line, so a deep insert of an order with five lines, one
// sub-request, counts six.
func TestDryRunCountsTransactionsAsMetered(t *testing.T) {
	t.Parallel()
	env := newSandbox(t, sandbox.Options{})
	p, f := ordersPlan(orderWithLines("O1", 2, "C1", "P1", "P2", "P3", "P1", "P2"))
	p.Steps[2].DeepInsert = true
	o := env.opts(t, p, f)
	o.Client = nil
	sum, err := runDryRun(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	// 3 parts, 1 customer, the order and its 5 lines.
	if sum.Subrequests != 5 || sum.Transactions != 3+1+6 || stepOf(sum, "orders").Children != 5 {
		t.Fatalf("%+v", sum)
	}
	as, err := runApply(context.Background(), env.opts(t, p, f))
	if err != nil || as.Transactions != sum.Transactions {
		t.Fatalf("apply %v: %d transactions, the dry run %d", err, as.Transactions, sum.Transactions)
	}
}

// The dry run's tally gives ref() the keys the run settled, of the steps a
// ref() names only (its memory stays flat), else the key the journal it
// resumes holds; a key the server would number is a stand-in per record.
func TestTallyRef(t *testing.T) {
	t.Parallel()
	custs := &plan.Step{Name: "custs", Entity: "CUSTOMERS"}
	parts := &plan.Step{Name: "parts", Entity: "LOGPART"}
	orders := &plan.Step{Name: "orders", Entity: "ORDERS", Refs: []string{"custs"}}
	p := &plan.Plan{Steps: []*plan.Step{custs, parts, orders}}
	tl := newTally(p, [][]*plan.Step{{custs, parts}, {orders}}, nil)
	tl.resumed = &journal.State{Steps: map[string]*journal.StepState{
		"custs": {Name: "custs", Records: map[string]*journal.RecordState{
			"C9":  {Step: "custs", ID: "C9", Key: "'C9'"},
			"C10": {Step: "custs", ID: "C10"},
		}},
	}}
	tl.keep("custs", "C1", "'C1'")
	tl.keep("custs", "C2", placeholderKey)
	tl.keep("parts", "P1", "'P1'")
	for _, tc := range []struct {
		step, id string
		want     any
		ok       bool
	}{
		{step: "custs", id: "C1", want: "C1", ok: true},
		{step: "custs", id: "C2", want: "{custs:C2}", ok: true},
		{step: "custs", id: "C9", want: "C9", ok: true}, // the resumed journal's
		{step: "custs", id: "C10"},                      // resumed without a key
		{step: "custs", id: "C3"},
		{step: "parts", id: "P1"}, // no ref() names parts: not kept
	} {
		got, ok := tl.ref(tc.step, tc.id)
		if ok != tc.ok || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ref(%s, %s) = %v, %v; want %v, %v", tc.step, tc.id, got, ok, tc.want, tc.ok)
		}
	}
	if !tl.placeholders() || tl.reconciles() {
		t.Errorf("the tally: placeholders %v, reconciles %v; want true, false", tl.placeholders(), tl.reconciles())
	}
}
