package executor

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/migrate-tool/migrate/internal/userdocs"
	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/plan"
	"github.com/migrate-tool/migrate/sandbox"
)

const testedPlan = `version: 1
sources:
  lines: {file: orders.csv}
  agents: {file: agents.csv}
lookups:
  agent: {source: agents, key: row.Old, value: row.New}
  families: {entity: FAMILY_LOG, key: FAMILYNAME, value: FAMILYDESC, missing: keep}
steps:
  - name: customers
    entity: CUSTOMERS
    source: agents
    fields:
      CUSTNAME: row.New
      CUSTDES: lookup("families", row.Family)
  - name: orders
    entity: ORDERS
    source: lines
    group_by: row.Order
    id: row.Order
    fields:
      CUSTNAME: lookup("agent", row.Agent)
      CURDATE: date(row.Date, "02/01/2006")
    subforms:
      - name: ORDERITEMS_SUBFORM
        source: group
        fields:
          PARTNAME: upper(row.Part)
          TQUANT: row.Qty
tests:
`

// runPlanTests decodes a plan and runs its tests against the sandbox's
// demo schema; the plan must have no problem.
func runPlanTests(t *testing.T, src string) []TestResult {
	t.Helper()
	p, ds := plan.Decode("plan.yaml", []byte(src))
	if ds.HasErrors() {
		t.Fatalf("plan: %v", ds)
	}
	results, ds := RunTests(context.Background(), Setup{Plan: p, Metadata: sandbox.DemoMetadata(), Version: odata.Version{Major: 23, Minor: 0}}, p.Tests)
	if ds.HasErrors() {
		t.Fatalf("plan: %v", ds)
	}
	return results
}

// runTests runs the tests written after testedPlan and says each
// outcome in a line per failure.
func runTests(t *testing.T, tests string) []string {
	t.Helper()
	results := runPlanTests(t, testedPlan+tests)
	var out []string
	for _, r := range results {
		if len(r.Failures) == 0 {
			out = append(out, r.Test.Name+": pass")
		}
		for _, f := range r.Failures {
			parts := []string{r.Test.Name + ":", f.At.String(), f.Where}
			if f.Field != "" {
				parts = append(parts, fmt.Sprintf("%s: expected %s, got %s (%s)", f.Field, f.Expected, f.Got, f.Plan))
			} else {
				parts = append(parts, f.Message)
				if f.Plan != "" {
					parts = append(parts, "("+f.Plan+")")
				}
			}
			out = append(out, strings.Join(slices.DeleteFunc(parts, func(s string) bool { return s == "" }), " "))
		}
		for _, n := range r.Notes {
			out = append(out, r.Test.Name+": note: "+n)
		}
	}
	return out
}

func TestRunTests(t *testing.T) {
	t.Parallel()
	given := `    given:
      agents: [{Old: A1, New: "017"}]
      lines:
        - {Order: SO1, Agent: A1, Date: 03/11/2026, Part: b-1, Qty: 2}
        - {Order: SO1, Agent: A1, Date: 03/11/2026, Part: b-2, Qty: "2.50"}
`
	for _, tc := range []struct {
		name, test string
		want       []string
	}{
		{"pass", `  - name: t
    step: orders
` + given + `    expect:
      - fields: {CUSTNAME: "017", CURDATE: 2026-11-03}
        ORDERITEMS_SUBFORM: [{PARTNAME: B-1, TQUANT: 2.0}, {PARTNAME: B-2, TQUANT: 2.5}]
`, []string{"t: pass"}},
		{"wrong field", `  - name: t
    step: orders
` + given + `    expect:
      - fields: {CUSTNAME: "018"}
        ORDERITEMS_SUBFORM: [{TQUANT: 2}, {TQUANT: 3}]
`, []string{
			`t: plan.yaml:38:28 record 1 CUSTNAME: expected "018", got "017" (plan.yaml:21:7)`,
			`t: plan.yaml:39:52 record 1, ORDERITEMS_SUBFORM line 2 TQUANT: expected 3, got 2.50 (plan.yaml:28:11)`,
		}},
		{"counts", `  - name: t
    step: orders
` + given + `    expect:
      - ORDERITEMS_SUBFORM: [{PARTNAME: B-1}]
      - fields: {CUSTNAME: "017"}
`, []string{
			`t: plan.yaml:30:5 expected 2 records, got 1`,
			`t: plan.yaml:38:9 record 1 expected 1 line of ORDERITEMS_SUBFORM, got 2`,
		}},
		{"exact", `  - name: t
    step: customers
    exact: true
    given: {agents: [{New: C1, Family: F}], families: []}
    expect:
      - fields: {CUSTNAME: C1}
`, []string{`t: plan.yaml:35:9 record 1 CUSTDES: expected no value (exact: true), got "F" (plan.yaml:14:7)`}},
		{"no value", `  - name: t
    step: orders
    given:
      agents: [{Old: A1, New: "017"}]
      lines: [{Order: SO1, Agent: A1, Date: "", Part: P, Qty: 1}]
    expect:
      - fields: {CUSTNAME: "017", CURDATE: 2026-11-03, DETAILS: x}
`, []string{
			`t: plan.yaml:36:44 record 1 CURDATE: expected "2026-11-03", got no value (the record leaves the field out: its value is blank) (plan.yaml:22:7)`,
			`t: plan.yaml:36:65 record 1 DETAILS: expected "x", got no value (the plan does not write the field) ()`,
		}},
		{"row errors", `  - name: t
    step: orders
    given:
      agents: [{Old: A1, New: "017"}]
      lines: [{Order: SO1, Agent: A9, Date: 03/11/2026, Part: P, Qty: 1}, {Order: SO2, Agent: A1, Date: 31/31/2026, Part: P, Qty: 1}]
    errors:
      - {row: 1, field: CUSTNAME, message: no agent}
      - {row: 2, field: TQUANT}
`, []string{
			`t: plan.yaml:37:9 expected a row error at row 2 in TQUANT, got none`,
			`t: plan.yaml:30:5 unexpected row error at given:lines:2 in CURDATE: date: "31/31/2026" does not match the layout "02/01/2006" (plan.yaml:22:7)`,
		}},
		{"target lookup not given", `  - name: t
    step: customers
    given: {agents: [{New: C1, Family: F}]}
    expect: [{fields: {CUSTDES: F}}]
`, []string{
			`t: plan.yaml:30:5 expected 1 record, got 0`,
			`t: plan.yaml:30:5 unexpected row error at given:agents:1 in CUSTDES: lookup families reads FAMILY_LOG on the target, which is not available offline in a test: give its rows via given: {families: [{FAMILYNAME: ..., FAMILYDESC: ...}]} (plan.yaml:14:7)`,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := runTests(t, tc.test)
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

// The tests docs/plan-format.md shows under "Plan tests", written after
// the page's own example plan, pass against the sandbox's demo schema.
func TestDocsPlanTestsExamplePass(t *testing.T) {
	t.Parallel()
	const page = "../docs/plan-format.md"
	example := userdocs.FirstYAML(t, page)
	section := userdocs.Section(t, page, "Plan tests")
	start := strings.Index(section, "```yaml\n") + len("```yaml\n")
	tests := section[start : start+strings.Index(section[start:], "```\n")]
	results := runPlanTests(t, example+"\n"+tests)
	if len(results) != 2 {
		t.Fatalf("%d results", len(results))
	}
	for _, r := range results {
		if len(r.Failures) > 0 {
			t.Errorf("%s: %+v", r.Test.Name, r.Failures)
		}
	}
}

// ref() to another step gives the dry run's stand-in: no other step runs
// in a test.
func TestRunTestsRef(t *testing.T) {
	t.Parallel()
	src := `version: 1
sources:
  c: {file: c.csv}
  o: {file: o.csv}
steps:
  - {name: customers, entity: CUSTOMERS, source: c, id: row.Code, fields: {CUSTNAME: row.Code, CUSTDES: row.Name}}
  - {name: orders, entity: ORDERS, source: o, fields: {CUSTNAME: 'ref("customers", row.Customer)'}}
tests:
  - {name: stand-in, step: orders, given: {o: [{Customer: C1}]}, expect: [{fields: {CUSTNAME: "{customers:C1}"}}]}
`
	if results := runPlanTests(t, src); len(results) != 1 || len(results[0].Failures) != 0 {
		t.Fatalf("results %+v", results)
	}
}
