package report

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestFindPage: of the pages kept beside a journal, the latest made before
// the run from its plan and sources is found; otherwise why none is.
func TestFindPage(t *testing.T) {
	t.Parallel()
	jpath := filepath.Join(t.TempDir(), "run.journal")
	src := map[string]string{"a.csv": "aa"}
	began := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	if k, why := FindPage(jpath, PageDryRun, "p1", src, began); k != nil || !strings.Contains(why, "none was made") {
		t.Fatalf("nothing kept: %v, %q", k, why)
	}
	keep := func(kind, plan string, sources map[string]string, at time.Time, page string) {
		t.Helper()
		if _, err := KeepPage(jpath, kind, []byte(page), plan, sources, at); err != nil {
			t.Fatal(err)
		}
	}
	keep(PageDryRun, "p1", src, began.Add(-3*time.Hour), "old")
	keep(PageDryRun, "p1", src, began.Add(-time.Hour), "latest")
	keep(PageDryRun, "p0", src, began.Add(-time.Minute), "another plan")
	keep(PageDryRun, "p1", map[string]string{"a.csv": "bb"}, began.Add(-time.Minute), "other sources")
	keep(PageDryRun, "p1", src, began.Add(time.Minute), "after")
	keep(PageDiff, "p0", src, began.Add(-time.Minute), "a diff of another plan")
	for _, c := range []struct {
		kind, plan string
		page, why  string
	}{
		{PageDryRun, "p1", "latest", ""},
		{PageDryRun, "p2", "", "none of the 5 kept in " + jpath + ".pages was made from the run's plan and sources before it began (5 made from another plan)"},
		{PageDiff, "p1", "", "(1 made from another plan)"},
	} {
		k, why := FindPage(jpath, c.kind, c.plan, src, began)
		if c.page == "" {
			if k != nil || !strings.Contains(why, c.why) {
				t.Errorf("%s of %s: %v, %q; want none, %q", c.kind, c.plan, k, why, c.why)
			}
			continue
		}
		if k == nil {
			t.Fatalf("%s of %s: none (%s)", c.kind, c.plan, why)
		}
		b, err := os.ReadFile(k.Path())
		if err != nil || string(b) != c.page {
			t.Errorf("%s of %s: %q (%v), want %q", c.kind, c.plan, b, err, c.page)
		}
		if fi, err := os.Stat(k.Path()); runtime.GOOS != "windows" && (err != nil || fi.Mode().Perm() != 0o600) {
			t.Errorf("the kept page's mode: %v (%v)", fi.Mode(), err)
		}
	}
}
