package cli

import (
	"bytes"
	"fmt"
	"io"

	"github.com/migrate-tool/migrate/executor"
	"github.com/migrate-tool/migrate/plan"
)

// keepPage keeps the page plan or diff showed beside the journal the
// plan's apply will write (the one loadJournal names, or --journal's),
// with the plan hash and sources it was made from, for report --evidence
// (docs/cli.md, Evidence). A load with no journal of its own (--sandbox)
// keeps none. Keeping it is no part of the command's result: a failure is
// a warning.
func (a *app) keepPage(p *plan.Plan, planPath string, f checkFlags, named, kind string, write func(io.Writer) error) {
	jpath := named
	if jpath == "" {
		var err error
		if jpath, err = a.loadJournal(planPath, f, ""); err != nil || jpath == "" {
			return
		}
	}
	var page bytes.Buffer
	err := write(&page)
	if err == nil {
		_, err = executor.KeepPage(jpath, kind, page.Bytes(), p.Hash, executor.SourceHashes(p), a.now())
	}
	if err != nil {
		fmt.Fprintf(a.stderr, "warning: the %s page was not kept beside %s for report --evidence: %v\n", kind, jpath, err)
	}
}
