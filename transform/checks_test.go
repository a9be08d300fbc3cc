package transform

import (
	"fmt"
	"strings"
	"testing"

	"github.com/migrate-tool/migrate/plan"
	"github.com/migrate-tool/migrate/source"
)

// checksPlan is the plan of TestRowChecks; the line numbers of its fields
// are in the expected messages (CUSTNAME is written on line 10, column 7).
const checksPlan = `version: 1
sources:
  c: {file: customers.csv}
  x: {file: customers.xlsx, sheet: Customers}
steps:
  - name: customers
    entity: CUSTOMERS
    source: c
    fields:
      CUSTNAME: row.Code
      CREDIT: row.Credit
  - name: sheet
    entity: CUSTOMERS
    source: x
    fields:
      CUSTNAME: row.Code
      CREDIT: row.Credit
  - name: by_id
    entity: CUSTOMERS
    source: c
    id: row.Legacy
    when: row.Credit != "4"
    fields:
      CUSTNAME: row.Code
  - name: invoices
    entity: AINVOICES
    source: c
    fields:
      IVNUM: row.Code
      IVTYPE: {value: A}
  - name: orders
    entity: ORDERS
    source: c
    fields:
      ORDNAME: ref("customers", row.Code + row.Legacy)
    subforms:
      - name: ORDERSTEXT_SUBFORM
        fields:
          TEXT: row.Legacy
          APPEND: true
`

// placeholderRefs answers ref() as a dry run does.
type placeholderRefs struct{ dry bool }

func (p placeholderRefs) Ref(step, id string) (any, bool) { return "{" + step + ":" + id + "}", true }
func (p placeholderRefs) Placeholders() bool              { return p.dry }

// TestRowChecks: what the dry run finds before apply would meet it, each
// row error naming the source cell and the plan line of its field.
func TestRowChecks(t *testing.T) {
	t.Parallel()
	p, ds := plan.Decode("plan.yaml", []byte(checksPlan))
	if len(ds) != 0 {
		t.Fatalf("decode: %v", ds)
	}
	prog := mustCompile(t, p, demoMetadata(), testOptions())
	ms := &memSources{make: map[string]func() *memReader{
		"c": func() *memReader {
			return newMem("customers.csv", []string{"Code", "Credit", "Legacy"},
				cells("C001", "1.5", "L1"),
				cells("C002", "12,5x", "L2"),
				cells("C001", "3", "L3"),
				cells("C003", "?", "L1"),
				cells("C004", "4", ""),
				cells("C001", "zz", "L1"),
				cells("C005", "1,234.50", "L5"),
			)
		},
		"x": func() *memReader {
			m := newMem("customers.xlsx", []string{"Code", "Credit"},
				[]source.Cell{"C001", source.Number("1")},
				[]source.Cell{"C002", "x"},
				[]source.Cell{"C001", source.Number("2")},
			)
			m.sheet = "Customers"
			return m
		},
	}}
	dup := "; each record of a step needs a key of its own"
	tests := []struct {
		step string
		refs Refs
		want []string // per row: its errors, or its record's id, or "skipped"
	}{
		{step: "customers", want: []string{
			"C001",
			`customers.csv:3 (plan.yaml:11:7 CREDIT): "12,5x" is not a decimal (Edm.Decimal) [id C002]`,
			`customers.csv:4 (plan.yaml:10:7 CUSTNAME): CUSTNAME "C001" already comes from customers.csv:2` + dup + ` [id customers.csv:4]`,
			`customers.csv:5 (plan.yaml:11:7 CREDIT): "?" is not a decimal (Edm.Decimal) [id C003]`,
			"C004",
			// a duplicate with an error of its own reports both, and is
			// never filed under the identity of the record that exists
			`customers.csv:7 (plan.yaml:10:7 CUSTNAME): CUSTNAME "C001" already comes from customers.csv:2` + dup +
				` | customers.csv:7 (plan.yaml:11:7 CREDIT): "zz" is not a decimal (Edm.Decimal) [id customers.csv:7]`,
			"C005",
		}},
		{step: "sheet", want: []string{
			"C001",
			`customers.xlsx!Customers!B3 (plan.yaml:17:7 CREDIT): "x" is not a decimal (Edm.Decimal) [id C002]`,
			`customers.xlsx!Customers!A4 (plan.yaml:16:7 CUSTNAME): CUSTNAME "C001" already comes from customers.xlsx!Customers!A2` + dup + ` [id customers.xlsx!Customers!4]`,
		}},
		{step: "by_id", want: []string{
			"L1",
			"L2",
			`customers.csv:4 (plan.yaml:24:7 CUSTNAME): CUSTNAME "C001" already comes from customers.csv:2` + dup + ` [id customers.csv:4]`,
			`customers.csv:5 (plan.yaml:21:9): id "L1" already comes from customers.csv:2; each record of a step needs an id of its own [id customers.csv:5]`,
			"skipped",
			`customers.csv:7 (plan.yaml:24:7 CUSTNAME): CUSTNAME "C001" already comes from customers.csv:2` + dup + ` [id customers.csv:7]`,
			"L5",
		}},
		{step: "invoices", want: []string{
			"IVNUM=C001|IVTYPE=A",
			"IVNUM=C002|IVTYPE=A",
			`customers.csv:4 (plan.yaml:29:7 IVNUM): IVNUM "C001", IVTYPE "A" already come from customers.csv:2; each record of a step needs a key of its own [id customers.csv:4]`,
			"IVNUM=C003|IVTYPE=A",
			"IVNUM=C004|IVTYPE=A",
			`customers.csv:7 (plan.yaml:29:7 IVNUM): IVNUM "C001", IVTYPE "A" already come from customers.csv:2; each record of a step needs a key of its own [id customers.csv:7]`,
			"IVNUM=C005|IVTYPE=A",
		}},
		// The dry run's stand-in for a key not yet created is longer than
		// ORDNAME's 16 characters; it is not held against MaxLength.
		{step: "orders", refs: placeholderRefs{dry: true}, want: []string{
			"{customers:C001L1}",
			"{customers:C002L2}",
			"{customers:C001L3}",
			"{customers:C003L1}",
			`customers.csv:6 (plan.yaml:39:11 TEXT): TEXT of ORDERSTEXT_SUBFORM is empty; a text sub-form is written only with its text: give the sub-form a when (such as when: row.Note != "") to leave it out of rows without one [id {customers:C004}]`,
			`customers.csv:7 (plan.yaml:35:7 ORDNAME): ORDNAME "{customers:C001L1}" already comes from customers.csv:2` + dup + ` [id customers.csv:7]`,
			"{customers:C005L5}",
		}},
		// The same text from a real run is a value, and checked.
		{step: "orders", refs: placeholderRefs{dry: false}, want: []string{
			`customers.csv:2 (plan.yaml:35:7 ORDNAME): "{customers:C001L1}" is 18 characters, longer than the 16 of Edm.String(MaxLength 16) [id customers.csv:2]`,
			`customers.csv:3 (plan.yaml:35:7 ORDNAME): "{customers:C002L2}" is 18 characters, longer than the 16 of Edm.String(MaxLength 16) [id customers.csv:3]`,
			`customers.csv:4 (plan.yaml:35:7 ORDNAME): "{customers:C001L3}" is 18 characters, longer than the 16 of Edm.String(MaxLength 16) [id customers.csv:4]`,
			`customers.csv:5 (plan.yaml:35:7 ORDNAME): "{customers:C003L1}" is 18 characters, longer than the 16 of Edm.String(MaxLength 16) [id customers.csv:5]`,
			`customers.csv:6 (plan.yaml:39:11 TEXT): TEXT of ORDERSTEXT_SUBFORM is empty; a text sub-form is written only with its text: give the sub-form a when (such as when: row.Note != "") to leave it out of rows without one [id {customers:C004}]`,
			`customers.csv:7 (plan.yaml:35:7 ORDNAME): "{customers:C001L1}" is 18 characters, longer than the 16 of Edm.String(MaxLength 16) [id customers.csv:7]`,
			`customers.csv:8 (plan.yaml:35:7 ORDNAME): "{customers:C005L5}" is 18 characters, longer than the 16 of Edm.String(MaxLength 16) [id customers.csv:8]`,
		}},
	}
	for _, tc := range tests {
		t.Run(tc.step, func(t *testing.T) {
			var got []string
			for _, r := range collect(t, prog, tc.step, ms, tc.refs) {
				got = append(got, describeResult(r))
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("results:\n got: %s\nwant: %s", strings.Join(got, "\n      "), strings.Join(tc.want, "\n      "))
			}
		})
	}
}

func describeResult(r Result) string {
	switch {
	case r.Skipped:
		return "skipped"
	case len(r.Errors) == 0:
		return r.Record.ID
	}
	var msgs []string
	for _, e := range r.Errors {
		msgs = append(msgs, e.Error())
	}
	id := r.ID
	if id == "" {
		id = r.Loc.String()
	}
	return fmt.Sprintf("%s [id %s]", strings.Join(msgs, " | "), id)
}
