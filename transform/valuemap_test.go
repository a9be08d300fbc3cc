package transform

import (
	"testing"

	"github.com/migrate-tool/migrate/plan"
	"github.com/migrate-tool/migrate/source"
)

// map("name", value) over a map of the plan: each value's target, an
// empty cell left empty, a value the map lacks a row error at the cell of
// the column it maps, with the nearest value the map has.
func TestValueMaps(t *testing.T) {
	t.Parallel()
	units := &plan.ValueMap{Name: "units", Entries: []plan.MapEntry{
		{Source: "יח'", Target: "EA"}, {Source: "kg", Target: "KG"}, {Source: "12", Target: "DOZEN"},
	}}
	tests := []struct {
		name string
		expr string
		unit source.Cell
		want any    // the field's value; nil: left out
		err  string // the row error; "" for none
		cell string // where the error is
	}{
		{name: "hebrew", expr: `map("units", row.Unit)`, unit: "יח'", want: "EA"},
		{name: "english", expr: `map("units", row.Unit)`, unit: "kg", want: "KG"},
		{name: "number as text", expr: `map("units", row.Unit)`, unit: source.Number("12"), want: "DOZEN"},
		{name: "inside an expression", expr: `lower(map("units", trim(row.Unit)))`, unit: " kg ", want: "kg"},
		{name: "empty stays empty", expr: `map("units", row.Unit)`, unit: "", want: nil},
		{name: "case counts", expr: `map("units", row.Unit)`, unit: "KG", err: `map "units" has no value "KG"; did you mean "kg"?`, cell: "p.xlsx!Parts!B2"},
		{name: "nothing near", expr: `map("units", row.Unit)`, unit: "barrel", err: `map "units" has no value "barrel"; add it to the map`, cell: "p.xlsx!Parts!B2"},
		{name: "not the column itself", expr: `map("units", trim(row.Unit))`, unit: "kgs", err: `map "units" has no value "kgs"; did you mean "kg"?`, cell: "p.xlsx!Parts!2"},
		{name: "builtin map untouched", expr: `join(map(split(row.Unit, ","), upper(#)), "+")`, unit: "a,b", want: "A+B"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := &plan.Plan{Dir: t.TempDir(), Maps: []*plan.ValueMap{units},
				Sources: []*plan.Source{{Name: "p", File: "p.xlsx", Sheet: "Parts"}},
				Steps:   []*plan.Step{{Name: "p", Entity: "ANY", Source: "p", Fields: fields("CODE", "row.Code", "U", tt.expr)}}}
			prog := mustCompile(t, p, nil, testOptions())
			ms := &memSources{make: map[string]func() *memReader{"p": func() *memReader {
				m := newMem("p.xlsx", []string{"Code", "Unit"}, []source.Cell{"P1", tt.unit})
				m.sheet = "Parts"
				return m
			}}}
			res := collect(t, prog, "p", ms, nil)
			if len(res) != 1 {
				t.Fatalf("results = %+v", res)
			}
			if tt.err != "" {
				if len(res[0].Errors) != 1 {
					t.Fatalf("errors = %+v, want %q", res[0].Errors, tt.err)
				}
				e := res[0].Errors[0]
				if e.Message != tt.err || e.Cell != tt.cell || e.Field != "U" {
					t.Errorf("error = %q at %s (field %s), want %q at %s", e.Message, e.Cell, e.Field, tt.err, tt.cell)
				}
				return
			}
			if res[0].Record == nil {
				t.Fatalf("errors = %+v", res[0].Errors)
			}
			if got := res[0].Record.Fields["U"]; got != tt.want {
				t.Errorf("U = %#v, want %#v", got, tt.want)
			}
		})
	}
}
