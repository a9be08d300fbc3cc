package transform

import (
	"strings"
	"testing"

	"github.com/migrate-tool/migrate/plan"
	"github.com/migrate-tool/migrate/source"
)

// each: one child per element of a list: the lines of an expanded
// sub-form (mappings, read as row.X), or the texts split gives (row).
func TestRecordsEach(t *testing.T) {
	t.Parallel()
	p := &plan.Plan{Dir: t.TempDir(),
		Sources: []*plan.Source{{Name: "orders", Connection: "template", Entity: "ORDERS"}},
		Steps: []*plan.Step{{Name: "orders", Entity: "ORDERS", Source: "orders",
			Fields: fields("ORDNAME", "row.ORDNAME"),
			Subforms: []*plan.Subform{
				{Name: "ORDERITEMS_SUBFORM", Each: xp("row.ORDERITEMS_SUBFORM"), When: xp(`row.PARTNAME != "SKIP"`),
					Fields:   fields("PARTNAME", "row.PARTNAME", "TQUANT", "row.TQUANT", "PRICE", "row.PRICE ?? 0"),
					Subforms: []*plan.Subform{{Name: "ORDERITEMSTEXT_SUBFORM", Fields: fields("TEXT", `parent.parent.row.ORDNAME + "/" + parent.row.PARTNAME`)}}},
			}},
			{Name: "customers", Entity: "CUSTOMERS", Source: "orders",
				Fields:   fields("CUSTNAME", "row.ORDNAME"),
				Subforms: []*plan.Subform{{Name: "GENCUSTNOTES_SUBFORM", Each: xp(`split(row.Tags, ";")`), Fields: fields("NOTE", "upper(row)")}}},
		}}
	prog := mustCompile(t, p, demoMetadata(), testOptions())
	line := func(part, qty string, price any) map[string]any {
		m := map[string]any{"PARTNAME": part, "TQUANT": source.Number(qty)}
		if price != nil {
			m["PRICE"] = price
		}
		return m
	}
	ms := &memSources{make: map[string]func() *memReader{"orders": func() *memReader {
		return newMem("template:ORDERS", []string{"ORDNAME", "Tags", "ORDERITEMS_SUBFORM"},
			[]source.Cell{"SO1", "a;b", []any{line("P1", "2", source.Number("9.5")), line("SKIP", "1", nil), line("P2", "1.5", nil)}},
			[]source.Cell{"SO2", "", []any{}},
			[]source.Cell{"SO3", "c", "not a list"},
		)
	}}}
	res := collect(t, prog, "orders", ms, nil)
	if len(res) != 3 || res[0].Record == nil || res[1].Record == nil || res[2].Record != nil {
		t.Fatalf("results %+v", res)
	}
	kids := res[0].Record.Children
	if len(kids) != 2 {
		t.Fatalf("SO1 has %d lines, want 2 (SKIP left out): %+v", len(kids), kids)
	}
	// P2 has no PRICE: what P1 had must not stay behind as its own.
	if kids[0].Fields["PARTNAME"] != "P1" || !equalValue(kids[0].Fields["PRICE"], mustDec("9.5")) ||
		kids[1].Fields["PARTNAME"] != "P2" || !equalValue(kids[1].Fields["TQUANT"], mustDec("1.5")) || !equalValue(kids[1].Fields["PRICE"], mustDec("0")) {
		t.Errorf("lines %v / %v", kids[0].Fields, kids[1].Fields)
	}
	if len(kids[1].Children) != 1 || kids[1].Children[0].Fields["TEXT"] != "SO1/P2" {
		t.Errorf("P2's text: %+v", kids[1].Children)
	}
	if len(res[1].Record.Children) != 0 {
		t.Errorf("an empty list gives no child: %+v", res[1].Record.Children)
	}
	// The place is the error's plan position, not pasted into its text.
	if e := res[2].Errors; len(e) != 1 || e[0].Message != `ORDERITEMS_SUBFORM: each must give a list, got "not a list"` || e[0].Plan != "plan.yaml:10:5" {
		t.Errorf("SO3: %+v", res[2].Errors[0])
	}

	res = collect(t, prog, "customers", ms, nil)
	var notes []string
	for _, r := range res {
		if r.Record == nil {
			t.Fatalf("customers: %+v", r)
		}
		for _, c := range r.Record.Children {
			notes = append(notes, r.Record.Fields["CUSTNAME"].(string)+":"+c.Fields["NOTE"].(string)+"@"+c.Loc.String())
		}
	}
	if got := strings.Join(notes, " "); got != "SO1:A@template:ORDERS:2 SO1:B@template:ORDERS:2 SO3:C@template:ORDERS:4" {
		t.Errorf("notes: %s", got)
	}
}
