package executor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/migrate-tool/migrate/journal"
	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/plan"
	"github.com/migrate-tool/migrate/sandbox"
	"github.com/migrate-tool/migrate/source"
	"github.com/migrate-tool/migrate/transform"
)

// httpClient is the product's odata.Client (which warms cold forms before
// writing) with a count of its batches and a way to lose one.
type httpClient struct {
	url   string
	hc    *http.Client
	calls atomic.Int64
	// failNext, when set, makes the next batch that writes look lost after
	// sending (reads, such as a step's watermark, are answered).
	failNext atomic.Bool

	once sync.Once
	oc   *odata.Client
	err  error
}

func (c *httpClient) Batch(ctx context.Context, reqs []odata.BatchRequest, opts odata.BatchOptions) ([]odata.BatchResponse, error) {
	c.once.Do(func() {
		// No retries and no timeout of its own: a test's batch is sent
		// once, as the old hand-written client sent it.
		c.oc, c.err = odata.NewClient(odata.Config{BaseURL: c.url, Auth: odata.BasicAuth{User: "demo", Password: "demo"}, HTTPClient: c.hc, Retries: -1})
	})
	if c.err != nil {
		return nil, c.err
	}
	c.calls.Add(1)
	resps, err := c.oc.Batch(ctx, reqs, opts)
	if err == nil && writes(reqs) && c.failNext.CompareAndSwap(true, false) {
		return nil, &odata.InDoubtError{Op: "POST $batch", Err: fmt.Errorf("connection reset (simulated)")}
	}
	return resps, err
}

type sandboxEnv struct {
	sb     *sandbox.Server
	srv    *httptest.Server
	client *httpClient
	md     *odata.Metadata
	ver    odata.Version
}

func newSandbox(t testing.TB, opts sandbox.Options) *sandboxEnv {
	t.Helper()
	return newSandboxBehind(t, opts, func(sb *sandbox.Server) http.Handler { return sb })
}

// newSandboxBehind is newSandbox with front's handler (a fault, a gate, a
// restart) between the client and the sandbox.
func newSandboxBehind(t testing.TB, opts sandbox.Options, front func(sb *sandbox.Server) http.Handler) *sandboxEnv {
	t.Helper()
	sb, err := sandbox.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(front(sb))
	t.Cleanup(srv.Close)
	v := opts.SystemVersion
	if v == "" {
		v = "25.1"
	}
	ver, _ := odata.ParseVersion(v)
	return &sandboxEnv{sb: sb, srv: srv, client: &httpClient{url: srv.URL + sandbox.BasePath, hc: srv.Client()},
		md: sandbox.DemoMetadata(), ver: ver}
}

// fakeRecords serves hand-built results per step.
type fakeRecords struct {
	results map[string][]transform.Result
	// build, when set, builds a step's results with the refs at hand.
	build map[string]func(refs transform.Refs) []transform.Result
}

func (f *fakeRecords) Records(ctx context.Context, step string, open transform.Opener, refs transform.Refs, fn func(transform.Result) error) error {
	res := f.results[step]
	if b := f.build[step]; b != nil {
		res = b(refs)
	}
	for _, r := range res {
		if err := fn(r); err != nil {
			return err
		}
	}
	return nil
}

var testHeader = source.NewHeader([]string{"Code", "Name", "Part", "Qty"})

func loc(file string, line int) source.Location { return source.Location{File: file, Line: line} }

func row(file string, line int, cells ...string) source.Row {
	cs := make([]source.Cell, len(cells))
	for i, c := range cells {
		cs[i] = c
	}
	return source.Row{Loc: loc(file, line), Header: testHeader, Cells: cs}
}

func rec(step, entity, id string, l int, fields map[string]any, kids ...*transform.Child) transform.Result {
	r := &transform.Record{Step: step, Entity: entity, ID: id, Loc: loc(step+".csv", l),
		Row: row(step+".csv", l, id, "x", "", ""), Fields: fields, Children: kids}
	return transform.Result{Record: r, Loc: r.Loc}
}

func line(nav string, l int, fields map[string]any, kids ...*transform.Child) *transform.Child {
	return &transform.Child{Nav: nav, Loc: loc("lines.csv", l), Row: row("lines.csv", l, "", "", fmt.Sprint(fields["PARTNAME"]), ""), Fields: fields, Children: kids}
}

func single(nav string, fields map[string]any) *transform.Child {
	return &transform.Child{Nav: nav, Single: true, Fields: fields}
}

func dec(s string) odata.Decimal {
	d, err := odata.ParseDecimal(s, '.')
	if err != nil {
		panic(err)
	}
	return d
}

func testPlan(steps ...*plan.Step) *plan.Plan {
	return &plan.Plan{Name: "test", Hash: "h1", Version: 1, Steps: steps}
}

func step(name, entity string, after ...string) *plan.Step {
	return &plan.Step{Name: name, Entity: entity, After: after, Mode: plan.ModeInsert}
}

// testRun is a run the tests prepare by hand (records of their own, no
// sources) with its options: what Prepare and the command line hand the
// engine.
type testRun struct {
	Prepared
	Options
}

func (e *sandboxEnv) opts(t testing.TB, p *plan.Plan, recs RecordSource) testRun {
	return testRun{Prepared: Prepared{Plan: p, records: recs, Metadata: e.md, Version: e.ver},
		Options: Options{Client: e.client, Journal: filepath.Join(t.TempDir(), "run.journal"), Target: e.srv.URL + sandbox.BasePath, ToolVersion: "test"}}
}

func runApply(ctx context.Context, o testRun) (*Summary, error) {
	return Apply(ctx, &o.Prepared, o.Options)
}

func runDryRun(ctx context.Context, o testRun) (*Summary, error) {
	return DryRun(ctx, &o.Prepared, o.Options)
}

func runDiff(ctx context.Context, o testRun) (*DiffResult, error) {
	return Diff(ctx, &o.Prepared, o.Options)
}

func runCheckReferences(ctx context.Context, o testRun) (*References, error) {
	return CheckReferences(ctx, &o.Prepared, o.Client)
}

// entities returns the sandbox's entities of set by a key field.
func (e *sandboxEnv) entities(set, key string) map[string]map[string]any {
	out := map[string]map[string]any{}
	for _, ent := range e.sb.Snapshot()[set] {
		out[fmt.Sprint(ent[key])] = ent
	}
	return out
}

// lines returns a snapshot entity's collection sub-form.
func lines(ent map[string]any, nav string) []map[string]any {
	var out []map[string]any
	switch l := ent[nav].(type) {
	case []map[string]any:
		return l
	case []any:
		for _, x := range l {
			if m, ok := x.(map[string]any); ok {
				out = append(out, m)
			}
		}
	}
	return out
}

func errorsIs(err, target error) bool { return errors.Is(err, target) }

func fmtAny(v any) string { return fmt.Sprint(v) }

func equalJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// metadataOf is undo's way to the metadata (UndoOptions.Metadata): md,
// as the command line would fetch it.
func metadataOf(md *odata.Metadata) func(context.Context) (*odata.Metadata, error) {
	return func(context.Context) (*odata.Metadata, error) { return md, nil }
}

// seedParts loads parts into the sandbox by a run of their own (its plan
// hashed "seed"): what the target held before the run a test makes.
func (e *sandboxEnv) seedParts(t testing.TB, parts ...transform.Result) {
	t.Helper()
	seed := testPlan(step("parts", "LOGPART"))
	seed.Hash = "seed"
	if _, err := runApply(context.Background(), e.opts(t, seed, &fakeRecords{results: map[string][]transform.Result{"parts": parts}})); err != nil {
		t.Fatal(err)
	}
}

// barcodeRun seeds part P1 with BARCODE 111 and returns, not yet applied,
// a run whose one step, in mode, writes its BARCODE 999.
func (e *sandboxEnv) barcodeRun(t testing.TB, mode plan.Mode) testRun {
	t.Helper()
	e.seedParts(t, rec("parts", "LOGPART", "P1", 2, map[string]any{"PARTNAME": "P1", "PARTDES": "Bolt", "BARCODE": "111"}))
	s := step("parts", "LOGPART")
	s.Mode = mode
	return e.opts(t, testPlan(s), &fakeRecords{results: map[string][]transform.Result{"parts": {
		rec("parts", "LOGPART", "P1", 2, map[string]any{"PARTNAME": "P1", "BARCODE": "999"})}}})
}

// checkJournalKeys holds the keys a journal kept for its committed orders
// (what report.CreatedKeys writes out) to the sandbox: every order it holds
// (by DETAILS, the record id) with its ORDNAME, every line (by the Part
// cell of its row) with its KLINE.
func checkJournalKeys(t *testing.T, env *sandboxEnv, journalPath string) {
	t.Helper()
	st, err := journal.LoadReport(journalPath) // with the rows and their keys
	if err != nil {
		t.Fatal(err)
	}
	orders := env.entities("ORDERS", "DETAILS")
	if len(orders) == 0 {
		t.Fatal("the sandbox holds no order")
	}
	for id, ent := range orders {
		rec := st.Record("orders", id)
		if rec == nil || rec.Status() != journal.Committed || fmt.Sprint(keyValue(rec.Key)) != fmt.Sprint(ent["ORDNAME"]) {
			t.Errorf("order %s: the journal keeps %+v, the sandbox ORDNAME %v", id, rec, ent["ORDNAME"])
			continue
		}
		var header []string
		part := map[string]string{} // a row's location → its Part cell
		got := map[string]string{}  // Part → the line's key
		for _, kr := range rec.Keyed {
			if kr.Header != nil {
				header = kr.Header
			}
			if i := slices.Index(header, "Part"); i >= 0 && i < len(kr.Cells) {
				part[kr.Loc] = kr.Cells[i]
			}
			if kr.Nav == "ORDERITEMS_SUBFORM" && kr.Key != "" {
				got[part[kr.Loc]] = fmt.Sprint(keyValue(kr.Key))
			}
		}
		for _, l := range lines(ent, "ORDERITEMS_SUBFORM") {
			if k := got[fmt.Sprint(l["PARTNAME"])]; k != fmt.Sprint(l["KLINE"]) {
				t.Errorf("order %s line %v: the journal keeps %q, the sandbox KLINE %v", id, l["PARTNAME"], k, l["KLINE"])
			}
		}
	}
}

// failedRows are a failed record as a journal keeps it, and its source
// rows.
func failedRows(t *testing.T, journalPath, step, id string) (*journal.RecordState, []journal.Row) {
	t.Helper()
	st, err := journal.Load(journalPath)
	if err != nil {
		t.Fatal(err)
	}
	rec := st.Record(step, id)
	switch {
	case rec == nil || rec.Status() != journal.Failed:
		t.Fatalf("%s/%s is not failed: %+v", step, id, rec)
	case len(rec.Rows) > 0:
		return rec, rec.Rows
	case rec.Row != nil:
		return rec, []journal.Row{*rec.Row}
	}
	return rec, nil
}
