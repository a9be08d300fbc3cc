package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/migrate-tool/migrate/executor"
	"github.com/migrate-tool/migrate/report"
)

// diffJSON is docs/cli.md's output of diff --json.
type diffJSON struct {
	Steps   []diffStepJSON   `json:"steps"`
	Records []diffRecordJSON `json:"records"`
	Errors  []errorJSON      `json:"errors"`
	// Resumes: as the dry run's (what the journal apply would resume holds
	// loaded is unchanged: apply leaves it alone).
	Resumes *resumesJSON `json:"resumes,omitempty"`
	// Refused: as the dry run's (why apply would not start).
	Refused string `json:"refused,omitempty"`
	// Warnings: as the dry run's.
	Warnings []errorJSON `json:"warnings,omitempty"`
	// Unchecked: as the dry run's (values records name that no step
	// creates and nothing checks).
	Unchecked int `json:"unchecked,omitempty"`
	// Delta: as the dry run's, over a complete journal whose sources
	// changed (listed), or with --delta (what apply --delta would send).
	Delta *deltaJSON `json:"delta,omitempty"`
	// caveat is the engine's Summary.Caveat, which the text says after
	// the counts (a diff reads what insert steps write: Unchecked is all
	// it can leave open).
	caveat string `json:"-"`
}

type diffStepJSON struct {
	Name      string `json:"name"`
	Entity    string `json:"entity"`
	Create    int    `json:"create"`
	Update    int    `json:"update"`
	Unchanged int    `json:"unchanged"`
	Conflict  int    `json:"conflict"`
	Missing   int    `json:"missing"`
}

type diffRecordJSON struct {
	Step     string                     `json:"step"`
	ID       string                     `json:"id"`
	Location string                     `json:"location"`
	Key      string                     `json:"key"`
	Action   executor.DiffAction        `json:"action"`
	Fields   map[string]fieldChangeJSON `json:"fields,omitempty"`
	Matches  []string                   `json:"matches,omitempty"`
	Lines    []diffLineJSON             `json:"lines,omitempty"`
}

// diffLineJSON is a line an update appends to a record that exists.
type diffLineJSON struct {
	Subform  string                     `json:"subform"`
	Location string                     `json:"location"`
	Fields   map[string]json.RawMessage `json:"fields"`
}

type fieldChangeJSON struct {
	Old json.RawMessage `json:"old"`
	New json.RawMessage `json:"new"`
}

// diffFlags are diff's own flags.
type diffFlags struct {
	runFlags
	files
}

func (a *app) diff(ctx context.Context, args []string) error {
	var f checkFlags
	fs := checkFlagSet("diff", &f)
	var o diffFlags
	o.files.register(fs, "also write the diff to this workbook (.xlsx): a sheet per step, the changed cells marked", "the diff", "unchanged, as apply leaves it alone")
	o.runFlags.register(fs, true)
	pos, err := a.parse(fs, args, "PLAN", 1, 1)
	if err != nil {
		return err
	}
	if err := o.runFlags.check(); err != nil {
		return err
	}
	if o.out != "" && !strings.EqualFold(filepath.Ext(o.out), ".xlsx") {
		return usageErr("--out: the diff is written as .xlsx")
	}
	if err := checkExt("--html", o.html, ".html", ".htm"); err != nil {
		return err
	}
	return a.forCompanies(ctx, "diff", pos[0], f, o.runFlags, o.files, false, func(sub *app, f checkFlags, fl files) error {
		return sub.diffOne(ctx, pos[0], f, o, fl)
	})
}

// diffOne compares one load with what its company holds: the target's
// company, or f.conn.company, resuming that company's journal.
func (a *app) diffOne(ctx context.Context, planPath string, f checkFlags, o diffFlags, fl files) error {
	o.files = fl
	v := a.diffView(f.json)
	// A diff compares with the target: it connects whatever --metadata says.
	c, err := a.checkToRun(ctx, planPath, f, true, v)
	if err != nil {
		return err
	}
	defer c.Close()
	refs, err := a.readyToRun(ctx, c, nil)
	if err != nil {
		return err
	}
	unresolved := refs.Unresolved
	compared := time.Now()
	resumed, err := a.resumedJournal(planPath, f, o.journal)
	if err != nil {
		return err
	}
	res, err := executor.Diff(ctx, c.run, o.options(executor.Options{Client: c.conn.client, Target: c.conn.url, Hook: v.Hook(),
		Journal: resumed}))
	if err != nil {
		if unusable(err) {
			return withCode(ExitUsage, err) // a journal or a choice of steps that cannot be used here
		}
		if errors.Is(err, executor.ErrTargetRead) || res == nil {
			return a.unreachable(c.conn, err)
		}
		return withCode(ExitUsage, err)
	}
	if res.Summary == nil {
		res.Summary = &executor.Summary{}
	}
	if err := a.foreseeStart(ctx, c, o.runFlags, refs, res.Summary); err != nil {
		return err
	}
	if o.out != "" {
		if err := a.workbookWritten(report.WriteDiff(res, o.out)); err != nil {
			return withCode(ExitUsage, err)
		}
	}
	// The page names who compared: a server that cannot say leaves it
	// unrecorded, which stops nothing.
	user, _ := c.conn.client.LoginName(ctx)
	info := report.ReportInfo{Plan: c.plan.Name, PlanPath: planPath, Target: c.conn.url, SystemVersion: c.run.Version.String(),
		User: user, ToolVersion: Version, Start: compared}
	page := report.DiffReportOf(res, info, unresolved)
	// Kept beside the journal for the evidence, --html given or not (not
	// a trial's, some steps' or the failed records', nor a delta's, made
	// after the load).
	keep := o.whole()
	if err := a.writePage(o.html, keep, c.plan, planPath, f, o.journal, report.PageDiff, func(w io.Writer) error { return report.WriteDiffHTML(w, page) }); err != nil {
		return withCode(ExitUsage, err)
	}
	view := diffDoc(res)
	if len(unresolved) > 0 {
		view.Errors = append(errorsOf(unresolved), view.Errors...)
	}
	if err := v.Diff(view, o.out, o.html); err != nil {
		return err
	}
	if res.Conflicts() > 0 || len(view.Errors) > 0 || view.Refused != "" {
		return silent(ExitData)
	}
	return nil
}

// diffDoc is the diff as docs/cli.md's document.
func diffDoc(res *executor.DiffResult) diffJSON {
	v := diffJSON{Steps: []diffStepJSON{}, Records: []diffRecordJSON{}, Errors: summaryJSON(res.Summary).Errors, Resumes: resumesOf(res.Summary)}
	if res.Summary != nil {
		v.Refused = res.Summary.Refused
		v.Warnings = warningsOf(res.Summary.Warnings)
		v.Unchecked = res.Summary.Unchecked
		v.caveat = res.Summary.Caveat()
		v.Delta = deltaOf(res.Summary.Delta)
	}
	for _, s := range res.Steps {
		v.Steps = append(v.Steps, diffStepJSON{Name: s.Name, Entity: s.Entity, Create: s.Create, Update: s.Update,
			Unchanged: s.Unchanged, Conflict: s.Conflict, Missing: s.Missing})
	}
	for _, r := range res.Records {
		rj := diffRecordJSON{Step: r.Step, ID: r.ID, Location: r.Location, Key: r.Key, Action: r.Action, Matches: r.Matches}
		if len(r.Fields) > 0 {
			rj.Fields = map[string]fieldChangeJSON{}
			for k, c := range r.Fields {
				rj.Fields[k] = fieldChangeJSON{Old: c.Old, New: c.New}
			}
		}
		for _, l := range r.Lines {
			rj.Lines = append(rj.Lines, diffLineJSON{Subform: l.Nav, Location: l.Location, Fields: l.Fields})
		}
		v.Records = append(v.Records, rj)
	}
	return v
}

// printDiff shows the counts, then every record that is not unchanged:
// what apply would do to it, and each field an update changes.
func printDiff(w io.Writer, v diffJSON) {
	tw := newTable(w)
	fmt.Fprintln(tw, "step\tentity\tcreate\tupdate\tunchanged\tconflict\tmissing")
	for _, s := range v.Steps {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%d\n", s.Name, s.Entity, s.Create, s.Update, s.Unchanged, s.Conflict, s.Missing)
	}
	tw.Flush()
	if v.Refused != "" {
		fmt.Fprintf(w, "apply would not start: %s; nothing would be written. What follows is what it would do were it started as things stand.\n", v.Refused)
	}
	if v.caveat != "" {
		fmt.Fprintf(w, "This holds %s.\n", v.caveat)
	}
	if t := resumesText(v.Resumes); t != "" {
		fmt.Fprintln(w, t)
	}
	if v.Delta != nil {
		fmt.Fprintln(w, v.Delta.headline)
	}
	first := true
	for _, r := range v.Records {
		if r.Action == executor.DiffUnchanged {
			continue
		}
		if first {
			fmt.Fprintln(w)
			first = false
		}
		what := r.Key
		switch {
		case what == "" && r.ID != "" && r.ID != r.Location:
			what = r.ID + " (numbered by the server)"
		case what == "":
			what = "(numbered by the server)"
		}
		fmt.Fprintf(w, "%s %s: %s %s", r.Location, r.Step, r.Action, what)
		if len(r.Matches) > 0 {
			fmt.Fprintf(w, " matches %s", strings.Join(r.Matches, ", "))
		}
		fmt.Fprintln(w)
		for _, k := range slices.Sorted(maps.Keys(r.Fields)) {
			fmt.Fprintf(w, "  %s: %s → %s\n", k, r.Fields[k].Old, r.Fields[k].New)
		}
		for _, l := range r.Lines {
			fmt.Fprintf(w, "  + %s line (%s): %s\n", l.Subform, l.Location, lineText(l.Fields))
		}
	}
	printWarnings(w, v.Warnings)
	printErrors(w, v.Errors)
}

// lineText is a line's fields as FIELD=value, in field order.
func lineText(fields map[string]json.RawMessage) string {
	names := slices.Sorted(maps.Keys(fields))
	parts := make([]string, len(names))
	for i, k := range names {
		parts[i] = k + "=" + string(fields[k])
	}
	return strings.Join(parts, " ")
}
