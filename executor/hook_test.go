package executor

import (
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/migrate-tool/migrate/executor/fixture"
	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/odata/odatatest"
	"github.com/migrate-tool/migrate/sandbox"
	"github.com/migrate-tool/migrate/transform"
)

type waitHook struct {
	NopHook
	mu    sync.Mutex
	waits []string
}

func (h *waitHook) Waiting(step string, w odata.Wait) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.waits = append(h.waits, fmt.Sprintf("%s %v rate-limit=%v", step, w.For, w.RateLimit))
}

// The client's pauses for the rate limit reach the hook as the step's, so
// that the progress view can say why nothing moves.
func TestHookHearsRateLimitWaits(t *testing.T) {
	t.Parallel()
	env := newSandbox(t, sandbox.Options{})
	c := fixture.ODataClient(t, env.srv, odata.Config{CallsPerMinute: 2, Clock: odatatest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))})
	var parts []transform.Result
	for _, code := range []string{"P1", "P2", "P3"} {
		parts = append(parts, rec("parts", "LOGPART", code, 2, map[string]any{"PARTNAME": code, "PARTDES": "part " + code}))
	}
	o := env.opts(t, testPlan(step("parts", "LOGPART")), &fakeRecords{Results: map[string][]transform.Result{"parts": parts}})
	hook := &waitHook{}
	o.Client, o.Hook, o.BatchSize, o.Concurrency = c, hook, 1, 1
	o.complete(t, "apply")
	if got := len(env.entities("LOGPART", "PARTNAME")); got != 3 {
		t.Fatalf("the sandbox holds %d parts, want 3", got)
	}
	// Two calls a minute: the warm-up of LOGPART (cold forms), then the
	// three batches, each waiting 30 s.
	want := []string{"parts 30s rate-limit=true", "parts 30s rate-limit=true", "parts 30s rate-limit=true"}
	if !reflect.DeepEqual(hook.waits, want) {
		t.Errorf("waits = %q, want %q", hook.waits, want)
	}
}
