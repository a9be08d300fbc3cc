package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/migrate-tool/migrate/executor"
	"github.com/migrate-tool/migrate/internal/diag"
	"github.com/migrate-tool/migrate/journal"
	"github.com/migrate-tool/migrate/plan"
	"github.com/migrate-tool/migrate/report"
	"github.com/migrate-tool/migrate/verify"
)

// verifyJSON is docs/cli.md's output of verify --json.
type verifyJSON struct {
	Target   string              `json:"target"`
	Steps    []verifyStepJSON    `json:"steps"`
	Findings []verifyFindingJSON `json:"findings"`
	// Totals are the plan's totals: side by side.
	Totals []totalJSON `json:"totals"`
	Calls  int         `json:"calls"`
	// Trial: the journal's last run was a trial of this many records per
	// step (apply --limit); the totals' source side is of what it took.
	Trial int `json:"trial,omitempty"`
	// NotRun: the steps with totals in the plan that the journal has not
	// run yet (its last run chose others, apply --steps); their totals are
	// left out.
	NotRun []string `json:"not_run,omitempty"`
	// PlanChanged: the plan changed since the run (verify.Result.PlanChanged).
	PlanChanged bool `json:"plan_changed,omitempty"`
	// SourcesChanged: verify.Result.SourcesChanged.
	SourcesChanged []string `json:"sources_changed,omitempty"`
	// NotVerified says why records were not verified, a line per step
	// (verify.Result.NotVerifiedNotes), as the text says it.
	NotVerified []string `json:"why_not_verified,omitempty"`
}

// totalJSON is one of the plan's totals: of a step (one per group of a
// by field), from the source, what was sent and the target.
type totalJSON struct {
	Step    string `json:"step"`
	Name    string `json:"name"`
	Expr    string `json:"expr"`
	By      string `json:"by,omitempty"`
	Group   string `json:"group,omitempty"`
	Source  string `json:"source"`
	Sent    string `json:"sent"`
	Target  string `json:"target"`
	Differs bool   `json:"differs"`
}

type verifyStepJSON struct {
	Name        string `json:"name"`
	Entity      string `json:"entity"`
	Records     int    `json:"records"`
	Matched     int    `json:"matched"`
	Differ      int    `json:"differ"`
	NotVerified int    `json:"not_verified"`
	// PartlyLoaded: of those, failed records partly loaded (the company
	// holds their entity); Undone: those undo took back.
	PartlyLoaded int `json:"partly_loaded,omitempty"`
	Undone       int `json:"undone,omitempty"`
	// NotVerifiable: read, but every field written is hidden from reads.
	NotVerifiable int                `json:"not_verifiable"`
	Totals        []controlTotalJSON `json:"totals"`
	// Rejected and Waived: records of the source its totals leave out of
	// their sums (row errors) or out altogether (waived).
	Rejected int `json:"rejected,omitempty"`
	Waived   int `json:"waived,omitempty"`
}

type controlTotalJSON struct {
	What   string `json:"what"`
	Source string `json:"source"`
	Target string `json:"target"`
}

type verifyFindingJSON struct {
	Step     string `json:"step"`
	Record   string `json:"record"`
	Location string `json:"location,omitempty"`
	URL      string `json:"url"`
	Field    string `json:"field,omitempty"`
	Problem  string `json:"problem"`
	Sent     string `json:"sent,omitempty"`
	Found    string `json:"found,omitempty"`
	Detail   string `json:"detail,omitempty"`
}

func (a *app) verify(ctx context.Context, args []string) error {
	var cf connFlags
	fs := connFlagSet("verify", &cf, false)
	asJSON := jsonFlag(fs)
	out := fs.String("out", "", "also write the findings and control totals to this workbook (.xlsx)")
	planFlag := fs.String("plan", "", "the plan the run loaded, for its totals: (default: the plan the journal names, when it is there)")
	html := fs.String("html", "", "FILE.html: also write the run report with the plan's totals as verify found them")
	pos, err := a.parse(fs, args, "JOURNAL", 1, 1)
	if err != nil {
		return err
	}
	if *out != "" && !strings.EqualFold(filepath.Ext(*out), ".xlsx") {
		return usageErr("--out: verify writes its workbook as .xlsx")
	}
	if err := checkExt("--html", *html, ".html", ".htm"); err != nil {
		return err
	}
	v := a.verifyView(*asJSON)
	verified := a.now()
	res, err := a.verifyJournal(ctx, pos[0], *planFlag, cf)
	if err != nil {
		return err
	}
	if *out != "" {
		if err := a.workbookWritten(report.WriteVerify(res, *out)); err != nil {
			return withCode(ExitUsage, err)
		}
	}
	if len(res.Totals) > 0 {
		// For the run report; a journal another run holds, or one on a
		// medium that cannot be written, still verifies.
		if err := verify.RecordTotals(pos[0], res.Recorded(), verified); err != nil {
			fmt.Fprintf(a.stderr, "note: the totals were not recorded in %s for the run report: %v\n", pos[0], err)
		}
	}
	if *html != "" {
		rep, err := report.RunReportOf(pos[0])
		if err != nil {
			return withCode(ExitUsage, err)
		}
		rep.Totals, rep.Verified = res.Totals, verified
		if err := report.WriteHTMLFile(*html, rep); err != nil {
			return withCode(ExitUsage, err)
		}
	}
	if err := v.Verify(verifyDoc(res), *out, *html); err != nil {
		return err
	}
	if res.Differences() > 0 || res.TotalsDiffer() {
		return silent(ExitData)
	}
	return nil
}

// verifyJournal reads back what the run of the journal at jpath committed,
// from the target the flags (or the environment) name, else the journal's
// own, with the totals of the plan at planPath (else the one the journal
// names, when it is there); errors carry their exit codes.
func (a *app) verifyJournal(ctx context.Context, jpath, planPath string, cf connFlags) (*verify.Result, error) {
	if err := a.journalTarget(jpath, &cf); err != nil {
		return nil, err
	}
	cn, md, err := a.connectMetadata(ctx, cf, nil)
	if err != nil {
		return nil, err
	}
	defer cn.Close()
	pc, err := a.totalsPlan(ctx, jpath, planPath, cf)
	if err != nil {
		return nil, err
	}
	opts := verify.Options{Target: cf.target, Metadata: md}
	if pc != nil {
		defer pc.Close()
		opts.Plan = pc.run
	}
	res, err := verify.Verify(ctx, jpath, cn.client, opts)
	if err != nil {
		if jerr := journalErr(err); jerr != nil {
			return nil, jerr
		}
		if lerr := localErr(err); lerr != nil {
			return nil, lerr // the plan's sources, read for its totals
		}
		var te *executor.TargetError
		if errors.As(err, &te) {
			return nil, withCode(ExitUsage, err)
		}
		return nil, a.unreachable(cn, err)
	}
	return res, nil
}

// totalsPlan is the plan whose totals: verify computes, prepared: the one
// --plan names, else the one the journal names when it is there; nil when
// there is none or it declares no totals. A plan changed since the run is
// used as it is now, and its totals say so (verify.Result.PlanChanged).
func (a *app) totalsPlan(ctx context.Context, jpath, path string, cf connFlags) (*checked, error) {
	hdr, err := journal.ReadHeader(jpath)
	if err != nil {
		return nil, withCode(ExitUsage, err)
	}
	if path == "" {
		if path = journalPlan(jpath, hdr.PlanPath); path == "" {
			return nil, nil // moved or elsewhere: --plan names it
		}
	}
	p, _ := a.loadPlan(path)
	if p == nil {
		if _, err := os.Stat(path); err != nil {
			return nil, usageErr("--plan: %v", err)
		}
	}
	if !hasTotals(p) {
		return nil, nil
	}
	c, err := a.check(ctx, path, checkFlags{conn: cf}, true)
	if err != nil {
		return nil, err
	}
	if c.diags.HasErrors() {
		for _, d := range c.diags.Errors() { // its warnings are validate's
			fmt.Fprintln(a.stderr, d.String())
		}
		c.Close()
		fmt.Fprintf(a.stderr, "%s in %s: its totals cannot be computed; nothing was read (run `migrate validate %s` for the same list)\n",
			diag.Count(len(c.diags.Errors()), "problem", "problems"), path, path)
		return nil, silent(ExitData)
	}
	if err := a.buildLookups(ctx, c); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// journalPlan is where the plan a journal was written by is now: the path
// apply was given, else beside the journal (where apply puts it by
// default), run from another folder; "" when neither is there.
func journalPlan(jpath, planPath string) string {
	if planPath == "" {
		return ""
	}
	for _, p := range []string{planPath, filepath.Join(filepath.Dir(jpath), filepath.Base(planPath))} {
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			return p
		}
	}
	return ""
}

func hasTotals(p *plan.Plan) bool {
	if p == nil {
		return false
	}
	for _, s := range p.Steps {
		if len(s.Totals) > 0 {
			return true
		}
	}
	return false
}

// verifyDoc is what verify found as docs/cli.md's document.
func verifyDoc(res *verify.Result) verifyJSON {
	v := verifyJSON{Target: res.Target, Steps: []verifyStepJSON{}, Findings: []verifyFindingJSON{}, Totals: []totalJSON{}, Calls: res.Calls, Trial: res.Trial, NotRun: res.NotRun, PlanChanged: res.PlanChanged, SourcesChanged: res.SourcesChanged,
		NotVerified: res.NotVerifiedNotes()}
	for _, t := range res.Totals {
		v.Totals = append(v.Totals, totalJSON{Step: t.Step, Name: t.Name, Expr: t.Expr, By: t.By, Group: t.Group,
			Source: t.Source, Sent: t.Sent, Target: t.Target, Differs: t.Differs()})
	}
	for _, s := range res.Steps {
		sj := verifyStepJSON{Name: s.Name, Entity: s.Entity, Records: s.Records, Matched: s.Matched, Differ: s.Differ,
			NotVerified: s.NotVerified, PartlyLoaded: s.Partly, Undone: s.Undone, NotVerifiable: s.NotVerifiable, Totals: []controlTotalJSON{}, Rejected: s.Rejected, Waived: s.Waived}
		for _, t := range s.Totals {
			sj.Totals = append(sj.Totals, controlTotalJSON(t))
		}
		v.Steps = append(v.Steps, sj)
	}
	for _, f := range res.Findings {
		v.Findings = append(v.Findings, verifyFindingJSON{Step: f.Step, Record: f.Record, Location: f.Location, URL: f.URL,
			Field: f.Field, Problem: f.Problem, Sent: f.Sent, Found: f.Found, Detail: f.Detail})
	}
	return v
}

// printVerify shows the counts per step, the control totals side by side,
// then each finding with its record and field.
func printVerify(w io.Writer, v verifyJSON) {
	fmt.Fprintf(w, "target: %s\n", v.Target)
	tw := newTable(w)
	fmt.Fprintln(tw, "step\tentity\trecords\tmatched\tdiffer\tnot verifiable\tnot verified")
	for _, s := range v.Steps {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%d\n", s.Name, s.Entity, s.Records, s.Matched, s.Differ, s.NotVerifiable, s.NotVerified)
	}
	tw.Flush()
	fmt.Fprintln(w)
	tw = newTable(w)
	if slices.ContainsFunc(v.Steps, func(s verifyStepJSON) bool { return len(s.Totals) > 0 }) {
		// Nothing committed, nothing totalled: no header over no rows.
		fmt.Fprintln(tw, "step\tcontrol total\tsent\ttarget")
	}
	for _, s := range v.Steps {
		for _, t := range s.Totals {
			target := t.Target
			if t.Source != t.Target {
				target += "  ≠"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", s.Name, t.What, t.Source, target)
		}
	}
	tw.Flush()
	// The engine's notes of the records not verified.
	for _, n := range v.NotVerified {
		fmt.Fprintln(w, n)
	}
	printTotals(w, v)
	if len(v.Findings) > 0 {
		fmt.Fprintln(w)
	}
	for _, f := range v.Findings {
		fmt.Fprintln(w, findingLine(f))
	}
	differ := 0
	for _, s := range v.Steps {
		differ += s.Differ
	}
	verb := "differ"
	if differ == 1 {
		verb = "differs"
	}
	fmt.Fprintf(w, "\n%s %s; %s\n", diag.Count(differ, "record", "records"), verb, diag.Count(v.Calls, "call", "calls"))
}

// findingLine: "orders.csv:3 customers C1002: CUSTOMERS('C1002') PHONE
// differs: sent "+972-8-6000002", found "+972-8-7777777"".
func findingLine(f verifyFindingJSON) string {
	var b strings.Builder
	if f.Location != "" {
		b.WriteString(f.Location + " ")
	}
	fmt.Fprintf(&b, "%s %s: %s", f.Step, f.Record, f.URL)
	if f.Field != "" {
		b.WriteString(" " + f.Field)
	}
	b.WriteString(" " + f.Problem)
	switch f.Problem {
	case verify.Differs:
		found := f.Found
		if found == "" {
			found = "empty"
		}
		fmt.Fprintf(&b, ": sent %s, found %s", f.Sent, found)
	case verify.NotReadable:
		b.WriteString(" (the service does not return it: field-level permissions?); not compared")
	}
	if f.Detail != "" {
		b.WriteString(": " + f.Detail)
	}
	return b.String()
}

// printTotals shows the plan's totals: source, sent and target side by
// side, a difference marked and then named, and what the source's totals
// leave out.
func printTotals(w io.Writer, v verifyJSON) {
	notes := verify.TotalsNotes(journal.Totals{Trial: v.Trial, NotRun: v.NotRun, PlanChanged: v.PlanChanged, SourcesChanged: v.SourcesChanged})
	if len(v.Totals) == 0 {
		if len(notes) > 0 {
			fmt.Fprintln(w)
		}
		for _, n := range notes {
			fmt.Fprintln(w, n)
		}
		return
	}
	fmt.Fprintln(w)
	tw := newTable(w)
	fmt.Fprintln(tw, "step\ttotal\tsource\tsent\ttarget")
	for _, t := range v.Totals {
		target := t.Target
		if t.Differs {
			target += "  ≠"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", t.Step, totalName(t), t.Source, t.Sent, target)
	}
	tw.Flush()
	for _, n := range notes {
		fmt.Fprintln(w, n)
	}
	for _, s := range v.Steps {
		if s.Rejected > 0 {
			fmt.Fprintf(w, "%s: %s rejected by row errors: counted in the source's count(), not in its other totals\n", s.Name, diag.Count(s.Rejected, "record", "records"))
		}
		if s.Waived > 0 {
			fmt.Fprintf(w, "%s: %s waived (resolve --waive): left out of the source's totals\n", s.Name, diag.Count(s.Waived, "record", "records"))
		}
	}
	for _, t := range v.Totals {
		if t.Differs {
			fmt.Fprintf(w, "%s: total %s differs: %s: source %s, sent %s, target %s\n", t.Step, totalName(t), t.Expr, t.Source, t.Sent, t.Target)
		}
	}
}

// totalName is a total as the rows name it: "amount ICODE=USD" for a
// group of a by field.
func totalName(t totalJSON) string {
	if t.By == "" {
		return t.Name
	}
	return t.Name + " " + t.By + "=" + t.Group
}
