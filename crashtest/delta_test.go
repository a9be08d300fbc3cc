package crashtest

import (
	"encoding/csv"
	"flag"
	"fmt"
	"maps"
	"math/rand"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/migrate-tool/migrate/sandbox"
)

var crashDelta = flag.Int("crash.delta", 12, "crash campaign: kills to land in delta loads (apply --delta after the sources changed; 0: none)")

// deltaFigures are the results of the delta rounds.
type deltaFigures struct {
	Rounds, Kills, Finished, Interrupted int
	Changed, New, Gone                   int // per round
	Survived, Missing, Dup, Bad          int
	MidRunDup                            int
	SecondCalls                          int // $batch calls a second delta with nothing changed made (must be 0)
}

// TestCrashDelta kills `migrate apply --delta` at seeded random moments. Each
// round loads the generated plan whole (uninterrupted), then changes its
// sources as a customer does before a cut-over (a quarter of the
// customers' phones, a fifth of the parts' prices; customers and parts
// added; a customer's row deleted; a line's quantity of every seventh
// order, a line more of every ninth), then runs apply --delta, killed and
// resumed until it exits 0. The company must then hold exactly the changed
// data: every change patched once, every new record and line created once,
// the gone customer still there, nothing duplicated, the orders' other
// lines as they were; and a second apply --delta makes no $batch call.
func TestCrashDelta(t *testing.T) {
	if *crashDelta == 0 {
		t.Skip("-crash.delta=0")
	}
	t.Parallel()
	dir := t.TempDir()
	// Small batches and a slower server: the delta's few dozen writes take
	// several calls each way, and the kills land among them.
	l := generate(t, dir, loadConfig{records: *crashKindSize, seed: *crashSeed, batchSize: 4, concurrency: *crashConc})
	originals := map[string][]byte{}
	for _, name := range []string{"customers.csv", "parts.csv", "orders.csv"} {
		b, err := os.ReadFile(filepath.Join(dir, "data", name))
		if err != nil {
			t.Fatal(err)
		}
		originals[name] = b
	}
	restore := func() {
		for name, b := range originals {
			if err := os.WriteFile(filepath.Join(dir, "data", name), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	rng := rand.New(rand.NewSource(*crashSeed + 28))
	var f deltaFigures
	// The server is slow for the deltas only: the whole load before each
	// one is there to be changed, not killed, and runs at full speed.
	newTarget := func() *target {
		return startSandbox(t, sandbox.Options{Seed: rng.Int63()}, nil)
	}
	fullLoad := func(tg *target, j string) {
		tg.sb.SetLatency(0)
		mustRun(t, tg, dir, "apply", l.plan, "--journal", j)
		tg.sb.SetLatency(max(*crashLatency, 15*time.Millisecond))
	}

	// Calibrate: an uninterrupted delta, and one with nothing left to do.
	var span, overhead time.Duration
	{
		tg := newTarget()
		restore()
		j := filepath.Join(dir, "calibrate.journal")
		fullLoad(tg, j)
		want := changeSources(t, l, &f)
		span = mustRun(t, tg, dir, "apply", l.plan, "--journal", j, "--delta").took
		if d := compare(want, nil, tg.sb.Snapshot()); !d.ok() {
			t.Fatalf("an uninterrupted delta is not exact: %v", d)
		}
		overhead = mustRun(t, tg, dir, "apply", l.plan, "--journal", j, "--delta").took
	}
	t.Logf("delta loads: %d records; %d changed, %d new, %d gone; uninterrupted delta %v, with nothing to do %v",
		l.records, f.Changed, f.New, f.Gone, span.Round(time.Millisecond), overhead.Round(time.Millisecond))

	const perRound = 4
	for f.Kills < *crashDelta {
		left := newRunLeft(span)
		f.Rounds++
		tg := newTarget()
		restore()
		j := filepath.Join(dir, fmt.Sprintf("delta-%d.journal", f.Rounds))
		fullLoad(tg, j)
		want := changeSources(t, l, &f)
		o, attempt := resume(t, f.Rounds, phase{
			what: "apply --delta",
			kill: func(attempt int) time.Duration {
				if f.Kills >= *crashDelta || attempt >= perRound {
					return 0
				}
				// A quarter in the start of a run (replay, reconciliation),
				// the rest within what is left of the delta.
				if rng.Intn(4) == 0 {
					return time.Duration(rng.Int63n(int64(overhead))) + time.Millisecond
				}
				return left.delay(rng)
			},
			run: func(_ int, kill time.Duration) []outcome {
				return []outcome{migrate(t, tg, dir, kill, "apply", l.plan, "--journal", j, "--delta")}
			},
			killed:  func(outcome, int) { f.Kills++ },
			stopped: func(outcome) bool { f.Interrupted++; return false },
			after: func(_ int, kill time.Duration, killed bool) {
				if !killed {
					return
				}
				left.killed(kill)
				if d := compare(want, nil, tg.sb.Snapshot()); len(d.Duplicated) > 0 {
					f.MidRunDup += len(d.Duplicated)
					t.Errorf("round %d: after the kill at %v: %v", f.Rounds, kill, d)
				}
			},
		})
		f.Finished++
		span = renew(span, o, attempt)
		d := compare(want, nil, tg.sb.Snapshot())
		f.Missing += len(d.Missing)
		f.Dup += len(d.Duplicated)
		f.Bad += len(d.Different) + len(d.Extra)
		if !d.ok() {
			t.Errorf("round %d: after the delta: %v", f.Rounds, d)
		}
		if st := status(t, tg, dir, j); !st.Complete {
			t.Errorf("round %d: status says the journal is not complete: %+v", f.Rounds, st)
		}
		before := tg.sb.Stats().Batches
		mustRun(t, tg, dir, "apply", l.plan, "--journal", j, "--delta")
		if n := int(tg.sb.Stats().Batches - before); n > 0 {
			f.SecondCalls += n
			t.Errorf("round %d: a second delta with nothing changed made %d $batch calls", f.Rounds, n)
		}
		if d.ok() {
			f.Survived++
		}
		if t.Failed() {
			break
		}
	}
	t.Logf("delta loads: %d rounds, %d kills, %d runs finished before their kill, %d exits 4; %d of %d rounds exact; lost %d, duplicated %d, different or extra %d, duplicates mid-run %d; calls of a second delta %d",
		f.Rounds, f.Kills, f.Finished, f.Interrupted, f.Survived, f.Rounds, f.Missing, f.Dup, f.Bad, f.MidRunDup, f.SecondCalls)
	appendResults(t, "Crash campaign: delta loads", fmt.Sprintf(
		"| rounds | records | changed / new / gone a round | kills | runs ended before their kill | exits 4 | rounds exact | lost | duplicated | different or extra | duplicates mid-run | calls of a second delta |\n"+
			"|---|---|---|---|---|---|---|---|---|---|---|---|\n"+
			"| %d | %d | %d / %d / %d | %d | %d | %d | %d of %d | %d | %d | %d | %d | %d |\n",
		f.Rounds, l.records, f.Changed, f.New, f.Gone, f.Kills, f.Finished, f.Interrupted, f.Survived, f.Rounds, f.Missing, f.Dup, f.Bad, f.MidRunDup, f.SecondCalls))
}

// changeSources writes the sources of l changed as a customer's are
// before a cut-over, from the originals (the load's own rows), and returns
// what the company must hold after the delta: every customer's and part's
// row as the changed source gives it, the gone customer as it was loaded
// (a delta never deletes), the orders with their lines changed and added.
func changeSources(t testing.TB, l *load, f *deltaFigures) expected {
	t.Helper()
	want := expected{}
	f.Changed, f.New, f.Gone = 0, 0, 0
	rewrite := func(name string, edit func(i int, row []string) []string, added [][]string) {
		p := filepath.Join(l.dir, "data", name)
		rows := readRows(t, p)
		out := [][]string{rows[0]}
		for i, row := range rows[1:] {
			if row = edit(i, row); row != nil {
				out = append(out, row)
			}
		}
		writeRows(t, p, append(out, added...))
	}
	customers := l.want["CUSTOMERS"]
	rewrite("customers.csv", func(i int, row []string) []string {
		w := map[string]any{"CUSTNAME": row[0], "CUSTDES": row[1]}
		if row[2] != "" {
			w["PHONE"] = row[2]
		}
		switch {
		case i == len(customers)-1:
			f.Gone++
			want["CUSTOMERS"] = append(want["CUSTOMERS"], w) // never deleted
			return nil
		case i%4 == 1:
			f.Changed++
			row[2] = fmt.Sprintf("+972-1-%07d", i)
			w["PHONE"] = row[2]
		}
		want["CUSTOMERS"] = append(want["CUSTOMERS"], w)
		return row
	}, nil)
	parts := 0
	rewrite("parts.csv", func(i int, row []string) []string {
		parts++
		if i%5 == 2 {
			f.Changed++
			row[2] = fmt.Sprintf("%.2f", decimal(row[2])+1)
		}
		want["LOGPART"] = append(want["LOGPART"], map[string]any{"PARTNAME": row[0], "PARTDES": row[1], "PRICE": decimal(row[2])})
		return row
	}, nil)
	var newCustomers, newParts [][]string
	for i := range 8 {
		row := []string{fmt.Sprintf("CN%04d", i+1), fmt.Sprintf("New customer %d", i+1), fmt.Sprintf("+972-5-%07d", i)}
		newCustomers = append(newCustomers, row)
		want["CUSTOMERS"] = append(want["CUSTOMERS"], map[string]any{"CUSTNAME": row[0], "CUSTDES": row[1], "PHONE": row[2]})
	}
	for i := range 4 {
		row := []string{fmt.Sprintf("PN-%04d", i+1), fmt.Sprintf("New part %d", i+1), fmt.Sprintf("%d.50", i+1)}
		newParts = append(newParts, row)
		want["LOGPART"] = append(want["LOGPART"], map[string]any{"PARTNAME": row[0], "PARTDES": row[1], "PRICE": decimal(row[2])})
	}
	f.New = len(newCustomers) + len(newParts)
	// The new rows go after the old ones (the rows already written).
	appendRows := func(name string, rows [][]string) {
		rewrite(name, func(_ int, row []string) []string { return row }, rows)
	}
	appendRows("customers.csv", newCustomers)
	appendRows("parts.csv", newParts)
	want["ORDERS"] = changeLines(t, l, f)
	return want
}

// changeLines rewrites the orders' source as a customer's changes before a
// cut-over: the first line's quantity of every seventh order, and a line
// more (after its last) of every ninth order that has lines; it returns the
// orders the company must hold after the delta (their lines patched, a
// line added, with the next line number).
func changeLines(t testing.TB, l *load, f *deltaFigures) []map[string]any {
	t.Helper()
	p := filepath.Join(l.dir, "data", "orders.csv")
	rows := readRows(t, p)
	orders := make([]map[string]any, len(l.want["ORDERS"]))
	for i, o := range l.want["ORDERS"] {
		c := maps.Clone(o)
		if lines, ok := o["ORDERITEMS_SUBFORM"].([]any); ok {
			copied := make([]any, len(lines))
			for j, line := range lines {
				copied[j] = maps.Clone(line.(map[string]any))
			}
			c["ORDERITEMS_SUBFORM"] = copied
		}
		orders[i] = c
	}
	// The rows of an order follow each other: columns OrderNo, Customer,
	// Date, Part, Qty, Price, LineNote, Remarks, Attachment, AttachmentTitle.
	out := [][]string{rows[0]}
	for at := 1; at < len(rows); {
		end := at
		for end < len(rows) && rows[end][0] == rows[at][0] {
			end++
		}
		group := rows[at:end]
		at = end
		var i int
		if _, err := fmt.Sscanf(group[0][0], "SRC-%06d", &i); err != nil || i < 1 || i > len(orders) {
			t.Fatalf("orders.csv: an order number %q", group[0][0])
		}
		i--
		order := orders[i]
		lines, _ := order["ORDERITEMS_SUBFORM"].([]any)
		changed := false
		if i%7 == 3 && len(lines) > 0 {
			for _, row := range group {
				if row[3] != "" {
					row[4] = fmt.Sprintf("%d", int(decimal(row[4]))+1)
					lines[0].(map[string]any)["TQUANT"] = decimal(row[4])
					changed = true
					break
				}
			}
		}
		out = append(out, group...)
		if i%9 == 4 && len(lines) > 0 {
			first := lines[0].(map[string]any)
			last := group[len(group)-1]
			out = append(out, []string{last[0], last[1], last[2], first["PARTNAME"].(string), "3", "1.00", "", last[7], "", ""})
			order["ORDERITEMS_SUBFORM"] = append(lines, map[string]any{"PARTNAME": first["PARTNAME"], "PDES": first["PDES"],
				"TQUANT": decimal("3"), "PRICE": decimal("1.00"), "KLINE": float64(len(lines) + 1)})
			changed = true
		}
		if changed {
			f.Changed++
		}
	}
	writeRows(t, p, out)
	return orders
}

// readRows reads the CSV file p whole.
func readRows(t testing.TB, p string) [][]string {
	t.Helper()
	in, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	rows, err := csv.NewReader(in).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// writeRows writes rows as the CSV file p.
func writeRows(t testing.TB, p string, rows [][]string) {
	t.Helper()
	w, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	cw := csv.NewWriter(w)
	if err := cw.WriteAll(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}
