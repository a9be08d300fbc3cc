package cli

import (
	"fmt"

	"github.com/migrate-tool/migrate/executor"
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
	fmt.Fprintf(w, "\napply would make %s with %s (%s), %s at %d calls a minute.\n",
		plural(view.Requests, "call", "calls"), plural(view.Subrequests, "sub-request", "sub-requests"),
		plural(view.Transactions, "API transaction", "API transactions"), estimateText(sum.Estimated), r.rate)
	if r.out != "" {
		fmt.Fprintf(w, "the batches are in %s\n", r.out)
	}
	if r.html != "" {
		fmt.Fprintf(w, "the dry run's page is %s\n", r.html)
	}
	if sum.Unread > 0 {
		fmt.Fprintf(w, "note: predicted without reading a target: %s of upsert and update steps were not made; upsert counts as inserts, update as changes of every field (give --target to read what it holds)\n",
			plural(sum.Unread, "read", "reads"))
	}
	printErrors(w, view.Errors)
	return nil
}

type planJSONView struct{ jsonView }

func (v planJSONView) DryRun(r dryRunResult) error { return writeJSON(v.a.stdout, r.doc) }
