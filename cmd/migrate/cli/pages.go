package cli

import (
	"bytes"
	"fmt"
	"io"

	"github.com/migrate-tool/migrate/executor"
	"github.com/migrate-tool/migrate/internal/atomicfile"
	"github.com/migrate-tool/migrate/plan"
	"github.com/migrate-tool/migrate/report"
)

// writePage renders a page once, for the --html file (out, when given)
// and for the page plan and diff keep for the evidence (keep set): keepPage.
// Only the --html file's failure is the command's.
func (a *app) writePage(out string, keep bool, p *plan.Plan, planPath string, f checkFlags, named, kind string, render func(io.Writer) error) error {
	if out == "" && !keep {
		return nil
	}
	var page bytes.Buffer
	err := render(&page)
	if out != "" {
		if err != nil {
			return err
		}
		// The page holds the customer's rows: the journal's mode.
		if err := atomicfile.WriteFile(out, page.Bytes(), 0o600); err != nil {
			return err
		}
	}
	if keep {
		a.keepPage(p, planPath, f, named, kind, page.Bytes(), err)
	}
	return nil
}

// keepPage keeps the page plan or diff showed beside the journal the
// plan's apply will write (the one loadJournal names, or --journal's),
// with the plan hash and sources it was made from, for report --evidence
// (docs/cli.md, Evidence). A load with no journal of its own (--sandbox)
// keeps none. Keeping it is no part of the command's result: a failure,
// rendering it (err) or writing it, is a warning.
func (a *app) keepPage(p *plan.Plan, planPath string, f checkFlags, named, kind string, page []byte, err error) {
	jpath := named
	if jpath == "" {
		var jerr error
		if jpath, jerr = a.loadJournal(planPath, f, ""); jerr != nil || jpath == "" {
			return
		}
	}
	if err == nil {
		_, err = report.KeepPage(jpath, kind, page, p.Hash, executor.SourceHashes(p), a.now())
	}
	if err != nil {
		fmt.Fprintf(a.stderr, "warning: the %s page was not kept beside %s for report --evidence: %v\n", kind, jpath, err)
	}
}
