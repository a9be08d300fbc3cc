package executor

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/sandbox"
	"github.com/migrate-tool/migrate/transform"
)

// TestCrashThenResumeReconcilesLineTexts: a batch whose answer is lost holds
// orders, their lines and the lines' texts (a child of a child). The resume
// must find the texts under their lines, not leave them undecided forever
// (found by the crash campaign: every resume exited 4 with "its parent's
// key is unknown").
func TestCrashThenResumeReconcilesLineTexts(t *testing.T) {
	t.Parallel()
	env := newSandbox(t, sandbox.Options{})
	withTexts := func(id string, l int) transform.Result {
		r := orderWithLines(id, l, "C1", "P1", "P2")
		for i, k := range r.Record.Children {
			k.Children = append(k.Children, single("ORDERITEMSTEXT_SUBFORM", map[string]any{"TEXT": id + " line note " + string(rune('a'+i))}))
		}
		return r
	}
	p, f := ordersPlan(withTexts("O1", 2), withTexts("O2", 3))
	o := loadPartsAndCustomers(t, env, p, f)
	env.client.FailNext.Store(true)
	if sum, err := runApply(context.Background(), o); !errors.Is(err, ErrInDoubt) {
		t.Fatalf("first apply: %v %+v", err, sum)
	}
	sum, err := runApply(context.Background(), o)
	if err != nil || !sum.Complete || len(sum.Undecided) != 0 {
		t.Fatalf("resume: %v complete=%v undecided=%q", err, sum != nil && sum.Complete, sum.Undecided)
	}
	if sum.Transactions != 0 {
		t.Errorf("resume wrote %d API transactions; everything was committed", sum.Transactions)
	}
	got := env.entities("ORDERS", "DETAILS")
	if len(got) != 2 || len(env.sb.Snapshot()["ORDERS"]) != 2 {
		t.Fatalf("orders: %d", len(env.sb.Snapshot()["ORDERS"]))
	}
	for id, ord := range got {
		ls := lines(ord, "ORDERITEMS_SUBFORM")
		if len(ls) != 2 {
			t.Fatalf("%s: %d lines, want 2", id, len(ls))
		}
		for i, l := range ls {
			txt, _ := l["ORDERITEMSTEXT_SUBFORM"].(map[string]any)
			if want := id + " line note " + string(rune('a'+i)); txt == nil || txt["TEXT"] != want {
				t.Errorf("%s line %d: text %v, want %q once", id, i+1, txt, want)
			}
		}
	}
}

// standardTexts answers a read of an order's text as a standard service
// does when the order has none (204 No Content: a single-valued navigation
// that holds nothing), and loses the first batch that writes a text before
// it is sent, as a run killed between its journal's intent and the call.
type standardTexts struct {
	inner Client
	lost  atomic.Bool
}

func (c *standardTexts) Batch(ctx context.Context, reqs []odata.BatchRequest, opts odata.BatchOptions) ([]odata.BatchResponse, error) {
	textRead := map[string]bool{}
	for _, r := range reqs {
		switch {
		case !strings.HasSuffix(r.URL, "/ORDERSTEXT_SUBFORM"):
		case r.Method == http.MethodGet:
			textRead[r.ID] = true
		case c.lost.CompareAndSwap(false, true):
			return nil, &odata.InDoubtError{Op: "POST $batch", Err: errors.New("killed before sending (simulated)")}
		}
	}
	resps, err := c.inner.Batch(ctx, reqs, opts)
	for i, r := range resps {
		var text struct{ TEXT *string }
		if textRead[r.ID] && (r.Status == http.StatusNotFound || json.Unmarshal(r.Body, &text) == nil && text.TEXT == nil) {
			resps[i].Status, resps[i].Body = http.StatusNoContent, nil
		}
	}
	return resps, err
}

// TestResumeSendsTextAnsweredNoContent: an order's text, written on its
// own after the order (line by line), went in doubt without reaching the
// server; the resume reads the order's text, which a standard service
// answers 204 No Content, and sends it: absent, not in doubt forever
// (found by the crash campaign against CAP: every resume exited 4 with
// "reading its lines gave status 204").
func TestResumeSendsTextAnsweredNoContent(t *testing.T) {
	t.Parallel()
	env := newSandbox(t, sandbox.Options{})
	o1 := orderWithLines("O1", 2, "C1", "P1", "P2")
	o1.Record.Children = append(o1.Record.Children, single("ORDERSTEXT_SUBFORM", map[string]any{"TEXT": "Deliver to gate 2"}))
	p, f := ordersPlan(o1)
	o := loadPartsAndCustomers(t, env, p, f)
	// Each sub-request a batch of its own: the order is answered, its
	// text's batch lost.
	o.BatchSize = 1
	c := &standardTexts{inner: env.client}
	o.Client = c
	if _, err := runApply(context.Background(), o); !errors.Is(err, ErrInDoubt) {
		t.Fatalf("first apply: %v", err)
	}
	if !c.lost.Load() {
		t.Fatal("no batch wrote the order's text")
	}
	sum, err := runApply(context.Background(), o)
	if err != nil || !sum.Complete || len(sum.Undecided) != 0 {
		t.Fatalf("resume: %v complete=%v undecided=%q", err, sum != nil && sum.Complete, sum.Undecided)
	}
	ord := env.entities("ORDERS", "DETAILS")["O1"]
	if n := len(lines(ord, "ORDERITEMS_SUBFORM")); n != 2 {
		t.Errorf("O1: %d lines, want 2", n)
	}
	if txt, _ := ord["ORDERSTEXT_SUBFORM"].(map[string]any); txt == nil || txt["TEXT"] != "Deliver to gate 2" {
		t.Errorf("O1: text %v, want it once", ord["ORDERSTEXT_SUBFORM"])
	}
}
