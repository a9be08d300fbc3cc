package executor

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/migrate-tool/migrate/journal"
	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/sandbox"
	"github.com/migrate-tool/migrate/transform"
)

// loseWrites sends every batch that writes and loses its answer, as a
// connection that drops after the commit. The answers are held until
// batches write batches were sent, so that that many go in doubt at once
// (a run stops sending after its first batch in doubt).
type loseWrites struct {
	Client
	batches int
	mu      sync.Mutex
	sent    int
	all     chan struct{}
}

func (c *loseWrites) Batch(ctx context.Context, reqs []odata.BatchRequest, opts odata.BatchOptions) ([]odata.BatchResponse, error) {
	if !writes(reqs) {
		return c.Client.Batch(ctx, reqs, opts)
	}
	if _, err := c.Client.Batch(ctx, reqs, opts); err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.sent++; c.sent == c.batches {
		close(c.all)
	}
	c.mu.Unlock()
	select {
	case <-c.all:
	case <-ctx.Done():
	}
	return nil, &odata.InDoubtError{Op: "POST $batch", Err: errors.New("connection reset after the commit (simulated)")}
}

// callLog counts the $batch calls and the GETs in each.
type callLog struct {
	Client
	mu    sync.Mutex
	calls [][]string // each call's URLs
}

func (c *callLog) Batch(ctx context.Context, reqs []odata.BatchRequest, opts odata.BatchOptions) ([]odata.BatchResponse, error) {
	urls := make([]string, len(reqs))
	for i, r := range reqs {
		urls[i] = r.Method + " " + r.URL
	}
	c.mu.Lock()
	c.calls = append(c.calls, urls)
	c.mu.Unlock()
	return c.Client.Batch(ctx, reqs, opts)
}

// oneRow counts the calls that only read one row of a set (GET
// SET?$top=1): learning which fields the set returns, warming a cold form,
// or asking again what a cold form denied.
func (c *callLog) oneRow() int {
	n := 0
	for _, call := range c.calls {
		only := len(call) > 0
		for _, u := range call {
			only = only && strings.HasSuffix(u, "?$top=1")
		}
		if only {
			n++
		}
	}
	return n
}

// TestReconcileReadsBatched: reads go many to a call: 75 server-numbered
// orders, each with two lines and an appended text, all written and every
// answer lost. Settling them took 225 calls of one GET each (the order by its
// fields, its lines, its text); the reads go up to 100 to a call: one call
// for the orders, two for their 150 lines and texts, plus the read of one
// order (which fields ORDERS returns), and on a server whose forms are cold
// its warm-up and second try. Every order, line and text ends on the server
// once.
func TestReconcileReadsBatched(t *testing.T) {
	t.Parallel()
	const n = 75
	for _, tc := range []struct {
		name   string
		opts   sandbox.Options
		oneRow int // calls reading one row, at most
	}{
		{"spec", sandbox.Options{}, 1},
		{"every quirk, 21.0", sandbox.Options{SystemVersion: "21.0", Quirks: sandbox.AllQuirks()}, 3},
		{"every quirk, 25.1", sandbox.Options{Quirks: sandbox.AllQuirks()}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			env := newSandbox(t, tc.opts)
			var orders []transform.Result
			for i := range n {
				o := orderWithLines(fmt.Sprintf("O%02d", i), i+2, "C1", "P1", "P2")
				o.Record.Children = append(o.Record.Children, single("ORDERSTEXT_SUBFORM", map[string]any{"TEXT": fmt.Sprintf("Order %d. <br> Deliver", i), "APPEND": true}))
				orders = append(orders, o)
			}
			p, f := ordersPlan(orders...)
			o := loadPartsAndCustomers(t, env, p, f)
			// 75 orders of 4 sub-requests are 3 batches, sent at once.
			o.Client = &loseWrites{Client: env.client, batches: 3, all: make(chan struct{})}
			o.Concurrency = 3
			if _, err := runApply(context.Background(), o); !errors.Is(err, ErrInDoubt) {
				t.Fatalf("first apply: %v, want in doubt", err)
			}
			st := loadJournal(t, o.Journal)
			if c := st.Counts("orders"); c.InDoubt != n {
				t.Fatalf("after the lost answers: %+v, want %d orders in doubt", c, n)
			}

			// migrate resolve's list reads the candidates as reconciliation does.
			listed := &callLog{Client: env.client}
			var creates []*journal.SubState
			for _, s := range st.InDoubtSubs() {
				if s.Path == "" && s.Op == journal.OpCreate && s.Key == "" {
					creates = append(creates, s)
				}
			}
			found, err := Candidates(context.Background(), st, creates, LookupOptions{Client: listed, Metadata: env.md})
			if err != nil || len(found) != n {
				t.Fatalf("Candidates: %d records, %v", len(found), err)
			}
			for i, f := range found {
				if len(f.Candidates) != 1 {
					t.Errorf("%s: %d candidates (%s), want its own order", creates[i].Rec, len(f.Candidates), f.Why)
				}
			}
			if reads := len(listed.calls) - listed.oneRow(); reads > 1 || listed.oneRow() > tc.oneRow {
				t.Errorf("listing %d orders in doubt took %d calls (%d of them reading one row), want 1 (+%d)", n, len(listed.calls), listed.oneRow(), tc.oneRow)
			}

			log := &callLog{Client: env.client}
			o.Client = log
			sum, err := runApply(context.Background(), o)
			if err != nil || !sum.Complete || len(sum.Undecided) > 0 {
				t.Fatalf("resume: %v %+v %q", err, sum, sum.Undecided)
			}
			if reads := len(log.calls) - log.oneRow(); reads > 3 || log.oneRow() > tc.oneRow {
				t.Errorf("settling %d orders took %d calls (%d of them reading one row), want at most 3 (+%d):", n, len(log.calls), log.oneRow(), tc.oneRow)
				for _, c := range log.calls {
					t.Logf("%d GETs: %.100s", len(c), strings.Join(c, " "))
				}
			}
			for _, c := range log.calls {
				if len(c) > 100 {
					t.Errorf("a call of %d GETs, want at most 100", len(c))
				}
			}

			st, _ = journal.Load(o.Journal)
			if c := st.Counts("orders"); c != (journal.Counts{Committed: n}) {
				t.Errorf("journal: %+v, want %d committed", c, n)
			}
			byDetails := env.entities("ORDERS", "DETAILS")
			if len(env.sb.Snapshot()["ORDERS"]) != n || len(byDetails) != n {
				t.Fatalf("the server holds %d orders (%d distinct), want %d once each", len(env.sb.Snapshot()["ORDERS"]), len(byDetails), n)
			}
			for i := range n {
				ord := byDetails[fmt.Sprintf("O%02d", i)]
				if l := lines(ord, "ORDERITEMS_SUBFORM"); len(l) != 2 {
					t.Errorf("O%02d has %d lines, want 2", i, len(l))
				}
				txt, _ := ord["ORDERSTEXT_SUBFORM"].(map[string]any)
				if want := fmt.Sprintf("Order %d. <br> Deliver", i); txt["TEXT"] != want {
					t.Errorf("O%02d's text is %q, want %q once", i, txt["TEXT"], want)
				}
			}
		})
	}
}
