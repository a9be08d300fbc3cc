package cli

import (
	"encoding/json"
	"fmt"

	"github.com/migrate-tool/migrate/internal/diag"
)

// validateView shows what validate found out about a plan.
type validateView interface {
	Results(c *checked) error
}

func (a *app) validateView(asJSON bool) validateView {
	if asJSON {
		return validateJSONView{jsonView{a}}
	}
	return validateHuman{a.human()}
}

type validateHuman struct{ humanView }

func (v validateHuman) Results(c *checked) error {
	w := v.a.stdout
	for _, d := range c.diags {
		fmt.Fprintln(w, d.String())
	}
	errs := len(c.diags.Errors())
	switch {
	case c.plan != nil && errs == 0:
		fmt.Fprintf(w, "%s: ok: %s, %s, checked against %s (system version %s)\n",
			c.plan.Path, diag.Count(len(c.plan.Steps), "step", "steps"), diag.Count(len(c.plan.Sources), "source", "sources"), c.mdSource, versionText(c.run.Version))
	default:
		fmt.Fprintf(w, "%s\n", diag.Count(errs, "problem", "problems"))
	}
	return nil
}

type validateJSONView struct{ jsonView }

// Results writes the document as validate always has: with HTML escaped,
// unlike the other commands' (writeJSON).
func (v validateJSONView) Results(c *checked) error {
	enc := json.NewEncoder(v.a.stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(validateJSON{OK: c.plan != nil && !c.diags.HasErrors(), Problems: problemsJSON(c.plan, c.diags)})
}
