package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"slices"
	"sort"
	"strconv"
	"syscall"
	"time"

	"github.com/migrate-tool/migrate/executor"
	"github.com/migrate-tool/migrate/internal/diag"
	"github.com/migrate-tool/migrate/internal/didyoumean"
	"github.com/migrate-tool/migrate/journal"
	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/plan"
)

// Version is the tool's version, set at build time with
// -ldflags "-X github.com/migrate-tool/migrate/cmd/migrate/cli.Version=v1.2.3".
var Version = "v0.1.0-dev"

// app is one invocation: its streams and environment, injected so tests see
// everything the command does.
type app struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string
	// clock is every client's time (odata.Config.Clock; nil: the real
	// one): tests give one on which backoff and Retry-After pass at once.
	clock odata.Clock
	// interrupts delivers Ctrl-C: the first asks for a clean stop, the
	// second for an immediate one.
	interrupts <-chan os.Signal
	// openBrowser shows the OIDC login page (nil: the system's browser).
	openBrowser func(url string) error
	// ask puts a yes/no question to the user (nil: on stdin, when it is a
	// terminal); ok is false when no one answered.
	ask func(question string) (answer string, ok bool)
	// plans are the plans this run has read (loadPlan), by path.
	plans map[string]loadedPlan
}

// loadedPlan is what plan.Load gave for a path.
type loadedPlan struct {
	plan  *plan.Plan
	diags plan.Diagnostics
}

// loadPlan is plan.Load of path, read once in a command's run: the
// companies a load names, the journal beside it and the run it checks all
// come from one reading of the file, even when it is saved again
// meanwhile. Each company of several reads it for itself (eachCompany).
func (a *app) loadPlan(path string) (*plan.Plan, plan.Diagnostics) {
	l, ok := a.plans[path]
	if !ok {
		l.plan, l.diags = plan.Load(path)
		if a.plans == nil {
			a.plans = map[string]loadedPlan{}
		}
		a.plans[path] = l
	}
	return l.plan, slices.Clip(l.diags)
}

type command struct {
	name    string
	summary string
	run     func(a *app, ctx context.Context, args []string) error
	// ownsInterrupts: the command reads a.interrupts itself (apply's
	// two-step stop, the sandbox's shutdown); for every other command the
	// first Ctrl-C cancels its context.
	ownsInterrupts bool
}

func commands() []command {
	return []command{
		{"validate", "check a plan, its sources' headers and the metadata; reads no rows", (*app).validate, false},
		{"test", "run the plan's tests: build a step's records from the rows a test gives and compare them with what it expects; offline", (*app).test, false},
		{"plan", "the dry run: build every record and batch; sends nothing that writes", (*app).plan, false},
		{"profile", "per column of a plan's sources (or a file): blanks, distinct and frequent values, lengths against MaxLength, numbers, dates, spaces, duplicate keys, missing references, with their cells", (*app).profile, false},
		{"mapping", "list each value of the plan's value maps, with its count, first cells and a proposed target, in a mapping file to confirm", (*app).mapping, false},
		{"diff", "what apply would do to each record against the target: create, update (old → new), unchanged, conflict, missing", (*app).diff, false},
		{"apply", "load: send the batches, journaled and resumable", (*app).apply, true},
		{"status", "what a journal says: committed, failed, skipped, pending, in doubt", (*app).status, false},
		{"report", "the failed rows as they were in the source, with the server's message; the run report, the created keys, the run's evidence in one file", (*app).report, false},
		{"verify", "read back what a run committed and compare it field by field with what was sent; control totals", (*app).verify, false},
		{"verify-evidence", "re-check an evidence file (report --evidence) against itself: hashes, the journal's chain, the created keys; with a target, against the target", (*app).verifyEvidence, false},
		{"undo", "delete what a run created and restore what it changed", (*app).undo, false},
		{"resolve", "list what is in doubt with its candidates; record what became of a record", (*app).resolve, false},
		{"info", "the target: user, system and OData versions, what the version allows", (*app).info, false},
		{"metadata", "metadata pull [--out FILE] [--clear] [PLAN] | metadata list [WORD] | metadata show ENTITY", (*app).metadata, false},
		{"export", "write an entity's rows (or, with --plan, what the plan would touch) to a workbook a plan can read back", (*app).export, false},
		{"init", "write a starting plan that maps a source's columns onto an entity (or that loads an intake workbook)", (*app).initPlan, false},
		{"template", "write the intake workbook of an entity a customer fills in: a sheet per level, notes, mandatory fields, value lists", (*app).template, false},
		{"login", "sign in with OIDC (PKCE) and cache the token; the application: MIGRATE_CLIENT_ID, MIGRATE_CLIENT_SECRET", (*app).login, false},
		{"logout", "remove the cached token", (*app).logout, false},
		{"sandbox", "serve the emulated service until interrupted", (*app).sandbox, true},
		{"version", "print the tool's version", (*app).version, false},
	}
}

// GCPercent is the garbage collector's target the command runs with when
// GOGC does not say otherwise. A load's live heap stays small (tens of MB
// whatever the file size: sources are streamed), so collecting a quarter as
// often costs little memory and makes the dry run about 40 % faster
// (BENCHMARKS.md).
const GCPercent = 400

// TuneGC applies GCPercent unless the user set GOGC, and a soft memory
// limit of executor.DefaultMemory unless GOMEMLIMIT set one (plan and
// apply take --memory): with a GC target of 400 a live heap of 100 MB
// would otherwise be let grow to 500 MB before it is collected.
func TuneGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(GCPercent)
	}
	setMemoryLimit(executor.DefaultMemory)
}

// Option changes how Run works; the tests of the real command line use
// them, main none.
type Option func(*app)

// WithClock gives every client the command makes clk for its time, so a
// test of a target that keeps failing or throttling waits for none of the
// client's pauses (odatatest.Clock) and still makes every attempt.
func WithClock(clk odata.Clock) Option { return func(a *app) { a.clock = clk } }

// now is the command's time: its clock's (WithClock), else the real one.
func (a *app) now() time.Time {
	if a.clock != nil {
		return a.clock.Now()
	}
	return time.Now()
}

// Run is the whole command line: it returns the exit code of docs/cli.md.
func Run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, opts ...Option) int {
	TuneGC()
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sig)
	a := &app{stdin: stdin, stdout: stdout, stderr: stderr, getenv: os.Getenv, interrupts: sig}
	for _, o := range opts {
		o(a)
	}
	return a.main(ctx, args)
}

func (a *app) main(ctx context.Context, args []string) int {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		a.usage(a.stdout)
		if len(args) == 0 {
			return ExitUsage
		}
		return ExitOK
	}
	if v := a.getenv("MIGRATE_INDEX_EVERY"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			fmt.Fprintf(a.stderr, "migrate: MIGRATE_INDEX_EVERY=%q is not a number of records: give a whole number such as 65536, or unset it\n", v)
			return ExitUsage
		}
		journal.SetIndexEvery(n)
	}
	for _, c := range commands() {
		if c.name == args[0] {
			if !c.ownsInterrupts && a.interrupts != nil {
				var cancel context.CancelFunc
				ctx, cancel = context.WithCancel(ctx)
				defer cancel()
				go func() {
					select {
					case <-a.interrupts:
						cancel()
					case <-ctx.Done():
					}
				}()
			}
			err := c.run(a, ctx, args[1:])
			if err != nil && !errors.Is(err, flag.ErrHelp) {
				if msg := err.Error(); msg != "" && !isSilent(err) {
					// The message may carry a server's text.
					fmt.Fprintf(a.stderr, "migrate %s: %s\n", c.name, diag.Printable(msg))
				}
				return codeOf(err)
			}
			return ExitOK
		}
	}
	fmt.Fprintf(a.stderr, "migrate: unknown command %q%s\n", args[0], suggestCommand(args[0]))
	a.usage(a.stderr)
	return ExitUsage
}

func isSilent(err error) bool {
	var ee *exitError
	return errors.As(err, &ee) && ee.err == nil
}

func suggestCommand(name string) string {
	names := make([]string, 0, len(commands()))
	for _, c := range commands() {
		names = append(names, c.name)
	}
	return didyoumean.Hint(name, names)
}

func (a *app) usage(w io.Writer) {
	fmt.Fprintln(w, "migrate: load CSV and Excel data into the ERP's OData service from a YAML plan.")
	fmt.Fprintln(w, "\nUsage: migrate COMMAND [ARGS] [FLAGS]\n\nCommands:")
	cs := commands()
	sort.SliceStable(cs, func(i, j int) bool { return false })
	width := 0
	for _, c := range cs {
		width = max(width, len(c.name))
	}
	for _, c := range cs {
		fmt.Fprintf(w, "  %-*s %s\n", width, c.name, c.summary)
	}
	fmt.Fprintln(w, "\nRun 'migrate COMMAND --help' for a command's flags. Exit codes: 0 done, 1 data problems,")
	fmt.Fprintln(w, "2 plan or command line wrong, 3 target unreachable or credentials refused, 4 interrupted: resume.")
}

// parse parses flags that may come before or after the positional
// arguments (`migrate apply PLAN --sandbox`), returning the positionals.
func (a *app) parse(fs *flag.FlagSet, args []string, positional string, min, max int) ([]string, error) {
	fs.SetOutput(a.stderr)
	fs.Usage = func() {
		fmt.Fprintf(a.stderr, "Usage: migrate %s %s [FLAGS]\n", fs.Name(), positional)
		fs.PrintDefaults()
	}
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, silent(ExitUsage)
		}
		args = fs.Args()
		if len(args) == 0 {
			break
		}
		if args[0] == "--" {
			pos = append(pos, args[1:]...)
			break
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
	if len(pos) < min || len(pos) > max {
		fs.Usage()
		return nil, silent(ExitUsage)
	}
	return pos, nil
}

func (a *app) version(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("version", flag.ContinueOnError)
	if _, err := a.parse(fs, args, "", 0, 0); err != nil {
		return err
	}
	fmt.Fprintln(a.stdout, "migrate", Version)
	return nil
}
