package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/migrate-tool/migrate/internal/atomicfile"
)

// The pages made before a load (docs/cli.md, Evidence): migrate plan and
// migrate diff keep the page of what they showed beside the journal the
// plan's apply will write, each with a record of the plan and sources it
// was made from, so that report --evidence finds the ones made before the
// run without being told (a saved artefact remembers what it was made
// from: docs/conventions.md, Persistence).

// The kinds of page kept beside a journal.
const (
	PageDryRun = "dry-run"
	PageDiff   = "diff"
)

// KeptPage is a page kept beside a journal and what it was made from.
type KeptPage struct {
	Kind     string            `json:"kind"`
	Made     time.Time         `json:"made"`
	PlanHash string            `json:"plan_hash"`
	Sources  map[string]string `json:"sources"`
	// Page is the page's file, in the same folder as its record.
	Page string `json:"page"`

	dir string
}

// Path is the kept page's file.
func (k KeptPage) Path() string { return filepath.Join(k.dir, k.Page) }

// PagesDir is the folder beside a journal that holds the pages made for
// its plan: JOURNAL.pages.
func PagesDir(journalPath string) string { return journalPath + ".pages" }

// KeepPage keeps page, of kind, beside the journal at journalPath, with a
// record of the plan hash and sources it was made from and when: a new
// pair of files each time (KIND.TIME.html and KIND.TIME.json), mode 0600,
// the page written before its record.
func KeepPage(journalPath, kind string, page []byte, planHash string, sources map[string]string, made time.Time) (string, error) {
	dir := PagesDir(journalPath)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	at := kind + "." + made.UTC().Format("20060102T150405.000000000Z")
	stem := at
	for n := 2; ; n++ { // two made in one tick of a coarse clock
		if _, err := os.Lstat(filepath.Join(dir, stem+".json")); errors.Is(err, fs.ErrNotExist) {
			break
		}
		stem = fmt.Sprintf("%s-%d", at, n)
	}
	rec := KeptPage{Kind: kind, Made: made.UTC(), PlanHash: planHash, Sources: sources, Page: stem + ".html"}
	if rec.Sources == nil {
		rec.Sources = map[string]string{}
	}
	pagePath := filepath.Join(dir, rec.Page)
	if err := atomicfile.WriteFile(pagePath, page, 0o600); err != nil {
		return "", err
	}
	b, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return "", err
	}
	if err := atomicfile.WriteFile(filepath.Join(dir, stem+".json"), append(b, '\n'), 0o600); err != nil {
		return "", err
	}
	return pagePath, nil
}

// FindPage is the latest page of kind kept beside the journal that was
// made before the run began (before) from the plan hash and sources the
// run recorded; nil and why, when none was: never made, or each made from
// another plan, other sources or after the run began.
func FindPage(journalPath, kind, planHash string, sources map[string]string, before time.Time) (*KeptPage, string) {
	dir := PagesDir(journalPath)
	entries, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Sprintf("the pages kept beside the journal cannot be read (%v)", err)
	}
	var kept []KeptPage
	for _, e := range entries {
		if e.IsDir() || !strings.HasPrefix(e.Name(), kind+".") || !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			continue
		}
		var k KeptPage
		if json.Unmarshal(b, &k) != nil || k.Kind != kind || k.Page == "" || filepath.Base(k.Page) != k.Page {
			continue
		}
		if _, err := os.Stat(filepath.Join(dir, k.Page)); err != nil {
			continue
		}
		k.dir = dir
		kept = append(kept, k)
	}
	if len(kept) == 0 {
		return nil, "none was made for this journal's plan (none is kept in " + dir + ")"
	}
	sort.Slice(kept, func(i, j int) bool { return kept[i].Made.After(kept[j].Made) })
	var otherPlan, otherSources, after int
	for i := range kept {
		k := &kept[i]
		switch {
		case k.PlanHash != planHash:
			otherPlan++
		case !maps.Equal(k.Sources, sources):
			otherSources++
		case !k.Made.Before(before):
			after++
		default:
			return k, ""
		}
	}
	var why []string
	if otherPlan > 0 {
		why = append(why, fmt.Sprintf("%d made from another plan", otherPlan))
	}
	if otherSources > 0 {
		why = append(why, fmt.Sprintf("%d from other sources", otherSources))
	}
	if after > 0 {
		why = append(why, fmt.Sprintf("%d after the run began", after))
	}
	return nil, fmt.Sprintf("none of the %d kept in %s was made from the run's plan and sources before it began (%s)", len(kept), dir, strings.Join(why, ", "))
}
