package cli

import (
	"fmt"

	"github.com/migrate-tool/migrate/internal/diag"
)

// verifyEvidenceView shows what verify-evidence found.
type verifyEvidenceView interface {
	Evidence(doc verifyEvidenceJSON) error
}

func (a *app) verifyEvidenceView(asJSON bool) verifyEvidenceView {
	if asJSON {
		return verifyEvidenceJSONView{jsonView{a}}
	}
	return verifyEvidenceHuman{a.human()}
}

type verifyEvidenceHuman struct{ humanView }

func (v verifyEvidenceHuman) Evidence(doc verifyEvidenceJSON) error {
	w := v.a.stdout
	fmt.Fprintf(w, "%s: made %s from plan %s (SHA-256 %s)\n", doc.Evidence, doc.Made, doc.Plan, doc.PlanHash)
	fmt.Fprintf(w, "  %s listed in the manifest\n", diag.Count(doc.Members, "file", "files"))
	switch j := doc.Journal; {
	case j.Chained:
		fmt.Fprintf(w, "  journal %s: %d lines, chained, head %s\n", j.Member, j.Lines, j.ChainHead)
	default:
		fmt.Fprintf(w, "  journal %s: not chained (written before migrate chained its journals): only its hash is checked\n", j.Member)
	}
	fmt.Fprintf(w, "  created keys: %s re-derived from the journal\n", diag.Count(doc.CreatedRows, "row", "rows"))
	fmt.Fprintf(w, "  when made: %s\n", doc.Verified)
	for _, n := range doc.NotIncluded {
		fmt.Fprintf(w, "  not included: %s\n", n)
	}
	if doc.Target != nil {
		differ := 0
		for _, s := range doc.Target.Steps {
			differ += s.Differ
		}
		fmt.Fprintf(w, "  now: read back from %s: %s %s; %s\n", doc.Target.Target, diag.Count(differ, "record", "records"), map[bool]string{true: "differs", false: "differ"}[differ == 1], diag.Count(doc.Target.Calls, "call", "calls"))
	} else {
		fmt.Fprintln(w, "  now: the target was not read (give --target or MIGRATE_TARGET to compare with the target)")
	}
	for _, p := range doc.Problems {
		fmt.Fprintf(w, "problem: %s\n", p)
	}
	fmt.Fprintln(w, doc.Verdict)
	return nil
}

type verifyEvidenceJSONView struct{ jsonView }

func (v verifyEvidenceJSONView) Evidence(doc verifyEvidenceJSON) error {
	return writeJSON(v.a.stdout, doc)
}
