package crashtest

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/migrate-tool/migrate/cmd/migrate/cli"
	"github.com/migrate-tool/migrate/executor/fixture"
	"github.com/migrate-tool/migrate/internal/scratch"
	"github.com/migrate-tool/migrate/odata/odatatest"
	"github.com/migrate-tool/migrate/sandbox"
)

// binary is the migrate command: this test binary, which runs as main
// does (cli.Run, nothing else) when asMigrate is set in its environment,
// as testscript runs the command in cmd/migrate's scripts. The campaigns
// need no build of their own.
var binary string

// asMigrate is the variable that makes the test binary the command.
const asMigrate = "CRASHTEST_RUN_AS_MIGRATE"

// pausesPass, set to 1 beside asMigrate, gives the command's clients a
// clock whose pauses pass at once (odatatest.Clock, as cmd/migrate's
// scripts have it): the backoff before a retry and a 429's Retry-After
// take no time, and every attempt is still made. For faults that are the
// client's own waits; never where the server's real time is the fault (a
// storm, a latency spike).
const pausesPass = "CRASHTEST_PAUSES_PASS"

func TestMain(m *testing.M) {
	if os.Getenv(asMigrate) == "1" {
		var opts []cli.Option
		if os.Getenv(pausesPass) == "1" {
			opts = append(opts, cli.WithClock(odatatest.NewClock(time.Now())))
		}
		os.Exit(cli.Run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr, opts...))
	}
	flag.Parse()
	if err := longFromEnv(os.Getenv("MIGRATE_CAMPAIGN")); err != nil {
		fmt.Fprintln(os.Stderr, "campaign:", err)
		os.Exit(2)
	}
	os.Exit(run(m))
}

// longRun is the long run of RESULTS.md, for CI jobs that set
// MIGRATE_CAMPAIGN=long rather than pass test flags; flags given on the
// command line still win.
var longRun = map[string]string{
	"crash.points": "200", "crash.records": "3000",
	"crash.lookalikes": "60", "crash.two-runs": "60", "crash.full-disk": "36", "crash.kind-records": "1000",
	"crash.quirks": "60", "crash.filled": "36", "crash.changing-source": "60", "crash.cap": "60", "crash.cap-orders": "300", "crash.cap-batch": "10", "fault.records": "500",
	"fault.rates": "0.05,0.2,0.4", "fault.storms": "3s,10s", "fault.storm-times": "0", "fault.storm-calls": "0",
}

func longFromEnv(mode string) error {
	switch mode {
	case "", "short":
		return nil
	case "long":
	default:
		return fmt.Errorf("MIGRATE_CAMPAIGN=%q: want short or long", mode)
	}
	given := map[string]bool{}
	flag.Visit(func(f *flag.Flag) { given[f.Name] = true })
	for name, v := range longRun {
		if !given[name] {
			if err := flag.Set(name, v); err != nil {
				return err
			}
		}
	}
	return nil
}

func run(m *testing.M) int {
	// The test process serves the sandboxes and compares their snapshots
	// with the loads, allocating as it goes; at the default heap growth its
	// garbage collection was about a third of its CPU. At four times that
	// the package takes about 6% less CPU (the runs of the command keep
	// the default).
	debug.SetGCPercent(400)
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, "campaign: the test binary, to run as migrate:", err)
		return 1
	}
	binary = exe
	return scratch.Main(m)
}

// target is a sandbox served by the test process: it outlives every
// client the campaigns kill.
type target struct {
	sb  *sandbox.Server
	srv *httptest.Server
	url string
	// env is added to every run's environment (MIGRATE_SYSTEM_VERSION for
	// a server without a version function).
	env []string
	// windows: the runs are the Windows build under Wine (wine_test.go).
	windows bool
}

func startSandbox(t testing.TB, opts sandbox.Options, wrap func(http.Handler) http.Handler) *target {
	t.Helper()
	// A fixed clock keeps server-stamped dates out of the comparison's way.
	if opts.Now == nil {
		opts.Now = func() time.Time { return time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC) }
	}
	env := fixture.NewBehind(t, opts, func(sb *sandbox.Server) http.Handler {
		if wrap != nil {
			return wrap(sb)
		}
		return sb
	})
	return &target{sb: env.SB, srv: env.Srv, url: env.Target()}
}

// outcome is how one run of the binary ended.
type outcome struct {
	code   int // exit code; -1 when killed
	killed bool
	pid    int
	took   time.Duration
	stdout string
	stderr string
}

// log tells, with -crash.verbose, how attempt of a round's command went
// and what it printed on stderr.
func (o outcome) log(t testing.TB, round int, command string, attempt int, kill time.Duration) {
	t.Helper()
	if *crashVerbose {
		t.Logf("round %d %s %d: kill %v killed %v code %d took %v\n%s", round, command, attempt, kill, o.killed, o.code, o.took, o.stderr)
	}
}

// renew is the span to draw the next kill delays within, once run o
// (attempt attempt of a phase) ended before its kill: if it ran from the
// start (attempt 0, a whole apply or undo), how long such a run takes
// here now. The calibration runs while the other campaigns start, slower
// than the runs after it, and a delay past the end of a run lands no kill
// and costs another round of the load. A resume, which ends sooner, and
// -crash.span keep the span.
func renew(span time.Duration, o outcome, attempt int) time.Duration {
	if *crashSpan > 0 || attempt > 0 {
		return span
	}
	return o.took
}

// runLeft is what is left of a run (an undo, a delta) and its resumes, to
// draw each run's kill delay within: a whole run takes span, each run
// killed did about as much of it as it ran, and the run that finishes it
// has at least its start left (a tenth of span). A delay drawn within a
// whole run would miss most resumes, which end sooner.
type runLeft struct{ left, least time.Duration }

func newRunLeft(span time.Duration) *runLeft {
	return &runLeft{left: span, least: span / 10}
}

// delay is a kill delay within what is left.
func (r *runLeft) delay(rng *rand.Rand) time.Duration {
	return time.Duration(rng.Int63n(max(int64(r.left)*9/10, 1))) + time.Millisecond
}

// killed counts a run killed after kill.
func (r *runLeft) killed(kill time.Duration) { r.left = max(r.left-kill, r.least) }

// maxAttempts bounds the runs of one phase of a round (an apply and its
// resumes, an undo and its resumes): a resume loop past it is a bug.
const maxAttempts = 400

// phase is what one phase of a round (an apply and its resumes, an undo
// and its resumes) does beyond resuming: how an attempt runs, and what
// each way a run ends means for the round.
type phase struct {
	// what names the command in messages: "apply", "undo".
	what string
	// kill is attempt's kill delay (0: none).
	kill func(attempt int) time.Duration
	// run runs attempt, killed after kill unless it ends first: one run,
	// or two started at once (those not refused for the journal in use).
	run func(attempt int, kill time.Duration) []outcome
	// killed takes a run killed (nil: nothing to count).
	killed func(o outcome, attempt int)
	// stopped takes a run that exited 4 and reports whether the stop moved
	// the round on (a full disk freed, a decision taken, an injected
	// fault). nil: none does.
	stopped func(o outcome) bool
	// after runs once an attempt did not finish the phase, killed or not
	// (nil: nothing): the checks of what a stop left.
	after func(attempt int, kill time.Duration, killed bool)
}

// resume runs the attempts of phase p of round until a run exits 0, as a
// user resumes a run that stopped, and returns that run and its attempt.
// Five stops in a row that did not move the round on, with no kill
// between, are a resume that cannot get past something; they, a run
// exiting with a code other than 0, 4 or a kill's, and maxAttempts
// attempts fail the test.
func resume(t testing.TB, round int, p phase) (outcome, int) {
	t.Helper()
	stuck := 0
	for attempt := 0; ; attempt++ {
		if attempt == maxAttempts {
			t.Fatalf("round %d: %s did not finish in %d attempts", round, p.what, maxAttempts)
		}
		kill := p.kill(attempt)
		var done *outcome
		killed := false
		for _, o := range p.run(attempt, kill) {
			o.log(t, round, p.what, attempt, kill)
			switch {
			case o.killed:
				killed = true
				stuck = 0
				if p.killed != nil {
					p.killed(o, attempt)
				}
			case o.code == 4:
				if p.stopped != nil && p.stopped(o) {
					stuck = 0
				} else if stuck++; stuck == 5 {
					t.Fatalf("round %d: %s exited 4 five times in a row without a kill, with nothing to decide\nstdout:\n%.4000s\nstderr:\n%s", round, p.what, o.stdout, o.stderr)
				}
			case o.code == 0:
				done = &o
			default:
				t.Fatalf("round %d: %s exited %d\nstdout:\n%.4000s\nstderr:\n%s", round, p.what, o.code, o.stdout, o.stderr)
			}
		}
		if done != nil {
			return *done, attempt
		}
		if p.after != nil {
			p.after(attempt, kill, killed)
		}
	}
}

// undoAll runs undo of journal j until it exits 0. While mayKill(attempt)
// holds, each run is killed after a random delay within what is left of
// an undo that takes *span (runLeft), which an undo that ends before its
// kill renews; the kills that land count in *killed and the runs that
// leave a batch in doubt (exit 4, "run undo again", as docs/cli.md says)
// in *inDoubt. run runs one attempt (oneRun, or crasher.run's pair).
func undoAll(t testing.TB, run runner, j string, round int, rng *rand.Rand, span *time.Duration, mayKill func(attempt int) bool, killed, inDoubt *int) {
	t.Helper()
	left := newRunLeft(*span)
	o, attempt := resume(t, round, phase{
		what: "undo",
		kill: func(attempt int) time.Duration {
			if mayKill(attempt) {
				return left.delay(rng)
			}
			return 0
		},
		run:    func(_ int, kill time.Duration) []outcome { return run(kill, "undo", j, "--yes") },
		killed: func(outcome, int) { *killed++ },
		stopped: func(o outcome) bool {
			if !strings.Contains(o.stderr, "run undo again") {
				t.Fatalf("round %d: undo exited 4\nstdout:\n%.3000s\nstderr:\n%s", round, o.stdout, o.stderr)
			}
			*inDoubt++
			return true
		},
		after: func(_ int, kill time.Duration, wasKilled bool) {
			if wasKilled {
				left.killed(kill)
			}
		},
	})
	*span = renew(*span, o, attempt)
}

// runner runs an attempt of a command, killed after kill unless it ends
// first: the runs that count (crasher.run leaves out the one of a pair
// refused for the journal in use).
type runner func(kill time.Duration, args ...string) []outcome

// oneRun runs each attempt as one run of the binary against tg.
func oneRun(t testing.TB, tg *target, dir string) runner {
	return func(kill time.Duration, args ...string) []outcome {
		return []outcome{migrate(t, tg, dir, kill, args...)}
	}
}

// migrate runs the binary against tg. With kill > 0 it sends SIGKILL after
// that delay unless the process finished first.
func migrate(t testing.TB, tg *target, dir string, kill time.Duration, args ...string) outcome {
	t.Helper()
	return start(t, tg, dir, "demo", args...).wait(t, kill)
}

// proc is a started run of the binary.
type proc struct {
	cmd            *exec.Cmd
	args           []string
	stdout, stderr bytes.Buffer
	start          time.Time
	done           chan error
}

// start starts the binary against tg, logging in as user (whose password
// is the user name, as startSandbox's users have it).
func start(t testing.TB, tg *target, dir, user string, args ...string) *proc {
	t.Helper()
	p := &proc{cmd: exec.Command(binary, args...), args: args, done: make(chan error, 1)}
	if tg.windows {
		p.cmd = wineCommand(args)
	}
	p.cmd.Dir = dir
	p.cmd.Env = append(os.Environ(),
		"MIGRATE_TARGET="+tg.url, "MIGRATE_USER="+user, "MIGRATE_PASSWORD="+user, "MIGRATE_AUTH=basic",
		"HOME="+dir, "XDG_CONFIG_HOME="+filepath.Join(dir, ".config"), "MIGRATE_INDEX_EVERY="+strconv.Itoa(*crashIndexEvery),
		asMigrate+"=1")
	p.cmd.Env = append(p.cmd.Env, tg.env...)
	if tg.windows {
		p.cmd.Env = append(p.cmd.Env, "WINEDEBUG=-all")
	}
	p.cmd.Stdout, p.cmd.Stderr = &p.stdout, &p.stderr
	p.start = time.Now()
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.done <- p.cmd.Wait() }()
	return p
}

// wait waits for the run to end. With kill > 0 it sends SIGKILL that long
// after the run started, unless it finished first.
func (p *proc) wait(t testing.TB, kill time.Duration) outcome {
	t.Helper()
	if kill <= 0 {
		return p.waitUntil(t, func() bool { return false })
	}
	timer := time.NewTimer(max(kill-time.Since(p.start), time.Nanosecond))
	defer timer.Stop()
	select {
	case err := <-p.done:
		return p.ended(t, err, false)
	case <-timer.C:
		// SIGKILL: no deferred function, no flush, no journal close.
		_ = p.cmd.Process.Kill()
		return p.ended(t, <-p.done, true)
	}
}

// hangAfter is how long a run may last before it is taken for hung: the
// longest run of the campaigns takes seconds. It stays well inside go
// test's own timeout, so that a hang fails its test with the run named
// and the run's goroutines, not the whole package with the test
// process's.
var hangAfter = flag.Duration("crash.hang-after", 3*time.Minute, "campaigns: a run of migrate still going after this long is hung: its goroutines are printed and the test fails")

// waitUntil waits for the run to end, sending SIGKILL the moment cond
// holds (polled every 100 µs), if it does before the end. A run still
// going after -crash.hang-after fails the test with its goroutines (hung).
func (p *proc) waitUntil(t testing.TB, cond func() bool) outcome {
	t.Helper()
	tick := time.NewTicker(100 * time.Microsecond)
	defer tick.Stop()
	hang := time.NewTimer(max(*hangAfter-time.Since(p.start), time.Nanosecond))
	defer hang.Stop()
	for {
		select {
		case err := <-p.done:
			return p.ended(t, err, false)
		case <-tick.C:
			if cond() {
				_ = p.cmd.Process.Kill()
				return p.ended(t, <-p.done, true)
			}
		case <-hang.C:
			p.hung(t)
		}
	}
}

// hung fails the test with what the run was doing: SIGQUIT makes a Go
// program print every goroutine's stack on its stderr and exit; one that
// does not within a few seconds (Wine) is killed. The whole dump comes
// first and a line per goroutine of the engine's own code last, where a
// log cut to its tail still shows them.
func (p *proc) hung(t testing.TB) {
	t.Helper()
	_ = p.cmd.Process.Signal(syscall.SIGQUIT)
	select {
	case <-p.done:
	case <-time.After(5 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
	dump := p.stderr.String()
	// The sandboxes are served here: a run waiting on one that never
	// answers shows in this process's goroutines.
	here := make([]byte, 1<<22)
	here = here[:runtime.Stack(here, true)]
	t.Fatalf("stdout:\n%.3000s\nstderr (its goroutines):\n%s\nmigrate %s did not end in %v: hung in\n%sthe sandboxes' goroutines in the test process:\n%s",
		p.stdout.String(), dump, strings.Join(p.args, " "), *hangAfter, ownFrames(dump), ownFrames(string(here), "sandbox."))
}

// ownFrames is, for each goroutine of a Go stack dump, its state and the
// first frame in this module's code, one line each; with within, only
// the goroutines with a frame in that package ("sandbox.").
func ownFrames(dump string, within ...string) string {
	var b strings.Builder
	for _, g := range strings.Split(dump, "\n\n") {
		head, rest, _ := strings.Cut(g, "\n")
		if !strings.HasPrefix(head, "goroutine ") {
			continue
		}
		if len(within) > 0 && !strings.Contains(rest, "github.com/migrate-tool/migrate/"+within[0]) {
			continue
		}
		for line := range strings.Lines(rest) {
			if fn, ok := strings.CutPrefix(line, "github.com/migrate-tool/migrate/"); ok {
				// "goroutine 12 gp=0x… m=nil [sync.Mutex.Lock]:": its number and state.
				num, _, _ := strings.Cut(strings.TrimPrefix(head, "goroutine "), " ")
				state := head[strings.LastIndexByte(head, '[')+1:]
				fmt.Fprintf(&b, "  %s [%s %s", num, strings.TrimSuffix(state, ":"), fn)
				break
			}
		}
	}
	return b.String()
}

// ended is how the run ended, once it has.
func (p *proc) ended(t testing.TB, err error, killed bool) outcome {
	t.Helper()
	o := outcome{took: time.Since(p.start), pid: p.cmd.Process.Pid, stdout: p.stdout.String(), stderr: p.stderr.String(), killed: killed}
	var ee *exec.ExitError
	switch {
	case err == nil:
		o.code = 0
	case errors.As(err, &ee):
		o.code = ee.ExitCode()
		if killed && o.code >= 0 {
			// It finished in the instant before the kill landed.
			o.killed = false
		}
	default:
		t.Fatal(err)
	}
	return o
}

// appendResults adds a section to -campaign.results, if given.
func appendResults(t testing.TB, title, table string) {
	if *resultsFile == "" {
		return
	}
	f, err := os.OpenFile(*resultsFile, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		t.Errorf("results: %v", err)
		return
	}
	defer f.Close()
	fmt.Fprintf(f, "\n### %s (%s)\n\ncommand: `go test ./crashtest %s`\n\n%s", title, time.Now().UTC().Format("2006-01-02 15:04 UTC"), strings.Join(testArgs(), " "), table)
}

// testArgs are the campaign flags this run was given.
func testArgs() []string {
	var out []string
	flag.Visit(func(f *flag.Flag) {
		if strings.HasPrefix(f.Name, "crash.") || strings.HasPrefix(f.Name, "fault.") || f.Name == "test.run" {
			out = append(out, "-"+strings.TrimPrefix(f.Name, "test.")+"="+f.Value.String())
		}
	})
	return out
}
