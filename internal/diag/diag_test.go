package diag

import "testing"

func TestRangeString(t *testing.T) {
	t.Parallel()
	tests := []struct {
		r    Range
		want string
	}{
		{Range{File: "plan.yaml"}, "plan.yaml"},
		{Point("plan.yaml", 12, 5), "plan.yaml:12:5"},
		{Range{File: "plan.yaml", Start: Pos{12, 5}, End: Pos{13, 9}}, "plan.yaml:12:5"},
		{Point("parts.csv", 42, 0), "parts.csv:42"},
		{Point("parts.csv", 42, 3), "parts.csv:42:3"},
		{Range{File: "orders.xlsx", Sheet: "Lines", Start: Pos{17, 4}}, "orders.xlsx!Lines!D17"},
		{Range{File: "orders.xlsx", Sheet: "Lines", Start: Pos{17, 27}}, "orders.xlsx!Lines!AA17"},
		{Range{File: "orders.xlsx", Sheet: "Lines", Start: Pos{17, 0}}, "orders.xlsx!Lines!17"},
		{Range{File: "orders.xlsx", Sheet: "Lines"}, "orders.xlsx!Lines"},
	}
	for _, tt := range tests {
		if got := tt.r.String(); got != tt.want {
			t.Errorf("%+v: got %q, want %q", tt.r, got, tt.want)
		}
	}
}

func TestParseRange(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want Range
	}{
		{"", Range{}},
		{"plan.yaml", Range{File: "plan.yaml"}},
		{"plan.yaml:12:5", Point("plan.yaml", 12, 5)},
		{"parts.csv:42", Point("parts.csv", 42, 0)},
		{`C:\loads\parts.csv:42`, Point(`C:\loads\parts.csv`, 42, 0)},
		{"orders.xlsx!Lines!D17", Range{File: "orders.xlsx", Sheet: "Lines", Start: Pos{17, 4}, End: Pos{17, 4}}},
		{"orders.xlsx!Lines!17", Range{File: "orders.xlsx", Sheet: "Lines", Start: Pos{17, 0}, End: Pos{17, 0}}},
		{"orders.xlsx!Q1!Lines!C3", Range{File: "orders.xlsx", Sheet: "Q1!Lines", Start: Pos{3, 3}, End: Pos{3, 3}}},
		{"orders.xlsx!Lines", Range{File: "orders.xlsx", Sheet: "Lines"}},
		// Texts that only look like places stay whole, so they print back
		// as they were.
		{"report:007", Range{File: "report:007"}},
		{"parts.csv:0", Range{File: "parts.csv:0"}},
		{"a!b!c7x", Range{File: "a", Sheet: "b!c7x"}},
	}
	for _, tt := range tests {
		got := ParseRange(tt.in)
		if got != tt.want {
			t.Errorf("ParseRange(%q) = %+v, want %+v", tt.in, got, tt.want)
		}
		if s := got.String(); s != tt.in {
			t.Errorf("ParseRange(%q).String() = %q: the text must come back as it was", tt.in, s)
		}
	}
}

func TestNewSplitsSummaryAndDetail(t *testing.T) {
	t.Parallel()
	tests := []struct {
		msg, summary, detail string
	}{
		{`"batch_size" must be between 1 and 1000, not 5000`, `"batch_size" must be between 1 and 1000, not 5000`, ""},
		{`unknown field "CUSTDESC" in CUSTOMERS; did you mean "CUSTDES"?`, `unknown field "CUSTDESC" in CUSTOMERS`, `did you mean "CUSTDES"?`},
		{`unknown key "a; b" in target; did you mean "url"?`, `unknown key "a; b" in target`, `did you mean "url"?`},
		{`the value "x\"; y" is odd; quote it`, `the value "x\"; y" is odd`, `quote it`},
		{`a;b; c; d`, `a;b`, `c; d`},
	}
	for _, tt := range tests {
		d := New(Error, Point("p.yaml", 1, 1), tt.msg)
		if d.Summary != tt.summary || d.Detail != tt.detail {
			t.Errorf("New(%q): summary %q, detail %q; want %q, %q", tt.msg, d.Summary, d.Detail, tt.summary, tt.detail)
		}
		if d.Message() != tt.msg {
			t.Errorf("New(%q).Message() = %q: the message must come back whole", tt.msg, d.Message())
		}
	}
}

func TestDiagnosticString(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		d    Diagnostic
		want string
	}{
		{"plan error", New(Error, Point("plan.yaml", 33, 7), `unknown field "CUSTDESC" in CUSTOMERS; did you mean "CUSTDES"?`),
			`plan.yaml:33:7: unknown field "CUSTDESC" in CUSTOMERS; did you mean "CUSTDES"?`},
		{"plan warning", New(Warning, Point("plan.yaml", 43, 5), `step "orders" has neither match nor id`),
			`plan.yaml:43:5: warning: step "orders" has neither match nor id`},
		{"whole file", New(Error, Range{File: "plan.yaml"}, "the plan file does not exist"),
			"plan.yaml: the plan file does not exist"},
		{"row with field and plan", Diagnostic{Summary: `"12,5" is not a decimal`, Subject: ParseRange("orders.xlsx!Lines!D17"),
			Step: "lines", Field: "PRICE", Value: "12,5", Context: Point("plan.yaml", 31, 9)},
			`orders.xlsx!Lines!D17 (plan.yaml:31:9 PRICE): "12,5" is not a decimal`},
		{"row with plan only", Diagnostic{Summary: "when must be true or false, got text", Subject: Point("orders.csv", 4, 0), Context: Point("plan.yaml", 12, 11)},
			"orders.csv:4 (plan.yaml:12:11): when must be true or false, got text"},
		{"row with field only", Diagnostic{Summary: "no such part", Subject: Point("o.csv", 2, 0), Field: "PARTNAME"},
			"o.csv:2: PARTNAME: no such part"},
		{"row of the source itself", Diagnostic{Summary: "a stray quote", Detail: "double it", Subject: Point("o.csv", 2, 7)},
			"o.csv:2:7: a stray quote; double it"},
	}
	for _, tt := range tests {
		if got := tt.d.String(); got != tt.want {
			t.Errorf("%s:\n got %s\nwant %s", tt.name, got, tt.want)
		}
	}
}
