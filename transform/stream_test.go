package transform

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/plan"
	"github.com/migrate-tool/migrate/source"
)

func customersPlan(t *testing.T) *plan.Plan {
	return &plan.Plan{Dir: t.TempDir(),
		Target:  plan.Target{Timezone: "Asia/Jerusalem"},
		Sources: []*plan.Source{{Name: "customers", File: "customers.xlsx", Sheet: "Customers"}, {Name: "notes", File: "notes.csv", DecimalSeparator: ","}, {Name: "agents", File: "agents.csv"}},
		Lookups: []*plan.Lookup{{Name: "agent_code", Source: "agents", Key: x("row.Old"), Value: x("row.New"), Missing: "error"}},
		Steps: []*plan.Step{{Name: "customers", Entity: "CUSTOMERS", Source: "customers",
			When: xp(`row.Status != "obsolete"`),
			Fields: fields("CUSTNAME", "row.Code", "CUSTDES", "row.Name", "CREDIT", "row.Credit",
				"AGENTCODE", `lookup("agent_code", row.Agent)`, "SINCE", "row.Since"),
			Subforms: []*plan.Subform{
				{Name: "GENCUSTNOTES_SUBFORM", Source: "notes", Lines: plan.LinesReplace,
					Link:   &plan.Link{Parent: x("row.Code"), Child: x("row.CustCode")},
					Fields: fields("NOTE", `parent.fields.CUSTNAME + ": " + row.Text`, "LINE", "row.Line")},
				{Name: "SHIPTO2_SUBFORM", When: xp(`row.Ship != ""`), Fields: fields("ADDRESS", "row.Ship")},
			}}}}
}

func customersSources() *memSources {
	return &memSources{make: map[string]func() *memReader{
		"customers": func() *memReader {
			m := newMem("customers.xlsx", []string{"Code", "Name", "Credit", "Agent", "Since", "Status", "Ship"},
				[]source.Cell{"C001", "אבגד", source.Number("1500.50"), "A1", time.Date(2024, 1, 15, 0, 0, 0, 0, time.UTC), "active", "Herzl 1"},
				[]source.Cell{"C002", "שם ארוך מאוד מאוד מאוד מאוד מאוד מאוד מאוד מאוד מאוד", source.Number("7"), "A2", nil, "active", ""},
				[]source.Cell{"C003", "Old", nil, "A1", nil, "obsolete", ""},
				[]source.Cell{"C004", "Zed", "12,5", "A9", nil, "active", ""},
				[]source.Cell{"C005", "Fine", nil, "", nil, "active", ""},
			)
			m.sheet = "Customers"
			return m
		},
		"notes": func() *memReader {
			return newMem("notes.csv", []string{"CustCode", "Text", "Line"},
				cells("C005", "late payer", "1"), cells("C001", "first", "1"), cells("C999", "orphan", "1"), cells("C001", "second", "2"))
		},
		"agents": func() *memReader {
			return newMem("agents.csv", []string{"Old", "New"}, cells("A1", "AG1"), cells("A2", "AG2"), cells("A1", "AG1"))
		},
	}}
}

func TestRecordsCustomers(t *testing.T) {
	t.Parallel()
	prog := mustCompile(t, customersPlan(t), demoMetadata(), testOptions())
	ms := customersSources()
	if err := prog.BuildLookups(context.Background(), ms.open); err != nil {
		t.Fatalf("BuildLookups: %v", err)
	}
	res := collect(t, prog, "customers", ms, nil)
	if len(res) != 5 {
		t.Fatalf("%d results, want 5", len(res))
	}
	jlm, _ := time.LoadLocation("Asia/Jerusalem")

	// C001: every field, a linked sub-form in source order, a single object.
	r := res[0].Record
	if r == nil {
		t.Fatalf("row 1: %v", res[0].Errors)
	}
	if r.ID != "C001" || r.Entity != "CUSTOMERS" || r.Step != "customers" || r.Loc.Line != 2 {
		t.Errorf("record = %+v", r)
	}
	want := map[string]any{"CUSTNAME": "C001", "CUSTDES": "אבגד", "CREDIT": mustDec("1500.50"), "AGENTCODE": "AG1", "SINCE": time.Date(2024, 1, 15, 0, 0, 0, 0, jlm)}
	for k, v := range want {
		if !equalValue(r.Fields[k], v) {
			t.Errorf("%s = %#v, want %#v", k, r.Fields[k], v)
		}
	}
	if strings.Join(r.Order, ",") != "CUSTNAME,CUSTDES,CREDIT,AGENTCODE,SINCE" {
		t.Errorf("Order = %v", r.Order)
	}
	if len(r.Children) != 3 {
		t.Fatalf("children = %d, want 2 notes and 1 ship-to", len(r.Children))
	}
	n1, n2, ship := r.Children[0], r.Children[1], r.Children[2]
	if n1.Nav != "GENCUSTNOTES_SUBFORM" || n1.Fields["NOTE"] != "C001: first" || n2.Fields["NOTE"] != "C001: second" || n2.Fields["LINE"] != int64(2) {
		t.Errorf("notes = %+v, %+v", n1, n2)
	}
	if !n1.Replace || n1.Single || n1.Loc.File != "notes.csv" || n1.Loc.Line != 3 {
		t.Errorf("note 1 = %+v", n1)
	}
	if !ship.Single || ship.Fields["ADDRESS"] != "Herzl 1" || ship.Loc.Line != 2 {
		t.Errorf("ship-to = %+v", ship)
	}
	if r.Row.Cells[0] != "C001" {
		t.Errorf("the record's row was overwritten by the reader: %v", r.Row.Cells)
	}

	// C002: the name is longer than 48 characters (not bytes): a row error at its cell.
	if res[1].Record != nil || len(res[1].Errors) != 1 {
		t.Fatalf("row 2: %+v", res[1])
	}
	e := res[1].Errors[0]
	if e.Cell != "customers.xlsx!Customers!B3" || e.Field != "CUSTDES" || e.Column != "Name" || e.Step != "customers" ||
		!strings.Contains(e.Message, "is 52 characters, longer than the 48") {
		t.Errorf("error = %+v", e)
	}
	// C003: when is false.
	if !res[2].Skipped || res[2].Loc.Line != 4 {
		t.Errorf("row 3 = %+v, want skipped", res[2])
	}
	// C004: "12,5" in a workbook text cell of a "." source, and an unknown agent.
	if len(res[3].Errors) != 2 {
		t.Fatalf("row 4 errors = %v", res[3].Errors)
	}
	if e := res[3].Errors[0]; e.Message != `"12,5" is not a decimal (Edm.Decimal); set decimal_separator: ","` || e.Value != "12,5" || e.Cell != "customers.xlsx!Customers!C5" || e.Field != "CREDIT" {
		t.Errorf("decimal error = %+v", e)
	}
	if e := res[3].Errors[1]; e.Message != `no agent_code for "A9"` || e.Field != "AGENTCODE" || e.Cell != "customers.xlsx!Customers!5" {
		t.Errorf("lookup error = %+v", e)
	}
	// C005: empty cells are left out; a note linked from the first line of notes.csv.
	r = res[4].Record
	if r == nil {
		t.Fatalf("row 5: %v", res[4].Errors)
	}
	if _, ok := r.Fields["CREDIT"]; ok || strings.Join(r.Order, ",") != "CUSTNAME,CUSTDES" {
		t.Errorf("empty fields: %v %v", r.Fields, r.Order)
	}
	if len(r.Children) != 1 || r.Children[0].Fields["NOTE"] != "C005: late payer" {
		t.Errorf("children = %+v", r.Children)
	}
	if ms.opens["notes"] != 1 {
		t.Errorf("notes opened %d times, want once per run", ms.opens["notes"])
	}
}

func TestRecordsGroupBy(t *testing.T) {
	t.Parallel()
	p := &plan.Plan{Dir: t.TempDir(),
		Sources: []*plan.Source{{Name: "lines", File: "lines.csv", DecimalSeparator: ","}},
		Steps: []*plan.Step{{Name: "orders", Entity: "ORDERS", Source: "lines", GroupBy: xp("row.OrderNo"),
			When:   xp(`row.Part != "SKIP" ? true : skip()`),
			ID:     xp(`"order " + row.OrderNo`),
			Fields: fields("CUSTNAME", "row.Customer", "CURDATE", `date(row.Date, "02/01/2006")`),
			Subforms: []*plan.Subform{
				{Name: "ORDERITEMS_SUBFORM", Source: "group",
					Fields: fields("PARTNAME", "row.Part", "TQUANT", "row.Qty", "PRICE", `number(row.Price, ",")`, "KLINE", "len(group)"),
					Subforms: []*plan.Subform{{Name: "ORDERITEMSTEXT_SUBFORM", When: xp(`row.Note != ""`),
						Fields: fields("TEXT", `parent.row.Part + " of " + parent.parent.row.OrderNo + ": " + row.Note`)}}},
				{Name: "ORDERSTEXT_SUBFORM", When: xp(`len(group) > 1`), Fields: fields("TEXT", `join(map(group, .Part), ",")`)},
			}}}}
	prog := mustCompile(t, p, demoMetadata(), testOptions())
	ms := &memSources{make: map[string]func() *memReader{"lines": func() *memReader {
		h := []string{"OrderNo", "Customer", "Date", "Part", "Qty", "Price", "Note"}
		return newMem("lines.csv", h,
			cells("1", "C1", "31/12/2024", "P1", "2", "10,5", ""),
			cells("2", "C2", "01/01/2025", "P9", "1", "3", "fragile"),
			cells("1", "C1", "31/12/2024", "P2", "1,5", "1", ""),
			cells("1", "C1", "31/12/2024", "SKIP", "1", "1", ""),
			cells("", "C3", "31/12/2024", "P3", "1", "1", ""),
			cells("3", "C3", "31/12/2024", "P3", "x", "1", "bad qty"),
		)
	}}}
	res := collect(t, prog, "orders", ms, nil)
	var recs []*Record
	var skipped, failed int
	for _, r := range res {
		switch {
		case r.Record != nil:
			recs = append(recs, r.Record)
		case r.Skipped:
			skipped++
		default:
			failed++
		}
	}
	if skipped != 1 || failed != 2 || len(recs) != 2 {
		t.Fatalf("records %d, skipped %d, failed %d: %+v", len(recs), skipped, failed, res)
	}
	o1 := recs[0]
	if o1.ID != "order 1" || o1.Loc.Line != 2 || len(o1.Children) != 3 {
		t.Fatalf("order 1 = %+v", o1)
	}
	l1, l2, txt := o1.Children[0], o1.Children[1], o1.Children[2]
	if l1.Fields["PARTNAME"] != "P1" || l2.Fields["PARTNAME"] != "P2" || l2.Loc.Line != 4 {
		t.Errorf("lines = %+v / %+v", l1, l2)
	}
	if !equalValue(l2.Fields["TQUANT"], mustDec("1.5")) || !equalValue(l1.Fields["PRICE"], mustDec("10.5")) || l1.Fields["KLINE"] != int64(2) {
		t.Errorf("line values: %v %v", l1.Fields, l2.Fields)
	}
	if len(l1.Children) != 0 {
		t.Errorf("a line without a note has no text: %+v", l1.Children)
	}
	if txt.Nav != "ORDERSTEXT_SUBFORM" || !txt.Single || txt.Fields["TEXT"] != "P1,P2" {
		t.Errorf("order text = %+v", txt)
	}
	o2 := recs[1]
	if o2.ID != "order 2" || len(o2.Children) != 1 || len(o2.Children[0].Children) != 1 ||
		o2.Children[0].Children[0].Fields["TEXT"] != "P9 of 2: fragile" {
		t.Errorf("order 2 = %+v", o2)
	}
	// The empty group_by row and the bad quantity reject their rows; the whole of order 3 is rejected.
	var msgs []string
	for _, r := range res {
		for _, e := range r.Errors {
			msgs = append(msgs, e.Cell+": "+e.Field+": "+e.Message)
		}
	}
	joined := strings.Join(msgs, "\n")
	if !strings.Contains(joined, "lines.csv:6: : group_by is empty") || !strings.Contains(joined, `lines.csv:7: TQUANT: "x" is not a decimal (Edm.Decimal)`) {
		t.Errorf("errors:\n%s", joined)
	}
}

func TestRecordsFailSkipAndRefs(t *testing.T) {
	t.Parallel()
	p := &plan.Plan{Dir: t.TempDir(),
		Sources: []*plan.Source{{Name: "inv", File: "inv.csv"}},
		Steps: []*plan.Step{{Name: "invoices", Entity: "AINVOICES", Source: "inv",
			Fields: fields("IVNUM", `row.No == "" ? fail("invoice without a number") : row.No`, "IVTYPE", `row.Type == "X" ? skip() : row.Type`,
				"CUSTNAME", `ref("customers", row.Cust)`),
		}, {Name: "customers", Entity: "CUSTOMERS", Source: "inv", Fields: fields("CUSTNAME", "row.Cust")}}}
	prog := mustCompile(t, p, demoMetadata(), testOptions())
	ms := &memSources{make: map[string]func() *memReader{"inv": func() *memReader {
		return newMem("inv.csv", []string{"No", "Type", "Cust"},
			cells("I1", "A", "C1"), cells("", "A", "C1"), cells("I3", "X", "C1"), cells("I4", "A", "C9"))
	}}}
	res := collect(t, prog, "invoices", ms, refMap{"customers/C1": "CUST-1"})
	if r := res[0].Record; r == nil || r.ID != "IVNUM=I1|IVTYPE=A" || r.Fields["CUSTNAME"] != "CUST-1" {
		t.Errorf("row 1 = %+v %v", r, res[0].Errors)
	}
	if len(res[1].Errors) != 1 || res[1].Errors[0].Message != "invoice without a number" || res[1].Errors[0].Field != "IVNUM" {
		t.Errorf("fail() = %+v", res[1])
	}
	if !res[2].Skipped {
		t.Errorf("skip() = %+v", res[2])
	}
	if len(res[3].Errors) != 1 || res[3].Errors[0].Message != `ref("customers","C9"): no record with that id was loaded` {
		t.Errorf("unknown ref = %+v", res[3].Errors)
	}
	// Without keys or id, the identity is the row's place.
	res = collect(t, prog, "customers", ms, nil)
	if res[0].Record.ID != "C1" {
		t.Errorf("single key id = %q", res[0].Record.ID)
	}
}

type refMap map[string]any

func (m refMap) Ref(step, id string) (any, bool) {
	v, ok := m[step+"/"+id]
	return v, ok
}

func TestRecordsWithoutMetadata(t *testing.T) {
	t.Parallel()
	p := &plan.Plan{Dir: t.TempDir(), Target: plan.Target{Empty: "null"},
		Sources: []*plan.Source{{Name: "s", File: "s.csv"}},
		Steps:   []*plan.Step{{Name: "s", Entity: "ANY", Source: "s", Fields: fields("A", "row.A", "B", "row.B", "C", "split(row.A, \",\")")}}}
	prog := mustCompile(t, p, nil, testOptions())
	ms := &memSources{make: map[string]func() *memReader{"s": func() *memReader {
		return newMem("s.csv", []string{"A", "B"}, cells("x", ""))
	}}}
	res := collect(t, prog, "s", ms, nil)
	if len(res) != 1 || len(res[0].Errors) != 1 || res[0].Errors[0].Field != "C" || !strings.Contains(res[0].Errors[0].Message, "a list of 1 cannot be written") {
		t.Fatalf("results = %+v", res)
	}
	p.Steps[0].Fields = p.Steps[0].Fields[:2]
	prog = mustCompile(t, p, nil, testOptions())
	res = collect(t, prog, "s", ms, nil)
	r := res[0].Record
	if r.ID != "s.csv:2" || r.Fields["A"] != "x" || r.Fields["B"] != nil || len(r.Order) != 2 {
		t.Errorf("record = %+v (empty: null keeps B as an explicit nil)", r)
	}
}

func TestLookups(t *testing.T) {
	t.Parallel()
	mk := func(missing string) *plan.Plan {
		return &plan.Plan{Dir: t.TempDir(),
			Sources: []*plan.Source{{Name: "agents", File: "agents.csv"}, {Name: "c", File: "c.csv"}},
			Lookups: []*plan.Lookup{{Name: "agent_code", Source: "agents", Key: x("trim(row.Old)"), Value: x("row.New"), Missing: missing}},
			Steps:   []*plan.Step{{Name: "c", Entity: "CUSTOMERS", Source: "c", Fields: fields("CUSTNAME", "row.Code", "AGENTCODE", `lookup("agent_code", row.Agent)`)}}}
	}
	agents := func(rows ...[]source.Cell) *memSources {
		return &memSources{make: map[string]func() *memReader{
			"agents": func() *memReader { return newMem("agents.csv", []string{"Old", "New"}, rows...) },
			"c": func() *memReader {
				return newMem("c.csv", []string{"Code", "Agent"}, cells("C1", "A1"), cells("C2", "ZZ"), cells("C3", ""))
			},
		}}
	}
	good := agents(cells(" A1 ", "AG1"), cells("", "ignored"), cells("A1", "AG1"))
	for _, tt := range []struct {
		missing string
		want    any // for C2
		err     string
	}{
		{"error", nil, `no agent_code for "ZZ"`},
		{"empty", nil, ""}, // "" is empty: the field is omitted
		{"keep", "ZZ", ""},
	} {
		prog := mustCompile(t, mk(tt.missing), demoMetadata(), testOptions())
		if err := prog.BuildLookups(context.Background(), good.open); err != nil {
			t.Fatalf("%s: BuildLookups: %v", tt.missing, err)
		}
		res := collect(t, prog, "c", good, nil)
		if res[0].Record == nil || res[0].Record.Fields["AGENTCODE"] != "AG1" {
			t.Errorf("%s: C1 = %+v", tt.missing, res[0])
		}
		if tt.err != "" {
			if len(res[1].Errors) != 1 || res[1].Errors[0].Message != tt.err {
				t.Errorf("%s: C2 = %+v", tt.missing, res[1].Errors)
			}
		} else if got := res[1].Record.Fields["AGENTCODE"]; got != tt.want {
			t.Errorf("%s: C2 AGENTCODE = %#v, want %#v", tt.missing, got, tt.want)
		}
		if _, ok := res[2].Record.Fields["AGENTCODE"]; ok {
			t.Errorf("%s: an empty key gives an empty value", tt.missing)
		}
	}

	prog := mustCompile(t, mk("error"), demoMetadata(), testOptions())
	dup := agents(cells("A1", "AG1"), cells("A2", "AG2"), cells("A1", "AG7"))
	err := prog.BuildLookups(context.Background(), dup.open)
	if err == nil || !strings.Contains(err.Error(), `lookup agent_code: key "A1" has two values: "AG1" at agents.csv:2 and "AG7" at agents.csv:4`) {
		t.Errorf("duplicate key: %v", err)
	}
}

func TestRecordsErrors(t *testing.T) {
	t.Parallel()
	prog := mustCompile(t, customersPlan(t), demoMetadata(), testOptions())
	ms := customersSources()
	ctx := context.Background()
	noop := func(Result) error { return nil }
	if err := prog.Records(ctx, "nope", ms.open, nil, noop); err == nil || !strings.Contains(err.Error(), `no step "nope"`) {
		t.Errorf("unknown step: %v", err)
	}
	// lookup() before BuildLookups is a row error, not a panic.
	var first Result
	stop := errors.New("stop")
	err := prog.Records(ctx, "customers", ms.open, nil, func(r Result) error { first = r; return stop })
	if !errors.Is(err, stop) {
		t.Errorf("fn's error = %v, want it returned", err)
	}
	if len(first.Errors) != 1 || !strings.Contains(first.Errors[0].Message, "lookup tables were not built") {
		t.Errorf("first = %+v", first.Errors)
	}
	// A source without a column the plan reads fails before any row.
	bad := &memSources{make: map[string]func() *memReader{"customers": func() *memReader {
		return newMem("customers.xlsx", []string{"Code", "Nmae"})
	}}}
	err = prog.Records(ctx, "customers", bad.open, nil, noop)
	if err == nil || !strings.Contains(err.Error(), `source customers has no column "Name"; did you mean "Nmae"?`) {
		t.Errorf("missing column: %v", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := prog.Records(cctx, "customers", ms.open, nil, noop); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

func TestLinkChildErrorsReportedOnce(t *testing.T) {
	t.Parallel()
	p := customersPlan(t)
	p.Lookups = nil
	p.Steps[0].Fields = fields("CUSTNAME", "row.Code")
	p.Steps[0].Subforms[0].Link.Child = x(`row.CustCode == "C999" ? fail("orphan note") : row.CustCode`)
	prog := mustCompile(t, p, demoMetadata(), testOptions())
	res := collect(t, prog, "customers", customersSources(), nil)
	var orphan int
	for _, r := range res {
		for _, e := range r.Errors {
			if strings.Contains(e.Message, "orphan note") {
				orphan++
				if e.Cell != "notes.csv:4" {
					t.Errorf("cell = %q", e.Cell)
				}
			}
		}
	}
	if orphan != 1 {
		t.Errorf("the link error was reported %d times, want once", orphan)
	}
}

var _ = odata.EdmString

func TestRecordsMoreScopes(t *testing.T) {
	t.Parallel()
	// row[...] with a computed name needs rows as maps; a single-object
	// sub-form whose when is false gives no child.
	p := &plan.Plan{Dir: t.TempDir(),
		Sources: []*plan.Source{{Name: "o", File: "o.csv"}},
		Steps: []*plan.Step{{Name: "o", Entity: "ORDERS", Source: "o",
			Fields: fields("ORDNAME", `row["Order " + "No"]`, "CUSTNAME", `row["Cust"]`),
			Subforms: []*plan.Subform{{Name: "ORDERSTEXT_SUBFORM", When: xp(`row.Remarks != ""`),
				Fields: []*plan.Field{{Name: "TEXT", Expr: x("row.Remarks")}, {Name: "APPEND", Expr: cst(true)}}}}}}}
	prog := mustCompile(t, p, demoMetadata(), testOptions())
	if !prog.wholeRow {
		t.Fatal("row[expression] must build rows as maps")
	}
	ms := &memSources{make: map[string]func() *memReader{"o": func() *memReader {
		return newMem("o.csv", []string{"Order No", "Cust", "Remarks"}, cells("O1", "C1", "call first"), cells("O2", "C2", ""))
	}}}
	res := collect(t, prog, "o", ms, nil)
	o1, o2 := res[0].Record, res[1].Record
	if o1 == nil || o2 == nil {
		t.Fatalf("results = %+v", res)
	}
	if o1.ID != "O1" || o1.Fields["CUSTNAME"] != "C1" || len(o1.Children) != 1 || !o1.Children[0].Single ||
		o1.Children[0].Fields["TEXT"] != "call first" || o1.Children[0].Fields["APPEND"] != true {
		t.Errorf("O1 = %+v %+v", o1, o1.Children)
	}
	if len(o2.Children) != 0 {
		t.Errorf("O2 children = %+v, want none (when is false)", o2.Children)
	}
}

func TestRecordsArgumentErrors(t *testing.T) {
	t.Parallel()
	p := &plan.Plan{Dir: t.TempDir(),
		Sources: []*plan.Source{{Name: "c", File: "c.csv"}, {Name: "a", File: "a.csv"}},
		Lookups: []*plan.Lookup{{Name: "agent", Source: "a", Key: x("row.K"), Value: x("row.V")}},
		Steps: []*plan.Step{{Name: "c", Entity: "CUSTOMERS", Source: "c",
			Fields: fields("CUSTNAME", "row.Code", "CUSTDES", `lookup("agent", [1])`, "AGENTCODE", `ref("c", {"a": 1})`)}}}
	prog := mustCompile(t, p, demoMetadata(), testOptions())
	ms := &memSources{make: map[string]func() *memReader{
		"c": func() *memReader { return newMem("c.csv", []string{"Code"}, cells("C1")) },
		"a": func() *memReader { return newMem("a.csv", []string{"K", "V"}) },
	}}
	if err := prog.BuildLookups(context.Background(), ms.open); err != nil {
		t.Fatal(err)
	}
	res := collect(t, prog, "c", ms, nil)
	if len(res[0].Errors) != 2 {
		t.Fatalf("errors = %v", res[0].Errors)
	}
	if e := res[0].Errors[0]; e.Message != "lookup: argument 2 must be a key (text or number), got a list of 1" || e.Field != "CUSTDES" || e.Plan != "plan.yaml:9:7" {
		t.Errorf("lookup error = %+v", e)
	}
	if e := res[0].Errors[1]; !strings.HasPrefix(e.Message, "ref: argument 2 must be an identity (text or number), got a row or map") || e.Field != "AGENTCODE" {
		t.Errorf("ref error = %+v", e)
	}
	// ref's step name is typed text: a number is refused when the plan compiles.
	p.Steps[0].Fields = fields("CUSTNAME", `ref(1, "x")`)
	if _, diags := Compile(p, demoMetadata(), testOptions()); len(diags) != 1 || !strings.Contains(diags[0].Message, "cannot use int as argument (type string) to call ref") {
		t.Errorf("diagnostics = %v", diags)
	}
}

func TestRecordsConcurrently(t *testing.T) {
	t.Parallel()
	prog := mustCompile(t, customersPlan(t), demoMetadata(), testOptions())
	if err := prog.BuildLookups(context.Background(), customersSources().open); err != nil {
		t.Fatal(err)
	}
	done := make(chan []Result)
	for i := 0; i < 4; i++ {
		go func() {
			ms := customersSources()
			var out []Result
			err := prog.Records(context.Background(), "customers", ms.open, nil, func(r Result) error { out = append(out, r); return nil })
			if err != nil {
				t.Error(err)
			}
			done <- out
		}()
	}
	for i := 0; i < 4; i++ {
		res := <-done
		if len(res) != 5 || res[0].Record == nil || len(res[0].Record.Children) != 3 {
			t.Errorf("run %d: %+v", i, res)
		}
	}
}

func TestRecordsLinkedSourceMissing(t *testing.T) {
	t.Parallel()
	p := customersPlan(t)
	p.Lookups = nil
	p.Steps[0].Fields = fields("CUSTNAME", "row.Code")
	prog := mustCompile(t, p, demoMetadata(), testOptions())
	ms := customersSources()
	delete(ms.make, "notes")
	var n int
	err := prog.Records(context.Background(), "customers", ms.open, nil, func(Result) error { n++; return nil })
	if err == nil || !strings.Contains(err.Error(), "step customers: GENCUSTNOTES_SUBFORM: ") || n != 0 {
		t.Errorf("Records = %v after %d results; want the run stopped at the first record", err, n)
	}
}

// rowOnlyReader answers one row with a RowOnly error, as a workbook does
// for a cell holding #DIV/0!.
type rowOnlyReader struct {
	*memReader
	bad int // the row number (Loc.Line) that fails
}

func (r *rowOnlyReader) Next() (source.Row, error) {
	row, err := r.memReader.Next()
	if err == nil && row.Loc.Line == r.bad {
		return row, &source.Error{File: row.Loc.File, Sheet: row.Loc.Sheet, Line: row.Loc.Line, Cell: "B3", RowOnly: true, Err: errors.New("the formula's cached value is #DIV/0!")}
	}
	return row, err
}

// A row the reader could not read whole is that row's error; the step goes
// on, so every such row is reported in one run.
func TestRecordsRowOnlyReaderError(t *testing.T) {
	t.Parallel()
	p := &plan.Plan{Dir: t.TempDir(), Sources: []*plan.Source{{Name: "customers", File: "c.xlsx", Sheet: "S"}},
		Steps: []*plan.Step{{Name: "customers", Entity: "CUSTOMERS", Source: "customers", Fields: fields("CUSTNAME", "row.Code", "CUSTDES", "row.Name")}}}
	prog := mustCompile(t, p, demoMetadata(), testOptions())
	open := func(*plan.Source) (source.Reader, error) {
		m := newMem("c.xlsx", []string{"Code", "Name"}, cells("C1", "one"), cells("C2", "two"), cells("C3", "three"))
		m.sheet = "S"
		return &rowOnlyReader{memReader: m, bad: 3}, nil
	}
	var ids, bad []string
	err := prog.Records(context.Background(), "customers", open, nil, func(r Result) error {
		if len(r.Errors) > 0 {
			bad = append(bad, r.Errors[0].Cell+": "+r.Errors[0].Message)
			return nil
		}
		ids = append(ids, r.Record.ID)
		return nil
	})
	if err != nil {
		t.Fatalf("Records: %v", err)
	}
	if strings.Join(ids, ",") != "C1,C3" {
		t.Errorf("records %v, want C1,C3", ids)
	}
	if len(bad) != 1 || bad[0] != "c.xlsx!S!B3: the formula's cached value is #DIV/0!" {
		t.Errorf("errors %q", bad)
	}
}
