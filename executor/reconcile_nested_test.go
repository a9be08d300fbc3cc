package executor

import (
	"context"
	"errors"
	"testing"

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
	env.client.failNext.Store(true)
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
