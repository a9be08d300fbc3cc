package plan

import (
	"reflect"
	"strings"
	"testing"
)

const testsPlanHead = `version: 1
sources:
  orders: {file: orders.csv}
  agents: {file: agents.csv}
lookups:
  agent: {source: agents, key: row.Old, value: row.New}
  vat: {entity: VATS, key: CODE, value: RATE}
steps:
  - name: orders
    entity: ORDERS
    source: orders
    fields:
      CUSTNAME: row.Customer
      AGENT: lookup("agent", row.Agent)
      RATE: lookup("vat", row.Vat)
    subforms:
      - name: ORDERITEMS_SUBFORM
        fields: {PARTNAME: row.Part, TQUANT: row.Qty}
        subforms:
          - name: ORDERITEMSTEXT_SUBFORM
            fields: {TEXT: row.Note}
`

func TestDecodeTests(t *testing.T) {
	t.Parallel()
	src := testsPlanHead + `tests:
  - name: one order
    step: orders
    exact: true
    given:
      orders: [{Customer: C1, Part: P1, Qty: 2, Note: ~}]
    expect:
      - fields: {CUSTNAME: C1, TQUANT: 2.50, DONE: true, GONE: null}
        ORDERITEMS_SUBFORM:
          - {PARTNAME: P1, ORDERITEMSTEXT_SUBFORM: [{TEXT: hi}]}
    errors:
      - {row: 1, field: AGENT, message: no agent}
`
	p, ds := Decode("plan.yaml", []byte(src))
	if ds.HasErrors() {
		t.Fatalf("problems: %v", ds)
	}
	if len(p.Tests) != 1 {
		t.Fatalf("tests: %d", len(p.Tests))
	}
	ts := p.Tests[0]
	if ts.Name != "one order" || ts.Step != "orders" || !ts.Exact || !ts.ExpectSet {
		t.Errorf("test: %+v", ts)
	}
	if ts.StepPos != (Pos{"plan.yaml", 24, 11}) {
		t.Errorf("step at %v", ts.StepPos)
	}
	g := ts.Given[0]
	want := []GivenCell{{"Customer", "C1"}, {"Part", "P1"}, {"Qty", "2"}, {"Note", ""}}
	if g.Source != "orders" || !reflect.DeepEqual(g.Rows[0].Cells, want) {
		t.Errorf("given: %+v", g.Rows[0].Cells)
	}
	r := ts.Expect[0]
	var got []any
	for _, f := range r.Fields {
		got = append(got, f.Name, f.Value)
	}
	if want := []any{"CUSTNAME", "C1", "TQUANT", Number("2.50"), "DONE", true, "GONE", nil}; !reflect.DeepEqual(got, want) {
		t.Errorf("fields: %v", got)
	}
	if r.Fields[0].Pos != (Pos{"plan.yaml", 29, 28}) {
		t.Errorf("CUSTNAME expected at %v", r.Fields[0].Pos)
	}
	items := r.Lines[0]
	if items.Nav != "ORDERITEMS_SUBFORM" || len(items.Lines) != 1 || items.Lines[0].Fields[0].Value != "P1" ||
		items.Lines[0].Lines[0].Nav != "ORDERITEMSTEXT_SUBFORM" || items.Lines[0].Lines[0].Lines[0].Fields[0].Value != "hi" {
		t.Errorf("lines: %+v", items)
	}
	if e := ts.Errors[0]; *e != (ExpectError{Row: 1, Field: "AGENT", Message: "no agent", Pos: Pos{"plan.yaml", 33, 9}}) {
		t.Errorf("error: %+v", e)
	}
}

func TestDecodeTestsProblems(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, tests string
		want        []string
	}{
		{"missing keys", "  - given: {}\n", []string{
			`plan.yaml:23:5: missing key "name" in test 1`,
			`plan.yaml:23:5: missing key "step" in test 1`,
		}},
		{"unknown key", "  - {name: a, step: orders, expected: []}\n", []string{
			`plan.yaml:23:29: unknown key "expected" in test 1; did you mean "expect"?`,
		}},
		{"unknown step", "  - {name: a, step: order}\n", []string{
			`plan.yaml:23:21: test "a" names step "order", which the plan does not have; did you mean "orders"?`,
		}},
		{"unknown source", "  - {name: a, step: orders, given: {order: []}}\n", []string{
			`plan.yaml:23:37: test "a" gives rows to "order", which is no source of the plan (nor a lookup that reads the target); did you mean "orders"?`,
		}},
		{"twice", "  - {name: a, step: orders}\n  - {name: a, step: orders}\n", []string{
			`plan.yaml:24:5: test name "a" is used twice (first at plan.yaml:23:5); test names must be unique`,
		}},
		{"cell not a value", "  - {name: a, step: orders, given: {orders: [{Qty: [1]}]}}\n", []string{
			`plan.yaml:23:52: column "Qty" of row 1 given to "orders" must be a value (text, a number or true/false), not a list`,
		}},
		{"row zero", "  - {name: a, step: orders, errors: [{row: 0}]}\n", []string{
			`plan.yaml:23:44: "row" counts the given rows from 1, not 0`,
		}},
		{"field outside fields", "  - {name: a, step: orders, expect: [{CUSTNAME: C1}]}\n", []string{
			`plan.yaml:23:39: "CUSTNAME" in record 1 expected by test "a" must be a sub-form's list of lines; a record's fields go under "fields"`,
		}},
		{"unknown sub-form", "  - {name: a, step: orders, expect: [{ORDERITEMS: []}]}\n", []string{
			`plan.yaml:23:39: test "a" expects lines of "ORDERITEMS", which is no sub-form of its step; did you mean "ORDERITEMS_SUBFORM"?`,
		}},
		{"target lookup given", "  - {name: a, step: orders, given: {vat: [{CODE: A, RATE: 17}]}}\n", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, ds := Decode("plan.yaml", []byte(testsPlanHead+"tests:\n"+tc.tests))
			var got []string
			for _, d := range ds {
				if d.Severity == SeverityError {
					got = append(got, d.String())
				}
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

func TestDecodeTestsFile(t *testing.T) {
	t.Parallel()
	if got := TestsFile("dir/orders.yaml"); got != "dir/orders_test.yaml" {
		t.Errorf("TestsFile: %s", got)
	}
	ts, ds := DecodeTests("orders_test.yaml", []byte("- {name: a, step: orders}\n- name: b\n  step: orders\n"))
	if len(ds) != 0 || len(ts) != 2 || ts[1].Name != "b" || ts[1].StepPos != (Pos{"orders_test.yaml", 3, 9}) {
		t.Errorf("tests %+v, problems %v", ts, ds)
	}
	_, ds = DecodeTests("orders_test.yaml", []byte("name: a\n"))
	if len(ds) != 1 || ds[0].String() != `orders_test.yaml:1:1: the tests file must be a list, not a mapping` {
		t.Errorf("problems: %v", ds)
	}
}

// FuzzDecodeTests feeds arbitrary bytes to DecodeTests, and as tests: of a
// plan to Decode: neither may panic, and every problem names its place.
func FuzzDecodeTests(f *testing.F) {
	f.Add([]byte("- {name: a, step: orders, given: {orders: [{Qty: 2}]}, expect: [{fields: {A: 1}, NAV: [{B: x, SUB: [{C: ~}]}]}], errors: [{row: 1}]}\n"))
	f.Add([]byte("- name: a\n  step: orders\n  exact: true\n  expect: []\n"))
	f.Add([]byte("- &t {name: a}\n- *t\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, ds := DecodeTests("t.yaml", data)
		for _, d := range ds {
			if d.Pos.File != "t.yaml" || d.Pos.Line < 1 || d.Pos.Col < 1 || d.Message == "" {
				t.Fatalf("problem without a place or message: %q", d.String())
			}
		}
		indented := "  " + strings.ReplaceAll(string(data), "\n", "\n  ")
		p, ds := Decode("plan.yaml", []byte(testsPlanHead+"tests:\n"+indented))
		for _, d := range ds {
			if d.Pos.Line < 1 || d.Pos.Col < 1 {
				t.Fatalf("problem without a place: %q", d.String())
			}
		}
		p.CheckTests(p.Tests)
	})
}
