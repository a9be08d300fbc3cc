package cli

import (
	"context"
	"errors"
	"io"
	"os"

	"github.com/migrate-tool/migrate/executor"
	"github.com/migrate-tool/migrate/report"
)

// hostedCallsPerMinute is what hosted installations allow (docs/servers.md,
// Limits of hosted installations);
// the dry run's estimate assumes it when the plan sets no limit.
const hostedCallsPerMinute = 100

func (a *app) plan(ctx context.Context, args []string) error {
	var f checkFlags
	fs := checkFlagSet("plan", &f)
	f.memory.register(fs)
	out := fs.String("out", "", "write the batches, exactly as apply would send them, as JSON files to this folder")
	var run runFlags
	run.register(fs, true)
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
	if err := run.check(); err != nil {
		return err
	}
	if err := d.check(run.limit > 0, len(run.steps) > 0); err != nil {
		return err
	}
	f.memory.apply()
	v := a.planView(f.json)
	c, err := a.checkToRun(ctx, pos[0], f, false, v)
	if err != nil {
		return err
	}
	defer c.Close()
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
	refs, err := a.readyToRun(ctx, c, nil)
	if err != nil {
		return err
	}
	var target executor.Client
	where, _ := a.targetURL(f.conn.target, c.plan)
	if c.conn != nil {
		target = c.conn.client
		where = c.conn.url // --sandbox: the one it started
	}
	sum, err := executor.DryRun(ctx, c.run, executor.Options{
		Client: target, Target: where, OutDir: *out, CallsPerMinute: rate, Hook: v.Hook(),
		Limit: run.limit, Steps: run.steps, RetryFailed: run.retry, AllowPlanChange: run.allowChange,
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
	info := report.ReportInfo{Plan: c.plan.Name, PlanPath: pos[0], Target: where, SystemVersion: c.run.Version.String(), ToolVersion: Version}
	page := report.DryRunReport(sum, info, rate)
	// The dry run of the whole load is kept beside its journal for the
	// evidence (a trial's is not the load's, nor that of some steps or of
	// the failed records again, nor a delta's, made after it, the run
	// before it).
	keep := run.limit == 0 && len(run.steps) == 0 && !run.retry && !d.delta
	if err := a.writePage(*html, keep, c.plan, pos[0], f, *journalFlag, report.PageDryRun, func(w io.Writer) error { return report.WriteHTML(w, page) }); err != nil {
		return withCode(ExitUsage, err)
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
