package executor

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/migrate-tool/migrate/journal"
	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/sandbox"
	"github.com/migrate-tool/migrate/transform"
)

// stallingClient passes the first batches through, then blocks every
// further one until ctx is cancelled (a call that hangs past Ctrl-C).
type stallingClient struct {
	inner   Client
	pass    int64
	calls   atomic.Int64
	stalled chan struct{}
}

func (c *stallingClient) Batch(ctx context.Context, reqs []odata.BatchRequest, opts odata.BatchOptions) ([]odata.BatchResponse, error) {
	if c.calls.Add(1) <= c.pass {
		return c.inner.Batch(ctx, reqs, opts)
	}
	close(c.stalled)
	<-ctx.Done()
	return nil, &odata.InDoubtError{Op: "POST $batch", Err: ctx.Err()}
}

// TestIntentJournaledBeforeItsSlot: a batch whose intent was journaled
// while it waited for a slot, and which the run's cancellation kept from
// being sent, is journaled as never sent: on resume only the batch that
// was in flight is in doubt, and the unsent records are pending, not in
// doubt.
func TestIntentJournaledBeforeItsSlot(t *testing.T) {
	t.Parallel()
	env := newSandbox(t, sandbox.Options{})
	var custs []transform.Result
	for i := 0; i < 300; i++ {
		id := fmt.Sprintf("C%03d", i)
		custs = append(custs, rec("customers", "CUSTOMERS", id, i+2, map[string]any{"CUSTNAME": id, "CUSTDES": "x"}))
	}
	p := testPlan(step("customers", "CUSTOMERS"))
	o := env.opts(t, p, &fakeRecords{Results: map[string][]transform.Result{"customers": custs}})
	o.Concurrency, o.BatchSize = 1, 100
	sc := &stallingClient{inner: env.client, pass: 1, stalled: make(chan struct{})}
	o.Client = sc
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-sc.stalled
		// Batch 3 is journaled while it waits for the slot batch 2 holds;
		// then Ctrl-C. (A busy wait on the journal, not a sleep: batch 3's
		// intent is bound to appear.)
		for {
			if st, err := journal.Load(o.Journal); err == nil && st.LastBatch >= 3 {
				break
			}
			runtime.Gosched()
		}
		cancel()
	}()
	_, err := runApply(ctx, o)
	if !errors.Is(err, ErrInterrupted) && !errors.Is(err, context.Canceled) {
		t.Fatalf("Apply: %v, want interrupted", err)
	}
	st := loadJournal(t, o.Journal)
	c := st.Counts("customers")
	if c.Committed != 100 || c.InDoubt != 100 {
		t.Fatalf("counts %+v: want the first batch committed and only the stalled one (100) in doubt", c)
	}
	if n := len(st.InDoubtSubs()); n != 100 {
		t.Fatalf("%d sub-requests in doubt, want the stalled batch's 100", n)
	}
	data, err := os.ReadFile(o.Journal)
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(data, []byte("not sent: the run stopped first")); n != 100 {
		t.Fatalf("%d sub-requests journaled as never sent, want batch 3's 100", n)
	}
	if got := sc.calls.Load(); got != 2 {
		t.Fatalf("%d calls, want 2 (one answered, one stalled)", got)
	}
}

// TestAnsweredWhole: only an answer that leaves nothing to decide (every
// sub-request answered once with a 2xx, no record of the batch failed
// before) gives its call's slot back before it is journaled; any other
// keeps it, so that what complete decides (a breaker's stop, a doubt, a
// read back) comes before the next call.
func TestAnsweredWhole(t *testing.T) {
	t.Parallel()
	reqs := []odata.BatchRequest{{ID: "1"}, {ID: "2"}}
	ok := func(id string, status int) odata.BatchResponse { return odata.BatchResponse{ID: id, Status: status} }
	tests := []struct {
		name         string
		resps        []odata.BatchResponse
		failedBefore bool
		want         bool
	}{
		{"all created", []odata.BatchResponse{ok("1", 201), ok("2", 204)}, false, true},
		{"answered out of order", []odata.BatchResponse{ok("2", 201), ok("1", 201)}, false, true},
		{"a refusal", []odata.BatchResponse{ok("1", 201), ok("2", 400)}, false, false},
		{"a server error", []odata.BatchResponse{ok("1", 500), ok("2", 201)}, false, false},
		{"one unanswered", []odata.BatchResponse{ok("1", 201)}, false, false},
		{"answered twice", []odata.BatchResponse{ok("1", 201), ok("2", 201), ok("2", 201)}, false, false},
		{"a record failed in an earlier batch", []odata.BatchResponse{ok("1", 201), ok("2", 201)}, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := &work{failed: tt.failedBefore}
			batch := []*op{{work: &work{}}, {work: w}}
			var ans answer
			ans.matched, ans.problem = odata.MatchResponses(reqs, tt.resps)
			if got := (&runner{}).answeredWhole(batch, ans); got != tt.want {
				t.Errorf("answeredWhole = %v, want %v", got, tt.want)
			}
		})
	}
}
