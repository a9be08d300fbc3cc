package campaign

import (
	"encoding/json"
	"flag"
	"fmt"
	"math/rand"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/migrate-tool/migrate/sandbox"
)

var (
	crashPoints   = flag.Int("crash.points", 60, "crash campaign: SIGKILLs to land (apply, its resumes and undo together)")
	crashRecords  = flag.Int("crash.records", 1000, "crash campaign: top-level records of the generated load (plus 0-5 lines, texts and attachments per order)")
	crashSeed     = flag.Int64("crash.seed", 8, "crash campaign: seed of the load and of the kill delays")
	crashLatency  = flag.Duration("crash.latency", 3*time.Millisecond, "crash campaign: sandbox latency per call, so that kills land mid-batch")
	crashSpan     = flag.Duration("crash.span", 0, "crash campaign: longest kill delay (0: calibrated from an uninterrupted run)")
	crashVerbose  = flag.Bool("crash.v", false, "crash campaign: log every run")
	crashPerRound = flag.Int("crash.per-round", 12, "crash campaign: kills per round (fresh sandbox, apply, undo)")
	crashBatch    = flag.Int("crash.batch", 50, "crash campaign: the plan's batch_size")
	crashFaults   = flag.String("crash.faults", "", "crash campaign: sandbox faults during the kills too, e.g. drop-after-commit=0.1,error-500=0.05")
	crashConc     = flag.Int("crash.concurrency", 2, "crash campaign: the plan's concurrency (batches in flight when a kill lands)")
)

// crashFigures are the results a crash campaign reports.
type crashFigures struct {
	Rounds            int // fresh sandbox, apply until complete, undo until complete
	ApplyKills        int // kills that landed during apply or one of its resumes
	ResumeKills       int // of those, kills during a resume (the journal already had work)
	UndoKills         int // kills that landed during undo
	Finished          int // runs that ended before their kill
	Interrupted       int // runs that ended with exit 4 (and were resumed)
	Survived          int // rounds whose data compared exact and whose undo left nothing
	Missing, Dup, Bad int // rows lost, duplicated, different, over all rounds
	MidRunDup         int // duplicates seen in a snapshot right after a kill
	Leftovers         int // rows undo left behind
	UndoInDoubt       int // undo runs that stopped in doubt (exit 4) and were run again
}

// TestCrash kills `migrate apply` (and then `migrate undo`) with SIGKILL at
// seeded random moments, resumes each time until the run exits 0, and
// compares the sandbox with the generated load exactly. Each round starts
// from a fresh sandbox and journal; rounds repeat until crash.points kills
// have landed.
func TestCrash(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	l := generate(t, dir, loadConfig{records: *crashRecords, seed: *crashSeed, batchSize: *crashBatch, concurrency: *crashConc})
	rng := rand.New(rand.NewSource(*crashSeed))

	// Calibrate: how long an uninterrupted apply and undo take here, and a
	// resume with nothing left to do (process start, journal replay).
	span, undoSpan, overhead := *crashSpan, *crashSpan, time.Duration(0)
	{
		tg := startSandbox(t, sandbox.Options{Latency: *crashLatency}, nil)
		j := filepath.Join(dir, "calibrate.journal")
		o := mustRun(t, tg, dir, "apply", l.plan, "--journal", j)
		if span == 0 {
			span = o.took
		}
		if d := compare(l.want, tg.sb.Snapshot()); !d.ok() {
			t.Fatalf("an uninterrupted apply is not exact: %v", d)
		}
		overhead = mustRun(t, tg, dir, "apply", l.plan, "--journal", j).took
		o = mustRun(t, tg, dir, "undo", j, "--yes")
		if undoSpan == 0 {
			undoSpan = o.took
		}
	}
	t.Logf("load: %d records, %d lines/texts/attachments; uninterrupted apply %v, undo %v, resume with nothing to do %v",
		l.records, l.children, span.Round(time.Millisecond), undoSpan.Round(time.Millisecond), overhead.Round(time.Millisecond))

	// Each round (fresh sandbox, apply, undo) takes about crash.per-round
	// kills, three quarters in apply. A quarter of them land in the start
	// of a run (flag parsing, journal replay, reconciliation), the rest
	// after it, within a stretch of the load sized so that the round's
	// kills spread over all of it.
	perRound := max(*crashPerRound, 2)
	applyKills, undoKills := max(perRound*3/4, 1), max(perRound/4, 1)
	delay := func(span time.Duration, kills int) time.Duration {
		if rng.Intn(4) == 0 {
			return time.Duration(rng.Int63n(int64(overhead))) + time.Millisecond
		}
		return overhead + time.Duration(rng.Int63n(max(2*int64(span)/int64(kills), 1)))
	}

	var faults map[string]float64
	if *crashFaults != "" {
		faults = map[string]float64{}
		for _, kv := range strings.Split(*crashFaults, ",") {
			kind, rate, err := sandbox.ParseFault(strings.TrimSpace(kv))
			if err != nil {
				t.Fatalf("-crash.faults: %v", err)
			}
			faults[kind] = rate
		}
	}

	var f crashFigures
	const maxAttempts = 400 // per phase of a round; a resume loop past it is a bug
	for f.ApplyKills+f.UndoKills < *crashPoints {
		f.Rounds++
		tg := startSandbox(t, sandbox.Options{Latency: *crashLatency, Seed: rng.Int63(), Faults: faults}, nil)
		j := filepath.Join(dir, fmt.Sprintf("round-%d.journal", f.Rounds))

		// Apply, killed and resumed until it exits 0.
		stuck := 0
		for attempt := 0; ; attempt++ {
			if attempt == maxAttempts {
				t.Fatalf("round %d: apply did not finish in %d attempts", f.Rounds, maxAttempts)
			}
			kill := time.Duration(0)
			if f.ApplyKills+f.UndoKills < *crashPoints && attempt < 2*applyKills {
				kill = delay(span, applyKills)
			}
			o := migrate(t, tg, dir, kill, "apply", l.plan, "--journal", j)
			if *crashVerbose {
				t.Logf("round %d apply %d: kill %v killed %v code %d took %v\n%s", f.Rounds, attempt, kill, o.killed, o.code, o.took, o.stderr)
			}
			if o.killed {
				stuck = 0
				f.ApplyKills++
				if attempt > 0 {
					f.ResumeKills++
				}
				// Missing rows are expected mid-run; duplicates never.
				if d := compare(l.want, tg.sb.Snapshot()); len(d.Duplicated) > 0 {
					f.MidRunDup += len(d.Duplicated)
					t.Errorf("round %d: after the kill at %v: %v", f.Rounds, kill, d)
				}
				continue
			}
			if o.code == 4 {
				// A resume that is not killed has no reason to stop; a few
				// in a row is a resume that cannot get past something.
				f.Interrupted++
				if stuck++; stuck == 5 && faults == nil {
					t.Fatalf("round %d: apply exited 4 five times in a row without a kill; journal %s\nstdout:\n%.4000s\nstderr:\n%s", f.Rounds, j, o.stdout, o.stderr)
				}
				continue
			}
			if o.code != 0 {
				t.Fatalf("round %d: apply exited %d after a kill\nstdout:\n%s\nstderr:\n%s", f.Rounds, o.code, o.stdout, o.stderr)
			}
			f.Finished++
			break
		}
		d := compare(l.want, tg.sb.Snapshot())
		f.Missing += len(d.Missing)
		f.Dup += len(d.Duplicated)
		f.Bad += len(d.Different) + len(d.Extra)
		if !d.ok() {
			t.Errorf("round %d: after apply: %v", f.Rounds, d)
		}
		if st := status(t, tg, dir, j); !st.Complete {
			t.Errorf("round %d: status says the journal is not complete: %+v", f.Rounds, st)
		}

		// Undo, killed and resumed until it exits 0.
		for attempt := 0; ; attempt++ {
			if attempt == maxAttempts {
				t.Fatalf("round %d: undo did not finish in %d attempts", f.Rounds, maxAttempts)
			}
			kill := time.Duration(0)
			if f.ApplyKills+f.UndoKills < *crashPoints && attempt < 2*undoKills {
				// Undo is short: anywhere within a whole uninterrupted undo.
				kill = time.Duration(rng.Int63n(max(int64(undoSpan)*9/10, 1))) + time.Millisecond
			}
			o := migrate(t, tg, dir, kill, "undo", j, "--yes")
			if o.killed {
				f.UndoKills++
				continue
			}
			if o.code == 4 && strings.Contains(o.stderr, "run undo again") {
				// An undo batch in doubt (with -crash.faults): exit 4,
				// run it again, as CLI.md says.
				f.UndoInDoubt++
				continue
			}
			if o.code != 0 {
				t.Fatalf("round %d: undo exited %d after a kill\nstdout:\n%.3000s\nstderr:\n%s", f.Rounds, o.code, o.stdout, o.stderr)
			}
			f.Finished++
			break
		}
		left := leftovers(tg.sb.Snapshot())
		f.Leftovers += len(left)
		if len(left) > 0 {
			t.Errorf("round %d: undo left %d rows: %.10v", f.Rounds, len(left), left)
		}
		if d.ok() && len(left) == 0 {
			f.Survived++
		}
		if t.Failed() {
			break
		}
	}
	t.Logf("crash campaign: %d records (+%d children), %d rounds, %d kills (%d in apply, %d of them in a resume; %d in undo), %d runs finished before their kill, %d exits 4",
		l.records, l.children, f.Rounds, f.ApplyKills+f.UndoKills, f.ApplyKills, f.ResumeKills, f.UndoKills, f.Finished, f.Interrupted)
	t.Logf("crash campaign: %d of %d rounds exact; lost %d, duplicated %d, different or extra %d, duplicates seen mid-run %d, left after undo %d; undo stops in doubt (exit 4, run again): %d",
		f.Survived, f.Rounds, f.Missing, f.Dup, f.Bad, f.MidRunDup, f.Leftovers, f.UndoInDoubt)
	appendResults(t, "Crash campaign", fmt.Sprintf("| records (+ lines, texts, attachments) | rounds | kills | in apply | of which in a resume | in undo | runs ended before their kill | exits 4 | rounds exact | lost | duplicated | different or extra | duplicates mid-run | left after undo |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n| %d (+%d) | %d | %d | %d | %d | %d | %d | %d | %d of %d | %d | %d | %d | %d | %d |\n",
		l.records, l.children, f.Rounds, f.ApplyKills+f.UndoKills, f.ApplyKills, f.ResumeKills, f.UndoKills, f.Finished, f.Interrupted, f.Survived, f.Rounds, f.Missing, f.Dup, f.Bad, f.MidRunDup, f.Leftovers))
}

// mustRun runs the binary to its end and fails the test unless it exits 0.
func mustRun(t testing.TB, tg *target, dir string, args ...string) outcome {
	t.Helper()
	o := migrate(t, tg, dir, 0, args...)
	if o.code != 0 {
		t.Fatalf("migrate %s exited %d\nstdout:\n%.3000s\nstderr:\n%s", strings.Join(args, " "), o.code, o.stdout, o.stderr)
	}
	return o
}

// journalStatus is `migrate status --json`.
type journalStatus struct {
	Complete bool `json:"complete"`
	Steps    []struct {
		Name      string `json:"name"`
		Committed int    `json:"committed"`
		Failed    int    `json:"failed"`
		Pending   int    `json:"pending"`
		InDoubt   int    `json:"in_doubt"`
	} `json:"steps"`
}

func status(t testing.TB, tg *target, dir, journal string) journalStatus {
	t.Helper()
	o := mustRun(t, tg, dir, "status", journal, "--json")
	var st journalStatus
	if err := json.Unmarshal([]byte(o.stdout), &st); err != nil {
		t.Fatalf("status --json: %v\n%s", err, o.stdout)
	}
	return st
}
