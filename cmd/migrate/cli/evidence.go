package cli

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/migrate-tool/migrate/internal/diag"
	"github.com/migrate-tool/migrate/journal"
	"github.com/migrate-tool/migrate/report"
	"github.com/migrate-tool/migrate/verify"
)

// evidenceFlags are report's flags for --evidence.
type evidenceFlags struct {
	file, plan, dryRun, diff string
	conn                     connFlags
}

func (f *evidenceFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.file, "evidence", "", "FILE.zip: the evidence of the run in one file: the plan, the sources' hashes, the journal, the run report, the failed rows, the created keys, the verify result (with a target) and the pages made before the load, each hashed in its manifest")
	fs.StringVar(&f.plan, "plan", "", "with --evidence: the plan the run was made from (default: the path the journal recorded); its hash must be the one the journal recorded")
	fs.StringVar(&f.dryRun, "dry-run", "", "with --evidence: FILE.html, the dry run's page made before the load (migrate plan --html), to put into the evidence instead of the one plan kept beside the journal")
	fs.StringVar(&f.diff, "diff", "", "with --evidence: FILE.html or FILE.xlsx, the diff made before the load (migrate diff --html or --out), to put into the evidence instead of the one diff kept beside the journal")
	f.conn.register(fs, false)
}

// targetGiven reports whether a target was given (flag or environment): then
// the evidence holds a verify of it.
func (a *app) targetGiven(cf connFlags) bool {
	return cf.target != "" || a.getenv("MIGRATE_TARGET") != ""
}

// evidence writes the evidence file of the journal at jpath.
func (a *app) evidence(ctx context.Context, jpath string, f evidenceFlags) error {
	if err := checkExt("--evidence", f.file, ".zip"); err != nil {
		return err
	}
	if err := checkExt("--dry-run", f.dryRun, ".html", ".htm"); err != nil {
		return err
	}
	if err := checkExt("--diff", f.diff, ".html", ".htm", ".xlsx"); err != nil {
		return err
	}
	if h, busy := journal.InUse(jpath); busy {
		return withCode(ExitInterrupted, fmt.Errorf("%s: a run is writing the journal now (%s): make the evidence once it has finished", jpath, h))
	}
	data, err := os.ReadFile(jpath)
	if err != nil {
		return withCode(ExitUsage, err)
	}
	if i := bytes.LastIndexByte(data, '\n'); i >= 0 {
		data = data[:i+1] // a torn last line is no part of the run
	}
	m, err := report.NewManifest(jpath, data)
	if err != nil {
		var ce *report.ChainError
		if errors.As(err, &ce) {
			return withCode(ExitData, fmt.Errorf("%v\nno evidence was written: a journal changed after the run proves nothing", err))
		}
		if jerr := journalErr(err); jerr != nil {
			return jerr
		}
		return withCode(ExitUsage, err)
	}
	hdr, err := journal.ReadHeader(jpath)
	if err != nil {
		return withCode(ExitUsage, err)
	}
	planPath := f.plan
	if planPath == "" {
		planPath = hdr.PlanPath
	}
	if planPath == "" {
		return usageErr("%s: the journal names no plan file: give the plan it was made from with --plan", jpath)
	}
	planData, err := os.ReadFile(planPath)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) && f.plan == "" {
			return usageErr("%s: the plan the journal names, %s, is not there: give the plan it was made from with --plan", jpath, planPath)
		}
		return withCode(ExitUsage, err)
	}
	if sum := sha256.Sum256(planData); hex.EncodeToString(sum[:]) != m.PlanHash {
		return usageErr("%s is not the plan the run of %s was made from (its SHA-256 is %s, the journal recorded %s): give that plan with --plan",
			planPath, jpath, hex.EncodeToString(sum[:]), m.PlanHash)
	}
	m.PlanFile = "plan/" + filepath.Base(planPath)
	members := []report.EvidenceMember{
		{Name: m.PlanFile, What: "the plan the run was made from", Data: planData},
		{Name: report.EvidenceJournal, What: "the journal, hash-chained line by line", Data: data},
	}
	dir, err := os.MkdirTemp("", "migrate-evidence-")
	if err != nil {
		return withCode(ExitUsage, err)
	}
	defer os.RemoveAll(dir)
	rep, err := report.RunReportOf(jpath)
	if err != nil {
		return withCode(ExitUsage, err)
	}
	var page bytes.Buffer
	if err := report.WriteHTML(&page, rep); err != nil {
		return withCode(ExitUsage, err)
	}
	members = append(members, report.EvidenceMember{Name: report.EvidenceReport, What: "the run report (report --html)", Data: page.Bytes()})
	failed := filepath.Join(dir, report.EvidenceFailed)
	if _, _, err := report.Report(jpath, failed); err != nil {
		return withCode(ExitUsage, err)
	}
	created := filepath.Join(dir, report.EvidenceCreated)
	cs, err := report.CreatedKeys(jpath, created)
	if err != nil {
		return withCode(ExitUsage, err)
	}
	for _, d := range []struct{ file, name, what string }{
		{failed, report.EvidenceFailed, "the failed rows as they were in the source, with the server's message (report --out)"},
		{created, report.EvidenceCreated, fmt.Sprintf("%s of %s beside the keys the server assigned (report --created)",
			diag.Count(cs.Rows, "source row", "source rows"), diag.Count(cs.Records, "committed record", "committed records"))},
		{f.dryRun, "dry-run" + strings.ToLower(filepath.Ext(f.dryRun)), "the dry run's page, given by --dry-run " + f.dryRun},
		{f.diff, "diff" + strings.ToLower(filepath.Ext(f.diff)), "the diff, given by --diff " + f.diff},
	} {
		if d.file == "" {
			continue
		}
		b, err := os.ReadFile(d.file)
		if err != nil {
			return withCode(ExitUsage, err)
		}
		members = append(members, report.EvidenceMember{Name: d.name, What: d.what, Data: b})
	}
	// The pages made before the load that were not given: those plan and
	// diff kept beside the journal, from the plan and sources the run
	// recorded, before it began.
	for _, k := range []struct{ given, kind, what, flag, made string }{
		{f.dryRun, report.PageDryRun, "the dry run's page", "--dry-run", "plan --html"},
		{f.diff, report.PageDiff, "the diff", "--diff", "diff --html or --out"},
	} {
		if k.given != "" {
			continue
		}
		kept, why := report.FindPage(jpath, k.kind, m.PlanHash, m.Sources, hdr.Created)
		if kept == nil {
			m.NotIncluded = append(m.NotIncluded, fmt.Sprintf("%s: %s; give the one made before the load (%s) with %s", k.what, why, k.made, k.flag))
			continue
		}
		b, err := os.ReadFile(kept.Path())
		if err != nil {
			return withCode(ExitUsage, err)
		}
		members = append(members, report.EvidenceMember{Name: k.kind + ".html", Data: b,
			What: fmt.Sprintf("%s made at %s, before the run, from its plan and sources (kept beside the journal: %s)", k.what, kept.Made.Format("2006-01-02 15:04:05 UTC"), kept.Path())})
	}
	m.ToolVersion, m.Made = Version, a.now().UTC()
	m.Verified = "not verified: no target was given (--target or MIGRATE_TARGET); verify-evidence with a target reads the company"
	var differ error
	if a.targetGiven(f.conn) {
		res, err := a.verifyJournal(ctx, jpath, "", f.conn)
		if err != nil {
			return err
		}
		doc := verifyDoc(res)
		var js, text bytes.Buffer
		if err := writeJSON(&js, doc); err != nil {
			return err
		}
		printVerify(&text, doc)
		members = append(members,
			report.EvidenceMember{Name: "verify.json", What: "verify --json of the target", Data: js.Bytes()},
			report.EvidenceMember{Name: "verify.txt", What: "verify of the target, as it prints", Data: text.Bytes()})
		m.Verified = verifiedText(res, m.Made.Format("2006-01-02 15:04:05 UTC"))
		if res.Differences() > 0 || res.TotalsDiffer() {
			differ = withCode(ExitData, fmt.Errorf("verify found the target differing from what the run wrote: the evidence records it (verify.txt)"))
		}
	}
	if err := report.WriteEvidence(f.file, m, members); err != nil {
		return withCode(ExitUsage, err)
	}
	chain := "not chained (written before migrate chained its journals): its hash pins it"
	if m.Journal.Chained {
		chain = fmt.Sprintf("chain intact over %d lines, head %s", m.Journal.Lines, m.Journal.ChainHead[:16])
	}
	fmt.Fprintf(a.stdout, "wrote %s: the evidence of %s, %d files and their hashes in manifest.json\n  journal: %s\n  %s\n",
		f.file, jpath, len(members), chain, m.Verified)
	for _, n := range m.NotIncluded {
		fmt.Fprintf(a.stdout, "  not included: %s\n", n)
	}
	return differ
}

// verifiedText is the manifest's verified: what verify found, and where.
func verifiedText(res *verify.Result, at string) string {
	records, matched := 0, 0
	for _, s := range res.Steps {
		records += s.Records
		matched += s.Matched
	}
	totals := "the control totals agree"
	if res.TotalsDiffer() {
		totals = "a control total differs"
	}
	return fmt.Sprintf("verified against %s at %s: %d of %s matched, %d differ; %s",
		res.Target, at, matched, diag.Count(records, "record", "records"), res.Differences(), totals)
}

// verifyEvidenceJSON is docs/cli.md's output of verify-evidence --json.
type verifyEvidenceJSON struct {
	Evidence    string              `json:"evidence"`
	Holds       bool                `json:"holds"`
	Made        string              `json:"made"`
	Plan        string              `json:"plan"`
	PlanHash    string              `json:"plan_hash"`
	Members     int                 `json:"members"`
	Journal     evidenceJournalJSON `json:"journal"`
	CreatedRows int                 `json:"created_rows"`
	// Verified is the manifest's: what the target held when the
	// evidence was made.
	Verified string `json:"verified"`
	// NotIncluded: the manifest's.
	NotIncluded []string `json:"not_included"`
	// Target is what the target holds now, when one was given; null when
	// none was.
	Target   *verifyJSON              `json:"target"`
	Problems []report.EvidenceProblem `json:"problems"`
}

// evidenceJournalJSON is the journal of an evidence file as read back: the
// fields the manifest records it by, with what the file holds.
type evidenceJournalJSON = report.ManifestJournal

func (a *app) verifyEvidence(ctx context.Context, args []string) error {
	var cf connFlags
	fs := connFlagSet("verify-evidence", &cf, false)
	asJSON := jsonFlag(fs)
	pos, err := a.parse(fs, args, "FILE.zip", 1, 1)
	if err != nil {
		return err
	}
	ev, err := report.ReadEvidence(pos[0])
	if err != nil {
		return withCode(ExitUsage, err)
	}
	dir, err := os.MkdirTemp("", "migrate-evidence-")
	if err != nil {
		return withCode(ExitUsage, err)
	}
	defer os.RemoveAll(dir)
	chk, err := ev.Check(dir)
	if err != nil {
		return withCode(ExitUsage, err)
	}
	m := ev.Manifest
	doc := verifyEvidenceJSON{Evidence: pos[0], Made: m.Made.UTC().Format("2006-01-02 15:04:05 UTC"), Plan: m.Plan, PlanHash: m.PlanHash,
		Members: chk.Members, CreatedRows: chk.Created, Verified: m.Verified, NotIncluded: append([]string{}, m.NotIncluded...), Problems: append([]report.EvidenceProblem{}, chk.Problems...)}
	doc.Journal.Member = m.Journal.Member
	if chk.Chain != nil {
		doc.Journal.Lines, doc.Journal.Chained, doc.Journal.ChainHead = chk.Chain.Lines, chk.Chain.Chained, chk.Chain.Head
	}
	jpath := filepath.Join(dir, filepath.Base(m.Journal.Member))
	if a.targetGiven(cf) && chk.Chain != nil {
		res, err := a.verifyJournal(ctx, jpath, "", cf)
		if err != nil {
			return err
		}
		v := verifyDoc(res)
		doc.Target = &v
		for _, f := range v.Findings {
			if f.Problem == verify.NotReadable || f.Problem == verify.NotVerifiable {
				continue // said by verify, not a difference
			}
			doc.Problems = append(doc.Problems, report.EvidenceProblem{Member: "target", Problem: findingLine(f)})
		}
		for _, s := range v.Steps {
			for _, t := range s.Totals {
				if t.Source != t.Target {
					doc.Problems = append(doc.Problems, report.EvidenceProblem{Member: "target",
						Problem: fmt.Sprintf("%s: control total %s: the run sent %s, the target holds %s", s.Name, t.What, t.Source, t.Target)})
				}
			}
		}
	}
	doc.Holds = len(doc.Problems) == 0
	if err := a.verifyEvidenceView(*asJSON).Evidence(doc); err != nil {
		return err
	}
	if !doc.Holds {
		return silent(ExitData)
	}
	return nil
}
