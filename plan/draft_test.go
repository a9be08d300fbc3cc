package plan

import (
	"testing"

	"github.com/migrate-tool/migrate/internal/golden"
)

// A Draft is written as the plan format's YAML, notes as comments, and
// reads back (Decode) as the plan it describes: names, sources, the
// fields' expressions, a sub-form's when and link, values that need
// quoting.
func TestDraftMarshal(t *testing.T) {
	t.Parallel()
	d := &Draft{
		Note:    "A plan for a test:\ntwo lines of note.",
		Name:    "orders",
		Dialect: "odata",
		Sources: []*Source{
			{Name: "orders", File: "data/my orders: 2024.csv", Delimiter: ";", Encoding: "windows-1255", LazyQuotes: true},
			{Name: "lines", File: "book.xlsx", Sheet: "Order lines", HeaderRow: 2},
		},
		Steps: []*DraftStep{{
			Name: "orders", Entity: "ORDERS", Source: "orders",
			Fields: []DraftField{
				{Name: "CUSTNAME", Expr: "row.CUSTNAME"},
				{Note: "ORD is assigned by the server (read-only); column \"ORD\" is not loaded"},
				{Name: "DETAILS", Expr: `row["שם: פרטים"]`},
			},
			Subforms: []*DraftStep{
				{Name: "ORDERITEMS_SUBFORM", Source: "lines", Link: &DraftLink{Parent: "row.ORDNAME", Child: `row["order #"]`},
					Fields: []DraftField{{Name: "PARTNAME", Expr: "row.PARTNAME"}}},
				{Name: "SHIPTO2_SUBFORM", When: `row.ADDRESS != ""`,
					Fields: []DraftField{{Name: "ADDRESS", Expr: "row.ADDRESS"}}},
			},
			Notes: []string{"columns of sheet Orders with no field: \"X\""},
		}},
	}
	text := d.Marshal()
	golden.Check(t, "testdata/draft.golden.yaml", text)

	p, ds := Decode("draft.yaml", text)
	if ds.HasErrors() {
		t.Fatalf("the draft does not read back: %v\n%s", ds, text)
	}
	if p.Name != "orders" || p.Target.Dialect != "odata" || len(p.Sources) != 2 || len(p.Steps) != 1 {
		t.Fatalf("read back: name %q, dialect %q, %d sources, %d steps", p.Name, p.Target.Dialect, len(p.Sources), len(p.Steps))
	}
	src := p.Source("orders")
	if src == nil || src.File != "data/my orders: 2024.csv" || src.Delimiter != ";" || src.Encoding != "windows-1255" || !src.LazyQuotes {
		t.Errorf("source orders read back as %+v", src)
	}
	if l := p.Source("lines"); l == nil || l.Sheet != "Order lines" || l.HeaderRow != 2 {
		t.Errorf("source lines read back as %+v", l)
	}
	s := p.Steps[0]
	if s.Entity != "ORDERS" || s.Source != "orders" || len(s.Fields) != 2 || s.Fields[1].Expr.Src != `row["שם: פרטים"]` {
		t.Errorf("step read back as %+v", s)
	}
	if len(s.Subforms) != 2 {
		t.Fatalf("%d sub-forms read back, want 2", len(s.Subforms))
	}
	if sf := s.Subforms[0]; sf.Source != "lines" || sf.Link == nil || sf.Link.Child.Src != `row["order #"]` {
		t.Errorf("sub-form with a link read back as %+v", sf)
	}
	if sf := s.Subforms[1]; sf.When == nil || sf.When.Src != `row.ADDRESS != ""` {
		t.Errorf("sub-form with when read back as %+v", sf)
	}
}
