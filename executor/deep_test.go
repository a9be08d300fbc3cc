package executor

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/migrate-tool/migrate/journal"
	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/plan"
	"github.com/migrate-tool/migrate/sandbox"
	"github.com/migrate-tool/migrate/transform"
)

func TestDeepInsert(t *testing.T) {
	t.Parallel()
	env := newSandbox(t, sandbox.Options{})
	p, f := ordersPlan(orderWithLines("O1", 2, "C1", "P1", "P2"), orderWithLines("O2", 3, "C1", "P3"))
	p.Steps[2].DeepInsert = true
	sum := env.opts(t, p, f).complete(t, "apply")
	orders := env.entities("ORDERS", "DETAILS")
	if len(lines(orders["O1"], "ORDERITEMS_SUBFORM")) != 2 || len(lines(orders["O2"], "ORDERITEMS_SUBFORM")) != 1 {
		t.Fatalf("orders %v", orders)
	}
	// One sub-request per order, lines inside its body.
	if sum.Subrequests != 3+1+2 {
		t.Errorf("subrequests %d", sum.Subrequests)
	}
}

// TestDeepInsertPacksAHundredDocuments: 250 orders of five lines go in
// three calls (100, 100, 50 documents: the limit of docs/service.md, Limits
// counts sub-requests),
// every line stored once, each line's key (KLINE) in the created keys.
func TestDeepInsertPacksAHundredDocuments(t *testing.T) {
	t.Parallel()
	env := newSandbox(t, sandbox.Options{})
	var orders []transform.Result
	for i := 0; i < 250; i++ {
		orders = append(orders, orderWithLines(fmt.Sprintf("O%03d", i), i+2, "C1", "P1", "P2", "P3", "P4", "P5"))
	}
	p, f := deepOrders(orders...)
	o := env.opts(t, p, f)
	before := env.sb.Stats()
	sum := o.complete(t, "apply")
	got := env.entities("ORDERS", "DETAILS")
	if len(got) != 250 {
		t.Fatalf("%d orders", len(got))
	}
	for id, ent := range got {
		if n := len(lines(ent, "ORDERITEMS_SUBFORM")); n != 5 {
			t.Fatalf("%s has %d lines", id, n)
		}
	}
	st := env.sb.Stats()
	// parts and customers: one call each; the orders' watermark read;
	// orders: 100 + 100 + 50 documents; and before the first write to
	// parts and customers, their warm-up (cold forms: the watermark read
	// found ORDERS warm).
	if calls := st.Batches - before.Batches; calls != 6+2 {
		t.Errorf("%d calls, want 8", calls)
	}
	if sum.Subrequests != 5+1+250 || sum.Transactions != 5+1+250*6 {
		t.Errorf("subrequests %d transactions %d", sum.Subrequests, sum.Transactions)
	}
	if s := sum.Steps[2]; s.Children != 1250 {
		t.Errorf("orders step: %d lines counted, want 1250", s.Children)
	}
	checkJournalKeys(t, env, o.Journal)
}

// TestDeepInsertFailedLine: the server keeps what a deep insert stored
// before the line it refused (docs/service.md, Batch, no rollback). The
// engine reads the document back and sends the missing lines on their own:
// the refused line fails at its own cell, the good ones are stored once,
// nothing kept is sent again; corrected, --retry-failed sends only that line.
func TestDeepInsertFailedLine(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		order transform.Result
	}{
		{"server-numbered", orderWithLines("O1", 2, "C1", "P1", "X9", "P2")},
		{"keyed", keyed(orderWithLines("O1", 2, "C1", "P1", "X9", "P2"), "SO-1")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			env := newSandbox(t, sandbox.Options{})
			p, f := deepOrders(tc.order, orderWithLines("O2", 3, "C1", "P3"))
			o := env.opts(t, p, f)
			sum := o.apply(t)
			got := env.entities("ORDERS", "DETAILS")
			if len(env.sb.Snapshot()["ORDERS"]) != 2 {
				t.Fatalf("orders %v", env.sb.Snapshot()["ORDERS"])
			}
			if parts := linePartsOf(got["O1"]); parts != "P1,P2" {
				t.Fatalf("O1 holds lines %s, want P1,P2 once each", parts)
			}
			if len(sum.Errors) != 1 {
				t.Fatalf("errors %+v", sum.Errors)
			}
			e := sum.Errors[0]
			if e.Location != "lines.csv:2001" || e.Field != "ORDERITEMS_SUBFORM" || !strings.Contains(e.Message, "X9") {
				t.Errorf("error not pinned to the refused line: %+v", e)
			}
			if !strings.Contains(e.Partly, "created with 2 of 3 lines") {
				t.Errorf("partly %q", e.Partly)
			}
			// Corrected (the part now exists): the order is read back and
			// only the missing line goes.
			pp, pf := partsPlan(plan.ModeInsert, part("X9", 2, "9"))
			env.opts(t, pp, pf).apply(t)
			before := env.sb.Stats()
			o.RetryFailed = true
			o.complete(t, "apply")
			if d := env.sb.Stats().Subrequests - before.Subrequests; d != 2 {
				t.Errorf("the retry sent %d sub-requests, want the read and the line", d)
			}
			if parts := linePartsOf(env.entities("ORDERS", "DETAILS")["O1"]); parts != "P1,P2,X9" {
				t.Fatalf("after the retry O1 holds %s", parts)
			}
			checkJournalKeys(t, env, o.Journal)
		})
	}
}

// TestDeepInsertFailedHeader: a header the server refuses stores nothing;
// the record fails at its own row and no line is sent on its own.
func TestDeepInsertFailedHeader(t *testing.T) {
	t.Parallel()
	env := newSandbox(t, sandbox.Options{})
	p, f := deepOrders(orderWithLines("O1", 2, "C404", "P1", "P2"))
	before := env.sb.Stats()
	sum := env.opts(t, p, f).apply(t)
	if n := len(env.sb.Snapshot()["ORDERS"]); n != 0 {
		t.Fatalf("%d orders stored", n)
	}
	if len(sum.Errors) != 1 || sum.Errors[0].Location != "orders.csv:2" || !strings.Contains(sum.Errors[0].Message, "C404") || sum.Errors[0].Partly != "" {
		t.Fatalf("errors %+v", sum.Errors)
	}
	// parts, customers, the watermark read, the order, the one row read
	// to learn which fields the server returns, the lookup by its fields
	// that found nothing kept and the two with one of them left out each
	// (a document that matched all but one would leave it in doubt); the
	// warm-ups of parts and customers (the watermark read found ORDERS
	// warm).
	if d := env.sb.Stats().Subrequests - before.Subrequests; d != 5+1+1+1+1+1+2+2 {
		t.Errorf("%d sub-requests", d)
	}
	// Calls: parts and customers a batch each, their warm-ups, the
	// watermark's read, the order's, the one row read, and one call for
	// the lookup and its two looser ones together (the server rations
	// calls, not the reads inside one).
	if d := env.sb.Stats().Calls - before.Calls; d != 8 {
		t.Errorf("%d calls, want 8", d)
	}
}

// TestDeepInsertInDoubtResumes: the answer of a batch of deep inserts is
// lost after the server committed it; the next apply reconciles the
// orders and sends nothing again: every order once, every line once.
func TestDeepInsertInDoubtResumes(t *testing.T) {
	t.Parallel()
	env := newSandbox(t, sandbox.Options{})
	o, _ := deepOrdersInDoubt(t, env, sandbox.FaultDropAfterCommit, "P1", "P2", "P3") // the first batch's answer is lost
	before := env.sb.Stats()
	sum := o.complete(t, "apply")
	// One call reads back the three orders reconciled, one sends the rest;
	// the calls counted are the calls the server saw (the watermark's read
	// of the new run among them), and so are the sub-requests, the
	// watermark's read aside: reconciliation's reads, the read-backs and
	// the rest.
	seen := env.sb.Stats()
	if sum.Subrequests != int(seen.Subrequests-before.Subrequests)-1 || sum.Requests != int(seen.Calls-before.Calls) {
		t.Errorf("the resume made %d calls with %d sub-requests, the server saw %d calls with %d sub-requests (a watermark's read among them)",
			sum.Requests, sum.Subrequests, seen.Calls-before.Calls, seen.Subrequests-before.Subrequests)
	}
	if n := len(env.sb.Snapshot()["ORDERS"]); n != 5 {
		t.Fatalf("%d orders", n)
	}
	for id, ent := range env.entities("ORDERS", "DETAILS") {
		if parts := linePartsOf(ent); parts != "P1,P2,P3" {
			t.Errorf("%s holds %s", id, parts)
		}
	}
	checkJournalKeys(t, env, o.Journal)
}

// deepOrdersInDoubt loads parts and customers into env, then five orders
// with lines of parts, deep inserts three a batch, the first batch's call
// lost to fault (sandbox.DropNextWrites): apply stops in doubt. It gives
// the run, to resume, and its orders.
func deepOrdersInDoubt(t *testing.T, env *sandboxEnv, fault string, parts ...string) (testRun, []transform.Result) {
	t.Helper()
	var orders []transform.Result
	for i := range 5 {
		orders = append(orders, orderWithLines(fmt.Sprintf("O%d", i), i+2, "C1", parts...))
	}
	p, f := deepOrders()
	if _, err := runApply(context.Background(), env.opts(t, p, f)); err != nil { // parts and customers
		t.Fatal(err)
	}
	st := step("orders", "ORDERS")
	st.DeepInsert = true
	o := env.opts(t, testPlan(st), &fakeRecords{Results: map[string][]transform.Result{"orders": orders}})
	o.BatchSize, o.Concurrency = 3, 1
	env.sb.DropNextWrites(1, fault)
	if _, err := runApply(context.Background(), o); !errors.Is(err, ErrInDoubt) {
		t.Fatalf("want in doubt, got %v", err)
	}
	return o, orders
}

// TestDeepInsertUpsertExisting: an upsert creates an absent document as a
// deep insert, and appends to an existing one line by line (no deep
// insert into what exists).
func TestDeepInsertUpsertExisting(t *testing.T) {
	t.Parallel()
	env := newSandbox(t, sandbox.Options{})
	p, f := ordersPlan(keyed(orderWithLines("O1", 2, "C1", "P1"), "SO-1"))
	env.opts(t, p, f).apply(t)
	up := step("orders", "ORDERS")
	up.Mode, up.DeepInsert = plan.ModeUpsert, true
	f2 := &fakeRecords{Results: map[string][]transform.Result{"orders": {
		keyed(orderWithLines("O1", 2, "C1", "P2", "P3"), "SO-1"),
		keyed(orderWithLines("O2", 3, "C1", "P1", "P2"), "SO-2"),
	}}}
	o := env.opts(t, testPlan(up), f2)
	o.complete(t, "apply")
	got := env.entities("ORDERS", "DETAILS")
	if a, b := linePartsOf(got["O1"]), linePartsOf(got["O2"]); a != "P1,P2,P3" || b != "P1,P2" {
		t.Fatalf("O1 %s, O2 %s", a, b)
	}
	st, _ := journal.Load(o.Journal)
	if r := st.Record("orders", "O1"); r == nil || r.Subs["0"] == nil || r.Subs["1"] == nil {
		t.Errorf("the existing order's lines were not sent one by one: %+v", r)
	}
	if r := st.Record("orders", "O2"); r == nil || len(r.Subs) != 1 || r.Carried != 2 {
		t.Errorf("the new order was not one deep insert: %+v", r)
	}
}

// TestDeepInsertFaults: deep inserts, some with a line the server refuses,
// through the real client while the sandbox drops connections before and
// after committing and answers 500s. Applied again until nothing is in
// doubt, every order is there once, every good line once, and each refused
// line fails at its own cell.
func TestDeepInsertFaults(t *testing.T) {
	t.Parallel()
	for seed := int64(11); seed < 15; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			t.Parallel()
			deepInsertFaults(t, seed)
		})
	}
}

func deepInsertFaults(t *testing.T, seed int64) {
	env, c := faultySandbox(t, seed)
	var orders []transform.Result
	want := map[string]string{}
	bad := 0
	for i := 0; i < 60; i++ {
		id := fmt.Sprintf("O%02d", i)
		parts := []string{"P1", "P2", "P3"}
		want[id] = "P1,P2,P3"
		if i%7 == 3 {
			parts[1], want[id] = "X9", "P1,P3"
			bad++
		}
		orders = append(orders, orderWithLines(id, i+2, "C1", parts...))
	}
	p, f := deepOrders(orders...)
	sum, runs, err := resumeUntil(t, throughFaults(env, t, c, p, f), 40, nil)
	if err != nil {
		t.Fatalf("still %v after %d runs", err, runs)
	}
	for id, ent := range env.ordersOnce(t, 60) {
		if parts := linePartsOf(ent); parts != want[id] {
			t.Errorf("%s holds %s, want %s", id, parts, want[id])
		}
	}
	if s := sum.Steps[2]; s.Failed != bad || s.Committed != 60-bad {
		t.Errorf("orders: %d committed, %d failed; want %d failed", s.Committed, s.Failed, bad)
	}
	for _, e := range sum.Errors {
		if e.Field != "ORDERITEMS_SUBFORM" || !strings.HasSuffix(e.Location, "001") || !strings.Contains(e.Message, "X9") {
			t.Errorf("error not pinned to the refused line: %+v", e)
		}
	}
}

// TestDeepInsertBeforeParentChildAnswers: before 21.1 the answer to a deep
// insert holds the document without its lines (docs/service.md, Deep insert).
// The document is still whole; a refused line is still read back and
// completed.
func TestDeepInsertBeforeParentChildAnswers(t *testing.T) {
	t.Parallel()
	env := newSandbox(t, sandbox.Options{SystemVersion: "21.0"})
	p, f := deepOrders(orderWithLines("O1", 2, "C1", "P1", "P2"), orderWithLines("O2", 3, "C1", "P3", "X9", "P4"))
	sum := env.opts(t, p, f).apply(t)
	got := env.entities("ORDERS", "DETAILS")
	if a, b := linePartsOf(got["O1"]), linePartsOf(got["O2"]); a != "P1,P2" || b != "P3,P4" {
		t.Fatalf("O1 %s, O2 %s", a, b)
	}
	if s := sum.Steps[2]; s.Committed != 1 || s.Failed != 1 || s.Children != 4 {
		t.Errorf("orders %+v", s)
	}
	if len(sum.Errors) != 1 || sum.Errors[0].Location != "lines.csv:3001" {
		t.Errorf("errors %+v", sum.Errors)
	}
}

// TestLinesMatch: what the journal keeps of a deep insert's lines reads
// back as JSON, by sub-form, in line order, texts left out.
func TestLinesMatch(t *testing.T) {
	t.Parallel()
	root := &op{}
	for i, c := range []struct {
		nav    string
		single bool
		fields map[string]any
	}{
		{"A_SUBFORM", false, map[string]any{"PARTNAME": "P\"1", "TQUANT": dec("2.5")}},
		{"T_SUBFORM", true, map[string]any{"TEXT": "x"}},
		{"B_SUBFORM", false, map[string]any{}},
		{"A_SUBFORM", false, map[string]any{"PARTNAME": "P2"}},
	} {
		root.kids = append(root.kids, &op{path: fmt.Sprint(i), nav: c.nav, single: c.single, fields: c.fields, carried: true})
	}
	got := (&journal.SubState{Sub: journal.Sub{Lines: root.linesMatch()}}).CarriedLines()
	want := map[string][]string{"A_SUBFORM": {`{"PARTNAME":"P\"1","TQUANT":2.5}`, `{"PARTNAME":"P2"}`}, "B_SUBFORM": {`{}`}}
	if len(got) != len(want) {
		t.Fatalf("%s", root.linesMatch())
	}
	for nav, l := range want {
		if len(got[nav]) != len(l) {
			t.Fatalf("%s: %s", nav, root.linesMatch())
		}
		for i := range l {
			if string(got[nav][i]) != l[i] {
				t.Errorf("%s %d: %s, want %s", nav, i, got[nav][i], l[i])
			}
		}
	}
	if (&op{}).linesMatch() != nil {
		t.Error("a document without lines journals lines")
	}
}

// TestDeepAnswerDecodedForKeys: the answer to a deep insert carries every
// field of the document and of each line back; outcome decodes what the
// engine keeps of it (the document's key, the written fields filled
// compares, each carried line's key and written fields, a line's own
// lines), and nothing else, so the keys and Filled are what the whole
// answer gives.
func TestDeepAnswerDecodedForKeys(t *testing.T) {
	t.Parallel()
	md := sandbox.DemoMetadata()
	orders := md.EntitySet("ORDERS").Type
	linesType := md.Type(orders.Navigation("ORDERITEMS_SUBFORM").Type)
	body := `{"@odata.context":"x","ORDNAME":"SO1","CUSTNAME":"C1","CDES":"Customer","ORD":7,"DETAILS":"d",` +
		`"ORDERITEMS_SUBFORM":[{"PARTNAME":"P1","PDES":"part","TQUANT":1,"PRICE":null,"KLINE":1},` +
		`{"PARTNAME":"P2","PDES":"part","TQUANT":2,"KLINE":2,"X_SUBFORM":[{"KLINE":9}]}],"OTHER_SUBFORM":[{"A":1}]}`
	tests := []struct {
		name       string
		matched    json.RawMessage // the fields filled compares, as emit sets them
		wantFields []string        // of the header, as decoded
		filled     string
	}{
		{"keys only", nil, []string{"ORDERITEMS_SUBFORM", "ORDNAME"}, ""},
		{"filled", json.RawMessage(`{"CUSTNAME":"c1","DETAILS":"d"}`), []string{"CUSTNAME", "DETAILS", "ORDERITEMS_SUBFORM", "ORDNAME"}, `{"CUSTNAME":"C1"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ord := &op{kind: journal.OpCreate, typ: orders, fields: map[string]any{"ORDNAME": "SO1", "CUSTNAME": "c1", "DETAILS": "d"}, matched: tt.matched}
			for i, part := range []string{"P1", "P2"} {
				l := &op{parent: ord, nav: "ORDERITEMS_SUBFORM", carried: true, kind: journal.OpCreate, typ: linesType, fields: map[string]any{"PARTNAME": part}}
				if i == 1 {
					l.kids = []*op{{parent: l, nav: "X_SUBFORM", carried: true, kind: journal.OpCreate, typ: linesType}}
				}
				ord.kids = append(ord.kids, l)
			}
			sr := &stepRun{entity: "ORDERS"}
			resp := &odata.BatchResponse{Status: 201, Body: json.RawMessage(body)}
			ent := sr.outcome(ord, resp)
			var fields []string
			for f := range ent {
				fields = append(fields, f)
			}
			slices.Sort(fields)
			if !slices.Equal(fields, tt.wantFields) {
				t.Errorf("decoded %v, want %v", fields, tt.wantFields)
			}
			if l := ent["ORDERITEMS_SUBFORM"].([]any)[0].(map[string]any); len(l) != 2 || l["KLINE"] == nil || l["PARTNAME"] == nil {
				t.Errorf("a line decoded as %v, want its KLINE and the field it wrote, PARTNAME, alone", l)
			}
			deep := ord.kids[1].kids[0]
			if ord.key != "'SO1'" || ord.kids[0].key != "1" || ord.kids[1].key != "2" || deep.key != "9" || !deep.done {
				t.Errorf("keys %q %q %q %q", ord.key, ord.kids[0].key, ord.kids[1].key, deep.key)
			}
			if got, _ := ord.filled(ent, resp.Body); string(got) != tt.filled {
				t.Errorf("filled %s, want %s", got, tt.filled)
			}
		})
	}
}

// TestDeepInsertFailedClaimsLookAlikes: a failed deep insert of a
// document the server numbers is looked up by its fields; a look-alike
// document that another record of the run made (in an earlier batch, so
// known to the journal, or in the same batch, known from its answer) is
// that record's, and the failed one's own document is the one left: its
// missing lines are sent to it alone.
func TestDeepInsertFailedClaimsLookAlikes(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name      string
		batchSize int
	}{
		{"claimed by the journal", 1},
		{"claimed in the same batch", 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			env := newSandbox(t, sandbox.Options{})
			a, b := orderWithLines("O1", 2, "C1", "P1", "P2"), orderWithLines("O2", 3, "C1", "P1", "X9", "P3")
			b.Record.Fields["DETAILS"] = "O1" // the same header as O1's
			p, f := deepOrders(a, b)
			o := env.opts(t, p, f)
			o.BatchSize, o.Concurrency = tt.batchSize, 1
			sum := o.apply(t)
			var parts []string
			for _, e := range env.sb.Snapshot()["ORDERS"] {
				parts = append(parts, linePartsOf(e))
			}
			slices.Sort(parts)
			if strings.Join(parts, " ") != "P1,P2 P1,P3" {
				t.Fatalf("orders hold lines %v, want P1,P2 and P1,P3", parts)
			}
			if sum.Steps[2].Committed != 1 || sum.Steps[2].Failed != 1 || len(sum.Undecided) != 0 {
				t.Fatalf("orders step %+v, undecided %v", sum.Steps[2], sum.Undecided)
			}
			if e := sum.Errors[0]; !strings.Contains(e.Message, "X9") || !strings.Contains(e.Partly, "created with 2 of 3 lines") {
				t.Errorf("error %+v", e)
			}
		})
	}
}

// gateBadBatch holds the batch that writes part X9 until another write
// batch has reached the server, and holds that one until the server is
// asked a read: the refused deep insert is answered while a batch of the
// same step is in flight, and that batch lands only after the refused
// one's document was looked up (or, if it never is, after hold).
func gateBadBatch(h http.Handler, hold time.Duration) http.Handler {
	var mu sync.Mutex
	bad, other, looked := false, make(chan struct{}), make(chan struct{})
	var otherOnce, lookedOnce sync.Once
	wait := func(c chan struct{}) {
		select {
		case <-c:
		case <-time.After(hold): // only if the lookup never comes
		}
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, "$batch") {
			h.ServeHTTP(w, r)
			return
		}
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		write := bytes.Contains(body, []byte(`"POST"`))
		mu.Lock()
		seenBad := bad
		if write && bytes.Contains(body, []byte("X9")) {
			bad = true
		}
		mu.Unlock()
		switch {
		case write && bytes.Contains(body, []byte("X9")):
			wait(other)
		case write && seenBad:
			otherOnce.Do(func() { close(other) })
			wait(looked)
		case !write && seenBad:
			lookedOnce.Do(func() { close(looked) })
		}
		h.ServeHTTP(w, r)
	})
}

// One ordinary bad line in a server-numbered deep insert,
// refused while another batch of the step is in flight, is settled at
// once when the documents tell each other apart (here by DETAILS): the
// order keeps its good lines, the bad one fails at its cell, and the run
// goes on to the end. (Documents that look alike stay in doubt for the
// next apply, as before: TestLookAlikeInFlight.)
func TestDeepInsertFailedLineWithBatchesInFlight(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		hold time.Duration
	}{
		{name: "documents told apart", hold: 10 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			env := newSandboxBehind(t, sandbox.Options{}, func(sb *sandbox.Server) http.Handler { return gateBadBatch(sb, tc.hold) })
			var orders []transform.Result
			for i := 1; i <= 6; i++ {
				parts := []string{"P1", "P2"}
				if i == 3 {
					parts = []string{"P1", "X9", "P2"}
				}
				o := orderWithLines(fmt.Sprintf("O%d", i), i+1, "C1", parts...)
				orders = append(orders, o)
			}
			p, f := deepOrders(orders...)
			o := env.opts(t, p, f)
			o.Concurrency, o.BatchSize = 2, 1
			sum, err := runApply(context.Background(), o)
			if err != nil {
				t.Fatalf("%v %+v", err, sum)
			}
			snap := env.sb.Snapshot()["ORDERS"]
			if len(snap) != 6 {
				t.Fatalf("%d orders", len(snap))
			}
			if parts := linePartsOf(env.entities("ORDERS", "DETAILS")["O3"]); parts != "P1,P2" {
				t.Errorf("O3 holds %s, want P1,P2", parts)
			}
			if len(sum.Errors) != 1 || !strings.Contains(sum.Errors[0].Message, "X9") {
				t.Errorf("errors %+v", sum.Errors)
			}
		})
	}
}

// A refused server-numbered document is looked up by its fields only when
// no document of another batch in flight looks like it: the same values
// of what documents are matched on, text without case or outer spaces,
// numbers by value, any date like any other.
func TestLookAlikeInFlight(t *testing.T) {
	t.Parallel()
	p := testPlan(step("orders", "ORDERS"))
	env := newSandbox(t, sandbox.Options{}) // its ORDERS are empty: every field is read
	r := &runner{ctx: context.Background(), md: env.md, opts: &runOptions{Prepared: Prepared{Plan: p}, Options: Options{Client: env.client}},
		svc: &target{}, hook: NopHook{}}
	r.rd = r.newReader()
	r.setState(&journal.State{})
	sr := &stepRun{r: r, step: p.Steps[0], entity: "ORDERS"}
	doc := func(id string, fields map[string]any) *op {
		return &op{work: &work{id: id}, kind: journal.OpCreate, fields: fields}
	}
	mine := doc("O3", map[string]any{"CUSTNAME": "C1", "DETAILS": "order 3", "QPRICE": dec("10.50")})
	for _, tc := range []struct {
		name  string
		other *op
		same  int // the other's batch: 1, mine's own
		want  string
	}{
		{name: "told apart", other: doc("O4", map[string]any{"CUSTNAME": "C1", "DETAILS": "order 4", "QPRICE": dec("10.50")})},
		{name: "in my own batch", other: doc("O4", map[string]any{"CUSTNAME": "C1", "DETAILS": "order 3", "QPRICE": dec("10.50")}), same: 1},
		{name: "alike", other: doc("O4", map[string]any{"CUSTNAME": "c1 ", "DETAILS": "Order 3", "QPRICE": dec("10.5")}),
			want: "record O4, in flight at the same time, has a document that looks like it (the same CUSTNAME, DETAILS, QPRICE)"},
		{name: "nothing to tell it by", other: doc("O4", map[string]any{}),
			want: "record O4, in flight at the same time, has a document that looks like it"},
	} {
		sr.flying = map[*op]int{mine: 1, tc.other: 2}
		if tc.same == 1 {
			sr.flying[tc.other] = 1
		}
		if got := sr.lookAlikeInFlight(mine, 1); !strings.HasPrefix(got, tc.want) || (tc.want == "") != (got == "") {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
