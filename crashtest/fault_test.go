package crashtest

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/migrate-tool/migrate/executor"
	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/plan"
	"github.com/migrate-tool/migrate/sandbox"
)

var (
	faultRecords = flag.Int("fault.records", 250, "fault campaign: top-level records of each case's load")
	faultRates   = flag.String("fault.rates", "0.05,0.2", "fault campaign: rates (0..1) of each injected fault")
	faultSeed    = flag.Int64("fault.seed", 8, "fault campaign: seed of the loads and of the sandbox's faults")
	faultStorms  = flag.String("fault.storms", "10s", "fault campaign: durations of the 429 storms (every call answered 429 with Retry-After: 1); past about 8s the client's retries run out")
	stormTimes   = flag.Int("fault.storm-times", 1, "fault campaign: how many storms a load meets, every 20 calls (0: as many as its calls make)")
	stormCalls   = flag.Int("fault.storm-calls", 7, "fault campaign: a storm lasts this many calls, the client's pauses passing at once, rather than -fault.storms of real time (0); 7 is what a 10s storm answers a client that gives a batch up after its retries and resumes")
	faultTimeout = flag.Duration("fault.timeout", 300*time.Millisecond, "fault campaign: the client timeout of the latency-spike cases (in-process)")
	resultsFile  = flag.String("campaign.results", "", "append the figures of this run to this file as Markdown tables")
)

// faultRow is one case's figures.
type faultRow struct {
	Fault          string
	Rate           string
	Records        int
	Calls          int64 // API calls the sandbox served
	Injected       int64 // faults injected
	Runs           int   // runs until exit 0
	Exits          string
	Missing, Dup   int
	Different      int
	Exact          bool
	Undecided      int
	ElapsedSeconds float64
}

var (
	faultMu   sync.Mutex
	faultRows []faultRow
)

func record(row faultRow) {
	faultMu.Lock()
	faultRows = append(faultRows, row)
	faultMu.Unlock()
}

func rates(t testing.TB) []float64 {
	var out []float64
	for _, s := range strings.Split(*faultRates, ",") {
		r, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil || r < 0 || r > 1 {
			t.Fatalf("-fault.rates: %q is not a rate from 0 to 1", s)
		}
		out = append(out, r)
	}
	return out
}

// TestFaults loads a generated plan with the binary while the sandbox
// injects one kind of fault at one rate; every run that stops must stop with
// exit 4 and finish on resume, and the data must then be exact.
func TestFaults(t *testing.T) {
	t.Parallel()
	t.Run("group", func(t *testing.T) {
		seed := *faultSeed
		for _, kind := range []string{sandbox.FaultDropBeforeCommit, sandbox.FaultDropAfterCommit, sandbox.FaultError500, sandbox.FaultThrottle429} {
			for _, rate := range rates(t) {
				if kind == sandbox.FaultThrottle429 && rate > 0.2 {
					// Each 429 costs the client at least its Retry-After
					// (1 s); higher rates are the storms' business.
					continue
				}
				seed++
				kind, rate, seed := kind, rate, seed
				t.Run(fmt.Sprintf("%s=%v", kind, rate), func(t *testing.T) {
					t.Parallel()
					opts := sandbox.Options{Latency: 2 * time.Millisecond, Seed: seed, Faults: map[string]float64{kind: rate}}
					runFaultCase(t, kind, fmt.Sprint(rate), seed, opts, nil)
				})
			}
		}
		for _, st := range storms(t) {
			seed++
			seed, st := seed, st
			t.Run("429-storm="+st.name(), func(t *testing.T) {
				t.Parallel()
				what := st.name() + " long, every 20 calls"
				if st.times > 0 {
					what = fmt.Sprintf("%s long, after 20 calls, %d times", st.name(), st.times)
				}
				runFaultCase(t, "429 storm", what, seed, sandbox.Options{Latency: 2 * time.Millisecond, Seed: seed}, st)
			})
		}
		for _, mode := range []string{"late-answer", "dropped-in-queue"} {
			for _, rate := range rates(t) {
				seed++
				mode, rate, seed := mode, rate, seed
				t.Run(fmt.Sprintf("spike-%s=%v", mode, rate), func(t *testing.T) {
					t.Parallel()
					runSpikeCase(t, mode, rate, seed)
				})
			}
		}
	})
	table := takeFaultTable()
	t.Logf("fault campaign:\n%s", table)
	appendResults(t, "Fault campaign", table)
}

// takeFaultTable returns the rows recorded so far as a Markdown table,
// sorted by fault and rate, and forgets them.
func takeFaultTable() string {
	faultMu.Lock()
	defer faultMu.Unlock()
	sort.SliceStable(faultRows, func(i, j int) bool {
		a, b := faultRows[i], faultRows[j]
		if a.Fault != b.Fault {
			return a.Fault < b.Fault
		}
		return leadingNumber(a.Rate) < leadingNumber(b.Rate)
	})
	var b strings.Builder
	fmt.Fprintf(&b, "| fault | rate | records | calls | injected | runs | exits | lost | duplicated | different | exact |\n|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range faultRows {
		fmt.Fprintf(&b, "| %s | %s | %d | %d | %d | %d | %s | %d | %d | %d | %v |\n", r.Fault, r.Rate, r.Records, r.Calls, r.Injected, r.Runs, r.Exits, r.Missing, r.Dup, r.Different, r.Exact)
	}
	faultRows = nil
	return b.String()
}

// storm answers every call with 429 and Retry-After: 1 for a while, once
// every `every` calls that got through: a storm longer than the client's
// retries (1+1+2+4 s) makes it give a batch up. A storm lasts length of
// real time, or calls calls (the client's pauses passing at once: what
// the client meets is the same, without the wait).
type storm struct {
	every    int
	length   time.Duration
	calls    int
	times    int // storms in all; 0: no end
	met      int // storms so far
	mu       sync.Mutex
	passed   int
	until    time.Time
	more     int // calls still to refuse, in a storm of calls
	injected atomic.Int64
}

// storms are the storms the campaign's flags ask for.
func storms(t *testing.T) []*storm {
	if *stormCalls > 0 {
		return []*storm{{every: 20, calls: *stormCalls, times: *stormTimes}}
	}
	var out []*storm
	for _, s := range strings.Split(*faultStorms, ",") {
		d, err := time.ParseDuration(strings.TrimSpace(s))
		if err != nil || d <= 0 {
			t.Fatalf("-fault.storms: %q is not a duration", s)
		}
		out = append(out, &storm{every: 20, length: d, times: *stormTimes})
	}
	return out
}

func (s *storm) name() string {
	if s.calls > 0 {
		return fmt.Sprintf("%d calls", s.calls)
	}
	return s.length.String()
}

func (s *storm) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		now := time.Now()
		throttle := now.Before(s.until) || s.more > 0
		if s.more > 0 {
			s.more--
		}
		if !throttle {
			if s.passed == s.every && (s.times == 0 || s.met < s.times) {
				s.passed, throttle = 0, true
				s.met++
				if s.calls > 0 {
					s.more = s.calls - 1
				} else {
					s.until = now.Add(s.length)
				}
			} else {
				s.passed++
			}
		}
		s.mu.Unlock()
		if throttle {
			s.injected.Add(1)
			w.Header().Set("Retry-After", "1")
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusTooManyRequests)
			fmt.Fprint(w, `{"error":{"code":"TooManyRequests","message":"too many requests (storm); retry later"}}`)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// runFaultCase applies a fresh load with the binary until it exits 0.
func runFaultCase(t *testing.T, kind, rate string, seed int64, opts sandbox.Options, st *storm) {
	dir := t.TempDir()
	l := generate(t, dir, loadConfig{records: *faultRecords, seed: seed, batchSize: 5})
	var wrap func(http.Handler) http.Handler
	if st != nil {
		wrap = st.wrap
	}
	tg := startSandbox(t, opts, wrap)
	if st == nil || st.calls > 0 {
		// The sandbox's faults are answered at once; what takes time is
		// the client's backoff and Retry-After, which need not be waited
		// for. A storm of real time lasts real time: there the client
		// waits.
		tg.env = append(tg.env, pausesPass+"=1")
	}
	j := filepath.Join(dir, "run.journal")
	start := time.Now()
	var exits []string
	// Each run stops at its first batch in doubt (docs/design.md, The
	// executor: never resend blindly), so a high rate needs many runs; the
	// bound only catches a resume that makes no progress.
	const maxRuns = 300
	runs := 0
	for {
		runs++
		if runs > maxRuns {
			t.Errorf("%s %s: not finished after %d runs (exits %v)", kind, rate, maxRuns, exits)
			break
		}
		o := migrate(t, tg, dir, 0, "apply", l.plan, "--journal", j)
		exits = append(exits, strconv.Itoa(o.code))
		if o.code == 0 {
			break
		}
		if o.code != 4 {
			t.Errorf("%s %s: run %d exited %d, want 0, or 4 and a resume\nstdout:\n%.3000s\nstderr:\n%.2000s", kind, rate, runs, o.code, o.stdout, o.stderr)
			if o.code != 3 {
				break
			}
			// Exit 3 is counted as a finding above; resume anyway to check
			// the data.
		}
	}
	d := compare(l.want, nil, tg.sb.Snapshot())
	if !d.ok() {
		t.Errorf("%s %s: %v", kind, rate, d)
	}
	stats := tg.sb.Stats()
	injected := stats.Faults
	if st != nil {
		injected = st.injected.Load()
	}
	if injected == 0 {
		// A case that met no fault proves nothing: the load must be large
		// enough for its rate (and the storm's start).
		t.Errorf("%s %s: no fault was injected in %d calls: the load is too small for the rate (the seed drew none: raise -fault.records, or take another -fault.seed)", kind, rate, stats.Calls)
	}
	record(faultRow{Fault: kind, Rate: rate, Records: l.records + l.children, Calls: stats.Calls, Injected: injected, Runs: runs,
		Exits: tally(exits), Missing: len(d.Missing), Dup: len(d.Duplicated), Different: len(d.Different) + len(d.Extra),
		Exact: d.ok(), ElapsedSeconds: time.Since(start).Seconds()})
	t.Logf("%s %s: %d calls, %d faults, %d runs (exits %s), %v in %v", kind, rate, stats.Calls, injected, runs, strings.Join(exits, " "), d, time.Since(start).Round(time.Millisecond))
}

// spike delays some calls past the client's timeout. late-answer: the
// sandbox commits, the answer comes too late (the client gave up). dropped-
// in-queue: the call waits before the server takes it, and the server drops
// it when the client is gone by then (as a queued request on a hosted
// installation).
type spike struct {
	mode     string
	rate     float64
	delay    time.Duration
	mu       sync.Mutex
	n        int64
	seed     int64
	injected atomic.Int64
	wg       sync.WaitGroup
}

func (s *spike) hit() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n++
	// A deterministic hash of the call number: seeded, independent of timing.
	x := uint64(s.n)*0x9E3779B97F4A7C15 ^ uint64(s.seed)
	x ^= x >> 31
	x *= 0xBF58476D1CE4E5B9
	x ^= x >> 29
	return float64(x%1_000_000)/1_000_000 < s.rate
}

func (s *spike) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || !s.hit() {
			h.ServeHTTP(w, r)
			return
		}
		s.injected.Add(1)
		s.wg.Add(1)
		defer s.wg.Done()
		switch s.mode {
		case "late-answer":
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, r)
			time.Sleep(s.delay) // the spike: committed, answered too late
			for k, v := range rec.Header() {
				w.Header()[k] = v
			}
			w.WriteHeader(rec.Code)
			_, _ = w.Write(rec.Body.Bytes())
		default: // dropped-in-queue
			// Read the body first: net/http notices a closed connection
			// (and cancels the context) only once the body is consumed.
			body, err := io.ReadAll(r.Body)
			if err != nil {
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			select {
			case <-r.Context().Done():
				return // the client gave up while queued: never processed
			case <-time.After(s.delay):
			}
			h.ServeHTTP(w, r)
		}
	})
}

// runSpikeCase runs the engine in-process with a short client timeout:
// `migrate apply` has no timeout setting (odata.DefaultTimeout, 3 minutes,
// as hosted servers drop calls past 3 minutes), so a spike past it cannot
// be waited for in CI. Everything else is what the binary runs.
func runSpikeCase(t *testing.T, mode string, rate float64, seed int64) {
	dir := t.TempDir()
	l := generate(t, dir, loadConfig{records: *faultRecords, seed: seed, batchSize: 10})
	sp := &spike{mode: mode, rate: rate, delay: 3 * *faultTimeout, seed: seed}
	tg := startSandbox(t, sandbox.Options{Latency: 2 * time.Millisecond, Seed: seed}, sp.wrap)
	t.Cleanup(sp.wg.Wait)
	md := sandbox.DemoMetadata()
	p, ds := plan.Load(l.plan)
	if ds.HasErrors() {
		t.Fatalf("plan: %v", ds)
	}
	ver, _ := odata.ParseVersion("25.1")
	run, ds := executor.Prepare(context.Background(), executor.Setup{Plan: p, Metadata: md, Version: ver})
	if ds.HasErrors() {
		t.Fatalf("prepare: %v", ds)
	}
	defer run.Close()
	client, err := odata.NewClient(odata.Config{BaseURL: tg.url, Auth: odata.BasicAuth{User: "demo", Password: "demo"},
		HTTPClient: tg.srv.Client(), Timeout: *faultTimeout})
	if err != nil {
		t.Fatal(err)
	}
	o := executor.Options{Client: client, Journal: filepath.Join(dir, "run.journal"), Target: tg.url, ToolVersion: "campaign"}
	start := time.Now()
	var exits []string
	runs := 0
	var undecided int
	for {
		runs++
		if runs > 300 {
			t.Errorf("spike %s %v: not finished after 300 runs (%v)", mode, rate, exits)
			break
		}
		sum, err := executor.Apply(context.Background(), run, o)
		switch {
		case err == nil && sum.Complete && len(sum.Undecided) == 0:
			exits = append(exits, "0")
		case errors.Is(err, executor.ErrInDoubt) || errors.Is(err, executor.ErrInterrupted) || err == nil && sum != nil && (sum.Interrupted || len(sum.Undecided) > 0):
			exits = append(exits, "4") // what the CLI answers for these
			if sum != nil {
				undecided = len(sum.Undecided)
			}
			continue
		default:
			t.Fatalf("spike %s %v: run %d: %v (the CLI would not exit 4)", mode, rate, runs, err)
		}
		break
	}
	sp.wg.Wait() // late answers still sleeping
	d := compare(l.want, nil, tg.sb.Snapshot())
	if !d.ok() {
		t.Errorf("spike %s %v: %v", mode, rate, d)
	}
	stats := tg.sb.Stats()
	record(faultRow{Fault: "latency spike, " + mode, Rate: fmt.Sprintf("%v (%v > timeout %v)", rate, sp.delay, *faultTimeout), Records: l.records + l.children,
		Calls: stats.Calls, Injected: sp.injected.Load(), Runs: runs, Exits: tally(exits), Missing: len(d.Missing), Dup: len(d.Duplicated),
		Different: len(d.Different) + len(d.Extra), Exact: d.ok(), Undecided: undecided, ElapsedSeconds: time.Since(start).Seconds()})
	if sp.injected.Load() == 0 {
		t.Errorf("spike %s %v: no call was delayed in %d calls: the load is too small for the rate (the seed drew none: raise -fault.records, or take another -fault.seed)", mode, rate, stats.Calls)
	}
	t.Logf("spike %s %v: %d calls, %d spikes, %d runs (%s), %v", mode, rate, stats.Calls, sp.injected.Load(), runs, strings.Join(exits, " "), d)
}

// tally summarises exit codes as "4×12 3×1 0×1", in order of first
// appearance.
func tally(exits []string) string {
	var order []string
	n := map[string]int{}
	for _, e := range exits {
		if n[e] == 0 {
			order = append(order, e)
		}
		n[e]++
	}
	parts := make([]string, len(order))
	for i, e := range order {
		parts[i] = fmt.Sprintf("%s×%d", e, n[e])
	}
	return strings.Join(parts, " ")
}

// leadingNumber reads "0.05 (…)" or "10s long" as 0.05 or 10, to order rates.
func leadingNumber(s string) float64 {
	end := 0
	for end < len(s) && (s[end] >= '0' && s[end] <= '9' || s[end] == '.') {
		end++
	}
	f, _ := strconv.ParseFloat(s[:end], 64)
	return f
}
