package executor

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/odata/odatatest"
	"github.com/migrate-tool/migrate/sandbox"
	"github.com/migrate-tool/migrate/transform"
)

// TestBatchSizerShrinks: a call past half the server's 3-minute budget cuts
// the batches to what a third of it takes at the measured rate; a faster
// call changes nothing, and the size never grows back.
func TestBatchSizerShrinks(t *testing.T) {
	t.Parallel()
	type call struct {
		n    int
		took time.Duration
	}
	for _, tt := range []struct {
		name  string
		calls []call
		want  int
		shown *BatchShrink
	}{
		{"fast", []call{{100, 20 * time.Second}, {100, 90 * time.Second}}, 100, nil},
		{"slow", []call{{100, 2 * time.Minute}}, 50, &BatchShrink{From: 100, To: 50, Slowest: 2 * time.Minute, Of: 100}},
		{"dropped at the budget", []call{{100, 3 * time.Minute}}, 33, &BatchShrink{From: 100, To: 33, Slowest: 3 * time.Minute, Of: 100}},
		{"never grows back", []call{{100, 2 * time.Minute}, {50, 10 * time.Second}, {10, 100 * time.Second}}, 6,
			&BatchShrink{From: 100, To: 6, Slowest: 2 * time.Minute, Of: 100}},
		{"one sub-request at least", []call{{1, 10 * time.Minute}}, 1, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := newBatchSizer(100)
			if tt.name == "one sub-request at least" {
				s = newBatchSizer(1)
			}
			for _, c := range tt.calls {
				s.observe(c.n, c.took)
			}
			if got := s.size(); got != tt.want {
				t.Errorf("size = %d, want %d", got, tt.want)
			}
			got := s.shrink()
			if fmt.Sprint(got) != fmt.Sprint(tt.shown) {
				t.Errorf("shrink = %+v, want %+v", got, tt.shown)
			}
		})
	}
}

// slowServer takes a simulated 1.2 seconds a sub-request of orders: a
// batch of 100 takes two minutes, past half the server's budget.
type slowServer struct {
	Client
	clk   *odatatest.Clock
	mu    sync.Mutex
	sizes []int
}

func (c *slowServer) Batch(ctx context.Context, reqs []odata.BatchRequest, opts odata.BatchOptions) ([]odata.BatchResponse, error) {
	if len(reqs) > 0 && reqs[0].Method == "POST" && strings.HasPrefix(reqs[0].URL, "ORDERS") {
		c.mu.Lock()
		c.sizes = append(c.sizes, len(reqs))
		c.mu.Unlock()
		_ = c.clk.Sleep(ctx, time.Duration(len(reqs))*1200*time.Millisecond)
	}
	return c.Client.Batch(ctx, reqs, opts)
}

// TestSlowCallsShrinkBatches: against a server slow enough that a full
// batch takes two minutes, apply cuts the batches packed after the first
// call's answer to what takes one (the second was packed while the first
// was in flight, when the scheduler let it be), loads every record, and its
// summary says so: the dry run counted four calls of orders, apply made as
// many more as it sent.
func TestSlowCallsShrinkBatches(t *testing.T) {
	t.Parallel()
	env := newSandbox(t, sandbox.Options{})
	var orders []transform.Result
	for i := 0; i < 400; i++ {
		orders = append(orders, orderWithLines(fmt.Sprintf("O%03d", i), i+2, "C1"))
	}
	p, f := deepOrders(orders...)
	o := env.opts(t, p, f)
	clk := odatatest.NewClock(time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC))
	slow := &slowServer{Client: o.Client, clk: clk}
	o.Client, o.Now, o.Concurrency = slow, clk.Now, 1
	dry, err := runDryRun(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	sum := o.complete(t, "apply")
	// The first batch is full; the next was packed while the first was
	// in flight, as far as the scheduler let it get before the answer
	// came (full, or 52 with the cut coming at its 53rd); every one after
	// that carries at most 50.
	sizes, total := slow.sizes, 0
	for i, n := range sizes {
		total += n
		if i == 0 && n != 100 || i == 1 && n > 100 || i > 1 && n > 50 {
			t.Errorf("batches of %v sub-requests: batch %d carries %d", sizes, i+1, n)
		}
	}
	if total != 400 || len(sizes) < 6 {
		t.Errorf("batches of %v sub-requests, want 400 in at least 6", sizes)
	}
	want := BatchShrink{From: 100, To: 50, Slowest: 2 * time.Minute, Of: 100}
	if sum.Shrank == nil || *sum.Shrank != want {
		t.Errorf("Shrank = %+v, want %+v", sum.Shrank, want)
	}
	if dry.Shrank != nil || dry.Requests+len(sizes)-4 != sum.Requests {
		t.Errorf("dry run: Shrank %+v, %d calls; apply made %d", dry.Shrank, dry.Requests, sum.Requests)
	}
	if n := len(env.entities("ORDERS", "ORDNAME")); n != 400 {
		t.Errorf("%d orders on the server, want 400", n)
	}
}
