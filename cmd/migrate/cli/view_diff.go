package cli

// diffView shows what apply would do to each record against the target,
// then where the diff (--out) and its page (--html) are.
type diffView struct {
	runView
	docView[diffJSON]
}

func (a *app) diffView(asJSON bool) diffView {
	var run runView = a.human()
	if asJSON {
		run = jsonView{a}
	}
	return diffView{run, newDocView(a, asJSON, printDiff, "the diff is in %s\n", "the diff's page is %s\n")}
}

func (v diffView) Diff(doc diffJSON, out, html string) error { return v.show(doc, out, html) }
