package executortest

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/migrate-tool/migrate/executor"
	"github.com/migrate-tool/migrate/executor/fixture"
	"github.com/migrate-tool/migrate/plan"
	"github.com/migrate-tool/migrate/sandbox"
	"github.com/migrate-tool/migrate/transform"
)

// Records built by hand (package fixture's), applied to the sandbox
// through executor's exported API: the runs of the tests of verify and
// undo, which check what a run left record by record. executor's own
// tests have their own, since they cannot import what imports executor.

// Handmade is p's records recs (no sources), to be applied to env's
// sandbox with a journal of its own.
func Handmade(t testing.TB, env *fixture.Env, p *plan.Plan, recs executor.RecordSource) Run {
	return Run{executor.WithRecords(p, env.MD, env.Ver, recs),
		executor.Options{Client: env.Client, Journal: filepath.Join(t.TempDir(), "run.journal"), Target: env.Target(), ToolVersion: "test"}}
}

// ApplyRun applies r and returns what executor.Apply returns, for a test
// that looks at the error.
func ApplyRun(ctx context.Context, r Run) (*executor.Summary, error) {
	return executor.Apply(ctx, r.Prepared, r.Options)
}

// Demo applies fixture.DemoLoad to env, for the tests that start from a
// company the run loaded.
func Demo(t testing.TB, env *fixture.Env) Run {
	t.Helper()
	p, f := fixture.DemoLoad()
	r := Handmade(t, env, p, f)
	r.Apply(t)
	return r
}

// PartsAndCustomersFirst applies the first two steps of p (parts and
// customers), one batch at a time, and returns the run of all of p.
func PartsAndCustomersFirst(t testing.TB, env *fixture.Env, p *plan.Plan, f executor.RecordSource) Run {
	t.Helper()
	r := Handmade(t, env, p, f)
	r.Concurrency = 1
	first := *r.Prepared
	first.Plan = fixture.Plan(p.Steps[0], p.Steps[1])
	first.Plan.Hash = p.Hash
	Run{&first, r.Options}.Apply(t)
	return r
}

// Retried is an order sent as one deep insert whose second line names a
// part that does not exist (it fails, the order is partly loaded), then
// corrected in place and applied with apply --retry-failed; key is its
// number.
func Retried(t testing.TB) (env *fixture.Env, r Run, key string) {
	t.Helper()
	env = fixture.New(t, sandbox.Options{})
	p, f := fixture.DeepOrders(fixture.RetriedOrder("X9"))
	r = Handmade(t, env, p, f)
	if sum := r.Apply(t); sum.Complete {
		t.Fatalf("first load: %+v", sum)
	}
	f.Results["orders"] = []transform.Result{fixture.RetriedOrder("P3")}
	r.RetryFailed = true
	if sum := r.Apply(t); !sum.Complete {
		t.Fatalf("retry: %+v", sum)
	}
	for _, ord := range env.SB.Snapshot()["ORDERS"] {
		key = fmt.Sprint(ord["ORDNAME"])
	}
	return env, r, key
}

// Seed applies parts to env's sandbox by a run of their own: what the
// target held before the run a test makes.
func Seed(t testing.TB, env *fixture.Env, parts ...transform.Result) {
	t.Helper()
	p, f := fixture.Seed(parts...)
	Handmade(t, env, p, f).Apply(t)
}

// Barcode seeds part P1 with BARCODE 111 and returns, not yet applied, a
// run whose one step, in mode, writes its BARCODE 999.
func Barcode(t testing.TB, env *fixture.Env, mode plan.Mode) Run {
	t.Helper()
	Seed(t, env, fixture.BarcodeSeed)
	p, f := fixture.BarcodePlan(mode)
	return Handmade(t, env, p, f)
}
