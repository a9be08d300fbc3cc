package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/migrate-tool/migrate/internal/diag"
	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/plan"
)

// applyCompanies loads each company of the same installation, at once,
// each into its own journal, with clients that share one pace (the server
// counts calls per user, not per company). Each company's output is printed
// whole under its name once every load has ended; the exit code is the
// worst of them (worseCode).
func (a *app) applyCompanies(ctx context.Context, planPath string, f checkFlags, o applyFlags, companies []string) error {
	seen := map[string]bool{}
	for _, c := range companies {
		if seen[c] {
			return usageErr("--company %s is given twice", c)
		}
		// Every name is checked before anything connects or loads: a
		// wrong one among several used to fail alone, after the others.
		if !odata.IsCompanyName(c) {
			return usageErr("--company %q: want a name such as demo (the last segment of the service root; no /, ?, #, %%, comma or space)", c)
		}
		seen[c] = true
	}
	if len(companies) > 1 && o.journal != "" && !strings.Contains(o.journal, "{company}") {
		return usageErr("--journal %s: with %d companies there is one journal each; give a pattern holding {company}, such as %s",
			o.journal, len(companies), journalFile(o.journal, "{company}"))
	}
	p, _ := plan.Load(planPath) // its target settings (URL, auth, pace); its problems are each load's to report
	if p == nil || p.Hash == "" {
		return a.applyOne(ctx, planPath, f, o) // the plan cannot be read: said once
	}
	f.conn.companies = companies
	base, err := a.connect(ctx, f.conn, p)
	if err != nil {
		return err
	}
	defer base.Close()
	run := func(sub *app, company string) error {
		fc := f
		fc.conn.shared, fc.conn.company = base, company
		return sub.applyOne(ctx, planPath, fc, o)
	}
	if len(companies) == 1 {
		return run(a, companies[0])
	}

	type load struct {
		out, errs bytes.Buffer
		err       error
		intr      chan os.Signal
	}
	loads := make([]*load, len(companies))
	for i := range loads {
		loads[i] = &load{intr: make(chan os.Signal, 2)}
	}
	// Every Ctrl-C goes to every load: the first asks each to finish its
	// batches in flight, the second stops them all.
	done := make(chan struct{})
	defer close(done)
	go func() {
		for {
			select {
			case s := <-a.interrupts:
				for _, l := range loads {
					select {
					case l.intr <- s:
					default:
					}
				}
			case <-done:
				return
			}
		}
	}()
	var wg sync.WaitGroup
	for i, company := range companies {
		l := loads[i]
		sub := *a
		sub.stdout, sub.stderr, sub.interrupts = &l.out, &l.errs, l.intr
		wg.Add(1)
		go func() {
			defer wg.Done()
			l.err = run(&sub, company)
		}()
	}
	wg.Wait()

	code := ExitOK
	v := a.companiesView(f.json)
	for i, company := range companies {
		l := loads[i]
		c := codeOf(l.err)
		code = worseCode(code, c)
		if msg := errText(l.err); msg != "" {
			fmt.Fprintf(&l.errs, "migrate apply: %s\n", diag.Printable(msg))
		}
		v.Company(company, c, l.out.Bytes())
		sc := bufio.NewScanner(&l.errs)
		for sc.Scan() {
			fmt.Fprintf(a.stderr, "[%s] %s\n", company, sc.Text())
		}
	}
	if err := v.Done(); err != nil {
		return err
	}
	return silent(code)
}

// errText is the message Run would print for err ("" when none).
func errText(err error) string {
	if err == nil || isSilent(err) {
		return ""
	}
	return err.Error()
}

// worseCode is the worse of two exit codes, for a command over several
// journals or companies: a file or command line that cannot be used (2)
// is worse than a target that cannot be reached (3), than work pending or
// in doubt (4), than data problems (1), than done (0).
func worseCode(a, b int) int {
	rank := map[int]int{ExitOK: 0, ExitData: 1, ExitInterrupted: 2, ExitUnreachable: 3, ExitUsage: 4}
	if rank[b] > rank[a] {
		return b
	}
	return a
}

// companiesJSON is apply --json of several companies: each company's
// document as apply of one company prints it.
type companiesJSON struct {
	Companies []companyRunJSON `json:"companies"`
}

type companyRunJSON struct {
	Company  string          `json:"company"`
	ExitCode int             `json:"exit_code"`
	Run      json.RawMessage `json:"run,omitempty"`
}
