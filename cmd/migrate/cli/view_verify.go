package cli

// verifyView shows what verify read back: the counts, the control totals
// and each finding.
type verifyView interface {
	Verify(doc verifyJSON, out, html string) error
}

func (a *app) verifyView(asJSON bool) verifyView {
	if asJSON {
		return verifyJSONView{jsonView{a}}
	}
	return verifyHuman{a.human()}
}

type verifyHuman struct{ humanView }

func (v verifyHuman) Verify(doc verifyJSON, out, html string) error {
	printVerify(v.a.stdout, doc)
	v.wrote("the findings are in %s\n", out)
	v.wrote("wrote %s: the run report with the totals verify found, to open in a browser\n", html)
	return nil
}

type verifyJSONView struct{ jsonView }

func (v verifyJSONView) Verify(doc verifyJSON, _, _ string) error { return writeJSON(v.a.stdout, doc) }
