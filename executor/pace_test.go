package executor

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
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

// TestPacedAtTheServersLimitDrawsNo429: a run paced at
// exactly the sandbox's calls per minute, start-up calls included, over
// more than two simulated minutes. The first call arrives late (a new
// connection); every call counts against one budget, so the server never
// refuses one, and the client is not allowed a single retry to hide it.
func TestPacedAtTheServersLimitDrawsNo429(t *testing.T) {
	t.Parallel()
	const perMinute = 10
	// Simulated time, shared by the sandbox and the client.
	clk := odatatest.NewClock(time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC))
	sb, err := sandbox.New(sandbox.Options{CallsPerMinute: perMinute, Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	var first sync.Once
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		first.Do(func() { _ = clk.Sleep(r.Context(), 5*time.Second) }) // connecting
		sb.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	c := fixture.ODataClient(t, srv, odata.Config{Clock: clk, CallsPerMinute: perMinute, Retries: -1})
	ctx := context.Background()
	// The start-up calls apply makes before loading.
	v, err := c.Version(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.LoginName(ctx); err != nil {
		t.Fatal(err)
	}
	var orders []transform.Result
	for i := 0; i < 30; i++ {
		orders = append(orders, orderWithLines(fmt.Sprintf("O%02d", i), i+2, "C1", "P1", "P2"))
	}
	p, f := deepOrders(orders...)
	env := &sandboxEnv{sb: sb, srv: srv, md: sandbox.DemoMetadata(), ver: v}
	o := env.opts(t, p, f)
	o.Client, o.BatchSize = c, 2
	start := clk.Now()
	o.complete(t, "apply")
	st := sb.Stats()
	if st.Throttled != 0 {
		t.Errorf("%d calls refused with 429", st.Throttled)
	}
	if n := len(env.entities("ORDERS", "DETAILS")); n != 30 {
		t.Errorf("%d orders", n)
	}
	// Enough calls to span more than two minutes at the limit.
	if d := clk.Now().Sub(start); st.Calls < 2*perMinute+2 || d < 2*time.Minute {
		t.Errorf("%d calls over %v: the limit was not tested", st.Calls, d)
	}
	t.Logf("%d calls over %v of simulated time", st.Calls, clk.Now().Sub(start))
}

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
