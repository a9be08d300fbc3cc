package cli

import "github.com/migrate-tool/migrate/profile"

// profileView shows what profile found: per source a table of its
// columns, then each finding with its cells.
type profileView interface {
	Profile(res *profile.Result, doc profileJSON, html string) error
}

func (a *app) profileView(asJSON bool) profileView {
	if asJSON {
		return profileJSONView{jsonView{a}}
	}
	return profileHuman{a.human()}
}

type profileHuman struct{ humanView }

func (v profileHuman) Profile(res *profile.Result, doc profileJSON, html string) error {
	printProfile(v.a.stdout, res, doc)
	v.wrote("the page is %s\n", html)
	return nil
}

type profileJSONView struct{ jsonView }

func (v profileJSONView) Profile(_ *profile.Result, doc profileJSON, _ string) error {
	return writeJSON(v.a.stdout, doc)
}
