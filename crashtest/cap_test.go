package crashtest

import (
	"context"
	"encoding/csv"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"math/big"
	"math/rand"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/migrate-tool/migrate/journal"
	"github.com/migrate-tool/migrate/odata/captest"
)

var (
	crashCAP       = flag.Int("crash.cap", 12, "crash campaign: kills to land in rounds that load the quickstart plan into the CAP test service with --dialect odata (0: none)")
	crashCAPOrders = flag.Int("crash.cap-orders", 30, "crash campaign: orders of the CAP rounds' load, in the quickstart's sources (plus 1-5 lines each, and its parts, customers and families)")
	crashCAPBatch  = flag.Int("crash.cap-batch", 5, "crash campaign: the batch_size given to the quickstart plan in the CAP rounds")
)

// TestCrashCAP is TestCrash against a standard OData service that is not
// the ERP's: the CAP test service (odata/captest; docs/other-services.md),
// loaded by the quickstart example plan with --dialect odata from sources
// in the quickstart's shapes, bigger. Orders are deep-inserted with their
// lines and text (deep insert), or posted bare, their lines one by one to
// the order and their text by a PATCH of the order (line by line: the
// plan's step with deep_insert: false), keyed by Guids the server numbers;
// one whose answer a
// kill lost is found again by its fields among the documents the server
// stamped (modifiedAt) after the step's watermark, while the service
// holds look-alikes of a third of them (same fields, same lines) made
// before the rounds, which must be neither taken for the load's own nor
// touched by undo. Each round kills apply at seeded random moments and
// resumes it until it exits 0, compares what the service holds with the
// generated rows exactly (and, after each kill, that nothing is there
// twice), runs verify, then kills and resumes undo until the service
// holds only the look-alikes. Under CI=true a service that cannot start
// fails the test; elsewhere, without `npm ci`, it skips.
func TestCrashCAP(t *testing.T) {
	if *crashCAP == 0 {
		t.Skip("-crash.cap=0")
	}
	t.Parallel()
	for _, lineByLine := range []bool{false, true} {
		name := "deep insert"
		if lineByLine {
			name = "line by line"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			runCrashCAP(t, name, lineByLine)
		})
	}
}

func runCrashCAP(t *testing.T, name string, lineByLine bool) {
	s := captest.Require(t)
	tg := &target{url: s.Root}
	dir := t.TempDir()
	l := generateCAP(t, dir, *crashCAPOrders, *crashCAPBatch, *crashConc, lineByLine, *crashSeed)
	rng := rand.New(rand.NewSource(*crashSeed))
	var f crashFigures
	inDoubt := map[string]int{} // sub-requests a kill left in doubt, by step, method and entity

	// What the service holds before every round: orders like the load's,
	// made by another run, which no round may take for its own.
	mustRun(t, tg, dir, "apply", l.lookAlikes, "--dialect", "odata")
	if d := l.diff(t, s.Root, l.held); !d.ok() {
		t.Fatalf("the look-alike orders: %v", d)
	}
	f.LookAlikes = len(l.held["ORDERS"])
	f.Held = f.LookAlikes

	// Calibrate: an uninterrupted apply, a resume with nothing left to
	// do, an uninterrupted undo.
	span, undoSpan := *crashSpan, *crashSpan
	j := filepath.Join(dir, "calibrate.journal")
	o := mustRun(t, tg, dir, "apply", l.plan, "--dialect", "odata", "--journal", j)
	if span == 0 {
		span = o.took
	}
	if d := l.compare(t, s.Root); !d.ok() {
		t.Fatalf("an uninterrupted apply is not exact: %v", d)
	}
	overhead := mustRun(t, tg, dir, "apply", l.plan, "--dialect", "odata", "--journal", j).took
	o = mustRun(t, tg, dir, "undo", j, "--yes")
	if undoSpan == 0 {
		undoSpan = o.took
	}
	if left := l.left(t, s.Root); len(left) > 0 {
		t.Fatalf("an uninterrupted undo left %v", left)
	}
	t.Logf("CAP, %s: %d records, %d lines and texts; uninterrupted apply %v, undo %v, resume with nothing to do %v",
		name, l.records, l.children, span.Round(time.Millisecond), undoSpan.Round(time.Millisecond), overhead.Round(time.Millisecond))

	perRound := max(*crashPerRound, 2)
	applyKills, undoKills := max(perRound*3/4, 1), max(perRound/4, 1)
	kills := func() int { return f.ApplyKills + f.UndoKills }
	for kills() < *crashCAP {
		f.Rounds++
		j := filepath.Join(dir, fmt.Sprintf("round-%d.journal", f.Rounds))
		args := []string{"apply", l.plan, "--dialect", "odata", "--journal", j}
		o, attempt := resume(t, f.Rounds, phase{
			what: "apply",
			kill: applyKill(rng, kills, *crashCAP, applyKills, undoKills, overhead, &span),
			run: func(attempt int, kill time.Duration) []outcome {
				if kill > 0 && attempt%4 == 3 {
					// Every fourth kill lands while the journal's index is
					// being written, if that comes before its delay.
					p := start(t, tg, dir, "demo", args...)
					return []outcome{p.waitUntil(t, func() bool { return halfWrittenIndex(j) || time.Since(p.start) >= kill })}
				}
				return []outcome{migrate(t, tg, dir, kill, args...)}
			},
			killed: func(_ outcome, attempt int) {
				f.ApplyKills++
				if attempt > 0 {
					f.ResumeKills++
				}
			},
			stopped: func(outcome) bool { f.Interrupted++; return false },
			after: func(_ int, kill time.Duration, killed bool) {
				if !killed {
					return
				}
				if halfWrittenIndex(j) {
					f.IndexKills++
				}
				// What the kill left in doubt (sent, its answer lost) the
				// resume must find again: orders by their fields.
				for name, n := range inDoubtSubs(t, j) {
					inDoubt[name] += n
				}
				// Missing documents are expected mid-run, and line by
				// line a document whose lines are not all there yet; one
				// twice, or one that is not the load's, never.
				if d := l.compare(t, s.Root).midRun(); len(d.Duplicated)+len(d.Extra) > 0 {
					f.MidRunDup += len(d.Duplicated) + len(d.Extra)
					t.Errorf("round %d: after the kill at %v: %v", f.Rounds, kill, d)
				}
			},
		})
		f.Finished++
		span = renew(span, o, attempt)
		d := l.compare(t, s.Root)
		f.Missing += len(d.Missing)
		f.Dup += len(d.Duplicated)
		f.Bad += len(d.Extra)
		if !d.ok() {
			t.Errorf("round %d: after apply: %v", f.Rounds, d)
		}
		if st := status(t, tg, dir, j); !st.Complete {
			t.Errorf("round %d: status says the journal is not complete: %+v", f.Rounds, st)
		}
		if v := mustRun(t, tg, dir, "verify", j); !zeroDiffer.MatchString(v.stdout) {
			t.Errorf("round %d: verify found differences:\n%s", f.Rounds, v.stdout)
		}

		undoAll(t, oneRun(t, tg, dir), j, f.Rounds, rng, &undoSpan,
			func(attempt int) bool { return kills() < *crashCAP && attempt < 2*undoKills },
			&f.UndoKills, &f.UndoInDoubt)
		f.Finished++
		if ch, err := journal.CheckChainFile(j); err != nil || !ch.Intact() {
			t.Errorf("round %d: the journal's chain after the kills: %+v %v", f.Rounds, ch, err)
		}
		left := l.left(t, s.Root)
		f.Leftovers += len(left)
		if len(left) > 0 {
			t.Errorf("round %d: undo left %v", f.Rounds, left)
		}
		if d.ok() && len(left) == 0 {
			f.Survived++
		}
		if t.Failed() {
			break
		}
	}
	// Undoing the look-alikes too leaves the service empty.
	if !t.Failed() {
		mustRun(t, tg, dir, "undo", strings.TrimSuffix(l.lookAlikes, ".yaml")+".journal", "--yes")
		if d := l.diff(t, s.Root); !d.ok() {
			t.Errorf("after undoing the look-alikes too, the service is not empty: %v", d)
		}
	}
	k := crashKind{name: "CAP service, --dialect odata, " + name}
	t.Logf("%s: %d records (+%d lines and texts), %d rounds, %d kills (%d in apply, %d of them in a resume, %d mid index write; %d in undo), %d runs finished before their kill, %d exits 4",
		k.name, l.records, l.children, f.Rounds, kills(), f.ApplyKills, f.ResumeKills, f.IndexKills, f.UndoKills, f.Finished, f.Interrupted)
	t.Logf("%s: sub-requests left in doubt by the kills (summed over the kills), found again or sent again by the resumes: %v", k.name, inDoubt)
	t.Logf("%s: %d of %d rounds exact; lost %d, duplicated %d, different or extra %d, duplicates or extras seen mid-run %d, left after undo %d; undo stops in doubt (exit 4, run again): %d",
		k.name, f.Survived, f.Rounds, f.Missing, f.Dup, f.Bad, f.MidRunDup, f.Leftovers, f.UndoInDoubt)
	appendResults(t, "Crash campaign: "+k.name, crashTable(k, &load{records: l.records, children: l.children}, &f))
}

// zeroDiffer is verify's last line when the service holds what the
// journal says was written.
var zeroDiffer = regexp.MustCompile(`(?m)^0 records differ`)

// applyKill is the kill delay of an apply phase's attempt: killDelay
// within *span (as it is when the attempt starts) for a round's first
// 2*applyKills attempts, while the kills landed leave the campaign's
// points room for its last undo's share; 0 (no kill) after.
func applyKill(rng *rand.Rand, landed func() int, points, applyKills, undoKills int, overhead time.Duration, span *time.Duration) func(attempt int) time.Duration {
	return func(attempt int) time.Duration {
		if landed() < points-undoKills && attempt < 2*applyKills {
			return killDelay(rng, overhead, *span, applyKills)
		}
		return 0
	}
}

// killDelay is when a kill lands: a quarter of them in the start of a run
// (flag parsing, journal replay, reconciliation), the rest after it,
// within a stretch of the load sized so that a round's kills spread over
// all of it.
func killDelay(rng *rand.Rand, overhead, span time.Duration, kills int) time.Duration {
	if rng.Intn(4) == 0 {
		return time.Duration(rng.Int63n(max(int64(overhead), 1))) + time.Millisecond
	}
	return overhead + time.Duration(rng.Int63n(max(2*int64(span)/int64(kills), 1)))
}

// capLoad is the quickstart plan over generated sources, and what the CAP
// service must hold once it has been applied: per entity set, each row in
// a canonical form (canonCAP), computed from the generated rows alone.
type capLoad struct {
	plan              string
	records, children int
	want              map[string][]string
	// lookAlikes is a plan of orders with the fields and lines of every
	// third order of the load, applied before the rounds and never undone;
	// held is what it leaves in the service, which every round must leave
	// as it found it.
	lookAlikes string
	held       map[string][]string
}

// capSets are the entity sets the quickstart writes, with what to expand.
var capSets = []struct{ set, expand string }{
	{"FAMILY_LOG", ""}, {"CUSTOMERS", ""}, {"LOGPART", ""},
	{"ORDERS", "ORDERITEMS_SUBFORM,ORDERSTEXT_SUBFORM"}, {"ORDERITEMS", ""},
	{"ORDERS_ORDERSTEXT_SUBFORM", ""},
}

// generateCAP writes the quickstart plan, with batch_size and concurrency, and sources in
// the shapes of the quickstart's (parts with ";" and decimal commas, codes
// to trim and upper-case, obsolete parts skipped, dates as 02/01/2006,
// orders as groups of lines with a remark on some) under dir. Each order
// has its own date, so that its fields tell it from the others (the
// reconciliation of a document with a Guid key, docs/other-services.md).
func generateCAP(t testing.TB, dir string, orders, batch, concurrency int, lineByLine bool, seed int64) *capLoad {
	t.Helper()
	r := rand.New(rand.NewSource(seed))
	plan, err := os.ReadFile(filepath.Join("..", "examples", "plans", "quickstart.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(plan), "\ntarget:\n", fmt.Sprintf("\ntarget:\n  batch_size: %d\n  concurrency: %d\n", batch, concurrency), 1)
	if text == string(plan) {
		t.Fatal("examples/plans/quickstart.yaml has no target: block to give a batch_size")
	}
	if lineByLine {
		deep := strings.Replace(text, "\n    id: row.OrderNo\n", "\n    id: row.OrderNo\n    deep_insert: false\n", 1)
		if deep == text {
			t.Fatal("examples/plans/quickstart.yaml: no orders step keyed by id: row.OrderNo to give deep_insert: false")
		}
		text = deep
	}
	l := &capLoad{plan: filepath.Join(dir, "quickstart.yaml"), want: map[string][]string{},
		lookAlikes: filepath.Join(dir, "lookalikes.yaml"), held: map[string][]string{}}
	// The look-alikes' plan is the quickstart's orders step alone.
	steps := strings.Index(text, "\nsteps:\n")
	orderStep := strings.Index(text, "  - name: orders\n")
	tests := strings.Index(text, "\n# Plan tests")
	if steps < 0 || orderStep < steps || tests < orderStep {
		t.Fatal("examples/plans/quickstart.yaml: no steps:, orders step and plan tests in that order")
	}
	look := "version: 1\nname: lookalikes\ntarget:\n  timezone: Asia/Jerusalem\nsources:\n  order_lines:\n    file: data/lookalikes.csv\nsteps:\n" +
		strings.Replace(text[orderStep:tests], "    after: [customers, parts]\n", "", 1)
	if err := os.WriteFile(l.lookAlikes, []byte(look), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(l.plan, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "data"), 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(name string, comma rune, rows [][]string) {
		t.Helper()
		fh, err := os.Create(filepath.Join(dir, "data", name))
		if err != nil {
			t.Fatal(err)
		}
		w := csv.NewWriter(fh)
		w.Comma = comma
		if err := w.WriteAll(rows); err != nil {
			t.Fatal(err)
		}
		if err := fh.Close(); err != nil {
			t.Fatal(err)
		}
	}
	add := func(set string, fields ...string) {
		l.want[set] = append(l.want[set], strings.Join(fields, "|"))
	}

	families := [][]string{{"Code", "Description"}}
	var codes []string
	for i, desc := range []string{"Bolts and screws", "Nuts", "Washers, flat", "Hand tools", "ברגים"} {
		code := fmt.Sprintf("F%02d", i)
		codes = append(codes, code)
		families = append(families, []string{" " + code + " ", desc})
		add("FAMILY_LOG", code, desc, "N")
	}
	write("families.csv", ',', families)

	parts := [][]string{{"Part No", "Description", "Family", "EAN", "Price", "Status"}}
	var partNos []string
	for i := range max(orders/3, 6) {
		no := fmt.Sprintf("p-%03d", i)
		price := fmt.Sprintf("%d.%02d", r.Intn(200), r.Intn(100))
		status := "active"
		if i%7 == 6 {
			status = "obsolete"
		}
		desc := fmt.Sprintf("Part %d %s", i, words[r.Intn(len(words))])
		fam := codes[r.Intn(len(codes))]
		ean := fmt.Sprintf("729%010d", i)
		parts = append(parts, []string{" " + no + " ", desc, fam, ean, strings.Replace(price, ".", ",", 1), status})
		if status == "obsolete" {
			continue
		}
		partNos = append(partNos, no)
		add("LOGPART", strings.ToUpper(no), desc, fam, ean, canonNumber(price))
	}
	write("parts.csv", ';', parts)

	customers := [][]string{{"Code", "Name", "Phone", "Address"}}
	var custs []string
	for i := range max(orders/5, 3) {
		code := fmt.Sprintf("C%04d", 1001+i)
		custs = append(custs, code)
		name, phone, addr := fmt.Sprintf("Customer %d %s", i, words[r.Intn(len(words))]), fmt.Sprintf("+972-4-%07d", i), fmt.Sprintf("%d Harbour Rd", i+1)
		customers = append(customers, []string{code, name, phone, addr})
		add("CUSTOMERS", code, name, phone, addr)
	}
	write("customers.csv", ',', customers)

	lines := [][]string{{"OrderNo", "Customer", "Date", "Part", "Qty", "Price", "Remarks"}}
	looks := [][]string{lines[0]}
	day := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for o := 1; o <= orders; o++ {
		cust, date := custs[r.Intn(len(custs))], day.AddDate(0, 0, o)
		remark := ""
		if r.Intn(3) == 0 {
			remark = fmt.Sprintf("Deliver to gate %d, %s", o, words[r.Intn(len(words))])
		}
		look := o%3 == 0
		var items []string
		for range 1 + r.Intn(5) {
			part, qty, price := partNos[r.Intn(len(partNos))], fmt.Sprint(1+r.Intn(500)), fmt.Sprintf("%d.%02d", r.Intn(50), r.Intn(100))
			row := []string{fmt.Sprint(o), cust, date.Format("02/01/2006"), part, qty, price, remark}
			lines = append(lines, row)
			item := canonItem(strings.ToUpper(part), qty, price)
			items = append(items, item)
			l.want["ORDERITEMS"] = append(l.want["ORDERITEMS"], item)
			l.children++
			if look {
				looks = append(looks, row)
				l.held["ORDERITEMS"] = append(l.held["ORDERITEMS"], item)
			}
		}
		txt := "no text"
		if remark != "" {
			txt = canonText(remark, true)
			l.want["ORDERS_ORDERSTEXT_SUBFORM"] = append(l.want["ORDERS_ORDERSTEXT_SUBFORM"], txt)
			l.children++
			if look {
				l.held["ORDERS_ORDERSTEXT_SUBFORM"] = append(l.held["ORDERS_ORDERSTEXT_SUBFORM"], txt)
			}
		}
		slices.Sort(items)
		order := strings.Join([]string{cust, date.Format(time.DateOnly), txt, strings.Join(items, ";")}, "|")
		l.want["ORDERS"] = append(l.want["ORDERS"], order)
		if look {
			l.held["ORDERS"] = append(l.held["ORDERS"], order)
		}
	}
	write("orders.csv", ',', lines)
	write("lookalikes.csv", ',', looks)
	for set := range l.want {
		if set != "ORDERITEMS" && set != "ORDERS_ORDERSTEXT_SUBFORM" {
			l.records += len(l.want[set])
		}
	}
	return l
}

func canonNumber(s string) string {
	n, ok := new(big.Rat).SetString(s)
	if !ok {
		return "not a number: " + s
	}
	return n.RatString()
}

func canonItem(part, qty, price string) string {
	return part + " x" + canonNumber(qty) + " @" + canonNumber(price)
}

func canonText(text string, appendTo bool) string {
	return fmt.Sprintf("%q append=%v", text, appendTo)
}

// canonCAP is a row the service gave back in the canonical form of
// generateCAP's.
func canonCAP(set string, row map[string]any) string {
	s := func(name string) string {
		if v, ok := row[name].(string); ok {
			return v
		}
		return fmt.Sprint(row[name])
	}
	text := func(v any) string {
		m, ok := v.(map[string]any)
		if !ok || m == nil {
			return "no text"
		}
		b, _ := m["APPEND"].(bool)
		txt, _ := m["TEXT"].(string)
		return canonText(txt, b)
	}
	switch set {
	case "FAMILY_LOG":
		return strings.Join([]string{s("FAMILYNAME"), s("FAMILYDESC"), s("DEBITFLAG")}, "|")
	case "CUSTOMERS":
		return strings.Join([]string{s("CUSTNAME"), s("CUSTDES"), s("PHONE"), s("ADDRESS")}, "|")
	case "LOGPART":
		return strings.Join([]string{s("PARTNAME"), s("PARTDES"), s("FAMILYNAME"), s("BARCODE"), canonNumber(s("PRICE"))}, "|")
	case "ORDERITEMS":
		return canonItem(s("PARTNAME"), s("TQUANT"), s("PRICE"))
	case "ORDERS_ORDERSTEXT_SUBFORM":
		return text(row)
	case "ORDERS":
		var items []string
		ls, _ := row["ORDERITEMS_SUBFORM"].([]any)
		for _, li := range ls {
			if m, ok := li.(map[string]any); ok {
				items = append(items, canonCAP("ORDERITEMS", m))
			}
		}
		slices.Sort(items)
		return strings.Join([]string{s("CUSTNAME"), s("CURDATE"), text(row["ORDERSTEXT_SUBFORM"]), strings.Join(items, ";")}, "|")
	}
	return fmt.Sprint(row)
}

// capDiff is how what the service holds differs from the load, per row in
// canonical form, "SET: row".
type capDiff struct {
	Missing, Duplicated, Extra []string
}

func (d capDiff) ok() bool { return len(d.Missing)+len(d.Duplicated)+len(d.Extra) == 0 }

// midRun is the diff without what a run stopped midway may leave: an
// order that is missing some of its lines (and its text), posted line by
// line, is no extra while the load's order of its customer, date and
// lines is missing.
func (d capDiff) midRun() capDiff {
	partOf := func(row, whole string) bool {
		r, w := strings.Split(row, "|"), strings.Split(whole, "|")
		if len(r) != 4 || len(w) != 4 || r[0] != w[0] || r[1] != w[1] || (r[2] != w[2] && r[2] != "no text") {
			return false
		}
		lines := map[string]int{}
		for _, li := range strings.Split(w[3], ";") {
			lines[li]++
		}
		for _, li := range strings.Split(r[3], ";") {
			if li == "" {
				continue
			}
			if lines[li]--; lines[li] < 0 {
				return false
			}
		}
		return true
	}
	const orders = "ORDERS: "
	out := capDiff{Missing: d.Missing, Duplicated: d.Duplicated}
	claimed := map[int]bool{}
extras:
	for _, e := range d.Extra {
		if row, ok := strings.CutPrefix(e, orders); ok {
			for i, m := range d.Missing {
				if whole, ok := strings.CutPrefix(m, orders); ok && !claimed[i] && partOf(row, whole) {
					claimed[i] = true
					continue extras
				}
			}
		}
		out.Extra = append(out.Extra, e)
	}
	return out
}

func (d capDiff) String() string {
	first := func(rows []string) []string { return rows[:min(len(rows), 5)] }
	return fmt.Sprintf("%d missing %q, %d duplicated %q, %d different or extra %q (the first 5 of each)",
		len(d.Missing), first(d.Missing), len(d.Duplicated), first(d.Duplicated), len(d.Extra), first(d.Extra))
}

// compare reads every entity set the load writes from the service at root
// and compares it with the load and what the service held before, as
// multisets of canonical rows.
func (l *capLoad) compare(t testing.TB, root string) capDiff {
	return l.diff(t, root, l.want, l.held)
}

// diff compares what the service at root holds with the rows of wants
// together, as multisets of canonical rows.
func (l *capLoad) diff(t testing.TB, root string, wants ...map[string][]string) capDiff {
	t.Helper()
	held := map[string][]map[string]any{}
	for _, cs := range capSets {
		held[cs.set] = capRows(t, root, cs.set, cs.expand)
	}
	return diffCAP(held, wants...)
}

// diffCAP compares the rows of each entity set the service holds with
// the canonical rows of wants together, as multisets.
func diffCAP(held map[string][]map[string]any, wants ...map[string][]string) capDiff {
	var d capDiff
	for _, cs := range capSets {
		want := map[string]int{}
		for _, ws := range wants {
			for _, w := range ws[cs.set] {
				want[w]++
			}
		}
		got := map[string]int{}
		for _, row := range held[cs.set] {
			got[canonCAP(cs.set, row)]++
		}
		for row, n := range got {
			switch w := want[row]; {
			case w == 0:
				d.Extra = append(d.Extra, cs.set+": "+row)
			case n > w:
				d.Duplicated = append(d.Duplicated, fmt.Sprintf("%s: %s (%d times, not %d)", cs.set, row, n, w))
			}
		}
		for row, w := range want {
			if got[row] < w {
				d.Missing = append(d.Missing, cs.set+": "+row)
			}
		}
	}
	slices.Sort(d.Missing)
	slices.Sort(d.Duplicated)
	slices.Sort(d.Extra)
	return d
}

// left is how what the service holds after undo differs from what it
// held before the load: rows undo left behind, and rows held before that
// it removed or changed.
func (l *capLoad) left(t testing.TB, root string) []string {
	t.Helper()
	d := l.diff(t, root, l.held)
	return slices.Concat(d.Extra, d.Duplicated, d.Missing)
}

func capRows(t testing.TB, root, set, expand string) []map[string]any {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rows, err := captest.Rows(ctx, root, set, expand)
	if err != nil {
		t.Fatalf("reading the CAP service: %v", err)
	}
	return rows
}

// inDoubtSubs counts the sub-requests a kill left in doubt (sent, no
// outcome journaled) in the journal j, by step, method and entity or
// navigation: what the resume must find again on the service or send
// again. Nothing when the kill came before the journal was made.
func inDoubtSubs(t testing.TB, j string) map[string]int {
	t.Helper()
	if _, err := os.Stat(j); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	st, err := journal.Load(j)
	if err != nil {
		t.Fatalf("reading the journal after a kill: %v", err)
	}
	out := map[string]int{}
	for _, s := range st.InDoubtSubs() {
		what := s.Nav
		if what == "" {
			what = strings.SplitN(s.URL, "(", 2)[0]
		}
		out[s.Step+" "+s.Meth+" "+what]++
	}
	return out
}
