package crashtest

import (
	"encoding/csv"
	"flag"
	"fmt"
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
// added; a customer's row deleted), then runs apply --delta, killed and
// resumed until it exits 0. The company must then hold exactly the changed
// data: every change patched once, every new record created once, the gone
// customer still there, nothing duplicated, and the orders (not changed)
// as they were; and a second apply --delta makes no $batch call.
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
	for _, name := range []string{"customers.csv", "parts.csv"} {
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
	newTarget := func() *target {
		return startSandbox(t, sandbox.Options{Latency: max(*crashLatency, 15*time.Millisecond), Seed: rng.Int63()}, nil)
	}

	// Calibrate: an uninterrupted delta, and one with nothing left to do.
	var span, overhead time.Duration
	{
		tg := newTarget()
		restore()
		j := filepath.Join(dir, "calibrate.journal")
		mustRun(t, tg, dir, "apply", l.plan, "--journal", j)
		want := changeSources(t, l, &f)
		span = mustRun(t, tg, dir, "apply", l.plan, "--journal", j, "--delta").took
		if d := compare(want, nil, tg.sb.Snapshot()); !d.ok() {
			t.Fatalf("an uninterrupted delta is not exact: %v", d)
		}
		overhead = mustRun(t, tg, dir, "apply", l.plan, "--journal", j, "--delta").took
	}
	t.Logf("delta loads: %d records; %d changed, %d new, %d gone; uninterrupted delta %v, with nothing to do %v",
		l.records, f.Changed, f.New, f.Gone, span.Round(time.Millisecond), overhead.Round(time.Millisecond))

	const perRound, maxAttempts = 4, 200
	for f.Kills < *crashDelta {
		f.Rounds++
		tg := newTarget()
		restore()
		j := filepath.Join(dir, fmt.Sprintf("delta-%d.journal", f.Rounds))
		mustRun(t, tg, dir, "apply", l.plan, "--journal", j)
		want := changeSources(t, l, &f)
	delta:
		for attempt := 0; ; attempt++ {
			if attempt == maxAttempts {
				t.Fatalf("round %d: apply --delta did not finish in %d attempts", f.Rounds, maxAttempts)
			}
			kill := time.Duration(0)
			if f.Kills < *crashDelta && attempt < perRound {
				// A quarter in the start of a run (replay, reconciliation),
				// the rest within the delta.
				if rng.Intn(4) == 0 {
					kill = time.Duration(rng.Int63n(int64(overhead))) + time.Millisecond
				} else {
					kill = time.Duration(rng.Int63n(max(int64(span), 1))) + time.Millisecond
				}
			}
			o := migrate(t, tg, dir, kill, "apply", l.plan, "--journal", j, "--delta")
			switch {
			case o.killed:
				f.Kills++
				if d := compare(want, nil, tg.sb.Snapshot()); len(d.Duplicated) > 0 {
					f.MidRunDup += len(d.Duplicated)
					t.Errorf("round %d: after the kill at %v: %v", f.Rounds, kill, d)
				}
			case o.code == 4:
				f.Interrupted++
			case o.code == 0:
				f.Finished++
				break delta
			default:
				t.Fatalf("round %d: apply --delta exited %d after a kill\nstdout:\n%.3000s\nstderr:\n%s", f.Rounds, o.code, o.stdout, o.stderr)
			}
		}
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
// (a delta never deletes), the orders as they were.
func changeSources(t testing.TB, l *load, f *deltaFigures) expected {
	t.Helper()
	want := expected{"ORDERS": l.want["ORDERS"]}
	f.Changed, f.New, f.Gone = 0, 0, 0
	rewrite := func(name string, edit func(i int, row []string) []string, added [][]string) {
		p := filepath.Join(l.dir, "data", name)
		in, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		rows, err := csv.NewReader(in).ReadAll()
		in.Close()
		if err != nil {
			t.Fatal(err)
		}
		out := [][]string{rows[0]}
		for i, row := range rows[1:] {
			if row = edit(i, row); row != nil {
				out = append(out, row)
			}
		}
		out = append(out, added...)
		w, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		cw := csv.NewWriter(w)
		if err := cw.WriteAll(out); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
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
	return want
}
