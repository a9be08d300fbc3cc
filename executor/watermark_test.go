package executor

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/migrate-tool/migrate/journal"
	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/sandbox"
	"github.com/migrate-tool/migrate/transform"
)

// The watermark query's answer: the highest value, nothing for an empty
// entity, and no watermark when the server did not order the rows or
// cannot answer.
func TestHighest(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, body string
		status     int
		value, why string
	}{
		{"two rows, descending", `{"value":[{"ORD":12},{"ORD":7}]}`, 200, "12", ""},
		{"one row", `{"value":[{"ORD":3}]}`, 200, "3", ""},
		{"IEEE754Compatible", `{"value":[{"ORD":"30"},{"ORD":"4"}]}`, 200, "30", ""},
		{"empty entity", `{"value":[]}`, 200, "", ""},
		{"$orderby ignored", `{"value":[{"ORD":1},{"ORD":2}]}`, 200, "", "the server ignored $orderby"},
		{"field hidden", `{"value":[{"ORDNAME":"SO1"}]}`, 200, "", "the rows lack ORD"},
		{"refused", `{"error":{}}`, 400, "", "status 400"},
		{"not a list", `[1]`, 200, "", "the answer is not a list of rows"},
		// A time the server sets (odata dialect, markField).
		{"times, descending", `{"value":[{"ORD":"2026-11-27T15:10:37.128Z"},{"ORD":"2026-11-27T15:10:37.12Z"}]}`, 200, "2026-11-27T15:10:37.128Z", ""},
		{"times, $orderby ignored", `{"value":[{"ORD":"2026-11-27T15:10:37Z"},{"ORD":"2026-11-27T16:00:00+00:00"}]}`, 200, "", "the server ignored $orderby"},
		{"neither", `{"value":[{"ORD":"SO1"}]}`, 200, "", "ORD SO1 is neither a number nor a time"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			v, why := highest(odata.BatchResponse{Status: tt.status, Body: []byte(tt.body)}, "ORD")
			if v != tt.value || why != tt.why {
				t.Errorf("got %q, %q; want %q, %q", v, why, tt.value, tt.why)
			}
		})
	}
}

// warnings records the hook's warnings.
type warnings struct {
	NopHook
	mu   sync.Mutex
	msgs []string
}

func (w *warnings) Warn(msg string) {
	w.mu.Lock()
	w.msgs = append(w.msgs, msg)
	w.mu.Unlock()
}

// inDoubtOrder is a sandbox holding customer C1 and an order of it, and a
// journal (of dialect, "" for the ERP's) whose create of order O1 with the
// same fields went in doubt: apply's reconciliation finds that order by
// its fields. adjust changes the metadata or the options before the run;
// the warnings of the run are returned.
func inDoubtOrder(t *testing.T, dialect string, adjust func(env *sandboxEnv, o *testRun)) (testRun, *warnings, *Summary) {
	t.Helper()
	env := newSandbox(t, sandbox.Options{})
	ctx := context.Background()
	for _, r := range []odata.BatchRequest{
		{ID: "1", Method: "POST", URL: "CUSTOMERS", Body: []byte(`{"CUSTNAME":"C1","CUSTDES":"One"}`), Headers: map[string]string{"content-type": "application/json"}},
		{ID: "2", Method: "POST", URL: "ORDERS", Body: []byte(`{"CUSTNAME":"C1","DETAILS":"same"}`), Headers: map[string]string{"content-type": "application/json"}},
	} {
		if _, err := env.client.Batch(ctx, []odata.BatchRequest{r}, BatchOptions); err != nil {
			t.Fatal(err)
		}
	}
	p := testPlan(step("orders", "ORDERS"))
	f := &fakeRecords{Results: map[string][]transform.Result{"orders": {sameHeaderOrder("O1", 2)}}}
	o := env.opts(t, p, f)
	if adjust != nil {
		adjust(env, &o)
	}
	j, err := journal.Create(o.Journal, journal.Header{PlanHash: p.Hash, Target: Redact(o.Target), Dialect: dialect, Steps: []journal.Step{{Name: "orders", Entity: "ORDERS"}}})
	if err != nil {
		t.Fatal(err)
	}
	must(t, j.Append(journal.Entry{Kind: journal.KindIntent, Batch: j.NextBatch(), Subs: []journal.Sub{
		{ID: "1", Step: "orders", Rec: "O1", Op: journal.OpCreate, Meth: "POST", URL: "ORDERS", Match: []byte(`{"CUSTNAME":"C1","DETAILS":"same"}`)}}}))
	must(t, j.Close())
	w := &warnings{}
	o.Hook = w
	sum := o.apply(t)
	return o, w, sum
}

// A journal written before watermarks existed keeps today's matching (any
// document with the fields), and says so.
func TestReconcileWithoutWatermarkWarns(t *testing.T) {
	t.Parallel()
	o, w, sum := inDoubtOrder(t, "", nil)
	st, _ := journal.Load(o.Journal)
	if r := st.Record("orders", "O1"); r.Key != "'SO26000001'" {
		t.Errorf("O1: key %q; an old journal matches any document with its fields", r.Key)
	}
	if !strings.Contains(strings.Join(w.msgs, "\n"), "the journal has no watermark of ORDERS") {
		t.Errorf("warnings: %q", w.msgs)
	}
	// The journal keeps it, once, for the run report.
	rep, err := journal.LoadReport(o.Journal)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Warnings) != 1 || !strings.Contains(rep.Warnings[0], "the journal has no watermark of ORDERS") {
		t.Errorf("the journal's warnings: %q", rep.Warnings)
	}
	// And the run's result has it (apply --json's warnings), apart from
	// what the text prints at its end.
	if len(sum.Raised) != 1 || !strings.Contains(sum.Raised[0].Message(), "the journal has no watermark of ORDERS") || len(sum.Warnings) != 0 {
		t.Errorf("raised %v, warnings %v", sum.Raised, sum.Warnings)
	}
}

// Under the odata dialect an entity without an auto-unique key (Guid keys)
// has nothing to bound the run's documents by: reconciliation matches by
// the fields, and says so.
func TestReconcileStandardWithoutAutoUniqueWarns(t *testing.T) {
	t.Parallel()
	_, w, _ := inDoubtOrder(t, "odata", func(env *sandboxEnv, o *testRun) {
		ord := env.md.Type("ORDERS").Property("ORD")
		ord.Computed, ord.AutoUnique = false, false // as a standard service's metadata has none
		o.Version = odata.StandardVersion
	})
	if !strings.Contains(strings.Join(w.msgs, "\n"), "step orders: ORDERS has no auto-unique key to tell the run's documents from older ones") {
		t.Errorf("warnings: %q", w.msgs)
	}
}
