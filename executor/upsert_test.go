package executor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/migrate-tool/migrate/journal"
	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/plan"
	"github.com/migrate-tool/migrate/sandbox"
	"github.com/migrate-tool/migrate/transform"
)

func TestUpsertChangesOnlyChangedFieldsAndUndoRestores(t *testing.T) {
	t.Parallel()
	env := newSandbox(t, sandbox.Options{})
	env.seedParts(t,
		rec("parts", "LOGPART", "P1", 2, map[string]any{"PARTNAME": "P1", "PARTDES": "Bolt", "BARCODE": "111"}),
		rec("parts", "LOGPART", "P2", 3, map[string]any{"PARTNAME": "P2", "PARTDES": "Nut", "BARCODE": "222"}),
	)
	before := env.sb.Snapshot()
	up := step("parts", "LOGPART")
	up.Mode = plan.ModeUpsert
	p := testPlan(up)
	f := &fakeRecords{Results: map[string][]transform.Result{"parts": {
		rec("parts", "LOGPART", "P1", 2, map[string]any{"PARTNAME": "P1", "PARTDES": "Bolt", "BARCODE": "999"}), // one field changed
		rec("parts", "LOGPART", "P2", 3, map[string]any{"PARTNAME": "P2", "PARTDES": "Nut", "BARCODE": "222"}),  // unchanged
		rec("parts", "LOGPART", "P3", 4, map[string]any{"PARTNAME": "P3", "PARTDES": "New"}),                    // absent: inserted
	}}}
	o := env.opts(t, p, f)
	sum, err := runApply(context.Background(), o)
	if err != nil || !sum.Complete || stepOf(sum, "parts").Committed != 3 {
		t.Fatalf("%v %+v", err, sum)
	}
	parts := env.entities("LOGPART", "PARTNAME")
	if parts["P1"]["BARCODE"] != "999" || parts["P1"]["PARTDES"] != "Bolt" || parts["P3"]["PARTDES"] != "New" || parts["P2"]["BARCODE"] != "222" {
		t.Fatalf("parts: %v", parts)
	}
	// The PATCH carried only BARCODE, and its before-image is journaled.
	st, _ := journal.Load(o.Journal)
	s := st.Record("parts", "P1").Subs[""]
	if s.Op != journal.OpPatch || string(s.Before) != `{"BARCODE":"111"}` || string(s.Match) != `{"BARCODE":"999"}` {
		t.Fatalf("patch journal: %+v before %s match %s", s, s.Before, s.Match)
	}
	if st.Record("parts", "P2").Subs[""] != nil {
		t.Error("an unchanged entity was written")
	}
	// read batch (one GET for the three keys) + write batch
	if sum.Requests != 2 || sum.Subrequests != 1+2 {
		t.Errorf("requests %d subrequests %d", sum.Requests, sum.Subrequests)
	}
	us, err := UndoInTest(context.Background(), o.Journal, env.client, UndoInTestOptions{Yes: true})
	if err != nil || us.Done != 2 {
		t.Fatalf("undo %v %+v", err, us)
	}
	if after := env.sb.Snapshot(); !reflect.DeepEqual(before, after) {
		t.Fatalf("undo left\n%v\nwant\n%v", after["LOGPART"], before["LOGPART"])
	}
}

func TestUpdateAbsentFails(t *testing.T) {
	t.Parallel()
	env := newSandbox(t, sandbox.Options{})
	up := step("parts", "LOGPART")
	up.Mode = plan.ModeUpdate
	f := &fakeRecords{Results: map[string][]transform.Result{"parts": {
		rec("parts", "LOGPART", "P9", 2, map[string]any{"PARTNAME": "P9", "PARTDES": "x"})}}}
	sum, err := runApply(context.Background(), env.opts(t, testPlan(up), f))
	if err != nil || len(sum.Errors) != 1 || !strings.Contains(sum.Errors[0].Message, "does not exist") || len(env.sb.Snapshot()["LOGPART"]) != 0 {
		t.Fatalf("%v %+v", err, sum)
	}
}

func TestUpsertReplaceLines(t *testing.T) {
	t.Parallel()
	env := newSandbox(t, sandbox.Options{})
	p, f := ordersPlan(so1("orders", itemLine(2, "P1", "1"), itemLine(3, "P2", "1")))
	o1 := env.opts(t, p, f)
	o1.apply(t)
	// A later step of the same journal updates the order.
	up := step("orders2", "ORDERS", "parts", "customers")
	up.Mode = plan.ModeUpsert
	p2 := testPlan(p.Steps[0], p.Steps[1], up)
	l := itemLine(2, "P3", "5")
	l.Replace = true
	f.Results["orders2"] = []transform.Result{rec("orders2", "ORDERS", "O1", 2, map[string]any{"ORDNAME": "SO1", "CUSTNAME": "C1", "DETAILS": "b"}, l)}
	o2 := env.opts(t, p2, f)
	o2.Journal = o1.Journal
	o2.complete(t, "apply")
	o := env.entities("ORDERS", "ORDNAME")["SO1"]
	got := lines(o, "ORDERITEMS_SUBFORM")
	if o["DETAILS"] != "b" || len(got) != 1 || got[0]["PARTNAME"] != "P3" {
		t.Fatalf("order %v lines %v", o["DETAILS"], got)
	}
}

func TestStopFinishesInFlight(t *testing.T) {
	t.Parallel()
	env := newSandbox(t, sandbox.Options{})
	stop := make(chan struct{})
	p := testPlan(step("customers", "CUSTOMERS"))
	f := &fakeRecords{Build: map[string]func(transform.Refs) []transform.Result{}}
	var rs []transform.Result
	for i := 0; i < 500; i++ {
		id := fmt.Sprintf("C%03d", i)
		rs = append(rs, rec("customers", "CUSTOMERS", id, i+2, map[string]any{"CUSTNAME": id, "CUSTDES": "n"}))
	}
	o := env.opts(t, p, &stopAfter{results: rs, n: 150, stop: stop})
	o.Stop = stop
	o.Concurrency = 1
	sum, err := runApply(context.Background(), o)
	if !errorsIs(err, ErrInterrupted) || !sum.Interrupted {
		t.Fatalf("%v %+v", err, sum)
	}
	n := len(env.sb.Snapshot()["CUSTOMERS"])
	if n == 0 || n == 500 || n%100 != 0 || stepOf(sum, "customers").Committed != n {
		t.Fatalf("committed %d on the server, summary %+v", n, stepOf(sum, "customers"))
	}
	_ = f
	o.Stop = nil
	o.records = &fakeRecords{Results: map[string][]transform.Result{"customers": rs}}
	sum, err = runApply(context.Background(), o)
	if err != nil || !sum.Complete || len(env.sb.Snapshot()["CUSTOMERS"]) != 500 {
		t.Fatalf("resume: %v %+v", err, sum)
	}
}

// stopAfter closes stop after n records were handed over (a Ctrl-C).
type stopAfter struct {
	results []transform.Result
	n       int
	stop    chan struct{}
}

func (s *stopAfter) Records(ctx context.Context, step string, open transform.Opener, refs transform.Refs, fn func(transform.Result) error) error {
	for i, r := range s.results {
		if i == s.n {
			close(s.stop)
		}
		if err := fn(r); err != nil {
			return err
		}
	}
	return nil
}

func TestPlanDryRun(t *testing.T) {
	t.Parallel()
	env := newSandbox(t, sandbox.Options{})
	parts := make([]string, 250)
	for i := range parts {
		parts[i] = "P1"
	}
	p, f := ordersPlan(orderWithLines("O1", 2, "C1", parts...), orderWithLines("O2", 3, "C1", "P1"))
	f.Results["customers"] = append(f.Results["customers"], transform.Result{Errors: []*transform.RowError{{Cell: "customers.csv:3", Field: "CUSTDES", Value: "x", Message: "longer than MaxLength 48"}}})
	o := env.opts(t, p, f)
	o.OutDir = filepath.Join(t.TempDir(), "batches")
	o.CallsPerMinute = 100
	sum, err := runDryRun(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	// 5 batches, the warm-ups apply's client makes before its first write
	// to each of the three forms (a read found none warm: the dry run has
	// none), and the orders' watermark read, which warms ORDERS.
	if sum.Requests != 5+2+1 || sum.Subrequests != 3+1+253 || sum.Transactions != 257 || env.client.Calls.Load() != 0 {
		t.Fatalf("%+v", sum)
	}
	if s := stepOf(sum, "orders"); s.Records != 2 || s.Children != 251 {
		t.Errorf("orders %+v", s)
	}
	if len(sum.Errors) != 1 || sum.Errors[0].Location != "customers.csv:3" || stepOf(sum, "customers").Errors != 1 {
		t.Errorf("errors %+v", sum.Errors)
	}
	if sum.Estimated != 4800e6 { // 8 calls at 100 a minute
		t.Errorf("estimate %v", sum.Estimated)
	}
	// A file per call the run makes: the 5 batches and the watermark's
	// read (the warm-ups the client adds are counted, not written).
	files, _ := os.ReadDir(o.OutDir)
	if len(files) != 6 {
		t.Fatalf("%d batch files", len(files))
	}
	b, _ := os.ReadFile(filepath.Join(o.OutDir, files[3].Name()))
	if !strings.Contains(string(b), `"dependsOn":["1"]`) || !strings.Contains(string(b), `"url":"$1/ORDERITEMS_SUBFORM"`) || strings.Contains(string(b), "demo") {
		t.Errorf("batch file: %.300s", b)
	}
	// Apply makes exactly the calls the dry run counted.
	o.OutDir = ""
	as, err := runApply(context.Background(), o)
	if err != nil || as.Requests != sum.Requests || as.Subrequests != sum.Subrequests {
		t.Fatalf("apply %v: %d/%d vs plan %d/%d", err, as.Requests, as.Subrequests, sum.Requests, sum.Subrequests)
	}
}

// An upsert run again with a new journal (the plan re-run, or loaded into a
// company that has the texts already) sends a text the entity holds
// neither appended a second time nor rewritten, and still appends one that
// is new; with the server's normalised read-back (a style block and a
// <p dir=rtl> wrapper) as well.
func TestUpsertTextHeldIsNotSentAgain(t *testing.T) {
	t.Parallel()
	for _, quirks := range []map[string]bool{nil, {sandbox.QuirkNormalisedTexts: true}} {
		env := newSandbox(t, sandbox.Options{Quirks: quirks})
		load := func(hash string, texts map[string]string, appendText bool) *Summary {
			t.Helper()
			up := step("customers", "CUSTOMERS")
			up.Mode = plan.ModeUpsert
			p := testPlan(up)
			p.Hash = hash
			var rs []transform.Result
			for i, c := range []string{"C1", "C2"} {
				rs = append(rs, rec("customers", "CUSTOMERS", c, i+2, map[string]any{"CUSTNAME": c, "CUSTDES": "Customer " + c},
					single("CUSTOMERSTEXT_SUBFORM", map[string]any{"TEXT": texts[c], "APPEND": appendText})))
			}
			sum := env.opts(t, p, &fakeRecords{Results: map[string][]transform.Result{"customers": rs}}).complete(t, "apply")
			return sum
		}
		text := func(c string) string {
			t.Helper()
			ent := env.entities("CUSTOMERS", "CUSTNAME")[c]
			tx, _ := ent["CUSTOMERSTEXT_SUBFORM"].(map[string]any)
			return fmt.Sprint(tx["TEXT"])
		}
		load("h1", map[string]string{"C1": "first note", "C2": "second note"}, true)
		sum := load("h2", map[string]string{"C1": "first note", "C2": "second note"}, true)
		if text("C1") != "first note" || text("C2") != "second note" {
			t.Fatalf("quirks %v: texts after a second run: %q, %q", quirks, text("C1"), text("C2"))
		}
		if sum.Requests != 1 {
			t.Errorf("quirks %v: a second run of held texts made %d calls, want the one read", quirks, sum.Requests)
		}
		load("h3", map[string]string{"C1": "first note", "C2": "another note"}, true)
		if text("C1") != "first note" || text("C2") != "second note\nanother note" {
			t.Fatalf("quirks %v: texts after a new note: %q, %q", quirks, text("C1"), text("C2"))
		}
		// Replacing (APPEND false): an equal text is not rewritten, a
		// different one replaces.
		sum = load("h4", map[string]string{"C1": "first note", "C2": "replaced"}, false)
		if text("C1") != "first note" || text("C2") != "replaced" || sum.Subrequests != 1+1 {
			t.Fatalf("quirks %v: replacing: %q, %q, %d sub-requests", quirks, text("C1"), text("C2"), sum.Subrequests)
		}
	}
}

// A re-run of an upsert with lines: append does not append a
// line the order holds already (matched on every field it writes, each
// held line standing for one line of the plan); the diff says so, and
// shows each line it will append.
func TestUpsertAppendsOnlyLinesNotHeld(t *testing.T) {
	t.Parallel()
	for _, quirks := range []map[string]bool{nil, sandbox.AllQuirks()} {
		env := newSandbox(t, sandbox.Options{Quirks: quirks})
		seed, sf := ordersPlan()
		env.opts(t, seed, sf).apply(t)
		order := func(parts ...string) []transform.Result {
			var kids []*transform.Child
			for i, p := range parts {
				kids = append(kids, line("ORDERITEMS_SUBFORM", 100+i, map[string]any{"PARTNAME": p, "TQUANT": dec("2.0")}))
			}
			return []transform.Result{rec("orders", "ORDERS", "O1", 2, map[string]any{"ORDNAME": "SO1", "CUSTNAME": "C1", "DETAILS": "first"}, kids...)}
		}
		run := func(hash string, parts ...string) (*Summary, *DiffResult) {
			t.Helper()
			up := step("orders", "ORDERS")
			up.Mode = plan.ModeUpsert
			p := testPlan(up)
			p.Hash = hash
			o := env.opts(t, p, &fakeRecords{Results: map[string][]transform.Result{"orders": order(parts...)}})
			d, err := runDiff(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			o = env.opts(t, p, &fakeRecords{Results: map[string][]transform.Result{"orders": order(parts...)}})
			sum := o.complete(t, "apply")
			return sum, d
		}
		run("h1", "P1", "P2", "P2")
		sum, d := run("h2", "P1", "P2", "P2")
		if parts := linePartsOf(env.entities("ORDERS", "ORDNAME")["SO1"]); parts != "P1,P2,P2" {
			t.Fatalf("quirks %v: after a second run SO1 holds %s", quirks, parts)
		}
		if d.Steps[0].Unchanged != 1 || len(d.Records[0].Lines) != 0 || sum.Subrequests != 1 { // the read alone
			t.Errorf("quirks %v: the second run: diff %+v, %d sub-requests", quirks, d.Records, sum.Subrequests)
		}
		sum, d = run("h3", "P1", "P2", "P2", "P2", "P3")
		if parts := linePartsOf(env.entities("ORDERS", "ORDNAME")["SO1"]); parts != "P1,P2,P2,P2,P3" {
			t.Fatalf("quirks %v: after new lines SO1 holds %s", quirks, parts)
		}
		if d.Steps[0].Update != 1 || len(d.Records[0].Lines) != 2 || d.Records[0].Lines[0].Location != "lines.csv:103" ||
			string(d.Records[0].Lines[1].Fields["PARTNAME"]) != `"P3"` || sum.Subrequests != 1+2 {
			t.Errorf("quirks %v: new lines: diff %+v, %d sub-requests", quirks, d.Records, sum.Subrequests)
		}
	}
}

// An upsert's PATCH whose answer is lost is decided on resume by reading
// the entity back: held as sent it was applied, held as before it was not
// and is sent again, held as neither it stays in doubt.
func TestUpsertLostPatchReconciled(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		meanwhile string // BARCODE set behind the run after the lost answer; "" for none
		want      string // BARCODE the target holds after the resume
		inDoubt   int
	}{
		{"applied", "", "999", 0},
		{"not applied", "111", "999", 0},
		{"neither", "555", "555", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			env := newSandbox(t, sandbox.Options{})
			o := env.barcodeRun(t, plan.ModeUpsert)
			env.client.FailNext.Store(true) // the PATCH commits, its answer is lost
			if _, err := runApply(context.Background(), o); !errors.Is(err, ErrInDoubt) {
				t.Fatalf("first apply: %v, want ErrInDoubt", err)
			}
			if tc.meanwhile != "" {
				env.behind(t, odata.BatchRequest{Method: "PATCH", URL: "LOGPART('P1')", Body: []byte(`{"BARCODE":"` + tc.meanwhile + `"}`)})
			}
			sum, err := runApply(context.Background(), o)
			if sum == nil || stepOf(sum, "parts").InDoubt != tc.inDoubt || tc.inDoubt == 0 && (err != nil || !sum.Complete) {
				t.Fatalf("resume: %v %+v", err, sum)
			}
			if got := env.entities("LOGPART", "PARTNAME")["P1"]["BARCODE"]; got != tc.want {
				t.Errorf("P1 BARCODE %v after the resume, want %s", got, tc.want)
			}
		})
	}
}
