package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/migrate-tool/migrate/executor"
	"github.com/migrate-tool/migrate/internal/diag"
	"github.com/migrate-tool/migrate/journal"
	"github.com/migrate-tool/migrate/odata"
)

// applyFlags are apply's own flags.
type applyFlags struct {
	runFlags
	journal     string
	concurrency int
}

// runFlags choose what a run loads: apply takes them, and plan and diff
// take them to predict that apply (dry: the help says so).
type runFlags struct {
	limit              int
	steps              stepsFlag
	retry, allowChange bool
	allowMissing       bool
	txLeft             int // --transactions-left; -1: not given
	delta              deltaFlags
	companies          listFlag
}

func (r *runFlags) register(fs *flag.FlagSet, dry bool) {
	of := ""
	if dry {
		of = "predict apply's: "
	}
	fs.IntVar(&r.limit, "limit", 0, of+"a trial: load at most N records of each step; the journal says so, and apply without --limit loads the rest")
	fs.Var(&r.steps, "steps", of+"STEP,STEP: run only these steps; the steps they depend on must be complete in the journal")
	fs.BoolVar(&r.retry, "retry-failed", false, of+"send again the records that failed, rebuilt from the current source")
	fs.BoolVar(&r.allowChange, "allow-plan-change", false, of+"resume although the plan or a source changed since the journal began")
	fs.BoolVar(&r.allowMissing, "allow-missing-references", false, of+"start although values of exists: fields are neither on the target nor created by an earlier step")
	r.txLeft = -1
	fs.Var(countFlag{&r.txLeft, 0}, "transactions-left", of+"the API transactions the pool has left: a load that needs more is refused before anything is sent (default: the plan's target.transactions_left, else no budget)")
	fs.Var(&r.companies, "company", of+"load this company of the installation (the service root's last segment), repeatable: one load and one journal each, at once, within one rate budget (default: the plan's target.companies, else the URL's own)")
	r.delta.register(fs)
}

// check refuses a trial of no records, and what --delta does not go with.
func (r *runFlags) check() error {
	if r.limit < 0 {
		return usageErr("--limit %d: give the records per step of the trial, at least 1", r.limit)
	}
	return r.delta.check(r.limit > 0, len(r.steps) > 0)
}

// budget is the API transactions the pool has left: --transactions-left,
// else the plan's target.transactions_left; -1 when neither says. A
// standard OData service meters none: a budget for one is refused.
func (r *runFlags) budget(c *checked) (int, error) {
	left := r.txLeft
	if left < 0 && c.plan.Target.HasTransactionsLeft {
		left = c.plan.Target.TransactionsLeft
	}
	if left >= 0 && c.run != nil && c.run.Version.Standard {
		return 0, usageErr("--transactions-left and target.transactions_left are the ERP's pool of API transactions; a target of dialect odata meters none: remove it")
	}
	return left, nil
}

// whole reports whether the run is of the whole load: no trial, no choice
// of steps, not the failed records again, not a delta made after it. Its
// dry run and diff are kept beside the journal for the evidence.
func (r *runFlags) whole() bool {
	return r.limit == 0 && len(r.steps) == 0 && !r.retry && !r.delta.delta
}

// options are o with the choice of what the run loads.
func (r *runFlags) options(o executor.Options) executor.Options {
	o.Limit, o.Steps, o.RetryFailed, o.AllowPlanChange = r.limit, r.steps, r.retry, r.allowChange
	o.Delta, o.Overwrite = r.delta.delta, r.delta.overwrite
	return o
}

// stepsFlag is --steps: step names, comma-separated or repeated.
type stepsFlag []string

func (l *stepsFlag) String() string { return strings.Join(*l, ",") }
func (l *stepsFlag) Set(s string) error {
	for _, n := range strings.Split(s, ",") {
		if n = strings.TrimSpace(n); n != "" {
			*l = append(*l, n)
		}
	}
	return nil
}

func (a *app) apply(ctx context.Context, args []string) error {
	var f checkFlags
	fs := checkFlagSet("apply", &f)
	f.memory.register(fs)
	var o applyFlags
	fs.StringVar(&o.journal, "journal", "", "the journal (default: beside the plan, named after it; with --sandbox a temporary one); with several companies a pattern holding {company}")
	fs.Var(countFlag{&o.concurrency, 1}, "concurrency", "the `number` of batches in flight at once (default: the plan's target.concurrency, else 2)")
	o.runFlags.register(fs, false)
	pos, err := a.parse(fs, args, "PLAN", 1, 1)
	if err != nil {
		return err
	}
	if f.conn.sandbox && f.metadata != "" {
		return usageErr("--sandbox serves its own demo schema; --metadata does not go with it")
	}
	if err := o.runFlags.check(); err != nil {
		return err
	}
	f.memory.apply()
	return a.forCompanies(ctx, "apply", pos[0], f, o.runFlags, files{journal: o.journal}, false, func(sub *app, f checkFlags, fl files) error {
		oc := o // the runs go on at once: each its own journal
		oc.journal = fl.journal
		return sub.applyOne(ctx, pos[0], f, oc)
	})
}

// applyOne is one load: of the target's company, or (f.conn.shared) of
// f.conn.company, into that company's journal (loadJournal; o.journal is
// its name or pattern).
func (a *app) applyOne(ctx context.Context, planPath string, f checkFlags, o applyFlags) error {
	jpath, err := a.loadJournal(planPath, f, o.journal)
	if err != nil {
		return err
	}
	if !f.conn.sandbox {
		if err := a.refuseOtherTarget(jpath, f.conn.target, f.conn.company); err != nil {
			return err
		}
	}
	v := a.applyView(f.json)
	c, err := a.checkToRun(ctx, planPath, f, true, v)
	if err != nil {
		return busyIsPending(err)
	}
	defer c.Close()
	if refs, err := a.readyToRun(ctx, c, v); err != nil {
		return err
	} else if unresolved := refs.Unresolved; len(unresolved) > 0 {
		if !o.allowMissing {
			return a.refuseUnresolved(unresolved, v)
		}
		fmt.Fprintf(a.stderr, "warning: starting with unresolved references (--allow-missing-references): %s of exists: fields, on neither the target nor an earlier step; their records may fail\n",
			diag.Count(len(unresolved), "value", "values"))
	}
	if err := a.refuseOverBudget(ctx, c, jpath, o); err != nil {
		return err
	}
	named := jpath != ""
	if !named {
		// --sandbox without --journal: the sandbox's data is gone when
		// the run ends, and so is its journal.
		dir, err := os.MkdirTemp("", "migrate-sandbox-")
		if err != nil {
			return withCode(ExitUsage, err)
		}
		defer os.RemoveAll(dir)
		jpath = filepath.Join(dir, filepath.Base(journalFile(planPath, "")))
	}

	hard, stop, cancel := a.interruptible(ctx)
	defer cancel()
	hook := v.Hook()
	if f.json {
		hook.progressEvents(a.now)
	}
	var user string
	if _, err := os.Stat(jpath); os.IsNotExist(err) {
		// The journal header names the user for the run report; a server
		// that cannot say leaves it unrecorded, which stops nothing.
		user, _ = c.conn.client.LoginName(ctx)
	}
	started := time.Now()
	sum, err := executor.Apply(hard, c.run, o.options(executor.Options{
		Client: c.conn.client, Journal: jpath, Target: c.conn.url, ToolVersion: Version, User: user,
		Concurrency: o.concurrency, Stop: stop, Hook: hook,
	}))
	hook.finish()
	if unusable(err) {
		// The journal is from something else, damaged, or for another
		// target: a file that cannot be used here, not a target that
		// cannot be reached.
		return withCode(ExitUsage, err)
	}
	if sum == nil {
		return a.applyExit(c.conn, err, nil, nil)
	}
	view := summaryJSON(sum)
	complete := sum.Complete
	view.Complete = &complete
	if named {
		view.Journal = jpath
	}
	if f.conn.company != "" {
		view.Company = f.conn.company
	}
	view.Trial, view.Unfinished = sum.Trial, sum.Unfinished
	if werr := v.Applied(appliedResult{doc: view, sum: sum, took: time.Since(started), planPath: planPath}); werr != nil {
		return werr
	}
	return a.applyExit(c.conn, err, sum, &view)
}

// interruptible is ctx for a run that Ctrl-C stops in two stages: the
// first closes stop (the batches in flight finish and are journaled),
// the second cancels hard (the next apply reconciles what was in
// flight). cancel ends the watch.
func (a *app) interruptible(ctx context.Context) (hard context.Context, stop <-chan struct{}, cancel func()) {
	stopped := make(chan struct{})
	hard, cancel = context.WithCancel(ctx)
	go func() {
		select {
		case <-a.interrupts:
		case <-hard.Done():
			return
		}
		fmt.Fprintln(a.stderr, "\ninterrupted: finishing the batches in flight and journaling them (Ctrl-C again stops at once)")
		close(stopped)
		select {
		case <-a.interrupts:
			fmt.Fprintln(a.stderr, "stopping now; the journal lets the next apply reconcile what was in flight")
			cancel()
		case <-hard.Done():
		}
	}()
	return hard, stopped, cancel
}

// unusable reports whether err says the journal cannot be used here: it
// is from another plan or sources, damaged, for another target, or
// for other steps, delta or dialect.
func unusable(err error) bool {
	var stale *executor.StaleError
	var shifted *executor.ShiftedError
	var corrupt *journal.CorruptError
	var other *executor.TargetError
	var steps *executor.StepsError
	var delta *executor.DeltaError
	var dialect *executor.DialectError
	return errors.As(err, &stale) || errors.As(err, &shifted) || errors.As(err, &corrupt) || errors.As(err, &other) ||
		errors.As(err, &steps) || errors.As(err, &delta) || errors.As(err, &dialect)
}

// applyExit is apply's exit (docs/cli.md, Exit codes) for what the run
// returned: err, and its summary sum shown as view (both nil when the
// run stopped before it had one).
func (a *app) applyExit(cn *conn, err error, sum *executor.Summary, view *runJSON) error {
	switch {
	case sum != nil && err != nil && (errors.Is(err, executor.ErrInterrupted) || errors.Is(err, executor.ErrInDoubt) || errors.Is(err, context.Canceled)):
		fmt.Fprintln(a.stderr, diag.Printable(err.Error()))
		return silent(ExitInterrupted)
	case journalErr(err) != nil:
		return journalErr(err)
	case localErr(err) != nil:
		return localErr(err)
	case err != nil:
		return busyIsPending(a.unreachable(cn, err))
	case sum == nil:
		return nil
	case sum.Interrupted || len(sum.Undecided) > 0:
		return silent(ExitInterrupted)
	case len(sum.Errors) > 0, view.Delta.conflicted():
		return silent(ExitData)
	case sum.Trial > 0 || len(sum.Unfinished) > 0:
		return silent(ExitInterrupted) // the rest is pending: apply again
	case !sum.Complete:
		return silent(ExitData)
	}
	return nil
}

// refuseOtherTarget refuses, before anything is read from or sent to it,
// a target (flag, else environment) that is not the one the journal at
// jpath was written to (executor.CheckTarget, exit 2). A journal that does
// not exist yet or cannot be read is left to the command.
func (a *app) refuseOtherTarget(jpath, flagURL, company string) error {
	url, _ := a.targetURL(flagURL, nil)
	if url == "" {
		return nil // the plan's target.url: the executor checks it
	}
	if company != "" {
		var err error
		if url, err = odata.CompanyURL(url, company); err != nil {
			return usageErr("--company: %v", err)
		}
	}
	hdr, err := journal.ReadHeader(jpath)
	if err != nil {
		return nil
	}
	if err := executor.CheckTarget(jpath, hdr, url); err != nil {
		return withCode(ExitUsage, err)
	}
	return nil
}

// localErr gives the run's trouble on this machine its exit code, or nil
// for any other error. It is never 3: the target is not to blame.
//   - a source file that breaks while it is read (a CSV syntax error, a
//     damaged workbook): 2, a file cannot be read, as plan says it;
//   - a local resource that fails (the temporary folder for the rows past
//     --memory is full or unusable): 4, free it and run again to resume.
func localErr(err error) error {
	switch {
	case err == nil:
		return nil
	case executor.SourceBroken(err):
		return withCode(ExitUsage, err)
	case executor.LocalResource(err):
		return withCode(ExitInterrupted, err)
	}
	return nil
}

// journalErr gives a journal's own trouble its exit code (docs/cli.md), or nil
// for any other error. It is never 3: the target is not to blame.
//   - another run holds the journal: 4, run again once it has finished;
//   - the disk filled or failed in the middle of the run: 4, the journal
//     holds everything up to there and the next run resumes;
//   - the journal cannot be created, opened or locked, or is damaged: 2.
func journalErr(err error) error {
	var (
		locked  *journal.LockedError
		file    *journal.FileError
		corrupt *journal.CorruptError
	)
	switch {
	case err == nil:
		return nil
	case errors.As(err, &locked):
		return withCode(ExitInterrupted, err)
	case errors.As(err, &file) && file.Resumable():
		return withCode(ExitInterrupted, err)
	case errors.As(err, &file), errors.As(err, &corrupt):
		return withCode(ExitUsage, err)
	}
	return nil
}

// refuseOverBudget refuses, before anything is sent, a load that needs
// more API transactions than the pool has left (--transactions-left, else
// the plan's target.transactions_left): the dry run of the apply that
// would run (the journal it resumes, its trial and steps) counts them as
// the service meters them.
func (a *app) refuseOverBudget(ctx context.Context, c *checked, jpath string, o applyFlags) error {
	left, err := o.budget(c)
	if err != nil || left < 0 {
		return err
	}
	resumed := ""
	if _, err := os.Stat(jpath); jpath != "" && err == nil {
		resumed = jpath
	}
	sum, err := executor.DryRun(ctx, c.run, o.options(executor.Options{Client: c.conn.client, Journal: resumed}))
	if err != nil {
		if errors.Is(err, executor.ErrTargetRead) {
			return a.unreachable(c.conn, err)
		}
		return withCode(ExitUsage, err)
	}
	if over := executor.OverBudget(sum.Transactions, left); over != "" {
		return withCode(ExitData, fmt.Errorf("%s: nothing was sent; load some steps now (--steps) and the rest once the pool is topped up", over))
	}
	fmt.Fprintf(a.stderr, "this load needs %s of the %d left in the pool\n", diag.Count(sum.Transactions, "API transaction", "API transactions"), left)
	return nil
}
