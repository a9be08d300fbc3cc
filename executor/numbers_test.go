package executor

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync/atomic"
	"testing"

	"github.com/migrate-tool/migrate/executor/fixture"
	"github.com/migrate-tool/migrate/journal"
	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/plan"
	"github.com/migrate-tool/migrate/sandbox"
	"github.com/migrate-tool/migrate/transform"
)

// TestDeepInsertNumbersAsStrings: against a server that
// answers Int64 and Decimal values as strings (IEEE754Compatible, as CAP
// does), the lines of a deep-inserted order read back as "2" and "500.01"
// were compared with the 2 and 500.005 sent by their JSON: none matched,
// so a lost answer's resume sent every line again (the orders doubled
// while the run ended exit 0), and every later apply did once more. Now
// they compare by the field's type: orders of 2, 2 and 1 lines keep 2, 2
// and 1 through a lost answer and seven applies, the journal holds each
// order committed once, verify finds every line as sent, and undo
// finds nothing changed since the run.
func TestDeepInsertNumbersAsStrings(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		quirks map[string]bool
	}{
		{"spec", nil},
		{"numbers as strings", map[string]bool{sandbox.QuirkNumbersAsStrings: true}},
		// Decimals rounded to the Scale of real $metadata, then given as strings.
		{"with real metadata", map[string]bool{sandbox.QuirkNumbersAsStrings: true, sandbox.QuirkRealMetadata: true}},
		{"every quirk", sandbox.AllQuirks()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			env := newSandbox(t, sandbox.Options{Quirks: tc.quirks})
			env.md = servedMetadata(t, env) // with real metadata's Scale, as the CLI reads it
			want := map[string]int{"O1": 2, "O2": 2, "O3": 1}
			var orders []transform.Result
			for i, id := range []string{"O1", "O2", "O3"} {
				o := orderWithLines(id, i+2, "C1", []string{"P1", "P2"}[:want[id]]...)
				for _, l := range o.Record.Children {
					l.Fields["TQUANT"], l.Fields["PRICE"] = dec("2"), dec("500.005")
				}
				orders = append(orders, o)
			}
			p, f := deepOrders(orders...)
			o := env.opts(t, p, f)
			o.Client = &loseOrders{Client: env.client} // the orders' answer is lost
			if _, err := runApply(context.Background(), o); !errors.Is(err, ErrInDoubt) {
				t.Fatalf("first apply: %v, want in doubt", err)
			}
			o.Client = env.client
			for apply := 2; apply <= 8; apply++ {
				sum, err := runApply(context.Background(), o)
				if err != nil || !sum.Complete || len(sum.Errors) > 0 {
					t.Fatalf("apply %d: %v %+v", apply, err, sum)
				}
				got := env.entities("ORDERS", "DETAILS")
				if len(env.sb.Snapshot()["ORDERS"]) != len(want) {
					t.Fatalf("apply %d: the server holds %d orders, want %d", apply, len(env.sb.Snapshot()["ORDERS"]), len(want))
				}
				var counts, wantCounts string
				for _, id := range []string{"O1", "O2", "O3"} {
					counts += fmt.Sprintf("%d,", len(lines(got[id], "ORDERITEMS_SUBFORM")))
					wantCounts += fmt.Sprintf("%d,", want[id])
				}
				if counts != wantCounts {
					t.Fatalf("apply %d: the orders hold %s lines, want %s", apply, counts, wantCounts)
				}
			}
			st := loadJournal(t, o.Journal)
			if c := st.Counts("orders"); c != (journal.Counts{Committed: len(want)}) {
				t.Errorf("journal: %+v, want %d committed", c, len(want))
			}
			checkJournalKeys(t, env, o.Journal)
			// verify reads the lines back as strings too: each the same as
			// sent, and the control totals agree.
			problems, err := VerifyInTest(context.Background(), o.Journal, env.client, o.Target, env.md)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range problems {
				t.Errorf("verify: %s", p)
			}
			// undo finds everything as the run left it: nothing skipped.
			u, err := UndoInTest(context.Background(), o.Journal, env.client, UndoInTestOptions{Yes: true, Target: o.Target, Metadata: metadataOf(o.Prepared.Metadata)})
			if err != nil || len(u.Skipped) > 0 {
				t.Fatalf("undo: %v, skipped %q", err, u.Skipped)
			}
			if n := len(env.sb.Snapshot()["ORDERS"]); n != 0 {
				t.Errorf("after undo the server holds %d orders", n)
			}
		})
	}
}

// servedMetadata is the $metadata the sandbox serves (under real-metadata,
// with the Scale of each decimal), as the CLI reads it before a run.
func servedMetadata(t *testing.T, env *sandboxEnv) *odata.Metadata {
	t.Helper()
	return fixture.ServedMetadata(t, env.client)
}

// loseOrders loses the answer of the first batch that creates orders,
// after the server committed it, as a connection dropped then would.
type loseOrders struct {
	Client
	lost atomic.Bool
}

func (c *loseOrders) Batch(ctx context.Context, reqs []odata.BatchRequest, opts odata.BatchOptions) ([]odata.BatchResponse, error) {
	if len(reqs) == 0 || reqs[0].Method != "POST" || reqs[0].URL != "ORDERS" || c.lost.Swap(true) {
		return c.Client.Batch(ctx, reqs, opts)
	}
	if _, err := c.Client.Batch(ctx, reqs, opts); err != nil {
		return nil, err
	}
	return nil, &odata.InDoubtError{Op: "POST $batch", Err: errors.New("connection reset after the commit (simulated)")}
}

// TestUpsertAndDiffNumbersAsStrings: against a server that answers numbers
// as strings, diff finds a part whose price and family are as the source
// has them unchanged, and upsert leaves it alone; a price that differs is
// the one field diff shows and upsert sends. With real metadata, a price
// the server rounded to its Scale is the same price.
func TestUpsertAndDiffNumbersAsStrings(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		quirks map[string]bool
		price  string // P1's price as the source has it
	}{
		{"numbers as strings", map[string]bool{sandbox.QuirkNumbersAsStrings: true}, "1.25"},
		{"with real metadata", map[string]bool{sandbox.QuirkNumbersAsStrings: true, sandbox.QuirkRealMetadata: true}, "1.254"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			env := newSandbox(t, sandbox.Options{Quirks: tc.quirks})
			env.md = servedMetadata(t, env)
			parts := func(p2 string) []transform.Result {
				return []transform.Result{
					rec("parts", "LOGPART", "P1", 2, map[string]any{"PARTNAME": "P1", "PARTDES": "Bolt", "PRICE": dec(tc.price)}),
					rec("parts", "LOGPART", "P2", 3, map[string]any{"PARTNAME": "P2", "PARTDES": "Nut", "PRICE": dec(p2)}),
				}
			}
			env.seedParts(t, parts("2")...)
			up := step("parts", "LOGPART")
			up.Mode = plan.ModeUpsert
			o := env.opts(t, testPlan(up), &fakeRecords{Results: map[string][]transform.Result{"parts": parts("3")}})
			d, err := runDiff(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range d.Records {
				var fields []string
				for f := range r.Fields {
					fields = append(fields, f)
				}
				sort.Strings(fields)
				got = append(got, fmt.Sprintf("%s %s %v", r.Key, r.Action, fields))
			}
			if want := []string{"'P1' unchanged []", "'P2' update [PRICE]"}; fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("diff: %q, want %q", got, want)
			}
			o.apply(t)
			st := loadJournal(t, o.Journal)
			if r := st.Record("parts", "P1"); r == nil || r.Subs[""] != nil {
				t.Errorf("P1, unchanged, was written: %+v", r)
			}
			if r := st.Record("parts", "P2"); r == nil || r.Subs[""] == nil || string(r.Subs[""].Match) != `{"PRICE":3}` {
				t.Errorf("P2's PATCH: %+v", r)
			}
		})
	}
}

// TestTypeAt: a PATCH in doubt is compared by the type of what its URL
// addresses: an entity, a line, a line's text; nil for what the metadata
// does not know.
func TestTypeAt(t *testing.T) {
	t.Parallel()
	md := sandbox.DemoMetadata()
	for path, want := range map[string]string{
		"ORDERS('SO26000001')":                                              "ORDERS",
		"ORDERS('SO%2026')/ORDERITEMS_SUBFORM(3)":                           "ORDERITEMS_SUBFORM",
		"ORDERS('SO26000001')/ORDERITEMS_SUBFORM(3)/ORDERITEMSTEXT_SUBFORM": "ORDERITEMSTEXT_SUBFORM",
		"LOGPART('O''Neil & Co')":                                           "LOGPART",
		"NOPE('x')":                                                         "",
		"ORDERS('SO1')/NOPE(1)":                                             "",
	} {
		got := ""
		if et := TypeAt(md, path); et != nil {
			got = et.Name
		}
		if got != want {
			t.Errorf("TypeAt(%s) = %q, want %q", path, got, want)
		}
	}
}
