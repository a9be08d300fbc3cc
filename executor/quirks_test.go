package executor

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/migrate-tool/migrate/executor/fixture"
	"github.com/migrate-tool/migrate/journal"
	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/plan"
	"github.com/migrate-tool/migrate/sandbox"
	"github.com/migrate-tool/migrate/transform"
)

// The client stays exactly-once on real servers' quirks (docs/servers.md;
// sandbox.Options.Quirks imitates each).

// restartable is a sandbox env whose server can be restarted on the same
// address and data, as a real server restarts: its forms are cold again.
type restartable struct {
	*sandboxEnv
	sbOpts sandbox.Options
	cur    atomic.Pointer[sandbox.Server]
}

func newRestartable(t *testing.T, opts sandbox.Options) *restartable {
	t.Helper()
	opts.StatePath = filepath.Join(t.TempDir(), "state.json")
	r := &restartable{sbOpts: opts}
	r.sandboxEnv = newSandboxBehind(t, opts, func(sb *sandbox.Server) http.Handler {
		r.cur.Store(sb)
		return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) { r.cur.Load().ServeHTTP(w, req) })
	})
	return r
}

func (r *restartable) restart(t *testing.T) {
	t.Helper()
	if err := r.sb.Close(); err != nil {
		t.Fatal(err)
	}
	sb, err := sandbox.New(r.sbOpts)
	if err != nil {
		t.Fatal(err)
	}
	r.sb = sb
	r.cur.Store(sb)
}

// seedParts loads parts P1 (barcode 1) and P2 (barcode 2).
func seedParts(t *testing.T, env *sandboxEnv) {
	t.Helper()
	p, f := partsPlan(plan.ModeInsert, part("P1", 2, "1"), part("P2", 3, "2"))
	if sum, err := runApply(context.Background(), env.opts(t, p, f)); err != nil || !sum.Complete {
		t.Fatalf("seed: %v", err)
	}
}

// TestColdFormsAfterRestart: a server restarted between two runs answers
// 404 to the first GET of each form. Reconciliation of creates by key,
// upsert's reads and undo's checks each take a 404 for absence; each must
// warm the form and ask again first, or it sends a create twice (409, a
// failed record), inserts what exists, or leaves undone what it should undo.
func TestColdFormsAfterRestart(t *testing.T) {
	t.Parallel()
	cold := sandbox.Options{Quirks: map[string]bool{sandbox.QuirkColdForms: true}}

	t.Run("reconciling creates by key", func(t *testing.T) {
		t.Parallel()
		env := newRestartable(t, cold)
		p, f := partsPlan(plan.ModeInsert, part("P1", 2, "1"), part("P2", 3, "2"), part("P3", 4, "3"))
		o := env.opts(t, p, f)
		o.Client = &fixture.LoseOnce{Batcher: env.client, Lose: func([]odata.BatchRequest) bool { return true }}
		if _, err := runApply(context.Background(), o); !errorsIs(err, ErrInDoubt) {
			t.Fatalf("first apply: %v, want in doubt", err)
		}
		env.restart(t)
		o.Client = env.client
		o.complete(t, "second apply")
		st, _ := journal.Load(o.Journal)
		if c := st.Counts("parts"); c != (journal.Counts{Committed: 3}) {
			t.Errorf("journal: %+v, want 3 committed and nothing failed", c)
		}
		if got := env.entities("LOGPART", "PARTNAME"); len(got) != 3 || got["P2"]["BARCODE"] != "2" {
			t.Errorf("the sandbox holds %v", got)
		}
	})

	t.Run("a warm-up the server never took", func(t *testing.T) {
		// The client could not warm the form up: it sent nothing, so the
		// records are pending, not in doubt, and the next apply sends them.
		t.Parallel()
		env := newRestartable(t, cold)
		p, f := partsPlan(plan.ModeInsert, part("P1", 2, "1"), part("P2", 3, "2"), part("P3", 4, "3"))
		o := env.opts(t, p, f)
		o.Client = &notSentOnce{Client: env.client}
		first, err := runApply(context.Background(), o)
		if !errorsIs(err, ErrInterrupted) || !strings.Contains(err.Error(), "not sent: warming up") {
			t.Fatalf("first apply: %v, want interrupted, naming the warm-up", err)
		}
		st, _ := journal.Load(o.Journal)
		if c := st.Counts("parts"); c != (journal.Counts{Pending: 3}) {
			t.Errorf("journal after the first apply: %+v, want 3 pending", c)
		}
		// None of the batch was sent: apply counts no sub-request and no
		// API transaction of it, and the journal says so for the report.
		if first == nil || first.Subrequests != 0 || first.Transactions != 0 {
			t.Errorf("the first apply counts what it never sent: %+v", first)
		}
		if rep, err := journal.LoadReport(o.Journal); err != nil || len(rep.Batches) != 1 || !rep.Batches[0].Unsent {
			t.Errorf("the journal does not say the batch was never sent: %+v, %v", rep, err)
		}
		o.Client = env.client
		sum, err := runApply(context.Background(), o)
		if err != nil || !sum.Complete || stepOf(sum, "parts").Committed != 3 {
			t.Fatalf("second apply: %v %+v", err, sum)
		}
		if got := env.entities("LOGPART", "PARTNAME"); len(got) != 3 {
			t.Errorf("the sandbox holds %v", got)
		}
	})

	t.Run("upsert reads", func(t *testing.T) {
		t.Parallel()
		env := newRestartable(t, cold)
		seedParts(t, env.sandboxEnv)
		env.restart(t)
		p, f := partsPlan(plan.ModeUpsert, part("P1", 2, "9"), part("P2", 3, "2"), part("P3", 4, "3"))
		sum, err := runApply(context.Background(), env.opts(t, p, f))
		if err != nil || !sum.Complete || stepOf(sum, "parts").Failed != 0 {
			t.Fatalf("upsert: %v %+v", err, sum)
		}
		got := env.entities("LOGPART", "PARTNAME")
		if len(got) != 3 || got["P1"]["BARCODE"] != "9" || got["P3"]["BARCODE"] != "3" {
			t.Errorf("the sandbox holds %v", got)
		}
	})

	t.Run("undo's checks", func(t *testing.T) {
		t.Parallel()
		env := newRestartable(t, cold)
		seedParts(t, env.sandboxEnv)
		before := env.sb.Snapshot()
		p, f := partsPlan(plan.ModeUpsert, part("P1", 2, "9"), part("P2", 3, "8"))
		o := env.opts(t, p, f)
		if sum, err := runApply(context.Background(), o); err != nil || !sum.Complete {
			t.Fatalf("upsert: %v", err)
		}
		// Undo reads each entity to see that it is as the run left it.
		env.restart(t)
		us, err := UndoInTest(context.Background(), o.Journal, env.client, UndoInTestOptions{Yes: true})
		if err != nil || us.Done != 2 {
			t.Fatalf("undo: %v %+v", err, us)
		}
		if after := env.sb.Snapshot(); !reflect.DeepEqual(before["LOGPART"], after["LOGPART"]) {
			t.Errorf("undo left %v", after["LOGPART"])
		}
	})

	// With --force undo reads nothing first: its first request to the
	// restarted server is a DELETE, which a cold form answers 404. Taken
	// for "already gone", the part would stay.
	t.Run("undo --force's deletes", func(t *testing.T) {
		t.Parallel()
		env := newRestartable(t, cold)
		before := env.sb.Snapshot()
		p, f := partsPlan(plan.ModeInsert, part("P1", 2, "1"), part("P2", 3, "2"), part("P3", 4, "3"))
		o := env.opts(t, p, f)
		if sum, err := runApply(context.Background(), o); err != nil || !sum.Complete {
			t.Fatalf("apply: %v", err)
		}
		env.restart(t)
		us, err := UndoInTest(context.Background(), o.Journal, env.client, UndoInTestOptions{Yes: true, Force: true})
		if err != nil || us.Done != 3 || us.Failed != 0 {
			t.Fatalf("undo: %v %+v", err, us)
		}
		if after := env.sb.Snapshot(); !reflect.DeepEqual(before["LOGPART"], after["LOGPART"]) {
			t.Errorf("undo left %v, want %v", after["LOGPART"], before["LOGPART"])
		}
	})
}

// TestQuirksEveryOneAtOnce: orders with lines and texts, loaded against a
// server before 22.1 (g1 answered as g1-r1, GETs without ids) and one
// after, with every quirk on, end exactly as on a server without quirks;
// undo takes everything back.
func TestQuirksEveryOneAtOnce(t *testing.T) {
	t.Parallel()
	orders := func() (*plan.Plan, *fakeRecords) {
		o1 := orderWithLines("O1", 2, "C1", "P1", "P2")
		o1.Record.Children = append(o1.Record.Children, single("ORDERSTEXT_SUBFORM", map[string]any{"TEXT": "Deliver the order. <br> There", "APPEND": true}))
		return ordersPlan(o1, orderWithLines("O2", 3, "C1", "P3"))
	}
	load := func(t *testing.T, opts sandbox.Options) (*sandboxEnv, testRun, map[string][]map[string]any) {
		env := newSandbox(t, opts)
		before := env.sb.Snapshot()
		p, f := orders()
		o := env.opts(t, p, f)
		sum, err := runApply(context.Background(), o)
		if err != nil || !sum.Complete || len(sum.Errors) != 0 {
			t.Fatalf("%s %v: %v %+v", opts.SystemVersion, opts.Quirks, err, sum)
		}
		return env, o, before
	}
	for _, v := range []string{"21.0", "25.1"} {
		t.Run(v, func(t *testing.T) {
			t.Parallel()
			plain, _, _ := load(t, sandbox.Options{SystemVersion: v})
			env, o, before := load(t, sandbox.Options{SystemVersion: v, Quirks: sandbox.AllQuirks()})
			want, got := plain.sb.Snapshot(), env.sb.Snapshot()
			for _, set := range []string{"ORDERS", "LOGPART", "CUSTOMERS"} {
				if !equalJSON(scrubbed(got[set]), scrubbed(want[set])) {
					t.Errorf("%s under quirks:\n%v\nwithout:\n%v", set, got[set], want[set])
				}
			}
			// Verify reads it all back as the run left it: multipart ids,
			// cold forms and normalised texts are no differences.
			problems, err := VerifyInTest(context.Background(), o.Journal, env.client, o.Target, env.md)
			if err != nil || len(problems) != 0 {
				t.Fatalf("verify: %v %q", err, problems)
			}
			us, err := UndoInTest(context.Background(), o.Journal, env.client, UndoInTestOptions{Yes: true})
			if err != nil || us.Failed != 0 {
				t.Fatalf("undo: %v %+v", err, us)
			}
			if after := env.sb.Snapshot(); !equalJSON(after, before) {
				t.Errorf("undo left\n%v\nwant\n%v", after["ORDERS"], before["ORDERS"])
			}
		})
	}
}

// scrubbed leaves out what the server stamps differently in two runs.
func scrubbed(ents []map[string]any) []map[string]any {
	out := make([]map[string]any, len(ents))
	for i, e := range ents {
		c := map[string]any{}
		for k, v := range e {
			if k != "CURDATE" && k != "UDATE" {
				c[k] = v
			}
		}
		out[i] = c
	}
	return out
}

// TestAppendedTextInDoubtNotTwice: the answer to the batch that appended an
// order's text is lost; the server reads the text back normalised. The
// next apply finds the text by its content and does not append it again.
func TestAppendedTextInDoubtNotTwice(t *testing.T) {
	t.Parallel()
	const text = "Deliver the order. <br> There"
	for _, quirks := range []map[string]bool{{sandbox.QuirkNormalisedTexts: true}, sandbox.AllQuirks()} {
		env := newSandbox(t, sandbox.Options{Quirks: quirks})
		o1 := orderWithLines("O1", 2, "C1", "P1")
		o1.Record.Children = append(o1.Record.Children, single("ORDERSTEXT_SUBFORM", map[string]any{"TEXT": text, "APPEND": true}))
		p, f := ordersPlan(o1)
		o := env.opts(t, p, f)
		o.Client = &fixture.LoseOnce{Batcher: env.client, Lose: func(reqs []odata.BatchRequest) bool {
			for _, r := range reqs {
				if strings.HasSuffix(r.URL, "ORDERSTEXT_SUBFORM") {
					return true
				}
			}
			return false
		}}
		if _, err := runApply(context.Background(), o); !errorsIs(err, ErrInDoubt) {
			t.Fatalf("first apply: %v, want in doubt", err)
		}
		o.complete(t, "second apply")
		ords := env.sb.Snapshot()["ORDERS"]
		if len(ords) != 1 {
			t.Fatalf("%d orders, want 1", len(ords))
		}
		txt, _ := ords[0]["ORDERSTEXT_SUBFORM"].(map[string]any)
		if txt["TEXT"] != text {
			t.Errorf("quirks %v: the text is %q, want %q once", quirks, txt["TEXT"], text)
		}
	}
}

// TestDryRunReadsAServerBefore22_1: the dry run reads what a target before
// 22.1 holds, whose answers to GETs carry no ids (multipart-ids), and
// predicts the PATCH of the changed field, as apply then sends it.
func TestDryRunReadsAServerBefore22_1(t *testing.T) {
	t.Parallel()
	env := newSandbox(t, sandbox.Options{SystemVersion: "21.0", Quirks: sandbox.AllQuirks()})
	seedParts(t, env)
	p, f := partsPlan(plan.ModeUpsert, part("P1", 2, "9"), part("P2", 3, "2"), part("P3", 4, "3"))
	o := env.opts(t, p, f)
	o.OutDir = filepath.Join(t.TempDir(), "plan")
	sum, err := runDryRun(context.Background(), o)
	if err != nil || !sum.Complete || sum.Unread != 0 {
		t.Fatalf("plan: %v %+v", err, sum)
	}
	all := strings.Join(batchFiles(t, o.OutDir), "\n")
	for _, w := range []string{`"method":"PATCH","url":"LOGPART('P1')"`, `"body":{"BARCODE":"9"}`, `"method":"POST","url":"LOGPART"`} {
		if !strings.Contains(all, w) {
			t.Errorf("the planned batches lack %s:\n%s", w, all)
		}
	}
	if strings.Contains(all, `"url":"LOGPART('P2')","headers"`) {
		t.Errorf("the unchanged P2 is written:\n%s", all)
	}
}

// notSentOnce answers the first batch that writes as odata.Client does
// when it could not warm a cold form up: not sent.
type notSentOnce struct {
	Client
	done bool
}

func (c *notSentOnce) Batch(ctx context.Context, reqs []odata.BatchRequest, opts odata.BatchOptions) ([]odata.BatchResponse, error) {
	if !c.done && writes(reqs) {
		c.done = true
		return nil, &odata.NotSentError{Op: "POST $batch", Err: errors.New("warming up LOGPART?$top=1 before writing to it: connection refused (simulated)")}
	}
	return c.Client.Batch(ctx, reqs, opts)
}

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
