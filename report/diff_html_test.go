package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/migrate-tool/migrate/executor"
)

// TestDiffPage renders the page of a diff (testdata/diff-input.json, what
// the engine's diff found: executor's TestDiffOfEveryAction holds the file
// to what its diff finds) of a plan
// against a company that already holds parts P1 and P2: an upsert that
// changes P1's description to Hebrew, leaves P2 alone and creates P3; an
// insert of P2 again (a conflict); an update of P9, which is not there
// (missing); an order for customer C9, which no step creates and the
// target lacks (an unresolved reference); and a row error. The page is
// compared with its golden file.
func TestDiffPage(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("testdata/diff-input.json")
	if err != nil {
		t.Fatal(err)
	}
	var in struct {
		Result     *executor.DiffResult
		Unresolved []executor.RecordError
	}
	if err := json.Unmarshal(data, &in); err != nil {
		t.Fatal(err)
	}
	res := in.Result
	info := ReportInfo{PlanPath: "parts.yaml", Target: "https://erp.example.com/odata/Priority/tabula.ini/acme",
		SystemVersion: "25.1", User: "דנה", ToolVersion: "v1.0.0", Start: time.Date(2026, 11, 3, 9, 0, 0, 0, time.UTC)}
	rep := DiffReportOf(res, info, in.Unresolved)
	var page bytes.Buffer
	if err := WriteDiffHTML(&page, rep); err != nil {
		t.Fatal(err)
	}
	checkPage(t, "testdata/diff.html", page.Bytes())

	var old string // P1's description as the target holds it
	for _, r := range res.Records {
		if r.Key == "'P1'" {
			old = shownValue(r.Fields["PARTDES"].Old)
		}
	}
	if old == "" {
		t.Fatal("the diff changes no description of P1: the test proves nothing")
	}
	change := fmt.Sprintf(`<code>PARTDES</code> <span class="old" dir="auto">%s</span> → <mark class="new" dir="auto">בורג משושה</mark>`, old)
	for _, want := range []string{
		change,
		`<tr data-step="parts"><td dir="auto">parts</td><td>LOGPART</td><td class="n">1</td><td class="n">1</td><td class="n">1</td><td class="n">0</td><td class="n">0</td></tr>`,
		`<tr data-step="again"><td dir="auto">again</td><td>LOGPART</td><td class="n">0</td><td class="n">0</td><td class="n">0</td><td class="n bad">1</td><td class="n">0</td></tr>`,
		`<tr data-step="fixes"><td dir="auto">fixes</td><td>LOGPART</td><td class="n">0</td><td class="n">0</td><td class="n">0</td><td class="n">0</td><td class="n bad">1</td></tr>`,
		`<code dir="auto">orders.csv:2</code></td><td dir="auto">orders</td><td>CUSTNAME</td><td dir="auto">C9</td>`,
		`<td class="cells"><code dir="auto">parts.csv:5</code> <span dir="auto">BARCODE “&lt;b&gt;x&lt;/b&gt;”</span>`,
		`<dt>User</dt><dd dir="auto">דנה</dd>`,
		`<dt>Company</dt><dd dir="auto">acme</dd>`,
	} {
		if !strings.Contains(page.String(), want) {
			t.Errorf("the page lacks %s", want)
		}
	}
	// Conflicts first, then missing, updates, creates; unchanged P2 is
	// counted, not listed.
	var order []string
	for _, m := range regexp.MustCompile(`<table id="diff-(\w+)"`).FindAllStringSubmatch(page.String(), -1) {
		order = append(order, m[1])
	}
	if got := strings.Join(order, " "); got != "conflict missing update create" {
		t.Errorf("the groups are in the order %q", got)
	}
	if strings.Contains(page.String(), `data-action="unchanged"`) {
		t.Error("the page lists an unchanged record")
	}
}

// TestDiffPageShowsTheFirstRecords: a group longer than DiffShown lists
// the first ones and says where the rest are.
func TestDiffPageShowsTheFirstRecords(t *testing.T) {
	t.Parallel()
	res := &executor.DiffResult{Summary: &executor.Summary{Plan: "big"}, Steps: []executor.DiffStep{{Name: "parts", Entity: "LOGPART", Create: DiffShown + 2}}}
	for i := 0; i < DiffShown+2; i++ {
		res.Records = append(res.Records, executor.DiffRecord{Step: "parts", Location: fmt.Sprintf("parts.csv:%d", i+2), Key: fmt.Sprintf("'P%d'", i), Action: executor.DiffCreate})
	}
	rep := DiffReportOf(res, ReportInfo{PlanPath: "big.yaml"}, nil)
	if len(rep.Groups) != 1 || len(rep.Groups[0].Records) != DiffShown || rep.Groups[0].More != 2 || !rep.Clean() {
		t.Fatalf("groups %+v", rep.Groups)
	}
	var page bytes.Buffer
	if err := WriteDiffHTML(&page, rep); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(page.String(), "and 2 more: <code>migrate diff big.yaml --out diff.xlsx</code> lists every record.") {
		t.Error("the page does not say where the rest are")
	}
	if strings.Contains(page.String(), fmt.Sprintf("parts.csv:%d<", DiffShown+2)) {
		t.Error("the page lists a record past DiffShown")
	}
}

// TestShownValue: the page shows text as a customer reads it, and tells an
// empty value from an absent mark.
func TestShownValue(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ raw, want string }{
		{`"Galil"`, "Galil"},
		{`"גליל הנדסה בע\"מ"`, `גליל הנדסה בע"מ`},
		{`""`, "(empty)"},
		{`null`, "(empty)"},
		{``, "(empty)"},
		{`12.50`, "12.50"},
		{`true`, "true"},
		{`"<b>x</b>"`, "<b>x</b>"},
	} {
		if got := shownValue(json.RawMessage(c.raw)); got != c.want {
			t.Errorf("shownValue(%s) = %q, want %q", c.raw, got, c.want)
		}
	}
}
