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
	var storm atomic.Bool
	env := newSandboxBehind(t, sandbox.Options{}, func(sb *sandbox.Server) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if storm.Load() {
				w.Header().Set("Retry-After", "1")
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusTooManyRequests)
				_, _ = w.Write([]byte(`{"error":{"code":"TooManyRequests","message":"retry later"}}`))
				return
			}
			sb.ServeHTTP(w, r)
		})
	})
	p, f := ordersPlan(orderWithLines("O1", 2, "C1", "P1", "P2"))
	o := env.opts(t, p, f)
	storm.Store(true)
	sum, err := runApply(context.Background(), o)
	if !errors.Is(err, ErrInterrupted) || sum == nil || !sum.Interrupted {
		t.Fatalf("throttled apply: err %v, summary %+v; want ErrInterrupted", err, sum)
	}
	storm.Store(false)
	o.complete(t, "resume")
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
	var drop atomic.Bool
	env := newSandboxBehind(t, sandbox.Options{}, func(sb *sandbox.Server) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if drop.Load() {
				conn, _, _ := w.(http.Hijacker).Hijack()
				conn.Close()
				return
			}
			sb.ServeHTTP(w, r)
		})
	})
	p, f := ordersPlan(orderWithLines("O1", 2, "C1", "P1", "P2"))
	o := env.opts(t, p, f)
	env.client.FailNext.Store(true) // the first batch commits, its answer is lost
	if _, err := runApply(context.Background(), o); !errors.Is(err, ErrInDoubt) {
		t.Fatalf("first apply: %v, want ErrInDoubt", err)
	}
	drop.Store(true)
	sum, err := runApply(context.Background(), o)
	if !errors.Is(err, ErrInDoubt) || sum == nil || !sum.Interrupted {
		t.Fatalf("resume while reads fail: err %v, summary %+v; want ErrInDoubt", err, sum)
	}
	drop.Store(false)
	o.complete(t, "resume")
	if got := env.entities("ORDERS", "DETAILS"); len(got) != 1 || len(env.sb.Snapshot()["ORDERS"]) != 1 || len(lines(got["O1"], "ORDERITEMS_SUBFORM")) != 2 {
		t.Fatalf("orders after resume: %v", env.sb.Snapshot()["ORDERS"])
	}
}
