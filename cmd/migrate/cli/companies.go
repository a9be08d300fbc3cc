package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/migrate-tool/migrate/internal/diag"
	"github.com/migrate-tool/migrate/odata"
)

// companiesOf are the companies a load of the plan at planPath is of, for
// apply and the dry runs that predict it: --company (flagged), else the
// plan's target.companies; none for one load of the company the target URL
// addresses.
func (a *app) companiesOf(planPath string, f checkFlags, r runFlags) ([]string, error) {
	p, _ := a.loadPlan(planPath)
	if d, err := a.dialectOf(f.conn, p); err != nil {
		return nil, err
	} else if d.Standard() && len(r.companies) > 0 {
		return nil, usageErr("--company names a company of the ERP's installation; a target of dialect odata has none")
	}
	companies := []string(r.companies)
	if len(companies) == 0 && p != nil {
		companies = p.Target.Companies
	}
	if len(companies) > 0 && r.txLeft >= 0 {
		return nil, usageErr("--transactions-left takes one company at a time: the pool is the installation's, and the loads of several share it")
	}
	return companies, nil
}

// forCompanies runs one for each company r chooses (companiesOf), each
// with its files fl made its own, at once (eachCompany); or once, for the
// company the target URL addresses, when r chooses none. apply loads so,
// and plan and diff predict its load so.
func (a *app) forCompanies(ctx context.Context, cmd, planPath string, f checkFlags, r runFlags, fl files, offline bool, one func(sub *app, f checkFlags, fl files) error) error {
	companies, err := a.companiesOf(planPath, f, r)
	if err != nil {
		return err
	}
	if len(companies) == 0 {
		return one(a, f, fl)
	}
	return a.eachCompany(ctx, cmd, planPath, f, companies, fl.patterns(), offline, func(sub *app, f checkFlags) error {
		return one(sub, f, fl.of(f.conn.company))
	})
}

// companyRun is one command's run (apply's load, plan's dry run,
// diff's comparison) of one company: sub prints its output, f addresses
// the company (f.conn.company, over f.conn.shared when a base connection
// is shared).
type companyRun func(sub *app, f checkFlags) error

// eachCompany runs cmd once for each company of the same installation,
// at once, each with its own journal, with clients that share one pace
// (the server counts calls per user, not per company). Each company's
// output is printed whole under its name once every run has ended; the
// exit code is the worst of them (worseCode). perCompany are the flags
// that name a file each company has one of (--journal, --html, --out):
// with several companies each must be a pattern holding {company}.
// offline runs connect to nothing (a dry run against a saved $metadata).
func (a *app) eachCompany(ctx context.Context, cmd, planPath string, f checkFlags, companies []string, perCompany map[string]string, offline bool, run companyRun) error {
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
	for _, name := range slices.Sorted(maps.Keys(perCompany)) {
		if v := perCompany[name]; len(companies) > 1 && v != "" && !strings.Contains(v, companyPlaceholder) {
			return usageErr("%s %s: with %d companies there is one each; give a pattern holding {company}, such as %s",
				name, v, len(companies), companyPattern(v))
		}
	}
	p, _ := a.loadPlan(planPath) // its target settings (URL, auth, pace); its problems are each run's to report
	if p == nil || p.Hash == "" {
		return run(a, f) // the plan cannot be read: said once
	}
	f.conn.companies = companies
	if !offline {
		base, err := a.connect(ctx, f.conn, p)
		if err != nil {
			return err
		}
		defer base.Close()
		f.conn.shared = base
	}
	one := func(sub *app, company string) error {
		fc := f
		fc.conn.company = company
		return run(sub, fc)
	}
	if len(companies) == 1 {
		return one(a, companies[0])
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
		sub.plans = nil // its own reading: the runs go on at once
		wg.Add(1)
		go func() {
			defer wg.Done()
			l.err = one(&sub, company)
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
			fmt.Fprintf(&l.errs, "migrate %s: %s\n", cmd, diag.Printable(msg))
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

// files are the files plan and diff write or read, one per company when
// they run for several: --out, --html and --journal, each then a pattern
// holding {company}.
type files struct{ out, html, journal string }

// register defines --out (out says what it writes), --html (of what)
// and --journal (what the journal's loaded records are to the run).
func (f *files) register(fs *flag.FlagSet, out, what, loaded string) {
	const several = "; with several companies a pattern holding {company}"
	fs.StringVar(&f.out, "out", "", out+several)
	fs.StringVar(&f.html, "html", "", "FILE.html: "+what+" as a self-contained page, as migrate report --html shows a run"+several)
	fs.StringVar(&f.journal, "journal", "", "the journal apply would resume (default: the one apply names beside the plan): what it holds loaded is "+loaded+several)
}

// patterns are the flags eachCompany checks hold {company}.
func (f files) patterns() map[string]string {
	return map[string]string{"--journal": f.journal, "--html": f.html, "--out": f.out}
}

// of is f for one company of several: its patterns made its names.
func (f files) of(company string) files {
	for _, p := range []*string{&f.out, &f.html, &f.journal} {
		*p = forCompany(*p, company)
	}
	return f
}

// companyPlaceholder is what a file's pattern holds where the name of
// each company of several goes (--journal, --html, --out).
const companyPlaceholder = "{company}"

// forCompany is the file a pattern names for company.
func forCompany(pattern, company string) string {
	return strings.ReplaceAll(pattern, companyPlaceholder, company)
}

// companyPattern is path as a pattern of one file per company, for a
// hint: PLAN.journal gives PLAN.{company}.journal.
func companyPattern(path string) string {
	ext := filepath.Ext(path)
	return strings.TrimSuffix(path, ext) + "." + companyPlaceholder + ext
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
