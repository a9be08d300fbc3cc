package cli

import (
	"encoding/json"
	"testing"

	"github.com/migrate-tool/migrate/executor"
	"github.com/migrate-tool/migrate/plan"
)

// The JSON of a problem keeps every field it had (location, message,
// severity; an error's step, field, value, plan_location) and adds the
// model's summary, detail and ranges.
func TestDiagnosticJSON(t *testing.T) {
	t.Parallel()
	p, ds := plan.Decode("p.yaml", []byte("version: 1\nsteps:\n  - name: a\n    entity: CUSTOMERS\n    sorce: x\n"))
	var unknown plan.Diagnostic
	for _, d := range ds {
		if d.Pos.Line == 5 {
			unknown = d
		}
	}
	tests := []struct {
		name string
		v    any
		want string
	}{
		{"plan error", problemsJSON(p, plan.Diagnostics{unknown}),
			`[{"location":"p.yaml:5:5","message":"unknown key \"sorce\" in step \"a\"; did you mean \"source\"?","summary":"unknown key \"sorce\" in step \"a\"","detail":"did you mean \"source\"?",` +
				`"range":{"file":"p.yaml","start":{"line":5,"column":5},"end":{"line":5,"column":9}}}]`},
		{"warning, no plan text: a point", problemsJSON(nil, plan.Diagnostics{{Pos: plan.Pos{File: "p.yaml", Line: 3, Col: 5}, Message: "look; here", Severity: plan.SeverityWarning}}),
			`[{"location":"p.yaml:3:5","message":"look; here","severity":"warning","summary":"look","detail":"here","range":{"file":"p.yaml","start":{"line":3,"column":5},"end":{"line":3,"column":5}}}]`},
		{"the whole file: no range", problemsJSON(nil, plan.Diagnostics{{Pos: plan.Pos{File: "p.yaml"}, Message: "the plan file does not exist"}}),
			`[{"location":"p.yaml","message":"the plan file does not exist","summary":"the plan file does not exist"}]`},
		{"row error in a workbook", errorOf(executor.RecordError{Step: "lines", Location: "o.xlsx!Lines!D17", Field: "PRICE", Value: "12,5x",
			PlanLocation: "p.yaml:31:9", Message: `"12,5x" is not a decimal (Edm.Decimal)`}),
			`{"step":"lines","location":"o.xlsx!Lines!D17","field":"PRICE","value":"12,5x","plan_location":"p.yaml:31:9","message":"\"12,5x\" is not a decimal (Edm.Decimal)","summary":"\"12,5x\" is not a decimal (Edm.Decimal)",` +
				`"range":{"file":"o.xlsx","sheet":"Lines","start":{"line":17,"column":4},"end":{"line":17,"column":4}},"plan_range":{"file":"p.yaml","start":{"line":31,"column":9},"end":{"line":31,"column":9}}}`},
		{"server's refusal of a CSV row, partly loaded", errorOf(executor.RecordError{Step: "orders", Location: "o.csv:9", Message: "no such part; check the part number", Partly: "ORDERS('SO1') created with 3 of 4 lines"}),
			`{"step":"orders","location":"o.csv:9","message":"no such part; check the part number","partly_loaded":"ORDERS('SO1') created with 3 of 4 lines","summary":"no such part","detail":"check the part number",` +
				`"range":{"file":"o.csv","start":{"line":9,"column":0},"end":{"line":9,"column":0}}}`},
	}
	for _, tt := range tests {
		got, err := json.Marshal(tt.v)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != tt.want {
			t.Errorf("%s:\n got %s\nwant %s", tt.name, got, tt.want)
		}
	}
}

// The human line of a row error is the model's.
func TestErrorHumanLine(t *testing.T) {
	t.Parallel()
	tests := []struct {
		e    executor.RecordError
		want string
	}{
		{executor.RecordError{Location: "o.xlsx!Lines!D17", Field: "PRICE", PlanLocation: "p.yaml:31:9", Message: "bad"}, "o.xlsx!Lines!D17 (p.yaml:31:9 PRICE): bad"},
		{executor.RecordError{Location: "o.csv:4", PlanLocation: "p.yaml:12:11", Message: "bad"}, "o.csv:4 (p.yaml:12:11): bad"},
		{executor.RecordError{Location: "o.csv:2", Field: "PARTNAME", Message: "no such part"}, "o.csv:2: PARTNAME: no such part"},
		{executor.RecordError{Location: "o.csv:2", Message: "refused"}, "o.csv:2: refused"},
	}
	for _, tt := range tests {
		if got := errorOf(tt.e).d.String(); got != tt.want {
			t.Errorf("got %q, want %q", got, tt.want)
		}
	}
}
