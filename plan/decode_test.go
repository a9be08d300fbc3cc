package plan

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/migrate-tool/migrate/internal/didyoumean"
	"github.com/migrate-tool/migrate/odata"
)

func decodeFile(t *testing.T, path string) (*Plan, Diagnostics) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return Decode("plan.yaml", data)
}

// The original contract's example (testdata/format-example.yaml, as
// the original contract's plan-format page had it) names three sources its
// steps read without declaring them; everything else in it is a valid plan.
// The users' copy in docs/plan-format.md declares them
// (TestFormatExampleIsCurrent).
func TestFormatExampleVerbatim(t *testing.T) {
	t.Parallel()
	_, ds := decodeFile(t, "testdata/format-example.yaml")
	assertDiags(t, ds, []string{
		`plan.yaml:39:13: unknown source "families" in step "families"`,
		`plan.yaml:66:17: unknown source "notes" in sub-form "GENCUSTNOTES_SUBFORM" of step "customers"`,
		`plan.yaml:75:13: unknown source "order_rows" in step "orders"`,
	})
}

func TestFormatExampleComplete(t *testing.T) {
	t.Parallel()
	p, ds := decodeFile(t, "testdata/good/format-example-complete.yaml")
	if len(ds) != 0 {
		t.Fatalf("want zero problems, got:\n%v", ds)
	}
	if p.Version != 1 || p.Name != "demo-master-data" {
		t.Errorf("version %d name %q", p.Version, p.Name)
	}
	wantTarget := Target{
		URL: "https://erp.example.com/odata/Priority/tabula.ini/demo", Language: 1, Metadata: "metadata.xml",
		SystemVersion: odata.Version{Major: 21, Minor: 0, Raw: "21.0"}, SystemVersionPos: Pos{File: "plan.yaml", Line: 8, Col: 19},
		Auth: "pat", BatchSize: 100, Concurrency: 2, CallsPerMinute: 100, Timezone: "Asia/Jerusalem", DecimalSeparator: ".", Empty: "omit",
		Pos: Pos{File: "plan.yaml", Line: 4, Col: 1},
	}
	if got := p.Target.Spans["metadata"]; got != (Span{Key: Pos{"plan.yaml", 7, 3}, Value: Pos{"plan.yaml", 7, 13}}) {
		t.Errorf("span of target.metadata: %+v", got)
	}
	if len(p.Target.Spans) != 11 {
		t.Errorf("target spans: %v", p.Target.Spans)
	}
	gotTarget := p.Target
	gotTarget.Spans = nil
	if !reflect.DeepEqual(gotTarget, wantTarget) {
		t.Errorf("target:\n got %+v\nwant %+v", gotTarget, wantTarget)
	}
	parts := p.Source("parts")
	if parts == nil || parts.File != "data/parts.csv" || parts.Delimiter != ";" || parts.Encoding != "windows-1255" || parts.DecimalSeparator != "," {
		t.Errorf("source parts: %+v", parts)
	}
	if c := p.Source("customers"); c == nil || c.Sheet != "Customers" || c.HeaderRow != 1 ||
		c.Spans.Value("sheet", Pos{}) != (Pos{"plan.yaml", 25, 12}) || c.Spans.Key("delimiter", Pos{Line: -1}).Line != -1 {
		t.Errorf("source customers: %+v", c)
	}
	l := p.Lookup("agent_code")
	if l == nil || l.Source != "agents" || l.Key.Src != "row.OLD_CODE" || l.Value.Src != "row.NEW_CODE" || l.Missing != "error" {
		t.Errorf("lookup: %+v", l)
	}
	if got := p.stepNames(); !reflect.DeepEqual(got, []string{"families", "parts", "customers", "orders"}) {
		t.Errorf("steps %v", got)
	}
	fam := p.Step("families")
	debit := fam.Fields[2]
	if debit.Name != "DEBITFLAG" || !debit.Expr.IsConst || debit.Expr.Const != "N" || debit.Expr.ConstText != "N" {
		t.Errorf("DEBITFLAG: %+v", debit)
	}
	partsStep := p.Step("parts")
	if partsStep.Mode != ModeUpsert || partsStep.When == nil || partsStep.When.Src != `row.Status != "obsolete"` ||
		partsStep.ID == nil || partsStep.ID.Src != `row["Part No"]` || !reflect.DeepEqual(partsStep.After, []string{"families"}) {
		t.Errorf("parts step: %+v", partsStep)
	}
	orders := p.Step("orders")
	if orders.GroupBy == nil || orders.GroupBy.Src != "row.OrderNo" || len(orders.Subforms) != 3 {
		t.Fatalf("orders: %+v", orders)
	}
	items := orders.Subforms[0]
	if items.Source != "group" || items.Lines != LinesAppend || items.LinesPos.Line == 0 || len(items.Subforms) != 1 {
		t.Errorf("items: %+v", items)
	}
	text := orders.Subforms[1]
	if app := text.Fields[1]; app.Name != "APPEND" || app.Expr.Const != true || app.Expr.ConstText != "true" {
		t.Errorf("APPEND: %+v", app)
	}
	cust := p.Step("customers")
	notes := cust.Subforms[0]
	if notes.Link == nil || notes.Link.Parent.Src != "row.Code" || notes.Link.Child.Src != "row.CustCode" {
		t.Errorf("notes link: %+v", notes.Link)
	}
	if ship := cust.Subforms[1]; ship.Source != "" || ship.When == nil || ship.LinesPos.Line != 0 {
		t.Errorf("ship-to: %+v", ship)
	}
}

func TestDecodeValues(t *testing.T) {
	t.Parallel()
	src := `version: 1
x-defaults: &step
  entity: LOGPART
  source: s
sources:
  s: {file: s.csv, delimiter: '\t', encoding: CP1255}
  x: {file: s.XLSX, sheet: 2024, header_row: 3}
steps:
  - <<: *step
    name: a
    fields:
      N: 12
      F: 1.50
      H: 0x1F
      B: false
      D: 2024-01-31
      S: {value: "007"}
      Z: {value: null}
      Q: "upper(row.A)"
      L: |

        row.A +
          row.B
      P: 'row["x"]'
  - name: b
    entity: LOGPART
    source: x
    after: a
    deep_insert: true
    fields: {A: 'ref("a", row.A)', B: 'ref("a", row.B)'}
`
	p, ds := Decode("plan.yaml", []byte(src))
	if len(ds) != 0 {
		t.Fatalf("diagnostics: %v", ds)
	}
	if s := p.Source("s"); s.Delimiter != "\t" || s.Encoding != "windows-1255" {
		t.Errorf("source s: %+v", s)
	}
	if x := p.Source("x"); x.Sheet != "2024" || x.HeaderRow != 3 {
		t.Errorf("source x: %+v", x)
	}
	a := p.Step("a")
	if a.Entity != "LOGPART" || a.Source != "s" {
		t.Errorf("merge key: %+v", a)
	}
	pos := func(line, col int) Pos { return Pos{File: "plan.yaml", Line: line, Col: col} }
	want := []Expr{
		{Const: int64(12), ConstText: "12", IsConst: true, Pos: pos(12, 10)},
		{Const: 1.5, ConstText: "1.50", IsConst: true, Pos: pos(13, 10)},
		{Const: int64(31), ConstText: "0x1F", IsConst: true, Pos: pos(14, 10)},
		{Const: false, ConstText: "false", IsConst: true, Pos: pos(15, 10)},
		{Const: "2024-01-31", ConstText: "2024-01-31", IsConst: true, Pos: pos(16, 10)},
		{Const: "007", ConstText: "007", IsConst: true, Pos: pos(17, 18)},
		{IsConst: true, Pos: pos(18, 18)},
		{Src: "upper(row.A)", Pos: pos(19, 11), contCol: 11},
		{Src: "row.A +\n  row.B\n", Pos: pos(22, 9), contCol: 9},
		{Src: `row["x"]`, Pos: pos(24, 11), contCol: 11},
	}
	for i, w := range want {
		got := a.Fields[i].Expr
		got.places = nil // TestExprPlaces checks them
		if !reflect.DeepEqual(got, w) {
			t.Errorf("field %s:\n got %#v\nwant %#v", a.Fields[i].Name, got, w)
		}
	}
	b := p.Step("b")
	if !b.DeepInsert || !reflect.DeepEqual(b.After, []string{"a"}) || !reflect.DeepEqual(b.Refs, []string{"a"}) {
		t.Errorf("step b: %+v", b)
	}
	cols := p.Columns()
	if got := cols["s"]; len(got) != 4 || got[3] != (ColumnUse{Name: "x", Pos: pos(24, 16)}) || got[2] != (ColumnUse{Name: "B", Pos: pos(23, 15)}) {
		t.Errorf("columns of s: %+v", got)
	}
}

func TestLoad(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "plan.yaml")
	data := []byte("version: 1\nsources: {s: {file: s.csv}}\nsteps:\n  - {name: a, entity: E, source: s, fields: {A: row.A}}\n")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	p, ds := Load(path)
	if len(ds) != 0 {
		t.Fatal(ds)
	}
	sum := sha256.Sum256(data)
	if p.Path != path || p.Dir != dir || p.Hash != hex.EncodeToString(sum[:]) {
		t.Errorf("path %q dir %q hash %q", p.Path, p.Dir, p.Hash)
	}
	if p.Steps[0].Fields[0].Pos.File != path {
		t.Errorf("positions name the file as given: %v", p.Steps[0].Fields[0].Pos)
	}

	missing := filepath.Join(dir, "nope.yaml")
	p, ds = Load(missing)
	if p == nil || len(ds) != 1 || ds[0].String() != missing+": the plan file does not exist" {
		t.Errorf("missing file: %v", ds)
	}
}

func TestOrder(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		steps string
		want  [][]string
		cycle []string
	}{
		{"file order when independent", `
  - {name: a, entity: E, source: s, fields: {A: row.A}}
  - {name: b, entity: E, source: s, fields: {A: row.A}}`, [][]string{{"a", "b"}}, nil},
		{"after and ref", `
  - {name: c, entity: E, source: s, fields: {A: 'ref("b", row.A)'}}
  - {name: b, entity: E, source: s, after: [a], fields: {A: row.A}}
  - {name: a, entity: E, source: s, fields: {A: row.A}}
  - {name: d, entity: E, source: s, fields: {A: row.A}}`, [][]string{{"a", "d"}, {"b"}, {"c"}}, nil},
		{"ref inside a sub-form", `
  - {name: a, entity: E, source: s, subforms: [{name: S, fields: {K: 'ref("b", 1)'}}]}
  - {name: b, entity: E, source: s, fields: {A: row.A}}`, [][]string{{"b"}, {"a"}}, nil},
		{"cycle", `
  - {name: a, entity: E, source: s, after: [b], fields: {A: row.A}}
  - {name: b, entity: E, source: s, fields: {A: 'ref("a", row.A)'}}`, nil, []string{"a", "b", "a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p, _ := Decode("plan.yaml", []byte("version: 1\nsources: {s: {file: s.csv}}\nsteps:"+tt.steps+"\n"))
			waves, err := p.Order()
			if tt.cycle != nil {
				var ce *CycleError
				if !errors.As(err, &ce) || !reflect.DeepEqual(ce.Steps, tt.cycle) {
					t.Fatalf("want cycle %v, got %v", tt.cycle, err)
				}
				if want := "steps form a cycle: " + strings.Join(tt.cycle, " → "); err.Error() != want {
					t.Errorf("message %q, want %q", err, want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got [][]string
			for _, w := range waves {
				var names []string
				for _, s := range w {
					names = append(names, s.Name)
				}
				got = append(got, names)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("waves %v, want %v", got, tt.want)
			}
		})
	}
}

func TestDiagnostics(t *testing.T) {
	t.Parallel()
	ds := Diagnostics{
		{Pos: Pos{File: "p.yaml", Line: 3, Col: 1}, Message: "w", Severity: SeverityWarning},
		{Pos: Pos{File: "p.yaml", Line: 1, Col: 9}, Message: "b"},
		{Pos: Pos{File: "p.yaml", Line: 1, Col: 2}, Message: "a"},
	}
	ds.Sort()
	if got := ds.Error(); got != "p.yaml:1:2: a\np.yaml:1:9: b\np.yaml:3:1: warning: w" {
		t.Errorf("sorted: %q", got)
	}
	if !ds.HasErrors() || ds.Err() == nil || len(ds.Errors()) != 2 || len(ds.Warnings()) != 1 {
		t.Errorf("errors/warnings split wrong: %v", ds)
	}
	if w := ds.Warnings(); w.HasErrors() || w.Err() != nil {
		t.Errorf("warnings alone are no failure")
	}
}

func TestSuggest(t *testing.T) {
	t.Parallel()
	cands := []string{"source", "entity", "after", "CUSTDES", "CUSTNAME", "fields"}
	tests := []struct{ in, want string }{
		{"sorce", "source"},
		{"CUSTDESC", "CUSTDES"},
		{"custdes", "CUSTDES"},
		{"enitty", "entity"},
		{"feilds", "fields"},
		{"zzzzzz", ""},
		{";", ""},
		{"CUSTDESCRIPTION", "CUSTDES"},
	}
	for _, tt := range tests {
		if got := didyoumean.Closest(tt.in, cands); got != tt.want {
			t.Errorf("Closest(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// expr-lang's error positions are shifted into the file for every style
// of YAML scalar.
func TestExprPositionsInMessages(t *testing.T) {
	t.Parallel()
	const head = "version: 1\nsources: {s: {file: s.csv}}\nsteps:\n  - name: a\n    entity: E\n    source: s\n    fields:\n"
	tests := []struct {
		name, field, want string
	}{
		{"plain", "      A: trim(row.A))\n", `plan.yaml:8:21: field "A" of step "a" is not a valid expression: unexpected token Bracket(")")`},
		{"double quoted", "      A: \"trim(row.A))\"\n", `plan.yaml:8:22: field "A" of step "a" is not a valid expression: unexpected token Bracket(")")`},
		{"single quoted", "      A: 'x + + * 1'\n", `plan.yaml:8:17: field "A" of step "a" is not a valid expression: unexpected token Operator("*")`},
		{"folded", "      A: >-\n        trim(\n          row.A))\n", `plan.yaml:10:17: field "A" of step "a" is not a valid expression: unexpected token Bracket(")")`},
		{"literal", "      A: |\n        trim(row.A,\n          row.B))\n", `plan.yaml:10:17: field "A" of step "a" is not a valid expression: unexpected token Bracket(")")`},
		{"literal with indentation indicator", "      A: |2\n          trim(row.A))\n", `plan.yaml:9:22: field "A" of step "a" is not a valid expression: unexpected token Bracket(")")`},
		{"leading blank line", "      A: |\n\n        row.A +\n", `plan.yaml:10:15: field "A" of step "a" is not a valid expression: it ends too early`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, ds := Decode("plan.yaml", []byte(head+tt.field))
			assertDiags(t, ds, []string{tt.want})
		})
	}
}

// Every character of an expression is placed where it is written, in
// every style of scalar: escapes, folded line breaks, block indentation and
// Hebrew text count as the user sees them.
func TestExprPlaces(t *testing.T) {
	t.Parallel()
	const head = "version: 1\nsources: {s: {file: s.csv}}\nsteps:\n  - name: a\n    entity: E\n    source: s\n    fields:\n"
	tests := []struct {
		name, field string
		line, col   int // of the N of "Nmae"
	}{
		{"plain", "      A: trim(row.Nmae)\n", 8, 19},
		{"plain over two lines", "      A: trim(row.Code) +\n        row.Nmae\n", 9, 13},
		{"double quoted with escapes", "      A: \"replace(row.Code, \\\"a\\\", \\\"b\\\") + row.Nmae\"\n", 8, 49},
		{"double quoted with a \\u escape", "      A: \"\\\"\\u00e9\\\" + row.Nmae\"\n", 8, 28},
		{"double quoted folded", "      A: \"trim(row.Code) +\n\n         row.Nmae\"\n", 10, 14},
		{"double quoted with an escaped line break", "      A: \"trim(row.Code) + ro\\\n         w.Nmae\"\n", 9, 12},
		{"single quoted with a doubled quote", "      A: 'row.Code + ''x'' + row.Nmae'\n", 8, 34},
		{"flow mapping", "      {A: 'row[\"Code\"] + row.Nmae'}\n", 7, 36},
		{"literal", "      A: |\n        trim(row.Code) +\n          row.Nmae\n", 10, 15},
		{"folded", "      A: >\n        trim(row.Code) +\n\n        row.Nmae\n", 11, 13},
		{"hebrew before", "      A: '\"שם\" + row.Nmae'\n", 8, 22},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			src := head + tt.field
			if strings.HasPrefix(tt.field, "      {") { // fields: {A: ...}
				src = strings.Replace(src, "    fields:\n      {", "    fields: {", 1)
			}
			p, ds := Decode("plan.yaml", []byte(src))
			if ds.HasErrors() {
				t.Fatal(ds)
			}
			x := p.Steps[0].Fields[0].Expr
			off := strings.Index(x.Src, "Nmae")
			if off < 0 {
				t.Fatalf("no Nmae in %q", x.Src)
			}
			off = utf8.RuneCountInString(x.Src[:off])
			want := Pos{File: "plan.yaml", Line: tt.line, Col: tt.col}
			if got := x.PosAt(off); got != want {
				t.Errorf("%q: Nmae at %v, want %v", x.Src, got, want)
			}
			end := x.PosAt(1 << 20)
			lines := strings.Split(src, "\n")
			if end.Col > utf8.RuneCountInString(lines[end.Line-1]) {
				t.Errorf("the end of the text is placed past the end of its line: %v", end)
			}
		})
	}
}

func TestExprPosOf(t *testing.T) {
	t.Parallel()
	x := Expr{Src: "trim(\n  row.A)", Pos: Pos{File: "p.yaml", Line: 9, Col: 9}, contCol: 9}
	tests := []struct {
		line, col int
		want      Pos
	}{
		{1, 0, Pos{"p.yaml", 9, 9}},
		{1, 4, Pos{"p.yaml", 9, 13}},
		{2, 2, Pos{"p.yaml", 10, 11}},
	}
	for _, tt := range tests {
		if got := x.PosOf(tt.line, tt.col); got != tt.want {
			t.Errorf("PosOf(%d, %d) = %v, want %v", tt.line, tt.col, got, tt.want)
		}
	}
}

// A plan past the size bounds gets one message that says what is too large
// and what to do, not one about aliases it does not have.
func TestPlanSizeBounds(t *testing.T) {
	t.Parallel()
	steps := func(n int, extra string) []byte {
		var b strings.Builder
		b.WriteString("version: 1\nsources:\n  c: {file: c.csv}\nsteps:\n")
		for i := range n {
			fmt.Fprintf(&b, "  - {name: s%d, entity: CUSTOMERS, source: c, fields: {CUSTNAME: row.A%s}}\n", i, extra)
		}
		return []byte(b.String())
	}
	var wide strings.Builder
	for i := range 100 {
		fmt.Fprintf(&wide, ", X%d: row.A", i)
	}
	many := wide.String()
	tests := []struct {
		name string
		data []byte
		want string
	}{
		{"100k steps", steps(100_000, ""), "plan.yaml:4:1: the plan has 100000 steps, more than the 1000 a plan may have; a plan is one load: split it into several plans (each keeps its own journal)"},
		{"1000 wide steps", steps(MaxSteps, many), "the plan is too large: more than 200000 keys and values; split the load into several plans"},
	}
	for _, tt := range tests {
		_, ds := Decode("plan.yaml", tt.data)
		var errs []string
		for _, d := range ds {
			if d.Severity != SeverityWarning {
				errs = append(errs, d.String())
			}
		}
		if len(errs) != 1 || !strings.Contains(errs[0], tt.want) {
			t.Errorf("%s: %d errors, the first %q; want one error with %q", tt.name, len(errs), errs[:min(len(errs), 1)], tt.want)
		}
	}
	if _, ds := Decode("plan.yaml", steps(MaxSteps, "")); ds.HasErrors() {
		t.Errorf("%d steps: %.300v", MaxSteps, ds)
	}
}

// Whatever way YAML writes an expression (the encoder folds long quoted
// lines, escapes quotes and control characters), each character is placed
// on a character of the file that writes it, never past a line's end.
func TestExprPlacesMatchFile(t *testing.T) {
	t.Parallel()
	values := []string{
		`upper(row.Name)`,
		`row["Part No"] + "it's" + 'x' + "\"q\""`,
		`lookup("agent", row.Agent) ?? "שלום עולם" + row.Name`,
		"row.A +\n  row.B\n    + trim(row.C)",
		"\ttrim(row.A)\t+ row.B",
		strings.Repeat(`row.Long + "a b c d e f g h" + `, 8) + `row.End`,
		"row.A + \"\\u00e9\" + row.B",
	}
	styles := []yaml.Style{0, yaml.DoubleQuotedStyle, yaml.SingleQuotedStyle, yaml.LiteralStyle, yaml.FoldedStyle}
	checked := 0
	for vi, value := range values {
		for _, style := range styles {
			doc := &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{
				{Kind: yaml.ScalarNode, Value: "X"},
				{Kind: yaml.ScalarNode, Value: value, Style: style},
			}}
			body, err := yaml.Marshal(doc)
			if err != nil {
				t.Fatal(err)
			}
			src := "version: 1\nsources: {s: {file: s.csv}}\nsteps:\n  - name: a\n    entity: E\n    source: s\n    fields:\n"
			for _, l := range strings.SplitAfter(string(body), "\n") {
				if l != "" {
					src += "      " + l
				}
			}
			p, _ := Decode("plan.yaml", []byte(src))
			if len(p.Steps) != 1 || len(p.Steps[0].Fields) != 1 || p.Steps[0].Fields[0].Expr.IsConst {
				continue // the encoder chose a form that is no expression here
			}
			x := p.Steps[0].Fields[0].Expr
			checked++ // (x.Src may differ from value: yaml.v3 does not round-trip every folded scalar)
			lines := strings.Split(src, "\n")
			for i, r := range []rune(x.Src) {
				pos := x.PosAt(i)
				line := []rune(lines[pos.Line-1])
				if pos.Col < 1 || pos.Col > max(1, len(line)) {
					t.Fatalf("value %d style %v: character %d placed at %v, outside its line %q", vi, style, i, pos, lines[pos.Line-1])
				}
				if r == ' ' || r == '\n' || r == '\t' || len(line) == 0 {
					continue // folded line breaks have no character of their own
				}
				if f := line[pos.Col-1]; f != r && f != '\\' && f != '\'' {
					t.Errorf("value %d style %v: %q placed on %q at %v in\n%s", vi, style, r, f, pos, src)
					break
				}
			}
		}
	}
	if checked < len(values)*len(styles)*2/3 {
		t.Errorf("only %d of %d encodings were checked", checked, len(values)*len(styles))
	}
}

// A YAML null under empty: is the null policy, as a user who writes
// `empty: null` means; an empty value is still a mistake.
func TestDecodeEmptyPolicy(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		value, want, diag string
	}{
		{value: "null", want: "null"},
		{value: "~", want: "null"},
		{value: "Null", want: "null"},
		{value: `"null"`, want: "null"},
		{value: "omit", want: "omit"},
		{value: "keep", want: "keep"},
		{value: "", diag: `plan.yaml:3:9: "empty" must be "omit", "null" or "keep", not empty`},
		{value: "nul", diag: `plan.yaml:3:10: "empty" must be "omit", "null" or "keep", not "nul"; did you mean "null"?`},
	} {
		src := "version: 1\ntarget:\n  empty: " + tc.value + "\nsources: {s: {file: s.csv}}\nsteps:\n  - {name: a, entity: LOGPART, source: s, fields: {A: row.A}}\n"
		p, ds := Decode("plan.yaml", []byte(src))
		got := ""
		if len(ds) > 0 {
			got = ds[0].Error()
		}
		if got != tc.diag {
			t.Errorf("empty: %s: diagnostics %v, want %q", tc.value, ds, tc.diag)
			continue
		}
		if tc.diag == "" && p.Target.Empty != tc.want {
			t.Errorf("empty: %s gives %q, want %q", tc.value, p.Target.Empty, tc.want)
		}
	}
}

// A Windows path in double quotes reads its \t, \n, \f as control
// characters: the plan says so at the value, and how to write it.
func TestWindowsPathInDoubleQuotes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ file, want string }{
		{`"C:\temp\new.csv"`, `plan.yaml:3:18: "file" of source "orders" holds a control character ("C:\temp\new.csv"): in double quotes YAML reads \t, \n, \f, \b… as one; write a Windows path in single quotes ('C:\data\orders.csv') or with forward slashes (C:/data/orders.csv)`},
		{`'C:\temp\new.csv'`, ""},
		{`C:/temp/new.csv`, ""},
	} {
		src := "version: 1\nsources:\n  orders: {file: " + tc.file + "}\nsteps:\n  - name: families\n    entity: FAMILY_LOG\n    source: orders\n    fields: {FAMILYNAME: row.Code}\n"
		_, ds := Decode("plan.yaml", []byte(src))
		got := ""
		for _, d := range ds {
			if strings.Contains(d.String(), "control character") {
				got = d.String()
			}
		}
		if got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.file, got, tc.want)
		}
	}
}

// TestDecodeDialect: target.dialect names the kind of service; under odata
// the ERP's URL segments (language, companies) are refused where written.
func TestDecodeDialect(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		target, want string
		diags        []string
	}{
		{target: "dialect: odata", want: "odata"},
		{target: "dialect: priority\n  language: 3", want: "priority"},
		{target: "timezone: UTC", want: ""},
		{target: "dialect: sap", diags: []string{`plan.yaml:3:12: "dialect" must be "priority" or "odata", not "sap"`}},
		{target: "dialect: odata\n  language: 3\n  companies: [demo, test]", want: "odata", diags: []string{
			`plan.yaml:4:13: "language" is the ERP's segment of the service root; a service of dialect odata has none: remove it`,
			`plan.yaml:5:14: "companies" are the ERP's companies of one installation; a service of dialect odata has none: remove it`}},
	} {
		src := "version: 1\ntarget:\n  " + tc.target + "\nsources: {s: {file: s.csv}}\nsteps:\n  - {name: a, entity: LOGPART, source: s, fields: {A: row.A}}\n"
		p, ds := Decode("plan.yaml", []byte(src))
		var got []string
		for _, d := range ds {
			got = append(got, d.Error())
		}
		if strings.Join(got, "\n") != strings.Join(tc.diags, "\n") {
			t.Errorf("%q: diagnostics\n%s\nwant\n%s", tc.target, strings.Join(got, "\n"), strings.Join(tc.diags, "\n"))
			continue
		}
		if tc.diags == nil && p.Target.Dialect != tc.want {
			t.Errorf("%q: dialect %q, want %q", tc.target, p.Target.Dialect, tc.want)
		}
	}
}

func TestDecodeClientCredentials(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		target, tokenURL, scopes string
	}{
		{target: "auth: client_credentials\n  token_url: https://login.example.com/t\n  scopes: api://erp/.default", tokenURL: "https://login.example.com/t", scopes: "api://erp/.default"},
		{target: "token_url: http://127.0.0.1:9/token\n  scopes: [a, 'b c']", tokenURL: "http://127.0.0.1:9/token", scopes: "a|b|c"},
		{target: "auth: client_credentials"},
	} {
		src := "version: 1\ntarget:\n  " + tc.target + "\nconnections: {src: {url: 'https://s.example/odata', token_url: 'https://l.example/t', scopes: 'x y'}}\n" +
			"sources: {s: {file: s.csv}}\nsteps:\n  - {name: a, entity: LOGPART, source: s, fields: {A: row.A}}\n"
		p, ds := Decode("plan.yaml", []byte(src))
		if len(ds) > 0 {
			t.Errorf("%q: %v", tc.target, ds)
			continue
		}
		if p.Target.TokenURL != tc.tokenURL || strings.Join(p.Target.Scopes, "|") != tc.scopes {
			t.Errorf("%q: token URL %q, scopes %q; want %q, %q", tc.target, p.Target.TokenURL, p.Target.Scopes, tc.tokenURL, tc.scopes)
		}
		if c := p.Connections[0]; c.TokenURL != "https://l.example/t" || strings.Join(c.Scopes, "|") != "x|y" {
			t.Errorf("%q: connection token URL %q, scopes %q", tc.target, c.TokenURL, c.Scopes)
		}
	}
}
