package executor

import (
	"context"
	"errors"
	"testing"

	"github.com/migrate-tool/migrate/sandbox"
	"github.com/migrate-tool/migrate/transform"
)

// cancelAfterStep cancels the run when a step finishes: the run is killed
// between two steps.
type cancelAfterStep struct {
	NopHook
	step   string
	cancel context.CancelFunc
}

func (h cancelAfterStep) StepFinished(step string, _ StepSummary) {
	if step == h.step {
		h.cancel()
	}
}

// TestStatusOfARunStoppedBetweenSteps: killed after step 1 committed
// everything, before step 2 began, a run is not complete, although no
// record of it is pending; apply again finishes it, and then it is.
func TestStatusOfARunStoppedBetweenSteps(t *testing.T) {
	t.Parallel()
	env := newSandbox(t, sandbox.Options{})
	p := testPlan(step("parts", "LOGPART"), step("customers", "CUSTOMERS", "parts"))
	recs := &fakeRecords{Results: map[string][]transform.Result{
		"parts":     {part("P1", 2, "1"), part("P2", 3, "2")},
		"customers": {rec("customers", "CUSTOMERS", "C1", 2, map[string]any{"CUSTNAME": "C1", "CUSTDES": "Alpha"})},
	}}
	o := env.opts(t, p, recs)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	o.Hook = cancelAfterStep{step: "parts", cancel: cancel}
	if _, err := runApply(ctx, o); !errors.Is(err, ErrInterrupted) {
		t.Fatalf("apply: %v, want interrupted", err)
	}
	if n := len(env.sb.Snapshot()["CUSTOMERS"]); len(env.sb.Snapshot()["LOGPART"]) != 2 || n != 0 {
		t.Fatalf("the sandbox holds %d parts and %d customers: the run did not stop between the steps", len(env.sb.Snapshot()["LOGPART"]), n)
	}
	sum, err := Status(o.Journal)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Complete || !sum.Interrupted {
		t.Errorf("stopped before step 2: complete %v, interrupted %v", sum.Complete, sum.Interrupted)
	}
	for _, s := range sum.Steps {
		if s.Pending+s.InDoubt+s.Failed > 0 {
			t.Errorf("step %s: %+v; want nothing pending, in doubt or failed", s.Name, s)
		}
	}

	o.Hook = nil
	o.complete(t, "apply again")
	if len(env.sb.Snapshot()["CUSTOMERS"]) != 1 {
		t.Fatal("apply again did not load step 2")
	}
	if sum, err := Status(o.Journal); err != nil || !sum.Complete || sum.Interrupted {
		t.Errorf("after apply again: %v, complete %v, interrupted %v", err, sum.Complete, sum.Interrupted)
	}
}
