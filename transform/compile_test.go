package transform

import (
	"strings"
	"testing"

	"github.com/migrate-tool/migrate/internal/didyoumean"
	"github.com/migrate-tool/migrate/plan"
)

func TestCompileDiagnostics(t *testing.T) {
	t.Parallel()
	at := func(line, col int, src string) plan.Expr {
		return plan.Expr{Src: src, Pos: plan.Pos{File: "plan.yaml", Line: line, Col: col}}
	}
	step := func(fs ...*plan.Field) *plan.Plan {
		return &plan.Plan{Dir: t.TempDir(),
			Sources: []*plan.Source{{Name: "customers", File: "c.csv"}},
			Steps:   []*plan.Step{{Name: "customers", Entity: "CUSTOMERS", Source: "customers", Fields: fs}}}
	}
	f := func(name string, e plan.Expr) *plan.Field {
		return &plan.Field{Name: name, Expr: e, Pos: plan.Pos{File: "plan.yaml", Line: e.Pos.Line, Col: 7}}
	}
	tests := []struct {
		name string
		plan *plan.Plan
		want []string
	}{
		{name: "syntax error shifted by the expression's column",
			plan: step(f("CUSTDES", at(12, 16, `trim(row.Name`))),
			want: []string{"plan.yaml:12:"}},
		{name: "misspelt function with suggestion",
			plan: step(f("CUSTDES", at(12, 16, `uper(row.Name)`))),
			want: []string{`plan.yaml:12:16: unknown name uper; did you mean "upper"?`}},
		{name: "unknown function",
			plan: step(f("CUSTDES", at(12, 16, `trimm(row.Name)`))),
			want: []string{"plan.yaml:12:16: unknown name trimm"}},
		{name: "wrong argument count",
			plan: step(f("CUSTDES", at(12, 16, `substr(row.Name)`))),
			want: []string{"plan.yaml:12:16: not enough arguments to call substr"}},
		{name: "type error",
			plan: step(f("CUSTDES", at(12, 16, `trim(row.Name) + 1`))),
			want: []string{"plan.yaml:12:31: invalid operation: + (mismatched types string and int)"}},
		{name: "parent outside a sub-form",
			plan: step(f("CUSTDES", at(12, 16, `parent.row.Code`))),
			want: []string{"plan.yaml:12:16: unknown name parent"}},
		{name: "group without group_by",
			plan: step(f("CUSTDES", at(12, 16, `len(group)`))),
			want: []string{"plan.yaml:12:20: unknown name group"}},
		{name: "bad constant pattern",
			plan: step(f("CUSTDES", at(12, 16, `regex_replace(row.Name, "([a-z", "")`))),
			want: []string{`plan.yaml:12:40: regex_replace: bad pattern "([a-z": missing closing ]`}},
		{name: "error on a continuation line",
			plan: step(f("CUSTDES", at(12, 9, "trim(\n  row.Name) +\n  )"))),
			want: []string{"plan.yaml:14:"}},
		{name: "computed field refused",
			plan: step(f("CUST", at(12, 16, `row.Code`))),
			want: []string{"plan.yaml:12:7: CUSTOMERS.CUST is assigned by the server and read-only; remove it from fields"}},
		{name: "empty expression",
			plan: step(f("CUSTDES", at(12, 16, ` `))),
			want: []string{"plan.yaml:12:16: empty expression"}},
		{name: "env of a credential refused where it is written",
			plan: step(f("CUSTDES", at(12, 16, `row.Name + env("DB_PASSWORD")`))),
			want: []string{`plan.yaml:12:31: env("DB_PASSWORD"): DB_PASSWORD may hold a credential (its name says so), which a plan may not read`}},
		{name: "bad timezone",
			plan: &plan.Plan{Target: plan.Target{Timezone: "Mars/Olympus", Pos: plan.Pos{File: "plan.yaml", Line: 3, Col: 3}}},
			want: []string{`plan.yaml:3:3: unknown timezone "Mars/Olympus"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, diags := Compile(tt.plan, demoMetadata(), testOptions())
			if len(diags) != len(tt.want) {
				t.Fatalf("diagnostics = %v, want %d: %q", diags, len(tt.want), tt.want)
			}
			for i, d := range diags {
				if !strings.HasPrefix(d.String(), tt.want[i]) {
					t.Errorf("diagnostic %d = %q, want it to start with %q", i, d.String(), tt.want[i])
				}
			}
		})
	}
}

func TestCompileScopes(t *testing.T) {
	t.Parallel()
	p := &plan.Plan{Dir: t.TempDir(),
		Sources: []*plan.Source{{Name: "rows", File: "r.csv"}, {Name: "notes", File: "n.csv"}, {Name: "agents", File: "a.csv"}},
		Lookups: []*plan.Lookup{{Name: "agent", Source: "agents", Key: x("row.Old"), Value: x("row.New")}},
		Steps: []*plan.Step{{Name: "orders", Entity: "ORDERS", Source: "rows", GroupBy: xp("row.No"), When: xp(`row.Status != "x"`),
			ID:     xp(`"O-" + row.No`),
			Fields: fields("ORDNAME", "row.No", "CUSTNAME", `lookup("agent", row.Cust) ?? ""`),
			Subforms: []*plan.Subform{{Name: "ORDERITEMS_SUBFORM", Source: "group",
				Fields:   fields("PARTNAME", `parent.fields.ORDNAME + "/" + row.Part`, "TQUANT", "len(group)"),
				Subforms: []*plan.Subform{{Name: "ORDERITEMSTEXT_SUBFORM", Fields: fields("TEXT", `parent.parent.row.No + parent.row.Part`)}}},
				{Name: "ORDERSTEXT_SUBFORM", Source: "notes", Link: &plan.Link{Parent: x("row.No"), Child: x("row.OrderNo")}, Fields: fields("TEXT", "row.Text")}}}}}
	prog := mustCompile(t, p, demoMetadata(), testOptions())
	st := prog.steps["orders"]
	if st.fields[0].expr.column != "No" || st.fields[1].expr.column != "" {
		t.Errorf("plain column detection: %q %q", st.fields[0].expr.column, st.fields[1].expr.column)
	}
	if got := st.subs[0].subs[0].conv.sep; got != '.' {
		t.Errorf("separator = %q", got)
	}
	if !st.subs[1].single || st.subs[0].single {
		t.Errorf("Single from the metadata's Collection flag: %v %v", st.subs[0].single, st.subs[1].single)
	}
}

func TestDidYouMean(t *testing.T) {
	t.Parallel()
	names := []string{"Code", "Name", "Customer Name"}
	for in, want := range map[string]string{"Nmae": `; did you mean "Name"?`, "code": `; did you mean "Code"?`, "Zzzzzz": "", "Customer Nam": `; did you mean "Customer Name"?`} {
		if got := didyoumean.Hint(in, names); got != want {
			t.Errorf("didyoumean.Hint(%q) = %q, want %q", in, got, want)
		}
	}
}
