package crashtest

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/migrate-tool/migrate/journal"
	"github.com/migrate-tool/migrate/sandbox"
)

var (
	crashPoints   = flag.Int("crash.points", 60, "crash campaign: SIGKILLs to land (apply, its resumes and undo together)")
	crashRecords  = flag.Int("crash.records", 1000, "crash campaign: top-level records of the generated load (plus 0-5 lines, texts and attachments per order)")
	crashSeed     = flag.Int64("crash.seed", 8, "crash campaign: seed of the load and of the kill delays")
	crashLatency  = flag.Duration("crash.latency", 3*time.Millisecond, "crash campaign: sandbox latency per call, so that kills land mid-batch")
	crashSpan     = flag.Duration("crash.span", 0, "crash campaign: longest kill delay (0: calibrated from an uninterrupted run, then from each whole run that ends before its kill)")
	crashVerbose  = flag.Bool("crash.v", false, "crash campaign: log every run")
	crashPerRound = flag.Int("crash.per-round", 12, "crash campaign: kills per round (fresh sandbox, apply, undo)")
	crashBatch    = flag.Int("crash.batch", 50, "crash campaign: the plan's batch_size")
	crashFaults   = flag.String("crash.faults", "", "crash campaign: sandbox faults during the kills too, e.g. drop-after-commit=0.1,error-500=0.05 (not in the calibration, whose runs must finish, nor while the look-alike rounds' company is entered)")
	crashConc     = flag.Int("crash.concurrency", 2, "crash campaign: the plan's concurrency (batches in flight when a kill lands)")
)

var (
	crashLookAlikes = flag.Int("crash.lookalikes", 24, "crash campaign: kills to land in rounds whose company already holds look-alike orders (0: none)")
	crashTwoRuns    = flag.Int("crash.two-runs", 12, "crash campaign: kills to land in rounds where every apply and undo is two runs started at once on one journal (0: none)")
	crashFullDisk   = flag.Int("crash.full-disk", 6, "crash campaign: kills to land in rounds whose journal lives on a small tmpfs that fills mid-run (0: none)")
	crashKindSize   = flag.Int("crash.kind-records", 300, "crash campaign: top-level records of the look-alike, two-run, full-disk and quirks rounds")
	crashFilled     = flag.Int("crash.filled", 6, "crash campaign: kills to land in rounds whose plan writes an order's CDES and a line's PDES, which the server fills in their place (0: none)")
	crashQuirks     = flag.Int("crash.quirks", 12, "crash campaign: kills to land against a sandbox with every quirk of real servers, at 21.0 and again at 25.1 (0: none)")
	// The journal's index is written every 64k settled records by default:
	// so often here that kills land while it is being written.
	crashIndexEvery = flag.Int("crash.index-every", 25, "crash campaign: MIGRATE_INDEX_EVERY of the runs (records settled between writes of the journal's index)")
)

// crashKind is a kind of crash round: what the company holds before the
// run, how many runs start at once, where the journal lives.
type crashKind struct {
	name    string
	points  int // kills to land
	records int
	// lookAlikes: the sandbox starts with the company of lookAlikes, and
	// the load upserts customers and parts.
	lookAlikes bool
	// twoRuns: every apply and undo is two processes started at once on
	// the journal; one runs, the other is refused naming it.
	twoRuns bool
	// fullDisk: the journal lives on a small tmpfs that fills mid-run;
	// each stop for it frees a little.
	fullDisk bool
	// quirks: the sandbox has every quirk of real servers on,
	// at version; declared is MIGRATE_SYSTEM_VERSION for the binary (a
	// server before 22.1 has no version function).
	quirks            bool
	version, declared string
	// windows: the runs are the Windows build under Wine (wine_test.go);
	// perRound, when set, is the round's kills in place of crash.per-round.
	windows  bool
	perRound int
	// filled: the plan writes fields the server fills in place of the
	// values sent (loadConfig.filled); an order in doubt before any answer
	// showed it is decided as a user would (decideNear).
	filled bool
}

// crashFigures are the results a crash campaign reports.
type crashFigures struct {
	Rounds            int // fresh sandbox, apply until complete, undo until complete
	Held              int // rows the company held before each round (customers, parts, orders)
	LookAlikes        int // of those, orders that look like the load's own
	ApplyKills        int // kills that landed during apply or one of its resumes
	ResumeKills       int // of those, kills during a resume (the journal already had work)
	UndoKills         int // kills that landed during undo
	Finished          int // runs that ended before their kill
	Interrupted       int // runs that ended with exit 4 (and were resumed)
	Refused           int // of those, runs refused because the other run held the journal
	DiskFull          int // of those, runs stopped by the full disk
	Overlaps          int // writes of one run while the other run of the pair had a write in flight
	Survived          int // rounds whose data compared exact and whose undo left the company as it was
	Missing, Dup, Bad int // rows lost, duplicated, different, over all rounds
	Touched           int // rows held before the run that a round changed or deleted
	MidRunDup         int // duplicates (or touched rows) seen in a snapshot right after a kill
	IndexKills        int // kills that left the journal's index half written (its temporary file)
	Leftovers         int // rows undo left behind, or rows held before that it left changed or gone
	UndoInDoubt       int // undo runs that stopped in doubt (exit 4) and were run again
	Decided           int // orders in doubt decided with migrate resolve (filled)
}

// decideNear decides, as a user would, the orders of journal j in doubt
// with one near candidate (a document that holds all they sent but a
// field the server fills) whose DETAILS, the source order number, is
// their own: migrate resolve --record --key. It returns how many.
func decideNear(t *testing.T, tg *target, dir, j string) int {
	t.Helper()
	var list struct {
		Records []struct {
			Step, Record string
			Candidates   []struct {
				Key     string
				Fields  map[string]any
				Differs []string
			}
		}
	}
	o := mustRun(t, tg, dir, "resolve", j, "--json")
	if err := json.Unmarshal([]byte(o.stdout), &list); err != nil {
		t.Fatalf("resolve --json: %v\n%s", err, o.stdout)
	}
	n := 0
	for _, r := range list.Records {
		if len(r.Candidates) != 1 || len(r.Candidates[0].Differs) == 0 || r.Candidates[0].Fields["DETAILS"] != r.Record {
			continue
		}
		mustRun(t, tg, dir, "resolve", j, "--record", r.Step+"/"+r.Record, "--key", strings.Trim(r.Candidates[0].Key, "'"), "--yes")
		n++
	}
	return n
}

// TestCrash kills `migrate apply` (and then `migrate undo`) with SIGKILL at
// seeded random moments, resumes each time until the run exits 0, and
// compares the sandbox with the generated load exactly. Each round starts
// from a fresh sandbox and journal; rounds repeat until crash.points kills
// have landed.
func TestCrash(t *testing.T) {
	t.Parallel()
	runCrash(t, crashKind{name: "fresh sandbox", points: *crashPoints, records: *crashRecords})
}

// TestCrashLookAlikes is TestCrash in a company that already holds orders
// like the load's own, entered by hand before the run (lookAlikes): the
// load's data must end exactly once, every look-alike untouched by apply
// and still there after undo.
func TestCrashLookAlikes(t *testing.T) {
	if *crashLookAlikes == 0 {
		t.Skip("-crash.lookalikes=0")
	}
	t.Parallel()
	runCrash(t, crashKind{name: "company with look-alike orders", points: *crashLookAlikes, records: *crashKindSize, lookAlikes: true})
}

// TestCrashTwoRuns is TestCrash with every run started twice at once on
// one journal: one runs at a time, the other exits 4 naming it, and the
// two never write at the same time.
func TestCrashTwoRuns(t *testing.T) {
	if *crashTwoRuns == 0 {
		t.Skip("-crash.two-runs=0")
	}
	t.Parallel()
	runCrash(t, crashKind{name: "two runs at once", points: *crashTwoRuns, records: *crashKindSize, twoRuns: true})
}

// TestCrashFullDisk is TestCrash with the journal on a small tmpfs that
// fills in the middle of apply: the run stops with exit 4, a little space
// is freed, and apply resumes, until the data is exact.
func TestCrashFullDisk(t *testing.T) {
	if *crashFullDisk == 0 {
		t.Skip("-crash.full-disk=0")
	}
	t.Parallel()
	runCrash(t, crashKind{name: "journal on a disk that fills", points: *crashFullDisk, records: *crashKindSize, fullDisk: true})
}

// TestCrashUnderQuirks is TestCrash against servers as they really answer:
// every quirk on (batch answers as g1-r1 and GETs without ids
// before 22.1, JSON screen errors, cold forms answering 404 to their first
// request, texts read back normalised, real $metadata, filters on fields
// it cannot filter on ignored, Int64 and Decimal values answered as
// strings) and a line's price hidden from the API user
// (field-level permissions), at 21.0 and at 25.1.
// The sandbox outlives the kills, so its forms are cold once per round;
// an order text (APPEND) in doubt must be found by its normalised content
// and never appended twice.
func TestCrashUnderQuirks(t *testing.T) {
	if *crashQuirks == 0 {
		t.Skip("-crash.quirks=0")
	}
	t.Parallel()
	for _, sv := range []struct{ version, declared string }{{"21.0", "21.0"}, {"25.1", ""}} {
		t.Run(sv.version, func(t *testing.T) {
			t.Parallel()
			runCrash(t, crashKind{name: "under quirks, " + sv.version, points: *crashQuirks, records: *crashKindSize,
				quirks: true, version: sv.version, declared: sv.declared})
		})
	}
}

// TestCrashFilled is TestCrash with a plan that writes what the server
// fills in its place (an order's CDES from its customer, a line's PDES
// from its part): a document or line in doubt must be found all the same,
// never sent twice; one in doubt before any answer showed the fill is
// decided as a user would, with migrate resolve.
func TestCrashFilled(t *testing.T) {
	if *crashFilled == 0 {
		t.Skip("-crash.filled=0")
	}
	t.Parallel()
	runCrash(t, crashKind{name: "fields the server fills", points: *crashFilled, records: *crashKindSize, filled: true})
}

// crasher runs the rounds of one kind.
type crasher struct {
	t       *testing.T
	kind    crashKind
	dir     string
	load    *load
	rng     *rand.Rand
	faults  map[string]float64
	writers *writers // twoRuns: who writes when
	f       crashFigures
}

func runCrash(t *testing.T, k crashKind) {
	dir := t.TempDir()
	l := generate(t, dir, loadConfig{records: k.records, seed: *crashSeed, batchSize: *crashBatch, concurrency: *crashConc, upsert: k.lookAlikes, filled: k.filled})
	c := &crasher{t: t, kind: k, dir: dir, load: l, rng: rand.New(rand.NewSource(*crashSeed)), faults: crashFaultRates(t)}

	// Calibrate: how long an uninterrupted apply and undo take here, and a
	// resume with nothing left to do (process start, journal replay).
	span, undoSpan, overhead := *crashSpan, *crashSpan, time.Duration(0)
	var journalSize int64
	{
		tg := c.sandbox(0, nil) // the calibration measures runs that finish: no faults
		before := c.company(tg)
		j := filepath.Join(dir, "calibrate.journal")
		o := mustRun(t, tg, dir, "apply", l.plan, "--journal", j)
		if span == 0 {
			span = o.took
		}
		if d := compare(l.want, before, tg.sb.Snapshot()); !d.ok() {
			t.Fatalf("an uninterrupted apply is not exact: %v", d)
		}
		overhead = mustRun(t, tg, dir, "apply", l.plan, "--journal", j).took
		fi, err := os.Stat(j)
		if err != nil {
			t.Fatal(err)
		}
		journalSize = fi.Size()
		o = mustRun(t, tg, dir, "undo", j, "--yes")
		if undoSpan == 0 {
			undoSpan = o.took
		}
		if left := leftovers(before, tg.sb.Snapshot()); len(left) > 0 {
			t.Fatalf("an uninterrupted undo left %d rows: %.10v", len(left), left)
		}
	}
	t.Logf("%s: %d records, %d lines/texts/attachments; uninterrupted apply %v, undo %v, resume with nothing to do %v; journal %d bytes",
		k.name, l.records, l.children, span.Round(time.Millisecond), undoSpan.Round(time.Millisecond), overhead.Round(time.Millisecond), journalSize)

	// Each round (fresh sandbox, apply, undo) takes about crash.per-round
	// kills, three quarters in apply, each landing where killDelay says.
	perRound := max(*crashPerRound, 2)
	if k.perRound > 0 {
		perRound = max(k.perRound, 2)
	}
	applyKills, undoKills := max(perRound*3/4, 1), max(perRound/4, 1)
	kills := func() int { return c.f.ApplyKills + c.f.UndoKills }

	f := &c.f
	for kills() < k.points {
		f.Rounds++
		tg := c.sandbox(c.rng.Int63(), c.faults)
		before := c.company(tg)
		j := filepath.Join(dir, fmt.Sprintf("round-%d.journal", f.Rounds))
		var disk *smallDisk
		if k.fullDisk {
			disk = mountSmallDisk(t, filepath.Join(dir, fmt.Sprintf("round-%d-disk", f.Rounds)), journalSize)
			j = filepath.Join(disk.dir, "run.journal")
		}

		// Apply, killed and resumed until it exits 0.
		fills := 0
		o, attempt := resume(t, f.Rounds, phase{
			what: "apply",
			kill: applyKill(c.rng, kills, k.points, applyKills, undoKills, overhead, &span),
			run: func(attempt int, kill time.Duration) []outcome {
				if kill > 0 && attempt%4 == 3 && !k.twoRuns {
					// Every fourth kill lands while the journal's index is
					// being written (its temporary file exists), if the run
					// writes one before it ends.
					return []outcome{start(t, tg, dir, "demo", "apply", l.plan, "--journal", j).waitUntil(t, func() bool { return halfWrittenIndex(j) })}
				}
				return c.run(tg, kill, "apply", l.plan, "--journal", j)
			},
			killed: func(_ outcome, attempt int) {
				f.ApplyKills++
				if attempt > 0 {
					f.ResumeKills++
				}
			},
			stopped: func(o outcome) bool {
				f.Interrupted++
				switch {
				case disk != nil && strings.Contains(o.stderr, "no space left on device"):
					// The disk filled: free a little and resume.
					f.DiskFull++
					fills++
					if !disk.free(t) {
						t.Fatalf("round %d: the disk is full with nothing left to free\n%s", f.Rounds, o.stderr)
					}
					return true
				case k.filled && strings.Contains(o.stdout+o.stderr, "migrate resolve --record"):
					// Near candidates: the user decides them.
					n := decideNear(t, tg, dir, j)
					f.Decided += n
					return n > 0
				}
				// With faults a run stops at its first batch in doubt.
				return c.faults != nil
			},
			after: func(_ int, kill time.Duration, killed bool) {
				if !killed {
					return
				}
				if halfWrittenIndex(j) {
					f.IndexKills++
				}
				// Missing rows are expected mid-run; duplicates never, nor
				// a change to what the company held.
				if d := compare(l.want, before, tg.sb.Snapshot()); len(d.Duplicated)+len(d.Touched) > 0 {
					f.MidRunDup += len(d.Duplicated) + len(d.Touched)
					t.Errorf("round %d: after the kill at %v: %v", f.Rounds, kill, d)
				}
			},
		})
		f.Finished++
		span = renew(span, o, attempt)
		if disk != nil && fills == 0 {
			t.Errorf("round %d: the disk never filled (journal of %d bytes on the uninterrupted run)", f.Rounds, journalSize)
		}
		d := compare(l.want, before, tg.sb.Snapshot())
		f.Missing += len(d.Missing)
		f.Dup += len(d.Duplicated)
		f.Bad += len(d.Different) + len(d.Extra)
		f.Touched += len(d.Touched)
		if !d.ok() {
			t.Errorf("round %d: after apply: %v", f.Rounds, d)
		}
		if st := status(t, tg, dir, j); !st.Complete {
			t.Errorf("round %d: status says the journal is not complete: %+v", f.Rounds, st)
		}
		if disk != nil {
			disk.freeAll(t)
		}

		// Undo, killed and resumed until it exits 0.
		undoAll(t, func(kill time.Duration, args ...string) []outcome { return c.run(tg, kill, args...) }, j, f.Rounds, c.rng, &undoSpan,
			func(attempt int) bool { return kills() < k.points && attempt < 2*undoKills },
			&f.UndoKills, &f.UndoInDoubt)
		f.Finished++
		// Killed and resumed (apply and undo) as often as it was, the
		// journal's lines still chain, each from the one before it.
		if ch, err := journal.CheckChainFile(j); err != nil || !ch.Intact() {
			t.Errorf("round %d: the journal's chain after the kills: %+v %v", f.Rounds, ch, err)
		}
		left := leftovers(before, tg.sb.Snapshot())
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
	if c.writers != nil {
		f.Overlaps = int(c.writers.overlaps.Load())
		if f.Overlaps > 0 {
			t.Errorf("%s: %d writes while the other run of the pair had a write in flight", k.name, f.Overlaps)
		}
	}
	t.Logf("%s: %d records (+%d children), company before each round %d rows (%d look-alike orders), %d rounds, %d kills (%d in apply, %d of them in a resume; %d in undo), %d runs finished before their kill, %d exits 4 (%d refused by the other run, %d for a full disk)",
		k.name, l.records, l.children, f.Held, f.LookAlikes, f.Rounds, kills(), f.ApplyKills, f.ResumeKills, f.UndoKills, f.Finished, f.Interrupted, f.Refused, f.DiskFull)
	t.Logf("%s: %d kills left the journal's index half written", k.name, f.IndexKills)
	if k.filled {
		t.Logf("%s: %d orders in doubt decided with migrate resolve", k.name, f.Decided)
	}
	t.Logf("%s: %d of %d rounds exact; lost %d, duplicated %d, different or extra %d, held before and touched %d, duplicates seen mid-run %d, left after undo %d; undo stops in doubt (exit 4, run again): %d",
		k.name, f.Survived, f.Rounds, f.Missing, f.Dup, f.Bad, f.Touched, f.MidRunDup, f.Leftovers, f.UndoInDoubt)
	appendResults(t, "Crash campaign: "+k.name, crashTable(k, l, f))
}

// crashFaultRates are the sandbox faults of -crash.faults (nil: none).
func crashFaultRates(t testing.TB) map[string]float64 {
	if *crashFaults == "" {
		return nil
	}
	faults := map[string]float64{}
	for _, kv := range strings.Split(*crashFaults, ",") {
		kind, rate, err := sandbox.ParseFault(strings.TrimSpace(kv))
		if err != nil {
			t.Fatalf("-crash.faults: %v", err)
		}
		faults[kind] = rate
	}
	return faults
}

// crashTable is the figures of one kind as a Markdown table.
func crashTable(k crashKind, l *load, f *crashFigures) string {
	return fmt.Sprintf("| rounds | records (+ lines, texts, attachments) | held before (look-alike orders) | kills | in apply | of which in a resume | of which mid index write | in undo | runs ended before their kill | exits 4 | of which refused (journal in use) | of which disk full | writes at once | rounds exact | lost | duplicated | different or extra | held before and touched | duplicates mid-run | left after undo |\n"+
		"|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n"+
		"| %d | %d (+%d) | %d (%d) | %d | %d | %d | %d | %d | %d | %d | %d | %d | %d | %d of %d | %d | %d | %d | %d | %d | %d |\n",
		f.Rounds, l.records, l.children, f.Held, f.LookAlikes, f.ApplyKills+f.UndoKills, f.ApplyKills, f.ResumeKills, f.IndexKills, f.UndoKills, f.Finished, f.Interrupted, f.Refused, f.DiskFull, f.Overlaps,
		f.Survived, f.Rounds, f.Missing, f.Dup, f.Bad, f.Touched, f.MidRunDup, f.Leftovers)
}

// sandbox starts a fresh sandbox for a round of this kind, with faults.
func (c *crasher) sandbox(seed int64, faults map[string]float64) *target {
	var opts sandbox.Options
	if c.kind.quirks {
		opts = realServer(c.kind.version)
	}
	opts.Latency, opts.Seed, opts.Faults = *crashLatency, seed, faults
	var wrap func(http.Handler) http.Handler
	if c.kind.twoRuns {
		opts.Users = map[string]string{"demo": "demo", "demo2": "demo2"}
		if c.writers == nil {
			c.writers = newWriters()
		}
		wrap = c.writers.wrap
	}
	tg := startSandbox(c.t, opts, wrap)
	tg.windows = c.kind.windows
	if c.kind.declared != "" {
		tg.env = []string{"MIGRATE_SYSTEM_VERSION=" + c.kind.declared}
	}
	return tg
}

// company fills a fresh sandbox with what the company holds before the
// run, and returns it (nil: nothing).
func (c *crasher) company(tg *target) company {
	if !c.kind.lookAlikes {
		return nil
	}
	var before company
	var n int
	tg.sb.WithoutFaults(func() { before, n = lookAlikes(c.t, tg, c.load) }) // entered by hand, before the run and its faults
	c.f.Held, c.f.LookAlikes = held(before), n
	return before
}

// run runs one attempt: one process, or with twoRuns two started at once
// as two users. It returns the outcomes of the runs that were not refused
// for the journal being in use; each refusal must name the other run.
func (c *crasher) run(tg *target, kill time.Duration, args ...string) []outcome {
	t := c.t
	if !c.kind.twoRuns {
		return []outcome{migrate(t, tg, c.dir, kill, args...)}
	}
	users := []string{"demo", "demo2"}
	if c.rng.Intn(2) == 0 {
		users[0], users[1] = users[1], users[0]
	}
	a, b := start(t, tg, c.dir, users[0], args...), start(t, tg, c.dir, users[1], args...)
	outs := []outcome{a.wait(t, kill), b.wait(t, kill)}
	// What a killed run sent may still be at the server: let it finish
	// before the next pair starts, or its writes would look like a pair's
	// overlap.
	c.writers.idle()
	var ran []outcome
	for i, o := range outs {
		if o.code != 4 || !strings.Contains(o.stderr, "is in use by another run") {
			ran = append(ran, o)
			continue
		}
		c.f.Interrupted++
		c.f.Refused++
		other := outs[1-i].pid
		if m := holderPID.FindStringSubmatch(o.stderr); m == nil || m[1] != strconv.Itoa(other) {
			t.Errorf("migrate %s refused, naming another holder than the other run (pid %d):\n%s", args[0], other, o.stderr)
		}
	}
	if len(ran) == 0 {
		t.Errorf("migrate %s: both runs were refused:\n%s\n%s", args[0], outs[0].stderr, outs[1].stderr)
	}
	return ran
}

// holderPID reads the holder out of a refusal (journal.LockedError).
var holderPID = regexp.MustCompile(`in use by another run \(pid (\d+)\b`)

// writers watches who writes: two runs of one journal must never have
// writes in flight at once. Reads are left out (a refused run may have
// read the service before it looked at the journal), and so is what a run
// killed already still has at the server: no client can call back a
// request it sent before it died, and the run that takes the journal over
// reconciles it (a request whose connection closed is a dead run's).
type writers struct {
	mu       sync.Mutex
	inFlight map[string][]context.Context // by user: the requests being served
	busy     int                          // writes in flight, every user's
	quiet    *sync.Cond                   // on mu: busy dropped to 0
	overlaps atomic.Int64
}

func newWriters() *writers {
	w := &writers{inFlight: map[string][]context.Context{}}
	w.quiet = sync.NewCond(&w.mu)
	return w
}

func (w *writers) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			h.ServeHTTP(rw, r)
			return
		}
		user, _, _ := r.BasicAuth()
		ctx := r.Context()
		w.mu.Lock()
		for u, flying := range w.inFlight {
			if u != user && slices.ContainsFunc(flying, func(c context.Context) bool { return c.Err() == nil }) {
				w.overlaps.Add(1)
			}
		}
		w.inFlight[user] = append(w.inFlight[user], ctx)
		w.busy++
		w.mu.Unlock()
		defer func() {
			w.mu.Lock()
			flying := w.inFlight[user]
			if i := slices.Index(flying, ctx); i >= 0 {
				w.inFlight[user] = slices.Delete(flying, i, i+1)
			}
			if w.busy--; w.busy == 0 {
				w.quiet.Broadcast()
			}
			w.mu.Unlock()
		}()
		h.ServeHTTP(rw, r)
	})
}

// idle waits until no write is in flight. A killed run's write may still
// arrive while it waits (a sync.WaitGroup would panic on that Add).
func (w *writers) idle() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for w.busy > 0 {
		w.quiet.Wait()
	}
}

// smallDisk is a tmpfs holding the journal, mostly taken by filler files:
// each stop for a full disk removes one, the last one everything left.
type smallDisk struct {
	dir     string
	fillers []string
}

// mountSmallDisk mounts a tmpfs on dir with room for three journals the
// size of journalSize, and fills it so that a third of one fits: the
// first stop comes a third of the way into the load, the next ones a
// third of a journal later each, and the fourth frees it all.
func mountSmallDisk(t *testing.T, dir string, journalSize int64) *smallDisk {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	third := max(journalSize/3, 16<<10)
	size := 3*journalSize + 1<<20
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", fmt.Sprintf("size=%dk", size>>10), "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("a full disk needs a tmpfs, which needs root on Linux: mount: %v: %s", err, bytes.TrimSpace(out))
	}
	t.Cleanup(func() { _ = exec.Command("umount", "-l", dir).Run() })
	d := &smallDisk{dir: dir}
	fill := func(name string, n int64) {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, make([]byte, n), 0o644); err != nil {
			t.Fatalf("filling the small disk: %v", err)
		}
		d.fillers = append(d.fillers, p)
	}
	// Removed last to first: the rest, then three thirds.
	fill("filler-rest", size-4*third)
	for i := range 3 {
		fill(fmt.Sprintf("filler-%d", i), third)
	}
	return d
}

// free removes one filler; false when none is left.
func (d *smallDisk) free(t *testing.T) bool {
	if len(d.fillers) == 0 {
		return false
	}
	last := d.fillers[len(d.fillers)-1]
	d.fillers = d.fillers[:len(d.fillers)-1]
	if err := os.Remove(last); err != nil {
		t.Fatal(err)
	}
	return true
}

func (d *smallDisk) freeAll(t *testing.T) {
	for d.free(t) {
	}
}

// halfWrittenIndex reports a temporary file of the journal's index beside
// it: a kill landed while the index was being written. The index's head
// (JOURNAL.idx) and its runs (JOURNAL.idx.rN) are written through
// internal/atomicfile, whose temporaries are .NAME.tmp-*.
func halfWrittenIndex(journalPath string) bool {
	des, _ := os.ReadDir(filepath.Dir(journalPath))
	prefix := "." + filepath.Base(journalPath) + ".idx"
	for _, de := range des {
		if rest, ok := strings.CutPrefix(de.Name(), prefix); ok && strings.Contains(rest, ".tmp-") {
			return true
		}
	}
	return false
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
