package cli

import "fmt"

// diffView shows what apply would do to each record against the target.
type diffView interface {
	runView
	Diff(doc diffJSON, out, html string) error
}

func (a *app) diffView(asJSON bool) diffView {
	if asJSON {
		return diffJSONView{jsonView{a}}
	}
	return diffHuman{a.human()}
}

type diffHuman struct{ humanView }

func (v diffHuman) Diff(doc diffJSON, out, html string) error {
	printDiff(v.a.stdout, doc)
	if out != "" {
		fmt.Fprintf(v.a.stdout, "the diff is in %s\n", out)
	}
	if html != "" {
		fmt.Fprintf(v.a.stdout, "the diff's page is %s\n", html)
	}
	return nil
}

type diffJSONView struct{ jsonView }

func (v diffJSONView) Diff(doc diffJSON, _, _ string) error { return writeJSON(v.a.stdout, doc) }
