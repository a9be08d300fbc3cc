package bench

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/sandbox"
	"github.com/migrate-tool/migrate/source/sourcetest"
)

// The target for a template company: copying rows with their sub-form from
// one company to another uses no more than 1.05 × (the write calls +
// ⌈rows/2,000⌉ read calls), and memory flat in the number of rows. The
// template company is loaded first (in this process); the copy is the real
// command in a child process, so its peak resident set is the whole copy's.

// familiesSeed loads families with their malfunction lines
// (FAMILYMALF_SUBFORM) from two files into the template company;
// familiesCopy copies them, lines and all, from the template connection.
const (
	familiesSeed = "seed-families.yaml"
	familiesCopy = "copy-families.yaml"
)

// malfOf is how many malfunction lines family i has: 0, 1 or 2.
func malfOf(i int) int { return i % 3 }

// writeFamilies writes n families and their lines as CSV files into dir,
// with the plan that loads them (seed.yaml) and the plan that copies them
// from a template company (copy.yaml).
func writeFamilies(tb testing.TB, dir string, n int) {
	var lines []int // family of each line
	for i := range n {
		for range malfOf(i) {
			lines = append(lines, i)
		}
	}
	name := func(i int) string { return fmt.Sprintf("F%07d", i) }
	if err := sourcetest.WriteCSV(filepath.Join(dir, "families.csv"), n, []string{"Name", "Desc"}, func(r, c int) string {
		return []string{name(r), fmt.Sprintf("Family %d", r)}[c]
	}); err != nil {
		tb.Fatal(err)
	}
	if err := sourcetest.WriteCSV(filepath.Join(dir, "malf.csv"), len(lines), []string{"Name", "Code", "Desc"}, func(r, c int) string {
		return []string{name(lines[r]), fmt.Sprintf("M%d", r%7), fmt.Sprintf("fault %d", r)}[c]
	}); err != nil {
		tb.Fatal(err)
	}
	for f, plan := range map[string]string{"seed.yaml": familiesSeed, "copy.yaml": familiesCopy} {
		if err := copyPlan(plan, filepath.Join(dir, f)); err != nil {
			tb.Fatal(err)
		}
	}
}

// copyCompanies loads n families with their lines into a template
// company, copies them with `migrate apply` in a child process into an
// empty one, checks the copy, and returns the child's run and the calls
// each company answered.
func copyCompanies(tb testing.TB, n int) (childRun, sandbox.Stats, sandbox.Stats) {
	dir := tb.TempDir()
	writeFamilies(tb, dir, n)
	ctx := context.Background()
	tmpl := newTarget(tb, sandbox.Options{}, odata.Config{})
	applyRun(ctx, tb, tmpl, filepath.Join(dir, "seed.yaml"), filepath.Join(dir, "seed.journal"), batched)
	dest := newTarget(tb, sandbox.Options{}, odata.Config{})
	t0, d0 := tmpl.sb.Stats(), dest.sb.Stats()
	env := []string{
		"MIGRATE_TARGET=" + dest.srv.URL + sandbox.BasePath, "MIGRATE_AUTH=basic", "MIGRATE_USER=demo", "MIGRATE_PASSWORD=demo",
		"MIGRATE_TEMPLATE_TARGET=" + tmpl.srv.URL + sandbox.BasePath, "MIGRATE_TEMPLATE_AUTH=basic",
		"MIGRATE_TEMPLATE_USER=demo", "MIGRATE_TEMPLATE_PASSWORD=demo",
	}
	r, err := runChild([]string{"apply", "--journal", filepath.Join(dir, "copy.journal"), filepath.Join(dir, "copy.yaml")}, env)
	if err != nil {
		tb.Fatal(err)
	}
	if r.code != 0 {
		tb.Fatalf("copy: exit %d\n%s", r.code, r.out)
	}
	t1, d1 := tmpl.sb.Stats(), dest.sb.Stats()
	got := dest.sb.Snapshot()["FAMILY_LOG"]
	want := tmpl.sb.Snapshot()["FAMILY_LOG"]
	if len(got) != n || len(want) != n {
		tb.Fatalf("copied %d families of %d (want %d)", len(got), len(want), n)
	}
	for i := range got {
		g, w := fmt.Sprint(got[i]["FAMILYNAME"], got[i]["FAMILYDESC"], got[i]["FAMILYMALF_SUBFORM"]), fmt.Sprint(want[i]["FAMILYNAME"], want[i]["FAMILYDESC"], want[i]["FAMILYMALF_SUBFORM"])
		if g != w {
			tb.Fatalf("family %d: copied %s, template holds %s", i, g, w)
		}
	}
	return r, delta(t1, t0), delta(d1, d0)
}

// loadCSVChild loads the n families from CSV files with `migrate apply`
// in a child process, into an empty company.
func loadCSVChild(tb testing.TB, n int) childRun {
	dir := tb.TempDir()
	writeFamilies(tb, dir, n)
	dest := newTarget(tb, sandbox.Options{}, odata.Config{})
	env := []string{"MIGRATE_TARGET=" + dest.srv.URL + sandbox.BasePath, "MIGRATE_AUTH=basic", "MIGRATE_USER=demo", "MIGRATE_PASSWORD=demo"}
	r, err := runChild([]string{"apply", "--journal", filepath.Join(dir, "seed.journal"), filepath.Join(dir, "seed.yaml")}, env)
	if err != nil || r.code != 0 {
		tb.Fatalf("load: %v, exit %d\n%s", err, r.code, r.out)
	}
	return r
}

func delta(a, b sandbox.Stats) sandbox.Stats {
	return sandbox.Stats{Calls: a.Calls - b.Calls, Batches: a.Batches - b.Batches, Subrequests: a.Subrequests - b.Subrequests}
}

// TestCopyCompaniesSmall is the harness's correctness check: a copy of
// 2,500 families (a full page and a short one) is exact, reads the
// template in four pages (a first page of 50 rows: the metadata cannot
// bound the size of a row with its sub-form; a full one; a short one; the
// empty one that ends the read: a short page is no end) and its metadata,
// and sends no more batches than
// the operations need (100 a batch, a family kept with its lines).
func TestCopyCompaniesSmall(t *testing.T) {
	r, tmpl, dest := copyCompanies(t, 2500)
	if tmpl.Calls != 5 {
		t.Errorf("the template answered %d calls, want 5 ($metadata and four pages)\n%s", tmpl.Calls, r.out)
	}
	ops := 2500 + 2499 // families and lines
	if max := int64(math.Ceil(1.05 * float64(ops) / 100)); dest.Batches > max {
		t.Errorf("%d write calls for %d operations, more than %d", dest.Batches, ops, max)
	}
}

// copyBound is 1.05 × (the write calls + ⌈rows/2,000⌉ read calls).
func copyBound(writes int64, rows int) float64 {
	return 1.05 * (float64(writes) + math.Ceil(float64(rows)/2000))
}

// BenchmarkCopyCompanies reports the copy's calls against the bound, its
// peak resident set and its time, at 10k and 100k families; csv-peak-MB
// is the same load from the CSV files the template was loaded from, the
// baseline of what apply itself keeps per record.
func BenchmarkCopyCompanies(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("%dk", n/1000), func(b *testing.B) {
			if testing.Short() && n > 10_000 {
				b.Skip("-short: 100k skipped")
			}
			var r, base childRun
			var tmpl, dest sandbox.Stats
			for i := 0; i < b.N; i++ {
				r, tmpl, dest = copyCompanies(b, n)
				base = loadCSVChild(b, n)
			}
			b.ReportMetric(float64(base.hwm)/(1<<20), "csv-peak-MB")
			b.ReportMetric(float64(tmpl.Calls+dest.Calls), "calls")
			b.ReportMetric(float64(tmpl.Calls), "read-calls")
			b.ReportMetric(float64(dest.Batches), "write-calls")
			b.ReportMetric(copyBound(dest.Batches, n), "bound-calls")
			b.ReportMetric(float64(r.hwm)/(1<<20), "peak-MB")
			b.ReportMetric(r.secs, "s")
			b.ReportMetric(r.cpu, "cpu-s")
		})
	}
}

// BenchmarkCopyBigRows copies customers whose text is 100 KB each under
// --memory 64MB: the pages of the template's answers and the
// batches sent follow the budget (read.Query.PageBytes, the packer's
// maxBytes), and the journal keeps no more than 1 KB of a source cell, so
// the copy's peak stays near the budget however large a row is. 1,000
// customers: 100 MB of text.
func BenchmarkCopyBigRows(b *testing.B) {
	const n = 1000
	for i := 0; i < b.N; i++ {
		dir := b.TempDir()
		ctx := context.Background()
		tmpl := newTarget(b, sandbox.Options{}, odata.Config{})
		text := strings.Repeat("A long note of the customer's. ", 100_000/31)
		for c := range n {
			body := fmt.Sprintf(`{"CUSTNAME":"C%05d","CUSTDES":"Customer %d","CUSTOMERSTEXT_SUBFORM":{"TEXT":%q}}`, c, c, text)
			if err := tmpl.client.Post(ctx, "CUSTOMERS", []byte(body), nil); err != nil {
				b.Fatal(err)
			}
		}
		dest := newTarget(b, sandbox.Options{}, odata.Config{})
		if err := copyPlan("copy-customers.yaml", filepath.Join(dir, "copy.yaml")); err != nil {
			b.Fatal(err)
		}
		env := []string{
			"MIGRATE_TARGET=" + dest.srv.URL + sandbox.BasePath, "MIGRATE_AUTH=basic", "MIGRATE_USER=demo", "MIGRATE_PASSWORD=demo",
			"MIGRATE_TEMPLATE_TARGET=" + tmpl.srv.URL + sandbox.BasePath, "MIGRATE_TEMPLATE_AUTH=basic",
			"MIGRATE_TEMPLATE_USER=demo", "MIGRATE_TEMPLATE_PASSWORD=demo",
		}
		r, err := runChild([]string{"apply", "--memory", "64MB", "--journal", filepath.Join(dir, "copy.journal"), filepath.Join(dir, "copy.yaml")}, env)
		if err != nil || r.code != 0 {
			b.Fatalf("copy: %v, exit %d\n%s", err, r.code, r.out)
		}
		if got := len(dest.sb.Snapshot()["CUSTOMERS"]); got != n {
			b.Fatalf("copied %d customers of %d", got, n)
		}
		b.ReportMetric(float64(r.hwm)/(1<<20), "peak-MB")
		b.ReportMetric(r.secs, "s")
		if fi, err := os.Stat(filepath.Join(dir, "copy.journal")); err == nil {
			b.ReportMetric(float64(fi.Size())/(1<<20), "journal-MB")
		}
	}
}
