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
	"github.com/migrate-tool/migrate/plan"
)

// printProblems shows validate's findings on stderr; errors stop the
// command before anything is read or sent, warnings do not. With --json,
// stdout still gets its one document: validate's.
func (a *app) printProblems(c *checked, v runView) error {
	for _, d := range c.diags {
		fmt.Fprintln(a.stderr, d.String())
	}
	if c.plan != nil && !c.diags.HasErrors() {
		return nil
	}
	if err := v.Problems(c.plan, c.diags); err != nil {
		return err
	}
	fmt.Fprintf(a.stderr, "%s; nothing was sent (run `migrate validate` for the same list)\n", plural(len(c.diags.Errors()), "problem", "problems"))
	if c.plan == nil {
		return silent(ExitUsage)
	}
	return silent(ExitData)
}

// hostedCallsPerMinute is what hosted installations allow (docs/servers.md,
// Limits of hosted installations);
// the dry run's estimate assumes it when the plan sets no limit.
const hostedCallsPerMinute = 100

func (a *app) plan(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("plan", flag.ContinueOnError)
	var f checkFlags
	f.register(fs)
	f.memory.register(fs)
	out := fs.String("out", "", "write the batches, exactly as apply would send them, as JSON files to this folder")
	limit := fs.Int("limit", 0, "read at most N records of each step (0: all)")
	cpm := new(int)
	fs.Var(countFlag{cpm, 1}, "calls-per-minute", "the limit the time estimate assumes, a `number` of calls (default: the plan's, else 100, as hosted installations allow)")
	html := fs.String("html", "", "FILE.html: the dry run as a self-contained page, as migrate report --html shows a run")
	journalFlag := fs.String("journal", "", "the journal apply would resume (default: the one apply names beside the plan): what it holds loaded is left out, as apply leaves it out")
	var d deltaFlags
	d.register(fs)
	pos, err := a.parse(fs, args, "PLAN", 1, 1)
	if err != nil {
		return err
	}
	if err := checkExt("--html", *html, ".html", ".htm"); err != nil {
		return err
	}
	if err := d.check(*limit > 0, false); err != nil {
		return err
	}
	f.memory.apply()
	v := a.planView(f.json)
	c, err := a.check(ctx, pos[0], f, false)
	if err != nil {
		return err
	}
	defer c.Close()
	if err := a.printProblems(c, v); err != nil {
		return err
	}
	rate := *cpm
	if rate == 0 {
		rate = c.plan.Target.CallsPerMinute
	}
	if rate == 0 {
		rate = hostedCallsPerMinute
	}
	if *out != "" {
		if err := os.MkdirAll(*out, 0o755); err != nil {
			return withCode(ExitUsage, err)
		}
	}
	// With a target, upsert and update read what it holds (reads only:
	// the dry run writes nothing); offline their outcome is predicted.
	// --sandbox reads the fresh sandbox apply --sandbox would load.
	if c.conn == nil && f.conn.sandbox && f.metadata == "" {
		cn, err := a.connect(ctx, f.conn, c.plan)
		if err != nil {
			return err
		}
		defer cn.Close()
		c.conn = cn
	}
	var target executor.Client
	if c.conn != nil {
		target = c.conn.client
	}
	if err := a.buildLookups(ctx, c); err != nil {
		return err
	}
	refs, err := a.checkReferences(ctx, c, target)
	if err != nil {
		return err
	}
	sum, err := executor.DryRun(ctx, c.run, executor.Options{
		Client: target, OutDir: *out, Limit: *limit, CallsPerMinute: rate, Hook: v.Hook(),
		Journal: a.resumedJournal(pos[0], f, *journalFlag), Delta: d.delta, Overwrite: d.overwrite,
	})
	if err != nil {
		if errors.Is(err, executor.ErrTargetRead) {
			return a.unreachable(c.conn, err)
		}
		return withCode(ExitUsage, err)
	}
	// One result, which every view renders: the text, the JSON and the page
	// show the same problems and the same counts.
	sum.AddReferences(refs)
	if *html != "" {
		where, _ := a.targetURL(f.conn.target, c.plan)
		if c.conn != nil {
			where = c.conn.url // --sandbox: the one it started
		}
		info := executor.ReportInfo{Plan: c.plan.Name, PlanPath: pos[0], Target: where, SystemVersion: c.run.Version.String(), ToolVersion: Version}
		if err := executor.WriteHTMLFile(*html, executor.DryRunReport(sum, info, rate)); err != nil {
			return withCode(ExitUsage, err)
		}
	}
	view := summaryJSON(sum)
	total := sum.Total()
	load, notLoad := total.ToLoad(), total.NotLoaded()
	view.WouldLoad, view.WouldNotLoad = &load, &notLoad
	view.Estimate = &estimate{CallsPerMinute: rate, Seconds: sum.Estimated.Seconds()}
	view.Unread = sum.Unread
	if err := v.DryRun(dryRunResult{doc: view, sum: sum, rate: rate, out: *out, html: *html}); err != nil {
		return err
	}
	if len(view.Errors) > 0 {
		return silent(ExitData)
	}
	return nil
}

func summaryJSON(s *executor.Summary) runJSON {
	r := runJSON{Plan: s.Plan, Requests: s.Requests, Subrequests: s.Subrequests, Transactions: s.Transactions, Errors: []errorJSON{}, Undecided: s.Undecided}
	for _, st := range s.Steps {
		r.Steps = append(r.Steps, stepJSON{Name: st.Name, Entity: st.Entity, Records: st.Records, Children: st.Children,
			Skipped: st.Skipped, Errors: st.Errors, Unresolved: st.Unresolved, Committed: st.Committed, Failed: st.Failed, Pending: st.Pending, InDoubt: st.InDoubt,
			Partly: st.Partly, Waived: st.Waived, Changed: st.Changed})
	}
	for _, g := range s.Gone {
		r.Gone = append(r.Gone, g.String())
	}
	if len(s.Waived) > 0 {
		r.Waived = waivedRecordsJSON(s.Waived)
	}
	if r.Steps == nil {
		r.Steps = []stepJSON{}
	}
	r.Errors = append(r.Errors, errorsOf(s.Errors)...)
	r.Warnings = warningsOf(s.Warnings)
	if b := s.Shrank; b != nil {
		r.Shrank = &shrankJSON{From: b.From, To: b.To, SlowestSeconds: b.Slowest.Seconds(), SlowestOf: b.Of}
	}
	r.Resumes = resumesOf(s)
	r.Delta = deltaOf(s.Delta)
	return r
}

// applyFlags are apply's own flags.
type applyFlags struct {
	journal                          string
	concurrency                      int
	retry, allowChange, allowMissing bool
	delta                            deltaFlags
	companies                        listFlag
	limit                            int
	steps                            stepsFlag
	txLeft                           int // --transactions-left; -1: not given
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
	fs := flag.NewFlagSet("apply", flag.ContinueOnError)
	var f checkFlags
	f.register(fs)
	f.memory.register(fs)
	var o applyFlags
	fs.StringVar(&o.journal, "journal", "", "the journal (default: beside the plan, named after it; with --sandbox a temporary one); with several companies a pattern holding {company}")
	fs.Var(countFlag{&o.concurrency, 1}, "concurrency", "the `number` of batches in flight at once (default: the plan's target.concurrency, else 2)")
	fs.BoolVar(&o.retry, "retry-failed", false, "send again the records that failed, rebuilt from the current source")
	fs.BoolVar(&o.allowChange, "allow-plan-change", false, "resume although the plan or a source changed since the journal began")
	o.delta.register(fs)
	fs.BoolVar(&o.allowMissing, "allow-missing-references", false, "start although values of exists: fields are neither on the target nor created by an earlier step")
	fs.Var(&o.companies, "company", "load this company of the installation (the service root's last segment), repeatable: one load and one journal each, at once, within one rate budget (default: the plan's target.companies, else the URL's own)")
	fs.IntVar(&o.limit, "limit", 0, "a trial: load at most N records of each step; the journal says so, and apply without --limit loads the rest")
	fs.Var(&o.steps, "steps", "STEP,STEP: run only these steps; the steps they depend on must be complete in the journal")
	o.txLeft = -1
	fs.Var(countFlag{&o.txLeft, 0}, "transactions-left", "the API transactions the pool has left: a load that needs more is refused before anything is sent (default: the plan's target.transactions_left, else no budget)")
	pos, err := a.parse(fs, args, "PLAN", 1, 1)
	if err != nil {
		return err
	}
	if f.conn.sandbox && f.metadata != "" {
		return usageErr("--sandbox serves its own demo schema; --metadata does not go with it")
	}
	if o.limit < 0 {
		return usageErr("--limit %d: give the records per step of the trial, at least 1", o.limit)
	}
	if err := o.delta.check(o.limit > 0, len(o.steps) > 0); err != nil {
		return err
	}
	f.memory.apply()
	companies := []string(o.companies)
	p, _ := plan.Load(pos[0])
	if len(companies) == 0 && p != nil {
		companies = p.Target.Companies
	}
	if d, err := a.dialectOf(f.conn, p); err != nil {
		return err
	} else if d.Standard() && len(o.companies) > 0 {
		return usageErr("--company names a company of the ERP's installation; a target of dialect odata has none")
	}
	if len(companies) > 0 {
		if o.txLeft >= 0 {
			return usageErr("--transactions-left takes one company at a time: the pool is the installation's, and the loads of several share it")
		}
		return a.applyCompanies(ctx, pos[0], f, o, companies)
	}
	return a.applyOne(ctx, pos[0], f, o)
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
	c, err := a.check(ctx, planPath, f, true)
	if err != nil {
		return busyIsPending(err)
	}
	defer c.Close()
	if err := a.printProblems(c, v); err != nil {
		return err
	}
	if err := a.buildLookups(ctx, c); err != nil {
		return err
	}
	if err := a.refuseMapValues(ctx, c, v); err != nil {
		return err
	}
	if refs, err := a.checkReferences(ctx, c, c.conn.client); err != nil {
		return err
	} else if unresolved := refs.Unresolved; len(unresolved) > 0 {
		if !o.allowMissing {
			return a.refuseUnresolved(unresolved, v)
		}
		fmt.Fprintf(a.stderr, "warning: starting with unresolved references (--allow-missing-references): %s of exists: fields, on neither the target nor an earlier step; their records may fail\n",
			plural(len(unresolved), "value", "values"))
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
		jpath = filepath.Join(dir, filepath.Base(journalName(planPath, "", "", "", false)))
	}

	stop := make(chan struct{})
	hard, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-a.interrupts:
		case <-hard.Done():
			return
		}
		fmt.Fprintln(a.stderr, "\ninterrupted: finishing the batches in flight and journaling them (Ctrl-C again stops at once)")
		close(stop)
		select {
		case <-a.interrupts:
			fmt.Fprintln(a.stderr, "stopping now; the journal lets the next apply reconcile what was in flight")
			cancel()
		case <-hard.Done():
		}
	}()

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
	sum, err := executor.Apply(hard, c.run, executor.Options{
		Client: c.conn.client, Journal: jpath, Target: c.conn.url, ToolVersion: Version, User: user,
		Concurrency: o.concurrency, RetryFailed: o.retry, AllowPlanChange: o.allowChange,
		Limit: o.limit, Steps: o.steps, Delta: o.delta.delta, Overwrite: o.delta.overwrite,
		Stop: stop, Hook: hook,
	})
	hook.finish()
	var stale *executor.StaleError
	var shifted *executor.ShiftedError
	var corrupt *journal.CorruptError
	var other *executor.TargetError
	var steps *executor.StepsError
	var delta *executor.DeltaError
	var dialect *executor.DialectError
	switch {
	case errors.As(err, &stale), errors.As(err, &shifted), errors.As(err, &corrupt), errors.As(err, &other), errors.As(err, &steps), errors.As(err, &delta), errors.As(err, &dialect):
		// The journal is from something else, damaged, or for another
		// target: a file that cannot be used here, not a target that
		// cannot be reached.
		return withCode(ExitUsage, err)
	case sum == nil && journalErr(err) != nil:
		return journalErr(err)
	case sum == nil && localErr(err) != nil:
		return localErr(err)
	case sum == nil && err != nil:
		return busyIsPending(a.unreachable(c.conn, err))
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
	switch {
	case err != nil && (errors.Is(err, executor.ErrInterrupted) || errors.Is(err, executor.ErrInDoubt) || errors.Is(err, context.Canceled)):
		fmt.Fprintln(a.stderr, diag.Printable(err.Error()))
		return silent(ExitInterrupted)
	case journalErr(err) != nil:
		return journalErr(err)
	case localErr(err) != nil:
		return localErr(err)
	case err != nil:
		return busyIsPending(a.unreachable(c.conn, err))
	case sum.Interrupted || len(sum.Undecided) > 0:
		return silent(ExitInterrupted)
	case len(sum.Errors) > 0, view.Delta != nil && view.Delta.Conflicts > 0:
		return silent(ExitData)
	case sum.Trial > 0 || len(sum.Unfinished) > 0:
		return silent(ExitInterrupted) // the rest is pending: apply again
	case !sum.Complete:
		return silent(ExitData)
	}
	return nil
}

// leftText says what a trial or a choice of steps left to load ("" when
// nothing): the next apply, without --limit or --steps, loads it.
func leftText(sum *executor.Summary) string {
	switch {
	case sum.Trial > 0:
		waiting := 0
		for _, s := range sum.Steps {
			waiting += s.Pending
		}
		if waiting > 0 {
			// Records that name what the trial did not load (a line's
			// part past the limit): the server would refuse them now.
			verb := "name what it did not load and wait"
			if waiting == 1 {
				verb = "names what it did not load and waits"
			}
			return fmt.Sprintf("trial of %d per step; %s %s for it; run apply without --limit to load the rest",
				sum.Trial, plural(waiting, "pending record", "pending records"), verb)
		}
		return fmt.Sprintf("trial of %d per step; run apply without --limit to load the rest", sum.Trial)
	case len(sum.Unfinished) > 0 && len(sum.Chosen) > 0:
		return fmt.Sprintf("not loaded to the end: %s; run apply without --steps to load the rest", strings.Join(sum.Unfinished, ", "))
	}
	return "" // a stop: status's "run apply again to resume" says it
}

func (a *app) status(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("status", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print one JSON document on stdout")
	pos, err := a.parse(fs, args, "JOURNAL... | PLAN", 1, 1<<20)
	if err != nil {
		return err
	}
	paths, err := statusJournals(pos)
	if err != nil {
		return err
	}
	v := a.statusView(*asJSON)
	if len(paths) == 1 {
		st, err := a.statusOf(paths[0])
		if err != nil {
			return err
		}
		if err := v.One(st); err != nil {
			return err
		}
		return silent(st.code)
	}
	// Several journals (one a company): each in turn, the exit code the
	// worst of them.
	code := ExitOK
	for i, p := range paths {
		st, err := a.statusOf(p)
		if err != nil {
			code = worseCode(code, codeOf(err))
			fmt.Fprintf(a.stderr, "migrate status: %s\n", diag.Printable(err.Error()))
			continue
		}
		code = worseCode(code, st.code)
		v.Each(i, st)
	}
	if err := v.Done(); err != nil {
		return err
	}
	return silent(code)
}

// statusJournals are the journals status reads: those given, or for a plan
// its journals beside it: PLAN.journal and one PLAN.COMPANY.journal per
// company apply loaded.
func statusJournals(args []string) ([]string, error) {
	if len(args) != 1 {
		return args, nil
	}
	ext := strings.ToLower(filepath.Ext(args[0]))
	if ext != ".yaml" && ext != ".yml" {
		return args, nil
	}
	out := journalsBeside(args[0])
	if len(out) == 0 {
		stem := strings.TrimSuffix(args[0], filepath.Ext(args[0]))
		return nil, usageErr("%s: no journal beside the plan (%s.journal, or %s.COMPANY.journal for a load of another company); give the journal's path", args[0], stem, stem)
	}
	return out, nil
}

// globEscape quotes the characters filepath.Match reads as a pattern.
func globEscape(s string) string {
	return strings.NewReplacer("*", "[*]", "?", "[?]", "[", "[[]").Replace(s)
}

// journalStatus is status --json of one journal.
type journalStatus struct {
	Journal    string       `json:"journal,omitempty"`
	Company    string       `json:"company,omitempty"`
	Complete   bool         `json:"complete"`
	Trial      int          `json:"trial,omitempty"`
	Unfinished []string     `json:"unfinished,omitempty"`
	Steps      []stepStatus `json:"steps"`
	// Waived are the failed records closed by resolve --waive, with their
	// reasons.
	Waived []waivedRecordJSON `json:"waived,omitempty"`
	// Gone: as the run document's.
	Gone []string `json:"gone,omitempty"`
}

type stepStatus struct {
	Name      string `json:"name"`
	Committed int    `json:"committed"`
	Failed    int    `json:"failed"`
	Skipped   int    `json:"skipped"`
	Pending   int    `json:"pending"`
	InDoubt   int    `json:"in_doubt"`
	Partly    int    `json:"partly_loaded,omitempty"`
	Waived    int    `json:"waived,omitempty"`
}

// statusesJSON is status --json of several journals.
type statusesJSON struct {
	Journals []journalStatus `json:"journals"`
}

// statusResult is what status found of one journal.
type statusResult struct {
	path    string
	company string // of the journal's target, "" when it names none
	sum     *executor.Summary
	busy    bool
	code    int
	view    journalStatus
}

func (a *app) statusOf(path string) (*statusResult, error) {
	sum, err := executor.Status(path)
	if err != nil {
		return nil, withCode(ExitUsage, err)
	}
	h, busy := journal.InUse(path)
	if busy {
		// status never waits for the lock: it reads what is on disk.
		fmt.Fprintf(a.stderr, "note: a run is writing %s now (%s); these are its counts so far\n", path, h)
	}
	st := &statusResult{path: path, sum: sum, busy: busy, code: statusCode(sum)}
	if busy {
		// Whatever the counts so far, the run is not over.
		st.code = ExitInterrupted
	}
	st.view = journalStatus{Complete: sum.Complete, Trial: sum.Trial, Unfinished: sum.Unfinished, Steps: []stepStatus{}}
	if hdr, err := journal.ReadHeader(path); err == nil && hdr.Target != "" {
		st.company = odata.CompanyOf(hdr.Target)
	}
	for _, s := range sum.Steps {
		st.view.Steps = append(st.view.Steps, stepStatus{s.Name, s.Committed, s.Failed, s.Skipped, s.Pending, s.InDoubt, s.Partly, s.Waived})
	}
	if len(sum.Waived) > 0 {
		st.view.Waived = waivedRecordsJSON(sum.Waived)
	}
	st.view.Gone = summaryJSON(sum).Gone
	return st, nil
}

// title names a journal among several: its company and its path.
func (st *statusResult) title() string {
	if st.company != "" {
		return "company " + st.company + ": " + st.path
	}
	return st.path
}

// inDoubtIn reports whether records are in doubt.
func inDoubtIn(sum *executor.Summary) bool {
	for _, s := range sum.Steps {
		if s.InDoubt > 0 {
			return true
		}
	}
	return false
}

// failedIn reports whether records failed.
func failedIn(sum *executor.Summary) bool {
	for _, s := range sum.Steps {
		if s.Failed > 0 {
			return true
		}
	}
	return false
}

// pendingIn reports whether records are pending or in doubt.
func pendingIn(sum *executor.Summary) bool {
	for _, s := range sum.Steps {
		if s.Pending+s.InDoubt > 0 {
			return true
		}
	}
	return false
}

// statusCode is docs/cli.md's exit code for what a journal says: 4 while
// records are pending or in doubt or the last apply stopped before it ran
// every step, or was a trial or ran some steps (run apply again), 1 when only
// failed ones keep the run from complete, 0 when it is complete.
func statusCode(sum *executor.Summary) int {
	switch {
	case sum.Interrupted || pendingIn(sum):
		return ExitInterrupted
	case failedIn(sum):
		return ExitData
	case sum.Trial > 0 || len(sum.Unfinished) > 0:
		// A trial or some steps: the rest is to load, by apply.
		return ExitInterrupted
	case !sum.Complete:
		return ExitData
	}
	return ExitOK
}

func (a *app) report(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	out := fs.String("out", "", "FILE.xlsx or FILE.csv: the failed rows (default, when neither --html nor --created is given: the journal's name with .failed.xlsx)")
	html := fs.String("html", "", "FILE.html: the run report, one self-contained page to open in a browser, print or forward")
	created := fs.String("created", "", "FILE.xlsx or FILE.csv: every committed source row beside the keys the server assigned")
	var ev evidenceFlags
	ev.register(fs)
	pos, err := a.parse(fs, args, "JOURNAL", 1, 1)
	if err != nil {
		return err
	}
	if ev.file == "" && (ev.plan != "" || ev.dryRun != "" || ev.diff != "" || ev.conn.targetGiven) {
		return usageErr("--plan, --dry-run, --diff and --target go with --evidence FILE.zip")
	}
	if err := checkExt("--html", *html, ".html", ".htm"); err != nil {
		return err
	}
	if err := checkExt("--created", *created, ".xlsx", ".csv"); err != nil {
		return err
	}
	if err := checkExt("--out", *out, ".xlsx", ".csv"); err != nil {
		return err
	}
	if *html != "" {
		rep, err := executor.RunReportOf(pos[0])
		if err != nil {
			return withCode(ExitUsage, err)
		}
		if err := executor.WriteHTMLFile(*html, rep); err != nil {
			return withCode(ExitUsage, err)
		}
		fmt.Fprintf(a.stdout, "wrote %s: the run report, to open in a browser\n", *html)
	}
	if *created != "" {
		cs, err := executor.CreatedKeys(pos[0], *created)
		if err = a.workbookWritten(err); err != nil {
			return withCode(ExitUsage, err)
		}
		fmt.Fprintf(a.stdout, "wrote %s: %s of %s, each beside the keys the server assigned\n", *created,
			plural(cs.Rows, "source row", "source rows"), plural(cs.Records, "committed record", "committed records"))
		if cs.NoRows > 0 {
			fmt.Fprintf(a.stdout, "%s have no source row in this journal (written by an older migrate): their lines give location and key only\n",
				plural(cs.NoRows, "record", "records"))
		}
	}
	if ev.file != "" {
		if err := a.evidence(ctx, pos[0], ev); err != nil {
			return err
		}
	}
	if *out == "" && (*html != "" || *created != "" || ev.file != "") {
		return nil
	}
	file := *out
	if file == "" {
		file = strings.TrimSuffix(pos[0], filepath.Ext(pos[0])) + ".failed.xlsx"
	}
	n, waived, err := executor.Report(pos[0], file)
	if err = a.workbookWritten(err); err != nil {
		return withCode(ExitUsage, err)
	}
	switch {
	case n == 0:
		fmt.Fprintf(a.stdout, "no failed rows; wrote %s with the header only\n", file)
	case waived > 0:
		fmt.Fprintf(a.stdout, "wrote %s: %s, each with its step, location and the server's message, and %s of records waived, with the reason\n",
			file, plural(n-waived, "failed row", "failed rows"), plural(waived, "row", "rows"))
	default:
		fmt.Fprintf(a.stdout, "wrote %s: %s, each with its step, location and the server's message\n", file, plural(n, "failed row", "failed rows"))
	}
	return nil
}

// checkExt refuses a file whose name does not end in one of exts: the
// format follows the name.
func checkExt(flagName, file string, exts ...string) error {
	if file == "" {
		return nil
	}
	ext := strings.ToLower(filepath.Ext(file))
	for _, e := range exts {
		if ext == e {
			return nil
		}
	}
	return usageErr("%s %s: the file is written as %s", flagName, file, strings.Join(exts, " or "))
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

// undoJSON is docs/cli.md's output of undo --json.
type undoJSON struct {
	Target   string           `json:"target"`
	Actions  []undoActionJSON `json:"actions"`
	Done     int              `json:"done"`
	Failed   int              `json:"failed"`
	Skipped  []string         `json:"skipped"`
	Warnings []string         `json:"warnings"`
	InDoubt  []string         `json:"in_doubt"`
}

type undoActionJSON struct {
	Step   string `json:"step"`
	Record string `json:"record"`
	Method string `json:"method"`
	URL    string `json:"url"`
	What   string `json:"what"`
	Done   bool   `json:"done"`
	Error  string `json:"error,omitempty"`
}

// undoDoc is the engine's undo summary as docs/cli.md documents it: its own
// names, and lists that are [] when empty, as the other commands' JSON.
func undoDoc(sum *executor.UndoSummary) undoJSON {
	v := undoJSON{Target: sum.Target, Actions: []undoActionJSON{}, Done: sum.Done, Failed: sum.Failed,
		Skipped: append([]string{}, sum.Skipped...), Warnings: append([]string{}, sum.Warnings...), InDoubt: append([]string{}, sum.InDoubt...)}
	for _, a := range sum.Actions {
		v.Actions = append(v.Actions, undoActionJSON{Step: a.Step, Record: a.Record, Method: a.Method, URL: a.URL, What: a.What, Done: a.Done, Error: a.Error})
	}
	return v
}

func (a *app) undo(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("undo", flag.ContinueOnError)
	var cf connFlags
	cf.register(fs, false)
	yes := fs.Bool("yes", false, "do it; without --yes undo only shows what it would do")
	force := fs.Bool("force", false, "undo records changed since the run too (without it they are left alone)")
	asJSON := fs.Bool("json", false, "print one JSON document on stdout")
	pos, err := a.parse(fs, args, "JOURNAL", 1, 1)
	if err != nil {
		return err
	}
	v := a.undoView(*asJSON)
	if err = a.journalTarget(pos[0], &cf); err != nil {
		return err
	}
	// The preview reads as --yes does (what changed since the run, what is
	// in doubt): both list one plan of actions. It connects when it first
	// reads: a journal that cannot be read is refused without it.
	lc := &lazyConn{a: a, cf: cf}
	defer lc.close()
	metadata := func(ctx context.Context) (*odata.Metadata, error) {
		cn, err := lc.get(ctx)
		if err != nil {
			return nil, err
		}
		md, _, err := cn.client.Metadata(ctx)
		return md, err
	}
	sum, err := executor.Undo(ctx, pos[0], lc, executor.UndoOptions{Yes: *yes, Force: *force, Target: cf.target, Metadata: metadata})
	if lc.err != nil {
		return lc.err // the target cannot be reached or refuses the credentials
	}
	if err != nil && sum == nil {
		if jerr := journalErr(err); jerr != nil {
			return jerr
		}
		var te *executor.TargetError
		if errors.As(err, &te) {
			return withCode(ExitUsage, err)
		}
		if errors.Is(err, executor.ErrInDoubt) || errors.Is(err, executor.ErrInterrupted) || errors.Is(err, context.Canceled) {
			return withCode(ExitInterrupted, err)
		}
		if lc.cn == nil {
			return withCode(ExitUsage, err) // nothing was read: a file of this machine
		}
		return a.unreachable(lc.cn, err)
	}
	if werr := v.Undo(sum, *yes); werr != nil {
		return werr
	}
	switch {
	case err != nil && (errors.Is(err, executor.ErrInDoubt) || errors.Is(err, executor.ErrInterrupted) || errors.Is(err, context.Canceled)):
		return withCode(ExitInterrupted, err)
	case journalErr(err) != nil:
		return journalErr(err)
	case sum.Failed > 0:
		return withCode(ExitData, err)
	case err != nil:
		return a.unreachable(nil, err)
	case *yes && len(sum.Skipped) > 0:
		// Records left alone are data a person has to look at (the
		// preview lists them too, and exits 0: nothing was left yet).
		return silent(ExitData)
	}
	return nil
}

// lazyConn is a connection made when it is first used (undo's reads).
type lazyConn struct {
	a   *app
	cf  connFlags
	cn  *conn
	err error
}

func (l *lazyConn) get(ctx context.Context) (*conn, error) {
	if l.cn == nil && l.err == nil {
		l.cn, _, l.err = l.a.connectVersion(ctx, l.cf, nil)
	}
	return l.cn, l.err
}

func (l *lazyConn) Batch(ctx context.Context, reqs []odata.BatchRequest, opts odata.BatchOptions) ([]odata.BatchResponse, error) {
	cn, err := l.get(ctx)
	if err != nil {
		return nil, err
	}
	return cn.client.Batch(ctx, reqs, opts)
}

func (l *lazyConn) close() {
	if l.cn != nil {
		l.cn.Close()
	}
}

// journalTarget sets the target of a command on a journal (undo, verify):
// as for any command (flag, environment), else the journal's own; one that
// is not the journal's is refused. The dialect, where neither --dialect nor
// the environment gives it, is the journal's too.
func (a *app) journalTarget(jpath string, cf *connFlags) error {
	hdr, err := journal.ReadHeader(jpath)
	if err != nil {
		return withCode(ExitUsage, err)
	}
	target, _ := a.targetURL(cf.target, nil)
	if target == "" {
		target = hdr.Target
	}
	cf.target = target
	cf.journalDialect = hdr.Dialect
	return a.refuseOtherTarget(jpath, target, "")
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
	left := o.txLeft
	if left < 0 && c.plan.Target.HasTransactionsLeft {
		left = c.plan.Target.TransactionsLeft
	}
	if left < 0 {
		return nil
	}
	resumed := ""
	if _, err := os.Stat(jpath); jpath != "" && err == nil {
		resumed = jpath
	}
	sum, err := executor.DryRun(ctx, c.run, executor.Options{Client: c.conn.client, Journal: resumed, Limit: o.limit, Steps: o.steps,
		Delta: o.delta.delta, Overwrite: o.delta.overwrite,
		RetryFailed: o.retry, AllowPlanChange: o.allowChange})
	if err != nil {
		if errors.Is(err, executor.ErrTargetRead) {
			return a.unreachable(c.conn, err)
		}
		return withCode(ExitUsage, err)
	}
	if sum.Transactions > left {
		return withCode(ExitData, fmt.Errorf("this load needs %s (each entity and each line, as the service meters them) and the pool has %d left: nothing was sent; load some steps now (--steps) and the rest once the pool is topped up", plural(sum.Transactions, "API transaction", "API transactions"), left))
	}
	fmt.Fprintf(a.stderr, "this load needs %s of the %d left in the pool\n", plural(sum.Transactions, "API transaction", "API transactions"), left)
	return nil
}
