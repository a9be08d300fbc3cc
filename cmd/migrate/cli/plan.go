package cli

import (
	"context"
	"errors"
	"io"
	"os"

	"github.com/migrate-tool/migrate/executor"
	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/report"
)

// hostedCallsPerMinute is what hosted installations allow (docs/servers.md,
// Limits of hosted installations);
// the dry run's estimate assumes it when the plan sets no limit.
const hostedCallsPerMinute = 100

// planFlags are plan's own flags.
type planFlags struct {
	runFlags
	files
	callsPerMinute int
}

func (a *app) plan(ctx context.Context, args []string) error {
	var f checkFlags
	fs := checkFlagSet("plan", &f)
	f.memory.register(fs)
	var o planFlags
	o.runFlags.register(fs, true)
	fs.Var(countFlag{&o.callsPerMinute, 1}, "calls-per-minute", "the limit the time estimate assumes, a `number` of calls (default: the plan's, else 100, as hosted installations allow)")
	o.files.register(fs, "write the batches, exactly as apply would send them, as JSON files to this folder", "the dry run", "left out, as apply leaves it out")
	pos, err := a.parse(fs, args, "PLAN", 1, 1)
	if err != nil {
		return err
	}
	if err := checkExt("--html", o.html, ".html", ".htm"); err != nil {
		return err
	}
	if err := o.runFlags.check(); err != nil {
		return err
	}
	f.memory.apply()
	return a.forCompanies(ctx, "plan", pos[0], f, o.runFlags, o.files, f.metadata != "", func(sub *app, f checkFlags, fl files) error {
		return sub.planOne(ctx, pos[0], f, o, fl)
	})
}

// planOne is the dry run of one load: of the target's company, or of
// f.conn.company, resuming that company's journal.
func (a *app) planOne(ctx context.Context, planPath string, f checkFlags, o planFlags, fl files) error {
	o.files = fl
	v := a.planView(f.json)
	c, err := a.checkToRun(ctx, planPath, f, false, v)
	if err != nil {
		return err
	}
	defer c.Close()
	rate := o.callsPerMinute
	if rate == 0 {
		rate = c.plan.Target.CallsPerMinute
	}
	if rate == 0 {
		rate = hostedCallsPerMinute
	}
	if o.out != "" {
		if err := os.MkdirAll(o.out, 0o755); err != nil {
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
	switch {
	case c.conn != nil:
		target = c.conn.client
		where = c.conn.url // --sandbox: the one it started; the company's
	case f.conn.company != "" && where != "":
		// Offline: the company's journal is for the company's URL.
		if where, err = odata.CompanyURL(where, f.conn.company); err != nil {
			return usageErr("--company: %v", err)
		}
	}
	resumed, err := a.resumedJournal(planPath, f, o.journal)
	if err != nil {
		return err
	}
	sum, err := executor.DryRun(ctx, c.run, o.options(executor.Options{
		Client: target, Target: where, OutDir: o.out, CallsPerMinute: rate, Hook: v.Hook(), Journal: resumed,
		Fresh: f.conn.sandbox, // the fresh sandbox apply --sandbox would load: it holds no key yet
	}))
	if err != nil {
		if errors.Is(err, executor.ErrTargetRead) {
			return a.unreachable(c.conn, err)
		}
		return withCode(ExitUsage, err)
	}
	// One result, which every view renders: the text, the JSON and the page
	// show the same problems and the same counts.
	sum.AddReferences(refs)
	if err := a.foreseeStart(ctx, c, o.runFlags, refs, sum); err != nil {
		return err
	}
	info := report.ReportInfo{Plan: c.plan.Name, PlanPath: planPath, Target: where, SystemVersion: c.run.Version.String(), ToolVersion: Version}
	page := report.DryRunReport(sum, info, rate)
	// The dry run of the whole load is kept beside its journal for the
	// evidence (a trial's is not the load's, nor that of some steps or of
	// the failed records again, nor a delta's, made after it, the run
	// before it).
	keep := o.whole()
	if err := a.writePage(o.html, keep, c.plan, planPath, f, o.journal, report.PageDryRun, func(w io.Writer) error { return report.WriteHTML(w, page) }); err != nil {
		return withCode(ExitUsage, err)
	}
	view := summaryJSON(sum)
	total := sum.Total()
	load, notLoad := total.ToLoad(), total.NotLoaded()
	view.WouldLoad, view.WouldNotLoad = &load, &notLoad
	view.Estimate = &estimate{CallsPerMinute: rate, Seconds: sum.Estimated.Seconds()}
	view.Unread = sum.Unread
	if err := v.DryRun(dryRunResult{doc: view, sum: sum, rate: rate, out: o.out, html: o.html}); err != nil {
		return err
	}
	if len(view.Errors) > 0 || view.Refused != "" || view.Delta.conflicted() {
		return silent(ExitData)
	}
	return nil
}
