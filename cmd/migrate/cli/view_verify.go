package cli

// verifyView shows what verify read back: the counts, the control totals
// and each finding; then where the findings (--out) and the run report
// (--html) are.
type verifyView struct{ docView[verifyJSON] }

func (a *app) verifyView(asJSON bool) verifyView {
	return verifyView{newDocView(a, asJSON, printVerify, "the findings are in %s\n",
		"wrote %s: the run report with the totals verify found, to open in a browser\n")}
}

func (v verifyView) Verify(doc verifyJSON, out, html string) error { return v.show(doc, out, html) }
