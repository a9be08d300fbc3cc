package executor

import (
	"sync"
	"time"

	"github.com/migrate-tool/migrate/odata"
)

// callBudget is how long a hosted server lets a request run before it
// drops it (docs/servers.md, Limits of hosted installations).
const callBudget = 3 * time.Minute

// batchSizer is the run's batch size, shared by its steps. A call that took
// more than half of the call budget makes the batches that follow as large
// as would take a third of it at the rate that call measured: a dropped
// call leaves its batch in doubt, for reconciliation to settle. It never
// grows them back within a run; the next run starts from the full size.
type batchSizer struct {
	mu     sync.Mutex
	limit  int
	shrank *BatchShrink
}

// BatchShrink says that apply sent smaller batches than it began with
// (and so more calls than the dry run counted): the slowest call, of how
// many sub-requests, and the size the batches were cut to.
type BatchShrink struct {
	From, To int
	// Slowest is the longest call measured, of Of sub-requests: the time
	// of one attempt, without the client's waits between attempts.
	Slowest time.Duration
	Of      int
}

func newBatchSizer(limit int) *batchSizer { return &batchSizer{limit: limit} }

// size is the most sub-requests the next batch may carry.
func (s *batchSizer) size() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.limit
}

// observe takes a call of n sub-requests that took took (one attempt).
func (s *batchSizer) observe(n int, took time.Duration) {
	if n <= 0 || took <= callBudget/2 {
		return
	}
	want := max(1, int(int64(n)*int64(callBudget/3)/int64(took)))
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.shrank == nil {
		s.shrank = &BatchShrink{From: s.limit, To: s.limit}
	}
	if took > s.shrank.Slowest {
		s.shrank.Slowest, s.shrank.Of = took, n
	}
	if want < s.limit {
		s.limit = want
		s.shrank.To = want
	}
}

// shrink is what observe did, nil when no call came near the budget.
func (s *batchSizer) shrink() *BatchShrink {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.shrank == nil || s.shrank.To == s.shrank.From {
		return nil
	}
	c := *s.shrank
	return &c
}

// attemptTime is one attempt's share of a call that took elapsed in all,
// the client's waits between attempts (backoff, Retry-After) left out.
func attemptTime(elapsed time.Duration, calls *odata.CallStats) time.Duration {
	d := elapsed - calls.Waited
	if calls.Attempts > 1 {
		d /= time.Duration(calls.Attempts)
	}
	return d
}
