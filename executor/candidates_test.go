package executor

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/migrate-tool/migrate/journal"
	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/plan"
	"github.com/migrate-tool/migrate/sandbox"
	"github.com/migrate-tool/migrate/transform"
)

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
