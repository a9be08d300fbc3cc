package executor

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/migrate-tool/migrate/internal/golden"
	"github.com/migrate-tool/migrate/plan"
	"github.com/migrate-tool/migrate/sandbox"
	"github.com/migrate-tool/migrate/transform"
)

// TestDiffPage diffs a plan against a company that already holds parts P1
// and P2 and renders the page: an upsert that changes P1's description to
// Hebrew, leaves P2 alone and creates P3; an insert of P2 again (a
// conflict); an update of P9, which is not there (missing); an order for
// customer C9, which no step creates and the target lacks (an unresolved
// reference); and a row error. The page is compared with its golden file,
// and held to what the sandbox holds.
func TestDiffPage(t *testing.T) {
	t.Parallel()
	env := newSandbox(t, sandbox.Options{})
	seedParts(t, env)
	before := env.sb.Snapshot()

	parts := step("parts", "LOGPART")
	parts.Mode = plan.ModeUpsert
	again := step("again", "LOGPART", "parts")
	fixes := step("fixes", "LOGPART", "parts")
	fixes.Mode = plan.ModeUpdate
	orders := step("orders", "ORDERS", "parts")
	orders.Exists = []*plan.Exists{{Field: "CUSTNAME", Entity: "CUSTOMERS"}}
	p := testPlan(parts, again, fixes, orders)
	p.Name = "חלקים"
	bad := transform.Result{Loc: loc("parts.csv", 5), Errors: []*transform.RowError{{Step: "parts", Loc: loc("parts.csv", 5),
		Cell: "parts.csv:5", Field: "BARCODE", Value: "<b>x</b>", Message: "BARCODE: longer than MaxLength 16"}}}
	recs := &fakeRecords{Results: map[string][]transform.Result{
		"parts": {
			rec("parts", "LOGPART", "P1", 2, map[string]any{"PARTNAME": "P1", "PARTDES": "בורג משושה", "BARCODE": "1"}),
			rec("parts", "LOGPART", "P2", 3, map[string]any{"PARTNAME": "P2", "PARTDES": "part P2", "BARCODE": "2"}),
			rec("parts", "LOGPART", "P3", 4, map[string]any{"PARTNAME": "P3", "PARTDES": "part P3"}),
			bad,
		},
		"again":  {rec("again", "LOGPART", "P2", 2, map[string]any{"PARTNAME": "P2", "PARTDES": "part P2"})},
		"fixes":  {rec("fixes", "LOGPART", "P9", 2, map[string]any{"PARTNAME": "P9", "PARTDES": "nowhere"})},
		"orders": {rec("orders", "ORDERS", "O1", 2, map[string]any{"CUSTNAME": "C9", "DETAILS": "legacy 77"})},
	}}
	o := env.opts(t, p, recs)
	o.Journal = ""
	refs, err := runCheckReferences(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	res, err := runDiff(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	info := ReportInfo{PlanPath: "parts.yaml", Target: "https://erp.example.com/odata/Priority/tabula.ini/acme",
		SystemVersion: "25.1", User: "דנה", ToolVersion: "v1.0.0", Start: time.Date(2026, 11, 3, 9, 0, 0, 0, time.UTC)}
	rep := DiffReportOf(res, info, refs.Unresolved)
	var page bytes.Buffer
	if err := WriteDiffHTML(&page, rep); err != nil {
		t.Fatal(err)
	}
	assertSelfContained(t, page.Bytes())
	golden.Check(t, "testdata/report/diff.html", page.Bytes())

	// What the page says is what the sandbox holds, and nothing was written.
	held := env.entities("LOGPART", "PARTNAME")
	if fmt.Sprint(env.sb.Snapshot()) != fmt.Sprint(before) {
		t.Error("the diff wrote to the target")
	}
	if _, ok := held["P3"]; ok {
		t.Fatal("P3 is on the target: the test proves nothing")
	}
	change := fmt.Sprintf(`<code>PARTDES</code> <span class="old" dir="auto">%s</span> → <mark class="new" dir="auto">בורג משושה</mark>`, held["P1"]["PARTDES"])
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
	res := &DiffResult{Summary: &Summary{Plan: "big"}, Steps: []DiffStep{{Name: "parts", Entity: "LOGPART", Create: DiffShown + 2}}}
	for i := 0; i < DiffShown+2; i++ {
		res.Records = append(res.Records, DiffRecord{Step: "parts", Location: fmt.Sprintf("parts.csv:%d", i+2), Key: fmt.Sprintf("'P%d'", i), Action: DiffCreate})
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
