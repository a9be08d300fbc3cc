package executor

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/migrate-tool/migrate/executor/fixture"
	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/odata/odatatest"
	"github.com/migrate-tool/migrate/plan"
	"github.com/migrate-tool/migrate/sandbox"
	"github.com/migrate-tool/migrate/transform"
)

// faultySandbox is a sandbox that drops connections before and after
// committing and answers 500s, drawn from seed, and the real client to it
// (retries without waiting).
func faultySandbox(t *testing.T, seed int64) (*sandboxEnv, *odata.Client) {
	t.Helper()
	env := newSandbox(t, sandbox.Options{Seed: seed, Faults: map[string]float64{
		sandbox.FaultDropAfterCommit: 0.15, sandbox.FaultDropBeforeCommit: 0.1, sandbox.FaultError500: 0.1}})
	return env, fixture.ODataClient(t, env.srv, odata.Config{Clock: odatatest.NewClock(time.Now())})
}

// TestFaultsWithODataClient loads through the real odata.Client while the
// sandbox drops connections before and after committing and answers 500s:
// apply is run again until complete, and every order is there exactly once
// with all its lines.
func TestFaultsWithODataClient(t *testing.T) {
	t.Parallel()
	env, c := faultySandbox(t, 7)
	var orders []transform.Result
	for i := 0; i < 60; i++ {
		orders = append(orders, orderWithLines(fmt.Sprintf("O%02d", i), i+2, "C1", "P1", "P2", "P3"))
	}
	p, f := ordersPlan(orders...)
	o := throughFaults(env, t, c, p, f)
	sum, runs, _ := resumeUntil(t, o, 40, func(sum *Summary) bool { return sum.Complete })
	if !sum.Complete {
		t.Fatalf("not complete after %d runs: %+v", runs, sum)
	}
	for id, o := range env.ordersOnce(t, 60) {
		if n := len(lines(o, "ORDERITEMS_SUBFORM")); n != 3 {
			t.Errorf("%s has %d lines, want 3", id, n)
		}
	}
	// Orders resumed after a lost answer, reconciled, keep their keys too.
	checkJournalKeys(t, env, o.Journal)
	t.Logf("complete after %d runs; sandbox faults %d", runs, env.sb.Stats().Faults)
}

// throughFaults is the run of p's records f through c (a client to a
// faultySandbox), 20 records a batch.
func throughFaults(env *sandboxEnv, t *testing.T, c Client, p *plan.Plan, f RecordSource) testRun {
	o := env.opts(t, p, f)
	o.Client = c
	o.BatchSize = 20
	return o
}

// ordersOnce are the sandbox's orders by DETAILS (the record id); other
// than n orders, or an order held twice, fails the test.
func (e *sandboxEnv) ordersOnce(t *testing.T, n int) map[string]map[string]any {
	t.Helper()
	got := e.entities("ORDERS", "DETAILS")
	if len(got) != n || len(e.sb.Snapshot()["ORDERS"]) != n {
		t.Fatalf("%d orders (%d distinct), want %d", len(e.sb.Snapshot()["ORDERS"]), len(got), n)
	}
	return got
}

// resumeUntil applies o again and again, as a user resumes a run that
// faults interrupt, until a run ends without error and done (nil: any)
// holds of its summary, or max runs are made. It logs the errors other
// than in doubt or interrupted and returns the last run's summary and
// error with the number of runs.
func resumeUntil(t *testing.T, o testRun, max int, done func(*Summary) bool) (*Summary, int, error) {
	t.Helper()
	var sum *Summary
	var err error
	runs := 0
	for runs < max {
		runs++
		sum, err = runApply(context.Background(), o)
		if err == nil && (done == nil || done(sum)) {
			break
		}
		if err != nil && !errors.Is(err, ErrInDoubt) && !errors.Is(err, ErrInterrupted) {
			t.Logf("run %d: %v", runs, err)
		}
	}
	return sum, runs, err
}
