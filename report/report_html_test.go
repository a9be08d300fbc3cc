package report

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/migrate-tool/migrate/executor"
	"github.com/migrate-tool/migrate/executor/executortest"
	"github.com/migrate-tool/migrate/executor/fixture"
	"github.com/migrate-tool/migrate/internal/golden"
	"github.com/migrate-tool/migrate/journal"
	"github.com/migrate-tool/migrate/sandbox"
	"github.com/migrate-tool/migrate/undo"
)

// throttledLoad loads six orders of two lines through the real client
// into a sandbox that allows three calls a minute, one batch at a time:
// the server answers 429 and the client waits as told.
func throttledLoad(t *testing.T) (*executortest.Target, executortest.Run) {
	t.Helper()
	tg := executortest.NewTarget(t, sandbox.Options{CallsPerMinute: 3})
	var rows []string
	for i := 1; i <= 6; i++ {
		rows = append(rows, fmt.Sprintf("O%d,C1,P1,1", i), fmt.Sprintf("O%d,C1,P%d,1", i, i%2+2))
	}
	o := tg.Prepare(t, ordersFiles(3, false, rows...))
	o.Concurrency, o.BatchSize, o.User = 1, 3, "תומר"
	o.Complete(t, "apply")
	return tg, o
}

// TestRunReportOfThrottledLoad: the report's figures are what the sandbox
// saw: every call and every 429 it answered, the entities and lines it
// holds; the chart marks the 429s and the waits; the page fetches nothing.
func TestRunReportOfThrottledLoad(t *testing.T) {
	t.Parallel()
	tg, o := throttledLoad(t)
	rep := runReport(t, o.Journal)
	stats := tg.Sandbox.Stats()
	if stats.Throttled == 0 {
		t.Fatalf("the sandbox throttled nothing (%+v): the test proves nothing", stats)
	}
	// Every call the client made: the batches admitted and those answered 429.
	calls, throttled := int(stats.Batches+stats.Throttled), int(stats.Throttled)
	if rep.Requests != calls || rep.Throttled != throttled {
		t.Errorf("report: %d calls, %d answered 429; the sandbox saw %d and %d (%+v)", rep.Requests, rep.Throttled, calls, throttled, stats)
	}
	held := heldTransactions(tg)
	if rep.Transactions != held {
		t.Errorf("report: %d API transactions; the sandbox holds %d entities and lines", rep.Transactions, held)
	}
	if rep.Total.Committed != 10 || rep.Total.Children != 12 || rep.Total.Failed != 0 || !rep.Complete {
		t.Errorf("totals %+v, complete %v; want 10 committed with 12 lines", rep.Total, rep.Complete)
	}
	if rep.User != "תומר" || rep.Company() != "demo" || !rep.End.After(rep.Start) {
		t.Errorf("user %q, company %q, %v to %v", rep.User, rep.Company(), rep.Start, rep.End)
	}
	ch := rep.Chart
	if ch == nil || ch.Calls != calls || ch.Throttled != throttled || len(ch.Throttles) == 0 || len(ch.Pauses) == 0 {
		t.Fatalf("chart %+v: want every call, the 429s marked and the waits shaded", ch)
	}
	page := pageOf(t, rep)
	assertSelfContained(t, page)
	for _, want := range []string{`data-step="orders"`, `<b id="committed">10</b>`, `<b id="transactions">` + fmt.Sprint(held) + `</b>`, `class="t429"`, `dir="auto">תומר`} {
		if !bytes.Contains(page, []byte(want)) {
			t.Errorf("the page lacks %s", want)
		}
	}
}

// styleMarker stands in a page's golden file for the style sheet, which
// testdata/style.html holds once for every page.
const styleMarker = "<style><!-- PageStyle(): testdata/style.html --></style>\n"

// TestPageStyle holds the pages' style sheet to its golden file.
func TestPageStyle(t *testing.T) {
	t.Parallel()
	golden.Check(t, "testdata/style.html", []byte(PageStyle()))
}

// checkPage fails unless page is self-contained, holds the pages' style
// sheet (PageStyle) once and, that sheet aside, is the golden file at
// path.
func checkPage(t *testing.T, path string, page []byte) {
	t.Helper()
	assertSelfContained(t, page)
	style := []byte(PageStyle())
	if n := bytes.Count(page, style); n != 1 {
		t.Errorf("the page holds the style sheet (PageStyle) %d times, want once", n)
	}
	golden.Check(t, path, bytes.Replace(page, style, []byte(styleMarker), 1))
}

// assertSelfContained fails when a page could fetch anything: no URL, no
// src or href but to a fragment, no CSS import or url().
func assertSelfContained(t *testing.T, page []byte) {
	t.Helper()
	for _, re := range []string{`(?i)https?:`, `(?i)\bsrc\s*=`, `(?i)href\s*=\s*"[^#]`, `(?i)url\(`, `(?i)@import`, `(?i)<(link|iframe|object|embed|img)\b`} {
		if m := regexp.MustCompile(re).Find(page); m != nil {
			t.Errorf("the page could fetch something: %q matches %s", m, re)
		}
	}
}

// TestCreatedKeysMapEveryOrder: the created-keys file gives every order the
// ORDNAME the sandbox assigned, on each of its rows, and each line's row
// the KLINE the sandbox holds for that line.
func TestCreatedKeysMapEveryOrder(t *testing.T) {
	t.Parallel()
	tg, o := throttledLoad(t)
	st, err := CreatedKeys(o.Journal, filepath.Join(t.TempDir(), "created.xlsx"))
	// 3 parts, 1 customer, 6 orders of 2 rows each (a row a line).
	if err != nil || st.Records != 10 || st.Rows != 3+1+6*2 || st.NoRows != 0 {
		t.Fatalf("xlsx: %+v %v", st, err)
	}
	checkCreatedKeys(t, tg, o.Journal)
}

// checkCreatedKeys writes the created keys of a journal as CSV and holds
// them to the sandbox: every order it holds (by DETAILS, the record id)
// with its ORDNAME, every line (by PARTNAME) with its KLINE.
func checkCreatedKeys(t *testing.T, tg *executortest.Target, journalPath string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "created.csv")
	if _, err := CreatedKeys(journalPath, out); err != nil {
		t.Fatal(err)
	}
	rows := readCSV(t, out)
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	got := map[string]string{} // order id → key; "id line PART" → line key
	for _, r := range rows[1:] {
		if r[col["step"]] != "orders" {
			continue
		}
		id := r[col["record"]]
		if k, ok := got[id]; ok && k != r[col["key"]] {
			t.Errorf("order %s has keys %s and %s", id, k, r[col["key"]])
		}
		got[id] = r[col["key"]]
		if r[col["sub-form"]] == "ORDERITEMS_SUBFORM" {
			got[id+" line "+r[col["Part"]]] = r[col["line key"]]
		}
	}
	fixture.CheckOrderKeys(t, "created keys say", tg.Entities("ORDERS", "DETAILS"), func(id string) string { return got[id] },
		func(id, part string) string { return got[id+" line "+part] })
}

// TestRunReportOfOldJournal: a journal written before times, calls and
// rows were recorded still reports; the page says the chart has nothing
// to show and the created keys give location and key.
func TestRunReportOfOldJournal(t *testing.T) {
	t.Parallel()
	_, o := throttledLoad(t)
	data, err := os.ReadFile(o.Journal)
	if err != nil {
		t.Fatal(err)
	}
	var old bytes.Buffer
	for _, line := range bytes.SplitAfter(data, []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var e journal.Entry
		if err := json.Unmarshal(bytes.TrimSpace(line[9:]), &e); err != nil {
			t.Fatal(err)
		}
		e.At, e.Calls, e.Throttled, e.WaitMS = nil, 0, 0, 0
		if e.Header != nil {
			e.Header.User = ""
		}
		if e.Record != nil {
			e.Record.Keyed = nil
		}
		b, err := journal.EncodeLine(e)
		if err != nil {
			t.Fatal(err)
		}
		old.Write(b)
	}
	path := filepath.Join(t.TempDir(), "old.journal")
	if err := os.WriteFile(path, old.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	rep := runReport(t, path)
	if rep.Chart != nil || rep.Total.Committed != 10 || rep.User != "" {
		t.Fatalf("old journal: chart %v, totals %+v, user %q", rep.Chart, rep.Total, rep.User)
	}
	page := pageOf(t, rep)
	if !bytes.Contains(page, []byte("No timing in this journal")) {
		t.Error("the page does not say the journal has no timing")
	}
	st, err := CreatedKeys(path, filepath.Join(t.TempDir(), "c.csv"))
	if err != nil || st.Records != 10 || st.NoRows != 10 || st.Rows != 10 {
		t.Fatalf("created keys of an old journal: %+v %v", st, err)
	}
}

// TestRunReportPage compares the page of a hand-made journal, with
// failures past FailureCells, Hebrew, a pause and an undo, with its golden
// file: a changed line of the page is seen.
func TestRunReportPage(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 3, 9, 0, 0, 0, time.UTC)
	var lines [][]byte
	add := func(e journal.Entry) {
		b, err := journal.EncodeLine(e)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, b)
	}
	add(journal.Entry{Kind: journal.KindHeader, Header: &journal.Header{Plan: "לקוחות", PlanPath: "customers.yaml", PlanHash: "x",
		Target: "https://erp.example.com/odata/Priority/tabula.ini/acme", SystemVersion: "25.1", ToolVersion: "v1.0.0", User: "dana",
		Created: at, Steps: []journal.Step{{Name: "customers", Entity: "CUSTOMERS"}}}})
	batch := 0
	for i := 0; i < 70; i++ {
		if i%10 == 0 {
			batch++
			sent := at.Add(time.Duration(batch) * 20 * time.Second)
			if batch > 4 {
				sent = sent.Add(10 * time.Minute) // stopped, then resumed
			}
			var subs []journal.Sub
			var res []journal.SubResult
			for j := i; j < i+10; j++ {
				id := fmt.Sprint(j + 1)
				subs = append(subs, journal.Sub{ID: id, Step: "customers", Rec: fmt.Sprintf("C%03d", j), Op: journal.OpCreate, Meth: "POST", URL: "CUSTOMERS"})
				status := 201
				if j%7 == 3 {
					status = 400
				}
				res = append(res, journal.SubResult{ID: id, Status: status, Key: fmt.Sprintf("'C%03d'", j)})
			}
			add(journal.Entry{Kind: journal.KindIntent, Batch: batch, At: new(sent), Subs: subs})
			e := journal.Entry{Kind: journal.KindOutcome, Batch: batch, At: new(sent.Add(2 * time.Second)), Results: res, Calls: 1}
			if batch == 3 {
				e.Calls, e.Throttled, e.WaitMS, e.At = 2, 1, 30000, new(sent.Add(32*time.Second))
			}
			add(e)
		}
		rec := &journal.RecordEntry{Step: "customers", ID: fmt.Sprintf("C%03d", i), Status: journal.Committed, Loc: fmt.Sprintf("customers.csv:%d", i+2), Key: fmt.Sprintf("'C%03d'", i)}
		switch {
		case i%7 == 3:
			rec.Status, rec.Key = journal.Failed, ""
			rec.Errors = []journal.Problem{{Cell: fmt.Sprintf("customers.csv:%d", i+2), Field: "CUSTDES", Message: "שם הלקוח כבר קיים"}}
		case i < 60:
			rec.Status = journal.Failed
			rec.Errors = []journal.Problem{{Cell: fmt.Sprintf("customers.csv!D%d", i+2), Field: "PHONE", Value: "12-x", Message: "PHONE: not a phone number"}}
		}
		add(journal.Entry{Kind: journal.KindRecord, Record: rec})
	}
	// Undo of the last committed customer.
	add(journal.Entry{Kind: journal.KindIntent, Batch: batch + 1, At: new(at.Add(2 * time.Hour)),
		Subs: []journal.Sub{{ID: "1", Step: "customers", Rec: "C069", Op: journal.OpUndoDelete, Meth: "DELETE", URL: "CUSTOMERS('C069')"}}})
	add(journal.Entry{Kind: journal.KindOutcome, Batch: batch + 1, At: new(at.Add(2*time.Hour + time.Second)), Calls: 1, Results: []journal.SubResult{{ID: "1", Status: 204}}})
	add(journal.Entry{Kind: journal.KindRecord, Record: &journal.RecordEntry{Step: "customers", ID: "C069", Status: journal.Committed, Undo: true}})
	path := filepath.Join(t.TempDir(), "customers.journal")
	if err := os.WriteFile(path, bytes.Join(lines, nil), 0o600); err != nil {
		t.Fatal(err)
	}
	rep := runReport(t, path)
	rep.Journal = "customers.journal" // not the temporary folder
	page := pageOf(t, rep)
	checkPage(t, "testdata/customers.html", page)
	if len(rep.Failures) != 2 || rep.Failures[0].Count != 51 || len(rep.Failures[0].Cells) != FailureCells || rep.Failures[0].More != 1 {
		t.Errorf("failure groups %+v", rep.Failures)
	}
	if rep.Undo == nil || len(rep.Undo.Steps) != 1 || rep.Undo.Steps[0].Undone != 1 {
		t.Errorf("undo %+v", rep.Undo)
	}
	if !strings.Contains(string(page), "and 1 more") {
		t.Error("the page does not say where the 51st cell is")
	}
}

// TestRunReportEscapesWhatItQuotes: cells and messages are the customer's
// and the server's text; markup in them is shown, never run or loaded.
func TestRunReportEscapesWhatItQuotes(t *testing.T) {
	t.Parallel()
	sum := &executor.Summary{Plan: "p", Steps: []executor.StepSummary{{Name: `<b>s</b>`, Entity: "CUSTOMERS", Records: 1, Errors: 1}},
		Errors: []executor.RecordError{{Step: `<b>s</b>`, Location: "c.csv:2", Field: "CUSTDES", Value: `<img src=x onerror=alert(1)>`,
			Message: `<script>alert(1)</script> see javascript:alert(2)`}}}
	page := pageOf(t, DryRunReport(sum, ReportInfo{PlanPath: "p.yaml"}, 100))
	for _, bad := range []string{"<img", "<script", "<b>s</b>"} {
		if bytes.Contains(page, []byte(bad)) {
			t.Errorf("the page holds %s as markup", bad)
		}
	}
	for _, shown := range []string{"&lt;img src=x onerror=alert(1)&gt;", "&lt;script&gt;alert(1)&lt;/script&gt;", "&lt;b&gt;s&lt;/b&gt;"} {
		if !bytes.Contains(page, []byte(shown)) {
			t.Errorf("the page does not show %s as text", shown)
		}
	}
}

// The run report meters as the service does and as apply's own
// summary counts: each entity and each line, a deep insert's lines too
// (not one per sub-request); its chart counts the calls its figure counts
// (undo's are under Undo); and its Undo table still counts what undo took
// back after a later apply loaded it again.
func TestRunReportCountsAsTheRunDid(t *testing.T) {
	t.Parallel()
	tg := executortest.NewTarget(t, sandbox.Options{})
	var rows []string
	for i := 1; i <= 4; i++ {
		for _, p := range []string{"P1", "P2", "P3"} {
			rows = append(rows, fmt.Sprintf("O%d,C1,%s,1", i, p))
		}
	}
	o := tg.Prepare(t, ordersFiles(5, true, rows...))
	sum := o.Complete(t, "apply")
	held := heldTransactions(tg)
	rep := runReport(t, o.Journal)
	if rep.Transactions != held || rep.Transactions != sum.Transactions || rep.Subrequests != sum.Subrequests {
		t.Errorf("report: %d API transactions, %d sub-requests; apply counted %d and %d, the sandbox holds %d entities and lines",
			rep.Transactions, rep.Subrequests, sum.Transactions, sum.Subrequests, held)
	}

	if _, err := undo.Undo(context.Background(), o.Journal, tg.Client, undo.Options{Yes: true}); err != nil {
		t.Fatal(err)
	}
	o.Complete(t, "apply again")
	rep = runReport(t, o.Journal)
	if rep.Chart == nil || rep.Chart.Calls != rep.Requests {
		t.Errorf("the chart counts %v calls, the figure %d", rep.Chart, rep.Requests)
	}
	undone := map[string]int{}
	if rep.Undo != nil {
		for _, s := range rep.Undo.Steps {
			undone[s.Name] = s.Undone
		}
	}
	if undone["orders"] != 4 || undone["customers"] != 1 || undone["parts"] != 5 {
		t.Errorf("the Undo table counts %v undone after the load again, want 4 orders, 1 customer, 5 parts", undone)
	}
}

// A batch whose answer was lost (the run was killed in flight) is one of
// the run's calls: counted by the figure and drawn by the chart alike.
func TestRunReportCountsABatchInDoubt(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 3, 9, 0, 0, 0, time.UTC)
	batches := []journal.BatchCall{
		{Batch: 1, Sent: at, Answered: at.Add(time.Second), Subs: 2, Calls: 1, Written: 2},
		{Batch: 2, Sent: at.Add(2 * time.Second), Subs: 2}, // no outcome
		{Batch: 3, Sent: at.Add(3 * time.Second), Subs: 1, NotSent: true},
	}
	made := 0
	for _, b := range batches {
		made += b.Made()
	}
	if ch := callChart(batches); made != 2 || ch == nil || ch.Calls != made {
		t.Errorf("the batches made %d calls, the chart %+v; want 2 in both", made, ch)
	}
}

// The page shows the plan's totals verify found, side by side, a
// difference marked and counted; a report without them shows no table.
func TestRunReportTotals(t *testing.T) {
	t.Parallel()
	when := time.Date(2026, 11, 27, 9, 30, 0, 0, time.UTC)
	rep := &RunReport{ReportInfo: ReportInfo{Plan: "orders"}, Verified: when, Totals: []journal.TotalRow{
		{Step: "orders", Name: "lines", Expr: "count(ORDERITEMS_SUBFORM)", Source: "3", Sent: "3", Target: "3"},
		{Step: "orders", Name: "amount", Expr: "sum(ORDERITEMS_SUBFORM.PRICE) by ORDERITEMS_SUBFORM.ICODE", By: "ORDERITEMS_SUBFORM.ICODE", Group: "USD",
			Source: "190.25", Sent: "190.25", Target: "190.26"},
	}}
	page := pageOf(t, rep)
	for _, want := range []string{
		`<table id="totals">`,
		`<tr data-step="orders"><td dir="auto">orders</td><td dir="auto">lines <code>count(ORDERITEMS_SUBFORM)</code></td><td dir="auto"></td><td class="n">3</td><td class="n">3</td><td class="n">3</td></tr>`,
		`<tr data-step="orders" class="differs"><td dir="auto">orders</td><td dir="auto">amount <code>sum(ORDERITEMS_SUBFORM.PRICE) by ORDERITEMS_SUBFORM.ICODE</code></td><td dir="auto">ORDERITEMS_SUBFORM.ICODE = USD</td><td class="n">190.25</td><td class="n">190.25</td><td class="n bad">190.26 ≠</td></tr>`,
		`<b class="bad">1 differ.</b>`,
		whenText(when),
	} {
		if !strings.Contains(string(page), want) {
			t.Errorf("the page lacks %s", want)
		}
	}
	rep.Totals = nil
	page = pageOf(t, rep)
	if strings.Contains(string(page), `id="totals"`) {
		t.Error("a report without totals shows a Totals table")
	}
}

// TestSentence: a line of the page begins with a capital, a letter of
// more than one byte too.
func TestSentence(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"": "", "apply would load": "Apply would load", "élan": "Élan", "א": "א"} {
		if got := sentence(in); got != want {
			t.Errorf("sentence(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestRunReportWarnings: what a load warned of as it ran (journaled) is on
// its run report, each warning once, as a dry run's page says its own.
func TestRunReportWarnings(t *testing.T) {
	t.Parallel()
	jpath := filepath.Join(t.TempDir(), "p.journal")
	j, err := journal.Create(jpath, journal.Header{Plan: "p", PlanHash: "ab", Steps: []journal.Step{{Name: "orders", Entity: "ORDERS"}}})
	if err != nil {
		t.Fatal(err)
	}
	const unbounded = "step orders: the journal has no watermark of ORDERS (written by an older version): a document made before the run with the same fields may be taken for the one in doubt; check what reconciliation finds"
	for _, w := range []string{unbounded, "step orders, batch 2: the server's $batch answer is not as the protocol says: <b>", unbounded} {
		if err := j.Append(journal.Entry{Kind: journal.KindWarning, Warning: w}); err != nil {
			t.Fatal(err)
		}
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	rep, err := RunReportOf(jpath)
	if err != nil {
		t.Fatal(err)
	}
	var page bytes.Buffer
	if err := WriteHTML(&page, rep); err != nil {
		t.Fatal(err)
	}
	got := page.String()
	if n := strings.Count(got, "<li dir=\"auto\">warning: step orders"); n != 2 ||
		!strings.Contains(got, "may be taken for the one in doubt") || !strings.Contains(got, "protocol says: &lt;b&gt;</li>") {
		t.Errorf("the run report shows %d warnings, want the two the journal holds:\n%s", n, got)
	}
}
