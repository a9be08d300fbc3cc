package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/migrate-tool/migrate/sandbox"
)

// The dry run is one result that each view renders: the text,
// the JSON and the page show the same problems and the same counts of
// records apply would load and would not. A customer with a row error, and
// orders giving customers that are nowhere (C9, and C2, whose row failed),
// would not load (testdata/views); the page must not say "No problems".
func TestPlanViewsAgree(t *testing.T) {
	t.Parallel()
	_, target := startSandbox(t, sandbox.Options{})
	dir := t.TempDir()
	planPath, err := filepath.Abs("testdata/views/plan.yaml")
	if err != nil {
		t.Fatal(err)
	}
	run := runIn(t, map[string]string{"MIGRATE_TARGET": target, "MIGRATE_USER": "demo", "MIGRATE_PASSWORD": "demo"})
	const wantLoad, wantNot = 2, 4 // C1 and O1; C2, O2, O3 and O4

	// A journal of the test's own: plan keeps its page beside it, not
	// beside the plan in testdata.
	jpath := filepath.Join(dir, "plan.journal")
	code, text := run("plan", planPath, "--journal", jpath)
	if code != ExitData {
		t.Fatalf("plan: exit %d, want %d\n%s", code, ExitData, text)
	}
	m := regexp.MustCompile(`apply would load (\d+) of (\d+) records; (\d+) would not`).FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("the text does not count the records that would load:\n%s", text)
	}
	textLoad, _ := strconv.Atoi(m[1])
	textNot, _ := strconv.Atoi(m[3])

	code, doc := run("plan", planPath, "--json", "--journal", jpath)
	if code != ExitData {
		t.Fatalf("plan --json: exit %d\n%s", code, doc)
	}
	var j struct {
		WouldLoad    *int `json:"would_load"`
		WouldNotLoad *int `json:"would_not_load"`
		Errors       []struct{ Location, Message string }
	}
	if err := json.Unmarshal([]byte(doc[:strings.LastIndex(doc, "}")+1]), &j); err != nil {
		t.Fatalf("plan --json: %v\n%s", err, doc)
	}
	if j.WouldLoad == nil || j.WouldNotLoad == nil {
		t.Fatalf("plan --json has no would_load or would_not_load:\n%s", doc)
	}

	page := filepath.Join(dir, "plan.html")
	if code, out := run("plan", planPath, "--html", page, "--journal", jpath); code != ExitData {
		t.Fatalf("plan --html: exit %d\n%s", code, out)
	}
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	html := string(b)
	figure := func(id string) int {
		m := regexp.MustCompile(`<b id="` + id + `">(\d+)</b>`).FindStringSubmatch(html)
		if m == nil {
			t.Fatalf("the page has no figure %q", id)
		}
		n, _ := strconv.Atoi(m[1])
		return n
	}
	pageLoad, pageNot := figure("records"), figure("not-loaded")

	for _, v := range []struct {
		view      string
		load, not int
	}{{"text", textLoad, textNot}, {"JSON", *j.WouldLoad, *j.WouldNotLoad}, {"page", pageLoad, pageNot}} {
		if v.load != wantLoad || v.not != wantNot {
			t.Errorf("the %s says %d would load and %d would not, want %d and %d", v.view, v.load, v.not, wantLoad, wantNot)
		}
	}

	if strings.Contains(html, "No problems") {
		t.Error(`the page says "No problems" while apply would refuse to start`)
	}
	// Every problem the JSON lists, the text and the page show at its cell.
	if len(j.Errors) != 3 { // C2's phone; C9 (given twice) and C2 as references
		t.Errorf("plan --json lists %d problems, want 3: %+v", len(j.Errors), j.Errors)
	}
	for _, e := range j.Errors {
		if !strings.Contains(text, e.Location) {
			t.Errorf("the text does not show %s: %s", e.Location, e.Message)
		}
		if !strings.Contains(html, `<code dir="auto">`+e.Location+`</code>`) {
			t.Errorf("the page does not show %s: %s", e.Location, e.Message)
		}
	}
	// One problem, grouped as the text groups it, with each value at its
	// cell.
	for _, want := range []string{`CUSTNAME … is not in CUSTOMERS on the target`, `CUSTNAME “C9”`, `CUSTNAME “C2”`} {
		if !strings.Contains(html, want) {
			t.Errorf("the page does not show %s", want)
		}
	}
}
