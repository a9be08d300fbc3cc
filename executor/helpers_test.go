package executor

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/migrate-tool/migrate/executor/fixture"
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
	return newSandboxBehind(t, opts, func(sb *sandbox.Server) http.Handler { return sb })
}

// newSandboxBehind is newSandbox with front's handler (a fault, a gate, a
// restart) between the client and the sandbox.
func newSandboxBehind(t testing.TB, opts sandbox.Options, front func(sb *sandbox.Server) http.Handler) *sandboxEnv {
	t.Helper()
	e := fixture.NewBehind(t, opts, front)
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

// checkEach holds fn, named name, to the output it gives each input.
func checkEach(t *testing.T, name string, fn func(string) string, want map[string]string) {
	t.Helper()
	for in, w := range want {
		if got := fn(in); got != w {
			t.Errorf("%s(%q) = %q, want %q", name, in, got, w)
		}
	}
}

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
