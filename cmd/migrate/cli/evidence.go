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
	data, m, err := evidenceJournal(jpath)
	if err != nil {
		return err
	}
	hdr, err := journal.ReadHeader(jpath)
	if err != nil {
		return withCode(ExitUsage, err)
	}
	planPath, planData, err := evidencePlan(jpath, f.plan, hdr, m)
	if err != nil {
		return err
	}
	m.PlanFile = "plan/" + filepath.Base(planPath)
	members := []report.EvidenceMember{
		{Name: m.PlanFile, What: "the plan the run was made from", Data: planData},
		{Name: report.EvidenceJournal, What: "the journal, hash-chained line by line", Data: data},
	}
	made, err := evidenceReports(jpath, f)
	if err != nil {
		return err
	}
	members = append(members, made...)
	kept, err := keptPages(jpath, f, hdr, m)
	if err != nil {
		return err
	}
	members = append(members, kept...)
	m.ToolVersion, m.Made = Version, a.now().UTC()
	m.Verified = "not verified: no target was given (--target or MIGRATE_TARGET); verify-evidence with a target reads the target"
	var differ error
	if a.targetGiven(f.conn) {
		verified, err := a.evidenceVerify(ctx, jpath, f.conn, m)
		if err != nil && !errors.Is(err, errDiffer) {
			return err
		}
		members, differ = append(members, verified...), err
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

// evidenceJournal reads journal jpath as the evidence holds it (a torn
// last line is no part of the run) and its manifest, which its chain
// must hold: a journal changed after the run proves nothing. A journal a
// run is writing is refused.
func evidenceJournal(jpath string) ([]byte, *report.Manifest, error) {
	if h, busy := journal.InUse(jpath); busy {
		return nil, nil, withCode(ExitInterrupted, fmt.Errorf("%s: a run is writing the journal now (%s): make the evidence once it has finished", jpath, h))
	}
	data, err := os.ReadFile(jpath)
	if err != nil {
		return nil, nil, withCode(ExitUsage, err)
	}
	if i := bytes.LastIndexByte(data, '\n'); i >= 0 {
		data = data[:i+1] // a torn last line is no part of the run
	}
	m, err := report.NewManifest(jpath, data)
	if err != nil {
		var ce *report.ChainError
		if errors.As(err, &ce) {
			return nil, nil, withCode(ExitData, fmt.Errorf("%v\nno evidence was written: a journal changed after the run proves nothing", err))
		}
		if jerr := journalErr(err); jerr != nil {
			return nil, nil, jerr
		}
		return nil, nil, withCode(ExitUsage, err)
	}
	return data, m, nil
}

// errDiffer is evidenceVerify's error when the target differs from what
// the run wrote: the evidence is written all the same, and records it.
var errDiffer = errors.New("verify found the target differing from what the run wrote: the evidence records it (verify.txt)")

// evidenceVerify verifies the run of jpath against the target (conn) and
// returns what the evidence holds of it (verify.json, verify.txt); m's
// Verified says what was found, and when. It returns errDiffer (exit 1)
// too when the target differs.
func (a *app) evidenceVerify(ctx context.Context, jpath string, conn connFlags, m *report.Manifest) ([]report.EvidenceMember, error) {
	res, err := a.verifyJournal(ctx, jpath, "", conn)
	if err != nil {
		return nil, err
	}
	doc := verifyDoc(res)
	var js, text bytes.Buffer
	if err := writeJSON(&js, doc); err != nil {
		return nil, err
	}
	printVerify(&text, doc)
	members := []report.EvidenceMember{
		{Name: "verify.json", What: "verify --json of the target", Data: js.Bytes()},
		{Name: "verify.txt", What: "verify of the target, as it prints", Data: text.Bytes()},
	}
	m.Verified = verifiedText(res, m.Made.Format("2006-01-02 15:04:05 UTC"))
	if res.Differences() > 0 || res.TotalsDiffer() {
		return members, withCode(ExitData, errDiffer)
	}
	return members, nil

}

// evidencePlan reads the plan the run of jpath was made from: given
// (--plan), else the one its journal names (hdr), which must be the plan
// the journal recorded (its hash, in m).
func evidencePlan(jpath, given string, hdr journal.Header, m *report.Manifest) (path string, data []byte, err error) {
	planPath := given
	if planPath == "" {
		planPath = hdr.PlanPath
	}
	if planPath == "" {
		return "", nil, usageErr("%s: the journal names no plan file: give the plan it was made from with --plan", jpath)
	}
	planData, err := os.ReadFile(planPath)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) && given == "" {
			return "", nil, usageErr("%s: the plan the journal names, %s, is not there: give the plan it was made from with --plan", jpath, planPath)
		}
		return "", nil, withCode(ExitUsage, err)
	}
	if sum := sha256.Sum256(planData); hex.EncodeToString(sum[:]) != m.PlanHash {
		return "", nil, usageErr("%s is not the plan the run of %s was made from (its SHA-256 is %s, the journal recorded %s): give that plan with --plan",
			planPath, jpath, hex.EncodeToString(sum[:]), m.PlanHash)
	}
	return planPath, planData, nil
}

// evidenceReports are the members of the evidence made from journal
// jpath (the run report, the failed rows, the created keys) and those
// given (the dry run's page, --dry-run; the diff, --diff).
func evidenceReports(jpath string, f evidenceFlags) ([]report.EvidenceMember, error) {
	dir, err := os.MkdirTemp("", "migrate-evidence-")
	if err != nil {
		return nil, withCode(ExitUsage, err)
	}
	defer os.RemoveAll(dir)
	rep, err := report.RunReportOf(jpath)
	if err != nil {
		return nil, withCode(ExitUsage, err)
	}
	var page bytes.Buffer
	if err := report.WriteHTML(&page, rep); err != nil {
		return nil, withCode(ExitUsage, err)
	}
	members := []report.EvidenceMember{{Name: report.EvidenceReport, What: "the run report (report --html)", Data: page.Bytes()}}
	failed := filepath.Join(dir, report.EvidenceFailed)
	if _, _, err := report.Report(jpath, failed); err != nil {
		return nil, withCode(ExitUsage, err)
	}
	created := filepath.Join(dir, report.EvidenceCreated)
	cs, err := report.CreatedKeys(jpath, created)
	if err != nil {
		return nil, withCode(ExitUsage, err)
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
			return nil, withCode(ExitUsage, err)
		}
		members = append(members, report.EvidenceMember{Name: d.name, What: d.what, Data: b})
	}
	return members, nil
}

// keptPages are the pages made before the load that were not given
// (--dry-run, --diff): those plan and diff kept beside journal jpath,
// from the plan and sources the run recorded, before it began (hdr).
// What is not there is said in m's NotIncluded, with how to include it.
func keptPages(jpath string, f evidenceFlags, hdr journal.Header, m *report.Manifest) ([]report.EvidenceMember, error) {
	var members []report.EvidenceMember
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
			return nil, withCode(ExitUsage, err)
		}
		members = append(members, report.EvidenceMember{Name: k.kind + ".html", Data: b,
			What: fmt.Sprintf("%s made at %s, before the run, from its plan and sources (kept beside the journal: %s)", k.what, kept.Made.Format("2006-01-02 15:04:05 UTC"), kept.Path())})
	}
	return members, nil
}

// verifiedText is the manifest's verified: what verify found, and where.
func verifiedText(res *verify.Result, at string) string {
	records, matched, differ := res.Counts()
	totals := "the control totals agree"
	if res.TotalsDiffer() {
		totals = "a control total differs"
	}
	return fmt.Sprintf("verified against %s at %s: %d of %s matched, %d differ; %s",
		res.Target, at, matched, diag.Count(records, "record", "records"), differ, totals)
}

// verifyEvidenceJSON is docs/cli.md's output of verify-evidence --json.
type verifyEvidenceJSON struct {
	Evidence string `json:"evidence"`
	Holds    bool   `json:"holds"`
	// Verdict says it in a line (report.EvidenceVerdict).
	Verdict     string              `json:"verdict"`
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
			doc.Problems = append(doc.Problems, report.EvidenceProblem{Member: report.TargetMember, Problem: findingLine(f)})
		}
		for _, s := range v.Steps {
			for _, t := range s.Totals {
				if t.Source != t.Target {
					doc.Problems = append(doc.Problems, report.EvidenceProblem{Member: report.TargetMember,
						Problem: fmt.Sprintf("%s: control total %s: the run sent %s, the target holds %s", s.Name, t.What, t.Source, t.Target)})
				}
			}
		}
	}
	doc.Holds, doc.Verdict = len(doc.Problems) == 0, report.EvidenceVerdict(doc.Problems)
	if err := a.verifyEvidenceView(*asJSON).Evidence(doc); err != nil {
		return err
	}
	if !doc.Holds {
		return silent(ExitData)
	}
	return nil
}
