package executor

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/migrate-tool/migrate/journal"
	"github.com/migrate-tool/migrate/sandbox"
)

const groupedPlan = `version: 1
name: grouped
sources:
  customers: {file: customers.csv}
  parts: {file: parts.csv}
  order_rows: {file: orders.csv}
steps:
  - name: customers
    entity: CUSTOMERS
    source: customers
    fields: {CUSTNAME: row.Code, CUSTDES: row.Name}
  - name: parts
    entity: LOGPART
    source: parts
    fields: {PARTNAME: row.Part, PARTDES: row.Description}
  - name: orders
    entity: ORDERS
    source: order_rows
    when: row.Customer != "skip"
    group_by: row.OrderNo
    id: row.OrderNo
    after: [customers, parts]
    fields: {ORDNAME: row.OrderNo, CUSTNAME: row.Customer}
    subforms:
      - name: ORDERITEMS_SUBFORM
        source: group
        fields: {PARTNAME: row.Part, TQUANT: row.Qty}
`

// TestReportKeepsEveryRowOfAGroup: a grouped order that failed comes back
// in the report with every one of its rows, each with its own problems,
// however many rows the run read after them (the ring of 4,096 rows the
// report used to look rows up in had dropped them by then): one refused
// by the server after its order was created, one rejected before anything
// was sent.
func TestReportKeepsEveryRowOfAGroup(t *testing.T) {
	t.Parallel()
	env := newSandbox(t, sandbox.Options{})
	dir := t.TempDir()
	var orders strings.Builder
	orders.WriteString("OrderNo,Customer,Part,Qty\n")
	// A1, 40 lines: its 17th names a part that does not exist.
	for i := 0; i < 40; i++ {
		p := []string{"P1", "P2"}[i%2]
		if i == 16 {
			p = "P9"
		}
		fmt.Fprintf(&orders, "A1,C1,%s,1\n", p)
	}
	// B1: its second line's quantity is not a number.
	for _, q := range []string{"1", "x", "2"} {
		fmt.Fprintf(&orders, "B1,C1,P2,%s\n", q)
	}
	for i := 0; i < 5000; i++ {
		fmt.Fprintf(&orders, "Z%d,skip,P1,1\n", i)
	}
	files := map[string]string{"plan.yaml": groupedPlan, "orders.csv": orders.String(),
		"customers.csv": "Code,Name\nC1,Acme\n", "parts.csv": "Part,Description\nP1,Bolt\nP2,Nut\n"}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	o, sum := applyDir(t, env, dir)
	if s := stepOf(sum, "orders"); s.Failed != 2 || s.Skipped != 5000 || s.Partly != 1 {
		t.Fatalf("orders %+v", s)
	}
	// A1 is partly loaded: its order and three lines exist; B1 is not.
	for _, e := range sum.Errors {
		if want := map[string]string{"A1": "ORDERS('A1') created with 39 of 40 lines"}[e.Record]; e.Partly != want {
			t.Errorf("%s: partly %q, want %q", e.Record, e.Partly, want)
		}
	}
	if st, err := Status(o.Journal); err != nil || stepOf(st, "orders").Partly != 1 {
		t.Errorf("status: %v %+v", err, st)
	}
	// What exists: A1 with its three good lines.
	a1 := env.entities("ORDERS", "ORDNAME")["A1"]
	if n := len(lines(a1, "ORDERITEMS_SUBFORM")); a1 == nil || n != 39 {
		t.Fatalf("A1 %v with %d lines", a1, n)
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
			w[2], w[6], w[7] = "P9", "ORDERITEMS_SUBFORM", `partly loaded (ORDERS('A1') created with 39 of 40 lines): ORDERITEMS_SUBFORM: Line 1- PARTNAME "P9" does not exist`
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
	checkEach(t, "rowOfCell", rowOfCell, map[string]string{
		"book.xlsx!Orders!C17":     "book.xlsx!Orders!17",
		"book.xlsx!My Sheet!AB3":   "book.xlsx!My Sheet!3",
		"book.xlsx!Orders!17":      "book.xlsx!Orders!17",
		"orders.csv:17":            "orders.csv:17",
		"template:FAMILY_LOG('1')": "template:FAMILY_LOG('1')",
	})
}
