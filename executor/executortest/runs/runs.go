// Package runs applies hand-built records (executortest's) to the sandbox
// through executor's exported API, for the tests of the packages that
// read the engine's results (verify, undo). executor's own tests have
// their own, since they cannot import what imports executor.
package runs

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/migrate-tool/migrate/executor"
	"github.com/migrate-tool/migrate/executor/executortest"
	"github.com/migrate-tool/migrate/plan"
	"github.com/migrate-tool/migrate/sandbox"
	"github.com/migrate-tool/migrate/transform"
)

// Run is a run the tests prepare by hand (records of their own, no
// sources) with its options: what Prepare and the command line hand the
// engine.
type Run struct {
	executor.Prepared
	executor.Options
}

// New is p's records recs, to be loaded into env's sandbox with a journal
// of its own.
func New(t testing.TB, env *executortest.Env, p *plan.Plan, recs executor.RecordSource) Run {
	return Run{Prepared: *executor.WithRecords(p, env.MD, env.Ver, recs),
		Options: executor.Options{Client: env.Client, Journal: filepath.Join(t.TempDir(), "run.journal"), Target: env.Target(), ToolVersion: "test"}}
}

// Apply applies o.
func Apply(ctx context.Context, o Run) (*executor.Summary, error) {
	return executor.Apply(ctx, &o.Prepared, o.Options)
}

// Demo applies executortest.DemoLoad to env, for the tests that start
// from a company the run loaded.
func Demo(t testing.TB, env *executortest.Env) Run {
	t.Helper()
	p, f := executortest.DemoLoad()
	o := New(t, env, p, f)
	if _, err := Apply(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	return o
}

// PartsAndCustomersFirst loads the first two steps of p (parts and
// customers), one batch at a time, and returns the run of all of p.
func PartsAndCustomersFirst(t testing.TB, env *executortest.Env, p *plan.Plan, f executor.RecordSource) Run {
	t.Helper()
	o := New(t, env, p, f)
	o.Concurrency = 1
	p1 := executortest.Plan(p.Steps[0], p.Steps[1])
	p1.Hash = p.Hash
	o1 := o
	o1.Plan = p1
	if _, err := Apply(context.Background(), o1); err != nil {
		t.Fatal(err)
	}
	return o
}

// Retried is an order sent as one deep insert whose second line names a
// part that does not exist (it fails, the order is partly loaded), then
// corrected in place and loaded with apply --retry-failed; key is its
// number.
func Retried(t testing.TB) (env *executortest.Env, o Run, key string) {
	t.Helper()
	env = executortest.New(t, sandbox.Options{})
	p, f := executortest.DeepOrders(executortest.RetriedOrder("X9"))
	o = New(t, env, p, f)
	if sum, err := Apply(context.Background(), o); err != nil || sum.Complete {
		t.Fatalf("first load: %v %+v", err, sum)
	}
	f.Results["orders"] = []transform.Result{executortest.RetriedOrder("P3")}
	o.RetryFailed = true
	if sum, err := Apply(context.Background(), o); err != nil || !sum.Complete {
		t.Fatalf("retry: %v %+v", err, sum)
	}
	for _, ord := range env.SB.Snapshot()["ORDERS"] {
		key = fmt.Sprint(ord["ORDNAME"])
	}
	return env, o, key
}

// DeepOrdersInDoubt loads parts and customers, then five orders O0-O4 of
// parts as deep inserts three to a batch, the first batch's answer lost
// to fault: it returns the run, in doubt, and its orders.
func DeepOrdersInDoubt(t testing.TB, env *executortest.Env, fault string, parts ...string) (Run, []transform.Result) {
	t.Helper()
	var orders []transform.Result
	for i := range 5 {
		orders = append(orders, executortest.OrderWithLines(fmt.Sprintf("O%d", i), i+2, "C1", parts...))
	}
	p, f := executortest.DeepOrders()
	if _, err := Apply(context.Background(), New(t, env, p, f)); err != nil { // parts and customers
		t.Fatal(err)
	}
	st := executortest.Step("orders", "ORDERS")
	st.DeepInsert = true
	o := New(t, env, executortest.Plan(st), &executortest.Records{Results: map[string][]transform.Result{"orders": orders}})
	o.BatchSize, o.Concurrency = 3, 1
	env.SB.DropNextWrites(1, fault)
	if _, err := Apply(context.Background(), o); !errors.Is(err, executor.ErrInDoubt) {
		t.Fatalf("want in doubt, got %v", err)
	}
	return o, orders
}

// Seed loads parts into env's sandbox by a run of their own: what the
// target held before the run a test makes.
func Seed(t testing.TB, env *executortest.Env, parts ...transform.Result) {
	t.Helper()
	p, f := executortest.Seed(parts...)
	if _, err := Apply(context.Background(), New(t, env, p, f)); err != nil {
		t.Fatal(err)
	}
}

// Barcode seeds part P1 with BARCODE 111 and returns, not yet applied, a
// run whose one step, in mode, writes its BARCODE 999.
func Barcode(t testing.TB, env *executortest.Env, mode plan.Mode) Run {
	t.Helper()
	Seed(t, env, executortest.BarcodeSeed)
	p, f := executortest.BarcodePlan(mode)
	return New(t, env, p, f)
}
