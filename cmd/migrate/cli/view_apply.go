package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"github.com/migrate-tool/migrate/executor"
	"github.com/migrate-tool/migrate/internal/diag"
)

// applyView shows a load: the references that keep it from starting, or
// what it did.
type applyView interface {
	runView
	Unresolved(errs []errorJSON) error
	Applied(r appliedResult) error
}

// appliedResult is what one apply did, for its view.
type appliedResult struct {
	doc      runJSON
	sum      *executor.Summary
	took     time.Duration
	planPath string
}

func (a *app) applyView(asJSON bool) applyView {
	if asJSON {
		return applyJSONView{jsonView{a}}
	}
	return applyHuman{a.human()}
}

type applyHuman struct{ humanView }

func (v applyHuman) Unresolved(errs []errorJSON) error {
	printErrors(v.a.stdout, errs)
	return nil
}

func (v applyHuman) Applied(r appliedResult) error {
	w, view, sum := v.a.stdout, r.doc, r.sum
	printSteps(w, view, true)
	fmt.Fprintf(w, "\n%s with %s in %s.", diag.Count(view.Requests, "call", "calls"),
		diag.Count(view.Subrequests, "sub-request", "sub-requests"), fmtDuration(r.took))
	if view.Journal != "" {
		fmt.Fprintf(w, " Journal: %s", view.Journal)
	}
	fmt.Fprintln(w)
	if view.Shrank != nil {
		fmt.Fprintln(w, shrankText(view.Shrank))
	}
	printWarnings(w, warningsOf(sum.Warnings)) // not Raised: said on stderr as the load ran
	printErrors(w, view.Errors)
	printPartly(w, sum.Errors)
	printChanged(w, view.Steps)
	printDelta(w, view.Delta)
	for _, u := range sum.Undecided {
		fmt.Fprintf(w, "in doubt, check on the server: %s\n", u)
	}
	if len(view.Errors) > 0 && view.Journal != "" {
		if sum.Conflicted() < sum.Total().Failed {
			fmt.Fprintf(w, "\nnext: `migrate report %s` gives the failed rows with their messages; correct them in the source, then `migrate apply %s --retry-failed`\n", view.Journal, r.planPath)
		}
		if c := sum.Conflicts(); c != "" {
			// Correcting a row changes nothing for these: the company holds
			// the key already.
			fmt.Fprintf(w, "\nnext: %s\n", c)
		}
		printGone(w, view.Gone, view.Journal)
	} else if view.Journal != "" && sum.Complete {
		fmt.Fprintf(w, "\nthe run report: `migrate report %s --html report.html` (and `--created keys.xlsx` for the keys the server assigned)\n", view.Journal)
	}
	if left := sum.Left(); left != "" && !sum.Interrupted {
		fmt.Fprintf(w, "\n%s\n", left)
	}
	return nil
}

type applyJSONView struct{ jsonView }

func (v applyJSONView) Unresolved(errs []errorJSON) error {
	return writeJSON(v.a.stdout, runJSON{Steps: []stepJSON{}, Errors: errs})
}

func (v applyJSONView) Applied(r appliedResult) error { return writeJSON(v.a.stdout, r.doc) }

// companiesView shows the loads of several companies once every one has
// ended: each company's own output (as apply of one company shows it),
// under its name.
type companiesView interface {
	Company(company string, code int, out []byte)
	Done() error
}

func (a *app) companiesView(asJSON bool) companiesView {
	if asJSON {
		return &companiesJSONView{jsonView: jsonView{a}}
	}
	return companiesHuman{a.human()}
}

type companiesHuman struct{ humanView }

func (v companiesHuman) Company(company string, code int, out []byte) {
	fmt.Fprintf(v.a.stdout, "== company %s (exit %d) ==\n", company, code)
	v.a.stdout.Write(out)
	fmt.Fprintln(v.a.stdout)
}

func (companiesHuman) Done() error { return nil }

type companiesJSONView struct {
	jsonView
	docs []companyRunJSON
}

func (v *companiesJSONView) Company(company string, code int, out []byte) {
	doc := companyRunJSON{Company: company, ExitCode: code}
	if raw := bytes.TrimSpace(out); json.Valid(raw) && len(raw) > 0 {
		doc.Run = raw
	}
	v.docs = append(v.docs, doc)
}

func (v *companiesJSONView) Done() error {
	return writeJSON(v.a.stdout, companiesJSON{Companies: v.docs})
}
