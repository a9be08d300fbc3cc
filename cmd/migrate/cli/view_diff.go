package cli

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
	v.wrote("the diff is in %s\n", out)
	v.wrote("the diff's page is %s\n", html)
	return nil
}

type diffJSONView struct{ jsonView }

func (v diffJSONView) Diff(doc diffJSON, _, _ string) error { return writeJSON(v.a.stdout, doc) }
