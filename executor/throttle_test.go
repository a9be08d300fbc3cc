package executor

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/migrate-tool/migrate/sandbox"
)

// TestThrottledPastRetriesIsInterrupted: a 429 that outlasts the client's
// retries refuses the batch whole; the run is interrupted (the CLI's exit
// 4, resume), not a failure to reach the target (exit 3), and the resume
// loads everything once. Found by the fault campaign's 429 storms.
func TestThrottledPastRetriesIsInterrupted(t *testing.T) {
	t.Parallel()
	env, o, storm := orderWhileFaulty(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Retry-After", "1")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusTooManyRequests)
		_, _ = w.Write([]byte(`{"error":{"code":"TooManyRequests","message":"retry later"}}`))
	})
	stopsThenResumes(t, o, storm, ErrInterrupted, "throttled apply")
	if got := env.entities("ORDERS", "DETAILS"); len(got) != 1 || len(lines(got["O1"], "ORDERITEMS_SUBFORM")) != 2 {
		t.Fatalf("orders after resume: %v", got)
	}
}

// TestReconcileUnreadableIsInDoubt: when the reads that reconcile in-doubt
// work fail too (the connection keeps dropping), the run stops with the
// work still in doubt (ErrInDoubt, the CLI's exit 4), not as an unreachable
// target (exit 3); the next apply reconciles and finishes. Found by the
// fault campaign at drop-before-commit=0.4.
func TestReconcileUnreadableIsInDoubt(t *testing.T) {
	t.Parallel()
	env, o, drop := orderWhileFaulty(t, func(w http.ResponseWriter, _ *http.Request) {
		conn, _, _ := w.(http.Hijacker).Hijack()
		conn.Close()
	})
	env.client.FailNext.Store(true) // the first batch commits, its answer is lost
	if _, err := runApply(context.Background(), o); !errors.Is(err, ErrInDoubt) {
		t.Fatalf("first apply: %v, want ErrInDoubt", err)
	}
	stopsThenResumes(t, o, drop, ErrInDoubt, "resume while reads fail")
	if got := env.entities("ORDERS", "DETAILS"); len(got) != 1 || len(env.sb.Snapshot()["ORDERS"]) != 1 || len(lines(got["O1"], "ORDERITEMS_SUBFORM")) != 2 {
		t.Fatalf("orders after resume: %v", env.sb.Snapshot()["ORDERS"])
	}
}

// orderWhileFaulty is a sandbox behind a front that answers with fault
// while faulty is set, and a run of order O1 (two lines) against it.
func orderWhileFaulty(t *testing.T, fault http.HandlerFunc) (env *sandboxEnv, o testRun, faulty *atomic.Bool) {
	t.Helper()
	faulty = new(atomic.Bool)
	env = newSandboxBehind(t, sandbox.Options{}, func(sb *sandbox.Server) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if faulty.Load() {
				fault(w, r)
				return
			}
			sb.ServeHTTP(w, r)
		})
	})
	p, f := ordersPlan(orderWithLines("O1", 2, "C1", "P1", "P2"))
	return env, env.opts(t, p, f), faulty
}

// stopsThenResumes applies o while faulty is set: the run must stop
// interrupted with want (what names it); then, the fault gone, the
// resume must complete.
func stopsThenResumes(t *testing.T, o testRun, faulty *atomic.Bool, want error, what string) {
	t.Helper()
	faulty.Store(true)
	sum, err := runApply(context.Background(), o)
	if !errors.Is(err, want) || sum == nil || !sum.Interrupted {
		t.Fatalf("%s: err %v, summary %+v; want %v", what, err, sum, want)
	}
	faulty.Store(false)
	o.complete(t, "resume")
}
