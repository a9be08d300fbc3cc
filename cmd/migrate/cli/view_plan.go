package cli

import (
	"fmt"
	"strings"

	"github.com/migrate-tool/migrate/executor"
	"github.com/migrate-tool/migrate/internal/diag"
)

// planView shows the dry run.
type planView interface {
	runView
	DryRun(r dryRunResult) error
}

// dryRunResult is what the dry run found, for its view.
type dryRunResult struct {
	doc       runJSON
	sum       *executor.Summary
	rate      int    // the calls per minute the estimate assumes
	out, html string // where --out and --html wrote, "" when not asked
}

func (a *app) planView(asJSON bool) planView {
	if asJSON {
		return planJSONView{jsonView{a}}
	}
	return planHuman{a.human()}
}

type planHuman struct{ humanView }

func (v planHuman) DryRun(r dryRunResult) error {
	w, view, sum := v.a.stdout, r.doc, r.sum
	printSteps(w, view, false)
	fmt.Fprintln(w)
	if view.Refused != "" {
		fmt.Fprintf(w, "apply would not start: %s; nothing would be sent. Were it started as things stand:\n", view.Refused)
	}
	fmt.Fprintln(w, loadText(sum, view.Delta))
	if t := resumesText(view.Resumes); t != "" {
		fmt.Fprintln(w, t)
	}
	metered := ""
	if !sum.Standard { // a standard OData service meters none
		metered = " (" + diag.Count(view.Transactions, "API transaction", "API transactions") + ")"
	}
	fmt.Fprintf(w, "apply would make %s with %s%s, %s at %d calls a minute.\n",
		diag.Count(view.Requests, "call", "calls"), diag.Count(view.Subrequests, "sub-request", "sub-requests"),
		metered, estimateText(sum.Estimated), r.rate)
	if r.out != "" {
		fmt.Fprintf(w, "the batches are in %s\n", r.out)
	}
	if r.html != "" {
		fmt.Fprintf(w, "the dry run's page is %s\n", r.html)
	}
	if sum.Unread > 0 {
		fmt.Fprintf(w, "note: predicted without reading a target: %s of upsert and update steps were not made; upsert counts as inserts, update as changes of every field (give --target to read what it holds)\n",
			diag.Count(sum.Unread, "read", "reads"))
	}
	printWarnings(w, view.Warnings)
	printErrors(w, view.Errors)
	printDelta(w, view.Delta)
	return nil
}

type planJSONView struct{ jsonView }

func (v planJSONView) DryRun(r dryRunResult) error { return writeJSON(v.a.stdout, r.doc) }

// loadText says how many of the dry run's records apply would load and
// why the others would not: the engine's total (Summary.Total), which the
// JSON (would_load, would_not_load) and the page show; then what the count
// holds only as far as (Summary.Caveat), as the page says it. delta names
// the command that would leave a conflict unsent.
func loadText(sum *executor.Summary, delta *deltaJSON) string {
	t := loadCount(sum.Total(), delta)
	if caveat := sum.Caveat(); caveat != "" {
		return strings.TrimSuffix(t, ".") + ", " + caveat + "."
	}
	return t
}

// loadCount is loadText's count.
func loadCount(total executor.StepSummary, delta *deltaJSON) string {
	load, not := total.ToLoad(), total.NotLoaded()
	switch {
	case load == 0 && not == 0:
		return "apply has nothing to load."
	case not == 0:
		return fmt.Sprintf("apply would load every record (%d).", load)
	}
	var why []string
	if total.Errors > 0 {
		why = append(why, fmt.Sprintf("%d with row errors", total.Errors))
	}
	if total.Unresolved > 0 {
		why = append(why, fmt.Sprintf("%d giving an exists: value on neither the target nor an earlier step", total.Unresolved))
	}
	if total.Pending > 0 {
		why = append(why, fmt.Sprintf("%d naming what the trial does not load, left pending for the full load", total.Pending))
	}
	if total.Conflicts > 0 {
		who := "apply --delta"
		if delta != nil {
			who = delta.command
		}
		why = append(why, fmt.Sprintf("%d with a conflict %s would not send", total.Conflicts, who))
	}
	return fmt.Sprintf("apply would load %d of %s; %d would not (%s).", load, diag.Count(load+not, "record", "records"), not, strings.Join(why, "; "))
}
