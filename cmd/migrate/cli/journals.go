package cli

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/migrate-tool/migrate/executor"
	"github.com/migrate-tool/migrate/journal"
	"github.com/migrate-tool/migrate/odata"
)

// A journal belongs to the company it loads: however the
// company was named (the target URL's last segment, --company, the plan's
// target.companies), one company has one journal. journalName is the one
// place that chooses it; apply of one company and of several both ask it,
// and journalFile spells every name it, status and the hints give.

// journalName is the journal of a load of company, where own is the
// company the target URL itself addresses: the --journal pattern with
// {company} replaced; else PLAN.journal beside the plan for the URL's own
// company (named or not) and PLAN.COMPANY.journal for another; "" with
// --sandbox and no --journal (a temporary one).
func journalName(planPath, pattern, company, own string, sandbox bool) string {
	if company == "" {
		company = own
	}
	switch {
	case pattern != "":
		return forCompany(pattern, company)
	case sandbox:
		return ""
	}
	if company == own {
		company = ""
	}
	return journalFile(planPath, company)
}

// journalFile is the one rule that names a journal beside a plan (or
// beside the journal a pattern is made from): PLAN.journal for company "",
// else PLAN.COMPANY.journal; "{company}" gives the pattern of a load of
// several companies, "*" (of a plan path globEscape quoted) the glob of
// them all.
func journalFile(planPath, company string) string {
	stem := strings.TrimSuffix(planPath, filepath.Ext(planPath))
	if company == "" {
		return stem + ".journal"
	}
	return stem + "." + company + ".journal"
}

// journalsBeside are the journals apply names beside a plan: PLAN.journal
// and every PLAN.COMPANY.journal, those that exist.
func journalsBeside(planPath string) []string {
	var out []string
	own := journalFile(planPath, "")
	if _, err := os.Stat(own); err == nil {
		out = append(out, own)
	}
	more, _ := filepath.Glob(journalFile(globEscape(planPath), "*"))
	return append(out, more...)
}

// loadJournal is the journal of the load f describes (its company, or the
// target URL's own): journalName's, with the target resolved as every
// command resolves it (flag, environment, the plan's target.url). Without
// --journal, a journal beside the plan that holds the same company under
// another name is refused, named (exit 2): loading into a second journal
// would send every record again, and a server-numbered order would be
// created twice. A journal the user names is theirs to choose (a second
// load after undo, say).
func (a *app) loadJournal(planPath string, f checkFlags, pattern string) (string, error) {
	if f.conn.sandbox {
		// A fresh sandbox each run: no journal beside the plan is its.
		return journalName(planPath, pattern, f.conn.company, "", true), nil
	}
	p, _ := a.loadPlan(planPath)
	url := targetOf(a.getenv, f.conn.target, p)
	own := ""
	if url != "" {
		own = odata.CompanyOf(url)
	}
	jpath := journalName(planPath, pattern, f.conn.company, own, false)
	if url == "" || pattern != "" {
		return jpath, nil // no target (connecting says so), or a journal the user chose
	}
	if f.conn.company != "" && f.conn.company != own {
		var err error
		if url, err = odata.CompanyURL(url, f.conn.company); err != nil {
			return "", usageErr("--company: %v", err)
		}
	}
	for _, other := range journalsBeside(planPath) {
		if sameFile(other, jpath) {
			continue
		}
		hdr, err := journal.ReadHeader(other)
		if err != nil || hdr.Target == "" || executor.CheckTarget(other, hdr, url) != nil {
			continue
		}
		company := odata.CompanyOf(url)
		use := other
		if len(f.conn.companies) > 1 {
			// Several companies take a pattern: the one that names it (as
			// older versions of migrate named every company's journal).
			if other != journalFile(planPath, company) {
				use = ""
			} else {
				use = "'" + journalFile(planPath, companyPlaceholder) + "'"
			}
		}
		hint := "move it away to start afresh"
		if use != "" {
			hint = "give --journal " + use + " to continue it, or " + hint
		}
		return "", usageErr("%s already holds the load of company %s (%s); one company has one journal, so this load, into %s, would send its records again: %s",
			other, company, odata.StripUserinfo(hdr.Target), jpath, hint)
	}
	return jpath, nil
}

// sameFile reports whether two paths name one file, spelt alike or not.
func sameFile(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	sa, errA := os.Stat(a)
	sb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(sa, sb)
}

// resumedJournal is the journal apply would resume for the load f
// describes, "" when there is none yet: the dry run and diff leave out
// what it holds loaded, as apply does. Where apply would refuse to start
// over the journals beside the plan (one holds the company under another
// name), so do they, with apply's error.
func (a *app) resumedJournal(planPath string, f checkFlags, named string) (string, error) {
	jpath := named
	if jpath == "" {
		var err error
		if jpath, err = a.loadJournal(planPath, f, ""); err != nil {
			return "", err
		}
	}
	if jpath == "" {
		return "", nil
	}
	if _, err := os.Stat(jpath); err != nil {
		return "", nil
	}
	return jpath, nil
}
