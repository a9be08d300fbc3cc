package executor

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"testing"

	"github.com/migrate-tool/migrate/executor/fixture"
	"github.com/migrate-tool/migrate/journal"
	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/plan"
	"github.com/migrate-tool/migrate/sandbox"
	"github.com/migrate-tool/migrate/transform"
)

// The fixtures shared with the tests of verify and undo are
// executortest's; these names are theirs in this package's tests.
type (
	httpClient  = fixture.Client
	fakeRecords = fixture.Records
)

var (
	loc        = fixture.Loc
	rec        = fixture.Rec
	line       = fixture.Line
	itemLine   = fixture.ItemLine
	so1        = fixture.SO1
	single     = fixture.Single
	dec        = fixture.Dec
	testPlan   = fixture.Plan
	step       = fixture.Step
	lines      = fixture.Lines
	metadataOf = fixture.MetadataOf
	equalJSON  = fixture.EqualJSON

	partsAndCustomers = fixture.PartsAndCustomers
	orderWithLines    = fixture.OrderWithLines
	ordersPlan        = fixture.OrdersPlan
	deepOrders        = fixture.DeepOrders
	partsPlan         = fixture.PartsPlan
	part              = fixture.Part
	demoLoad          = fixture.DemoLoad
	keyed             = fixture.Keyed
	linePartsOf       = fixture.LineParts
)

type sandboxEnv struct {
	sb     *sandbox.Server
	srv    *httptest.Server
	client *httpClient
	md     *odata.Metadata
	ver    odata.Version
}

// behind sends writes to the sandbox as a user would, outside the run.
func (e *sandboxEnv) behind(t testing.TB, reqs ...odata.BatchRequest) {
	t.Helper()
	fixture.Behind(t, e.client, reqs...)
}

func newSandbox(t testing.TB, opts sandbox.Options) *sandboxEnv {
	t.Helper()
	return envOf(fixture.New(t, opts))
}

// newSandboxBehind is newSandbox with front's handler (a fault, a gate, a
// restart) between the client and the sandbox.
func newSandboxBehind(t testing.TB, opts sandbox.Options, front func(sb *sandbox.Server) http.Handler) *sandboxEnv {
	t.Helper()
	return envOf(fixture.NewBehind(t, opts, front))
}

// envOf is e under this package's tests' names.
func envOf(e *fixture.Env) *sandboxEnv {
	return &sandboxEnv{sb: e.SB, srv: e.Srv, client: e.Client, md: e.MD, ver: e.Ver}
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

// apply applies o; an error fails the test.
func (o testRun) apply(t testing.TB) *Summary {
	t.Helper()
	sum, err := runApply(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	return sum
}

// loadJournal is the state of the journal at path; an error fails the
// test.
func loadJournal(t testing.TB, path string) *journal.State {
	t.Helper()
	st, err := journal.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// complete applies o; an error, or a run that is not complete, fails the
// test (what names the run in the message).
func (o testRun) complete(t testing.TB, what string) *Summary {
	t.Helper()
	sum, err := runApply(context.Background(), o)
	if err != nil || !sum.Complete {
		t.Fatalf("%s: %v %+v", what, err, sum)
	}
	return sum
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
	return fixture.Entities(e.sb, set, key)
}

func errorsIs(err, target error) bool { return errors.Is(err, target) }

func fmtAny(v any) string { return fmt.Sprint(v) }

// seedParts loads parts into the sandbox by a run of their own: what
// the target held before the run a test makes.
func (e *sandboxEnv) seedParts(t testing.TB, parts ...transform.Result) {
	t.Helper()
	p, f := fixture.Seed(parts...)
	if _, err := runApply(context.Background(), e.opts(t, p, f)); err != nil {
		t.Fatal(err)
	}
}

// barcodeRun seeds part P1 with BARCODE 111 and returns, not yet applied,
// a run whose one step, in mode, writes its BARCODE 999.
func (e *sandboxEnv) barcodeRun(t testing.TB, mode plan.Mode) testRun {
	t.Helper()
	e.seedParts(t, fixture.BarcodeSeed)
	p, f := fixture.BarcodePlan(mode)
	return e.opts(t, p, f)
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
	fixture.CheckOrderKeys(t, "the journal keeps", env.entities("ORDERS", "DETAILS"), func(id string) string {
		if rec := st.Record("orders", id); rec != nil && rec.Status() == journal.Committed {
			return fmt.Sprint(KeyValue(rec.Key))
		}
		return ""
	}, func(id, part string) string {
		return lineKeys(st.Record("orders", id))[part]
	})
}

// lineKeys are the keys the journal keeps for the lines of an order's
// record rec (nil: none), by the Part cell of each line's row.
func lineKeys(rec *journal.RecordState) map[string]string {
	if rec == nil {
		return nil
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
			got[part[kr.Loc]] = fmt.Sprint(KeyValue(kr.Key))
		}
	}
	return got
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
