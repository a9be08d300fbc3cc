package executor

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/migrate-tool/migrate/journal"
	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/plan"
	"github.com/migrate-tool/migrate/reconcile"
	"github.com/migrate-tool/migrate/sandbox"
	"github.com/migrate-tool/migrate/transform"
)

// loseWrites sends every batch that writes and loses its answer, as a
// connection that drops after the commit. The answers are held until
// batches write batches were sent, so that that many go in doubt at once
// (a run stops sending after its first batch in doubt).
type loseWrites struct {
	Client
	batches int
	mu      sync.Mutex
	sent    int
	all     chan struct{}
}

func (c *loseWrites) Batch(ctx context.Context, reqs []odata.BatchRequest, opts odata.BatchOptions) ([]odata.BatchResponse, error) {
	if !writes(reqs) {
		return c.Client.Batch(ctx, reqs, opts)
	}
	if _, err := c.Client.Batch(ctx, reqs, opts); err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.sent++; c.sent == c.batches {
		close(c.all)
	}
	c.mu.Unlock()
	select {
	case <-c.all:
	case <-ctx.Done():
	}
	return nil, &odata.InDoubtError{Op: "POST $batch", Err: errors.New("connection reset after the commit (simulated)")}
}

// callLog counts the $batch calls and the GETs in each.
type callLog struct {
	Client
	mu    sync.Mutex
	calls [][]string // each call's URLs
}

func (c *callLog) Batch(ctx context.Context, reqs []odata.BatchRequest, opts odata.BatchOptions) ([]odata.BatchResponse, error) {
	urls := make([]string, len(reqs))
	for i, r := range reqs {
		urls[i] = r.Method + " " + r.URL
	}
	c.mu.Lock()
	c.calls = append(c.calls, urls)
	c.mu.Unlock()
	return c.Client.Batch(ctx, reqs, opts)
}

// oneRow counts the calls that only read one row of a set (GET
// SET?$top=1): learning which fields the set returns, warming a cold form,
// or asking again what a cold form denied.
func (c *callLog) oneRow() int {
	n := 0
	for _, call := range c.calls {
		only := len(call) > 0
		for _, u := range call {
			only = only && strings.HasSuffix(u, "?$top=1")
		}
		if only {
			n++
		}
	}
	return n
}

// TestReconcileReadsBatched: reads go many to a call: 75 server-numbered
// orders, each with two lines and an appended text, all written and every
// answer lost. Settling them took 225 calls of one GET each (the order by its
// fields, its lines, its text); the reads go up to 100 to a call: one call
// for the orders, two for their 150 lines and texts, plus the read of one
// order (which fields ORDERS returns), and on a server whose forms are cold
// its warm-up and second try. Every order, line and text ends on the server
// once.
func TestReconcileReadsBatched(t *testing.T) {
	t.Parallel()
	const n = 75
	for _, tc := range []struct {
		name   string
		opts   sandbox.Options
		oneRow int // calls reading one row, at most
	}{
		{"spec", sandbox.Options{}, 1},
		{"every quirk, 21.0", sandbox.Options{SystemVersion: "21.0", Quirks: sandbox.AllQuirks()}, 3},
		{"every quirk, 25.1", sandbox.Options{Quirks: sandbox.AllQuirks()}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			env := newSandbox(t, tc.opts)
			var orders []transform.Result
			for i := range n {
				o := orderWithLines(fmt.Sprintf("O%02d", i), i+2, "C1", "P1", "P2")
				o.Record.Children = append(o.Record.Children, single("ORDERSTEXT_SUBFORM", map[string]any{"TEXT": fmt.Sprintf("Order %d. <br> Deliver", i), "APPEND": true}))
				orders = append(orders, o)
			}
			p, f := ordersPlan(orders...)
			o := loadPartsAndCustomers(t, env, p, f)
			// 75 orders of 4 sub-requests are 3 batches, sent at once.
			o.Client = &loseWrites{Client: env.client, batches: 3, all: make(chan struct{})}
			o.Concurrency = 3
			if _, err := runApply(context.Background(), o); !errors.Is(err, ErrInDoubt) {
				t.Fatalf("first apply: %v, want in doubt", err)
			}
			st := loadJournal(t, o.Journal)
			if c := st.Counts("orders"); c.InDoubt != n {
				t.Fatalf("after the lost answers: %+v, want %d orders in doubt", c, n)
			}

			// migrate resolve's list reads the candidates as reconciliation does.
			listed := &callLog{Client: env.client}
			var creates []*journal.SubState
			for _, s := range st.InDoubtSubs() {
				if s.Path == "" && s.Op == journal.OpCreate && s.Key == "" {
					creates = append(creates, s)
				}
			}
			found, err := reconcile.Candidates(context.Background(), st, creates, reconcile.Options{Client: listed, Metadata: env.md})
			if err != nil || len(found) != n {
				t.Fatalf("Candidates: %d records, %v", len(found), err)
			}
			for i, f := range found {
				if len(f.Candidates) != 1 {
					t.Errorf("%s: %d candidates (%s), want its own order", creates[i].Rec, len(f.Candidates), f.Why)
				}
			}
			if reads := len(listed.calls) - listed.oneRow(); reads > 1 || listed.oneRow() > tc.oneRow {
				t.Errorf("listing %d orders in doubt took %d calls (%d of them reading one row), want 1 (+%d)", n, len(listed.calls), listed.oneRow(), tc.oneRow)
			}

			log := &callLog{Client: env.client}
			o.Client = log
			sum, err := runApply(context.Background(), o)
			if err != nil || !sum.Complete || len(sum.Undecided) > 0 {
				t.Fatalf("resume: %v %+v %q", err, sum, sum.Undecided)
			}
			if reads := len(log.calls) - log.oneRow(); reads > 3 || log.oneRow() > tc.oneRow {
				t.Errorf("settling %d orders took %d calls (%d of them reading one row), want at most 3 (+%d):", n, len(log.calls), log.oneRow(), tc.oneRow)
				for _, c := range log.calls {
					t.Logf("%d GETs: %.100s", len(c), strings.Join(c, " "))
				}
			}
			for _, c := range log.calls {
				if len(c) > 100 {
					t.Errorf("a call of %d GETs, want at most 100", len(c))
				}
			}

			st, _ = journal.Load(o.Journal)
			if c := st.Counts("orders"); c != (journal.Counts{Committed: n}) {
				t.Errorf("journal: %+v, want %d committed", c, n)
			}
			byDetails := env.entities("ORDERS", "DETAILS")
			if len(env.sb.Snapshot()["ORDERS"]) != n || len(byDetails) != n {
				t.Fatalf("the server holds %d orders (%d distinct), want %d once each", len(env.sb.Snapshot()["ORDERS"]), len(byDetails), n)
			}
			for i := range n {
				ord := byDetails[fmt.Sprintf("O%02d", i)]
				if l := lines(ord, "ORDERITEMS_SUBFORM"); len(l) != 2 {
					t.Errorf("O%02d has %d lines, want 2", i, len(l))
				}
				txt, _ := ord["ORDERSTEXT_SUBFORM"].(map[string]any)
				if want := fmt.Sprintf("Order %d. <br> Deliver", i); txt["TEXT"] != want {
					t.Errorf("O%02d's text is %q, want %q once", i, txt["TEXT"], want)
				}
			}
		})
	}
}

// filterIgnoring is a server that ignores $filter silently, as
// docs/servers.md, Reading says real ones do with a filter they cannot apply.
type filterIgnoring struct{ Client }

func (c filterIgnoring) Batch(ctx context.Context, reqs []odata.BatchRequest, opts odata.BatchOptions) ([]odata.BatchResponse, error) {
	out := make([]odata.BatchRequest, len(reqs))
	for i, r := range reqs {
		if path, query, ok := strings.Cut(r.URL, "?"); ok && r.Method == "GET" {
			q, _ := url.ParseQuery(query)
			q.Del("$filter")
			r.URL = path + "?" + q.Encode()
		}
		out[i] = r
	}
	return c.Client.Batch(ctx, out, opts)
}

// order is an order whose header is the same for every one of them.
func sameHeaderOrder(id string, l int, parts ...string) transform.Result {
	var kids []*transform.Child
	for i, p := range parts {
		kids = append(kids, line("ORDERITEMS_SUBFORM", l*1000+i, map[string]any{"PARTNAME": p, "TQUANT": dec("1")}))
	}
	return rec("orders", "ORDERS", id, l, map[string]any{"CUSTNAME": "C1", "DETAILS": "same"}, kids...)
}

// Orders whose create went in doubt (committed,
// the answer lost), reconciled on resume.
func TestReconcileServerNumbered(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		orders    []transform.Result
		handMade  []map[string]any    // orders made before the run, same header
		ignore    bool                // the server ignores $filter
		hidden    []string            // fields the API user may not read (sandbox.Options.HiddenFields)
		match     []string            // the step's match: (nil: CUSTNAME, DETAILS; empty: none, every field written)
		undecided int                 // records left in doubt
		why       string              // and what Undecided says of them
		lines     map[string][]string // record → the parts of the order its key names
	}{
		{name: "a look-alike made before the run is not the run's",
			orders:   []transform.Result{sameHeaderOrder("O1", 2, "P1")},
			handMade: []map[string]any{{"CUSTNAME": "C1", "DETAILS": "same"}},
			lines:    map[string][]string{"O1": {"P1"}}},
		{name: "identical headers told apart by their lines",
			orders: []transform.Result{sameHeaderOrder("O1", 2, "P1", "P2"), sameHeaderOrder("O2", 3, "P3")},
			lines:  map[string][]string{"O1": {"P1", "P2"}, "O2": {"P3"}}},
		{name: "identical headers and lines stay undecided",
			orders:    []transform.Result{sameHeaderOrder("O1", 2, "P1"), sameHeaderOrder("O2", 3, "P1")},
			undecided: 2, why: "2 entities of ORDERS match its fields and lines ('SO26000001', 'SO26000002'); decide with migrate resolve"},
		{name: "a filter the server ignored decides nothing",
			orders:    []transform.Result{sameHeaderOrder("O1", 2, "P1")},
			handMade:  []map[string]any{{"CUSTNAME": "C1", "DETAILS": "other"}},
			ignore:    true,
			undecided: 1, why: "the server did not apply the filter"},
		// A field never returned on read is never matched on.
		{name: "a field not returned on read is left out of the fields written",
			orders: []transform.Result{sameHeaderOrder("O1", 2, "P1", "P2"), sameHeaderOrder("O2", 3, "P3")},
			hidden: []string{"ORDERS.DETAILS"}, match: []string{},
			lines: map[string][]string{"O1": {"P1", "P2"}, "O2": {"P3"}}},
		{name: "match: naming a field not returned on read decides nothing",
			orders:    []transform.Result{sameHeaderOrder("O1", 2, "P1")},
			hidden:    []string{"ORDERS.DETAILS"},
			undecided: 1, why: "ORDERS does not return DETAILS on read (a field-level permission): it cannot be matched on"},
		{name: "lines matched without a field not returned on read",
			orders: []transform.Result{sameHeaderOrder("O1", 2, "P1", "P2"), sameHeaderOrder("O2", 3, "P3")},
			hidden: []string{"ORDERITEMS_SUBFORM.TQUANT"},
			lines:  map[string][]string{"O1": {"P1", "P2"}, "O2": {"P3"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			env := newSandbox(t, sandbox.Options{HiddenFields: tt.hidden})
			p, f := ordersPlan(tt.orders...)
			p.Steps[2].Match = []string{"CUSTNAME", "DETAILS"}
			if tt.match != nil {
				p.Steps[2].Match = tt.match
			}
			o := loadPartsAndCustomers(t, env, p, f)
			for _, h := range tt.handMade {
				if _, err := env.client.Batch(context.Background(), []odata.BatchRequest{{ID: "1", Method: "POST", URL: "ORDERS",
					Body: mustJSON(t, h), Headers: map[string]string{"content-type": "application/json"}}}, BatchOptions); err != nil {
					t.Fatal(err)
				}
			}
			before := len(env.sb.Snapshot()["ORDERS"])
			env.client.FailNext.Store(true)
			if _, err := runApply(context.Background(), o); !errors.Is(err, ErrInDoubt) {
				t.Fatalf("first apply: %v", err)
			}
			if tt.ignore {
				o.Client = filterIgnoring{env.client}
			}
			sum, err := runApply(context.Background(), o)
			if n := stepOf(sum, "orders").InDoubt; n != tt.undecided || !strings.Contains(strings.Join(sum.Undecided, "\n"), tt.why) {
				t.Fatalf("resume: %v; %d in doubt (want %d): %q", err, n, tt.undecided, sum.Undecided)
			}
			if n := len(env.sb.Snapshot()["ORDERS"]); n != before+len(tt.orders) {
				t.Errorf("the server holds %d orders, want %d: a duplicate or a loss", n, before+len(tt.orders))
			}
			st, _ := journal.Load(o.Journal)
			byName := env.entities("ORDERS", "ORDNAME")
			for id, want := range tt.lines {
				r := st.Record("orders", id)
				if r.Status() != journal.Committed {
					t.Errorf("%s: %v", id, r.Status())
					continue
				}
				var got []string
				for _, l := range lines(byName[strings.Trim(r.Key, "'")], "ORDERITEMS_SUBFORM") {
					got = append(got, l["PARTNAME"].(string))
				}
				if strings.Join(got, ",") != strings.Join(want, ",") {
					t.Errorf("%s: its key %s names the order with parts %v, want %v", id, r.Key, got, want)
				}
			}
		})
	}
}

// loadPartsAndCustomers applies the first two steps of an ordersPlan, so
// that a lost answer can then be given to the orders' batch alone; it
// returns the options of the whole plan over the same journal.
func loadPartsAndCustomers(t *testing.T, env *sandboxEnv, p *plan.Plan, f RecordSource) testRun {
	t.Helper()
	o := env.opts(t, p, f)
	o.Concurrency = 1
	p1 := testPlan(p.Steps[0], p.Steps[1])
	p1.Hash = p.Hash
	o1 := o
	o1.Plan = p1
	o1.apply(t)
	return o
}

func mustJSON(t *testing.T, v map[string]any) []byte {
	t.Helper()
	b, err := odata.MarshalBody(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
