package report

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/migrate-tool/migrate/internal/atomicfile"
	"github.com/migrate-tool/migrate/internal/diag"
	"github.com/migrate-tool/migrate/journal"
)

// EvidenceFormat names the layout of an evidence file's manifest.
const EvidenceFormat = "migrate-evidence/1"

// The members an evidence file holds besides the documents given to it.
const (
	EvidenceManifest = "manifest.json"
	EvidenceJournal  = "run.journal"
	EvidenceCreated  = "created-keys.csv"
	EvidenceReport   = "run-report.html"
	EvidenceFailed   = "failed-rows.xlsx"
)

// Manifest is manifest.json of an evidence file (docs/cli.md,
// Evidence): what the run was made from, as the journal recorded
// it at run time, the journal's chain, and each member with its SHA-256.
type Manifest struct {
	Format      string    `json:"format"`
	ToolVersion string    `json:"tool_version"`
	Made        time.Time `json:"made"`
	Plan        string    `json:"plan"`
	// PlanFile is the plan's member; PlanHash its SHA-256 as the journal
	// recorded it (the one a resume accepted, if any).
	PlanFile string `json:"plan_file"`
	PlanHash string `json:"plan_hash"`
	// Sources are the source files as the plan names them, each with its
	// SHA-256 as the journal recorded it when the run read it.
	Sources map[string]string `json:"sources"`
	Target  string            `json:"target"`
	Journal ManifestJournal   `json:"journal"`
	// Verified says whether what the run committed was read back from the
	// target when the evidence was made, and what was found; "not verified:
	// ..." otherwise.
	Verified string `json:"verified"`
	// NotIncluded says what the evidence could hold and does not, and
	// how to include it (the pages made before the load, not given).
	NotIncluded []string         `json:"not_included,omitempty"`
	Members     []ManifestMember `json:"members"`
}

// ManifestJournal is the journal as the evidence recorded it.
type ManifestJournal struct {
	Member  string `json:"member"`
	Lines   int    `json:"lines"`
	Chained bool   `json:"chained"`
	// ChainHead is the SHA-256 of the journal's last line: with the chain,
	// it pins every line before it.
	ChainHead string `json:"chain_head"`
}

// ManifestMember is one file of the evidence.
type ManifestMember struct {
	Name   string `json:"name"`
	What   string `json:"what"`
	SHA256 string `json:"sha256"`
	Bytes  int64  `json:"bytes"`
}

// EvidenceMember is a file to put into an evidence file.
type EvidenceMember struct {
	Name, What string
	Data       []byte
}

// NewManifest is the manifest of the journal at jpath whose bytes are
// data: the plan's and sources' hashes its header recorded (as accepted by
// a resume), its chain. A journal whose chain is broken is refused:
// evidence of it would prove nothing.
func NewManifest(jpath string, data []byte) (*Manifest, error) {
	st, err := journal.Replay(bytes.NewReader(data))
	if err != nil {
		var ce *journal.CorruptError
		if errors.As(err, &ce) {
			ce.Path = jpath
		}
		return nil, err
	}
	c, err := journal.CheckChain(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	if len(c.Breaks) > 0 {
		return nil, &ChainError{Journal: jpath, Breaks: c.Breaks}
	}
	h := st.Header
	return &Manifest{Format: EvidenceFormat, Plan: h.Plan, PlanHash: h.PlanHash,
		Sources: maps.Clone(h.Sources), Target: h.Target,
		Journal: ManifestJournal{Member: EvidenceJournal, Lines: c.Lines, Chained: c.Chained, ChainHead: c.Head}}, nil
}

// ChainError is a journal whose hash chain does not hold: each break names
// its line.
type ChainError struct {
	Journal string
	Breaks  []journal.Break
}

func (e *ChainError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: the journal was changed after it was written:", e.Journal)
	for _, br := range e.Breaks {
		fmt.Fprintf(&b, "\n  %s:%d: %s", e.Journal, br.Line, br.Problem)
	}
	return b.String()
}

// WriteEvidence writes the evidence file: manifest.json first, then each
// member, stored with its hash in the manifest; members' order is kept.
func WriteEvidence(path string, m *Manifest, members []EvidenceMember) error {
	m.Members = m.Members[:0]
	for _, mb := range members {
		sum := sha256.Sum256(mb.Data)
		m.Members = append(m.Members, ManifestMember{Name: mb.Name, What: mb.What, SHA256: hex.EncodeToString(sum[:]), Bytes: int64(len(mb.Data))})
	}
	manifest, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	// The file holds the customer's rows: the journal's mode.
	return atomicfile.Write(path, 0o600, func(w io.Writer) error {
		zw := zip.NewWriter(w)
		put := func(name string, data []byte) error {
			f, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Deflate, Modified: m.Made})
			if err != nil {
				return err
			}
			_, err = f.Write(data)
			return err
		}
		if err := put(EvidenceManifest, append(manifest, '\n')); err != nil {
			return err
		}
		for _, mb := range members {
			if err := put(mb.Name, mb.Data); err != nil {
				return err
			}
		}
		return zw.Close()
	})
}

// Evidence is an evidence file read back.
type Evidence struct {
	Path     string
	Manifest Manifest
	// Files are the members by name, manifest.json aside.
	Files map[string][]byte
	// Order is the members' names in the file.
	Order []string
}

// EvidenceError is a file that is no evidence file: not a zip, no
// manifest, a manifest that cannot be read.
type EvidenceError struct {
	Path, Reason string
}

func (e *EvidenceError) Error() string {
	return fmt.Sprintf("%s: %s: give a file written by migrate report --evidence", e.Path, e.Reason)
}

// ReadEvidence reads an evidence file whole.
func ReadEvidence(path string) (*Evidence, error) {
	zr, err := zip.OpenReader(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
		return nil, &EvidenceError{Path: path, Reason: "not a zip file (" + err.Error() + ")"}
	}
	defer zr.Close()
	ev := &Evidence{Path: path, Files: map[string][]byte{}}
	var manifest []byte
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			return nil, &EvidenceError{Path: path, Reason: fmt.Sprintf("member %s cannot be read (%v)", f.Name, err)}
		}
		data, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			return nil, &EvidenceError{Path: path, Reason: fmt.Sprintf("member %s cannot be read (%v)", f.Name, err)}
		}
		if f.Name == EvidenceManifest {
			manifest = data
			continue
		}
		if _, dup := ev.Files[f.Name]; dup {
			return nil, &EvidenceError{Path: path, Reason: fmt.Sprintf("member %s is there twice", f.Name)}
		}
		ev.Files[f.Name] = data
		ev.Order = append(ev.Order, f.Name)
	}
	if manifest == nil {
		return nil, &EvidenceError{Path: path, Reason: "no " + EvidenceManifest}
	}
	if err := json.Unmarshal(manifest, &ev.Manifest); err != nil {
		return nil, &EvidenceError{Path: path, Reason: EvidenceManifest + " cannot be read (" + err.Error() + ")"}
	}
	if ev.Manifest.Format != EvidenceFormat {
		return nil, &EvidenceError{Path: path, Reason: fmt.Sprintf("%s says format %q, not %q", EvidenceManifest, ev.Manifest.Format, EvidenceFormat)}
	}
	return ev, nil
}

// EvidenceProblem is one thing of an evidence file that does not hold:
// the member it is about, the line when it is one line's, and what.
// TargetMember is the member a problem of the target is filed under: a
// difference the company holds now, not a change of the file.
const TargetMember = "target"

type EvidenceProblem struct {
	Member  string `json:"member"`
	Line    int    `json:"line,omitempty"`
	Problem string `json:"problem"`
}

// EvidenceVerdict says in a line what verify-evidence found (problems):
// that the evidence holds; that the file holds but the company differs
// from it now (every problem the target's: the evidence is not what
// changed); or that the evidence does not hold, its own problems and the
// target's counted apart.
func EvidenceVerdict(problems []EvidenceProblem) string {
	target := 0
	for _, p := range problems {
		if p.Member == TargetMember {
			target++
		}
	}
	own := len(problems) - target
	switch {
	case len(problems) == 0:
		return "the evidence holds"
	case own == 0:
		return fmt.Sprintf("the evidence file holds, but the target differs from it now: %s of the target", diag.Count(target, "problem", "problems"))
	case target == 0:
		return fmt.Sprintf("the evidence does not hold: %s of the file", diag.Count(own, "problem", "problems"))
	}
	return fmt.Sprintf("the evidence does not hold: %s of the file, %d of the target", diag.Count(own, "problem", "problems"), target)
}

func (p EvidenceProblem) String() string {
	if p.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", p.Member, p.Line, p.Problem)
	}
	return p.Member + ": " + p.Problem
}

// EvidenceCheck is what Check found.
type EvidenceCheck struct {
	Members  int            `json:"members"`
	Chain    *journal.Chain `json:"chain"`
	Created  int            `json:"created_rows"`
	Problems []EvidenceProblem
}

// Check re-checks the evidence against itself: every member against the
// manifest's hash (and none unlisted), the journal's chain and its head
// against the manifest's, the plan's and sources' hashes against what the
// journal recorded, and the created keys against those the journal gives.
// dir is a folder for the journal's copy (Journal) and what is derived
// from it.
func (ev *Evidence) Check(dir string) (*EvidenceCheck, error) {
	m := &ev.Manifest
	res := &EvidenceCheck{Members: len(m.Members)}
	add := func(member string, line int, format string, args ...any) {
		res.Problems = append(res.Problems, EvidenceProblem{Member: member, Line: line, Problem: fmt.Sprintf(format, args...)})
	}
	listed := map[string]bool{}
	for _, mb := range m.Members {
		listed[mb.Name] = true
		data, ok := ev.Files[mb.Name]
		if !ok {
			add(mb.Name, 0, "missing: the manifest lists it (%s)", mb.What)
			continue
		}
		sum := sha256.Sum256(data)
		if got := hex.EncodeToString(sum[:]); got != mb.SHA256 {
			add(mb.Name, 0, "changed after the evidence was made: its SHA-256 is %s, the manifest says %s", got, mb.SHA256)
		}
	}
	for _, name := range ev.Order {
		if !listed[name] {
			add(name, 0, "not listed in the manifest: added after the evidence was made")
		}
	}
	jname := m.Journal.Member
	data, ok := ev.Files[jname]
	if !ok {
		if !listed[jname] {
			add(jname, 0, "missing: the manifest names it as the journal")
		}
		return res, nil
	}
	jpath := filepath.Join(dir, filepath.Base(jname))
	if err := os.WriteFile(jpath, data, 0o600); err != nil {
		return nil, err
	}
	c, err := journal.CheckChain(bytes.NewReader(data))
	if err != nil {
		add(jname, 1, "not a journal: %v", err)
		return res, nil
	}
	res.Chain = c
	for _, b := range c.Breaks {
		add(jname, b.Line, "%s", b.Problem)
	}
	switch {
	case c.Chained != m.Journal.Chained:
		add(jname, 0, "chained %v, the manifest says %v", c.Chained, m.Journal.Chained)
	case c.Lines != m.Journal.Lines:
		add(jname, c.Lines, "has %d lines, the manifest says %d: lines were added or cut off", c.Lines, m.Journal.Lines)
	case c.Head != m.Journal.ChainHead:
		add(jname, c.Lines, "its last line is not the one the evidence recorded (its SHA-256 is %s, the manifest says %s)", c.Head, m.Journal.ChainHead)
	}
	st, err := journal.Load(jpath)
	if err != nil {
		add(jname, 0, "cannot be read: %v", err)
		return res, nil
	}
	if st.Header.PlanHash != m.PlanHash {
		add(EvidenceManifest, 0, "plan_hash %s, the journal recorded %s", m.PlanHash, st.Header.PlanHash)
	}
	if !maps.Equal(st.Header.Sources, m.Sources) && (len(st.Header.Sources) > 0 || len(m.Sources) > 0) {
		add(EvidenceManifest, 0, "the sources' hashes are not those the journal recorded")
	}
	plan, ok := ev.Files[m.PlanFile]
	switch {
	case m.PlanFile == "":
		add(EvidenceManifest, 0, "names no plan member")
	case !ok && !listed[m.PlanFile]:
		add(m.PlanFile, 0, "missing: the manifest names it as the plan")
	case ok:
		sum := sha256.Sum256(plan)
		if got := hex.EncodeToString(sum[:]); got != st.Header.PlanHash {
			add(m.PlanFile, 0, "its SHA-256 is %s, the journal recorded %s: not the plan the run was made from", got, st.Header.PlanHash)
		}
	}
	if want, ok := ev.Files[EvidenceCreated]; ok {
		out := filepath.Join(dir, EvidenceCreated)
		stats, err := CreatedKeys(jpath, out)
		if err != nil {
			return nil, err
		}
		res.Created = stats.Rows
		got, err := os.ReadFile(out)
		if err != nil {
			return nil, err
		}
		if line := firstDifferentLine(want, got); line > 0 {
			add(EvidenceCreated, line, "not what the journal gives: a key or row was changed, added or removed")
		}
	}
	return res, nil
}

// firstDifferentLine is the first line (1-based) where a and b differ, 0
// when they are the same.
func firstDifferentLine(a, b []byte) int {
	if bytes.Equal(a, b) {
		return 0
	}
	la, lb := bytes.Split(a, []byte("\n")), bytes.Split(b, []byte("\n"))
	for i := range max(len(la), len(lb)) {
		if i >= len(la) || i >= len(lb) || !bytes.Equal(la[i], lb[i]) {
			return i + 1
		}
	}
	return 1
}
