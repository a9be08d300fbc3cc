package plan

import (
	"strings"
	"testing"
)

// totalsPlan is an orders step whose totals: block is the test's.
func totalsPlan(totals string) string {
	return `version: 1
sources:
  lines: {file: lines.csv}
steps:
  - name: orders
    entity: ORDERS
    source: lines
    group_by: row.Order
    fields:
      ORDNAME: row.Order
      CUSTNAME: row.Customer
      CDES: row.Desc
      CURDATE: date(row.Date, "2006-01-02")
    subforms:
      - name: ORDERITEMS_SUBFORM
        source: group
        fields:
          PARTNAME: row.Part
          TQUANT: row.Qty
          PRICE: row.Price
    totals:
` + totals
}

func TestTotalsDecode(t *testing.T) {
	t.Parallel()
	p, ds := Decode("plan.yaml", []byte(totalsPlan(`      orders: count()
      lines: count(ORDERITEMS_SUBFORM)
      quantity: sum( ORDERITEMS_SUBFORM.TQUANT )
      amount: sum(ORDERITEMS_SUBFORM.PRICE) by CUSTNAME
      per part: count(ORDERITEMS_SUBFORM) by ORDERITEMS_SUBFORM.PARTNAME
`)))
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	var got []string
	for _, tot := range p.Steps[0].Totals {
		got = append(got, tot.Name+"="+tot.Expr()+"@"+tot.Pos.String())
	}
	want := []string{
		"orders=count()@plan.yaml:22:7",
		"lines=count(ORDERITEMS_SUBFORM)@plan.yaml:23:7",
		"quantity=sum(ORDERITEMS_SUBFORM.TQUANT)@plan.yaml:24:7",
		"amount=sum(ORDERITEMS_SUBFORM.PRICE) by CUSTNAME@plan.yaml:25:7",
		"per part=count(ORDERITEMS_SUBFORM) by ORDERITEMS_SUBFORM.PARTNAME@plan.yaml:26:7",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("totals:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if ds := p.CheckMetadata(demoMetadata(), mustVersion(t, "23.0")); ds.HasErrors() {
		t.Errorf("a good totals block is refused: %v", ds)
	}
}

// Every mistake is said at the name it is about, with the nearest name.
func TestTotalsMistakes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ total, want string }{
		{`avg(PRICE)`, `plan.yaml:22:10: total "t" of step "orders": "avg(PRICE)" is not a total: write count(), count(NAV), sum(FIELD) or sum(NAV.FIELD), perhaps followed by ` + "`by FIELD` or `by NAV.FIELD`"},
		{`sum()`, `plan.yaml:22:10: total "t" of step "orders": sum() needs the field it sums: sum(FIELD) or sum(NAV.FIELD)`},
		{`count(ORDERITEMS_SUBFORM.TQUANT)`, `plan.yaml:22:10: total "t" of step "orders": count(ORDERITEMS_SUBFORM.TQUANT) counts no field: count() counts the records, count(NAV) the lines of a sub-form`},
		{`[1, 2]`, `plan.yaml:22:10: total "t" of step "orders" must be count(), count(NAV), sum(FIELD) or sum(NAV.FIELD), perhaps followed by ` + "`by FIELD` or `by NAV.FIELD`, not a list"},
		{`sum(ORDERITEMS_SUBFORM.TQUANTX)`, `plan.yaml:22:33: total "t" of step "orders": unknown field "TQUANTX" in ORDERITEMS_SUBFORM; did you mean "TQUANT"?`},
		{`sum(ORDERITEM_SUBFORM.TQUANT)`, `plan.yaml:22:14: total "t" of step "orders": unknown sub-form "ORDERITEM_SUBFORM" of ORDERS; did you mean "ORDERITEMS_SUBFORM"?`},
		{`count(EXTFILES_SUBFORM)`, `plan.yaml:22:16: total "t" of step "orders": the step writes no lines of EXTFILES_SUBFORM: a total is of what the plan writes (add the sub-form under subforms)`},
		{`count(ORDERSTEXT_SUBFORM)`, `plan.yaml:22:16: total "t" of step "orders": ORDERSTEXT_SUBFORM is a single-object sub-form of ORDERS: it has no lines to count or sum`},
		{`sum(ORDERITEMS_SUBFORM.PARTNAME)`, `plan.yaml:22:33: total "t" of step "orders": ORDERITEMS_SUBFORM.PARTNAME is text (Edm.String), not a number: sum adds up numbers (count() counts records, count(NAV) lines)`},
		{`sum(ORDERITEMS_SUBFORM.DUEDATE)`, `plan.yaml:22:33: total "t" of step "orders": ORDERITEMS_SUBFORM.DUEDATE is not written by the plan: a total is of what the plan writes, so that the source, what was sent and the target can be set side by side (add it to fields)`},
		{`sum(ORDERITEMS_SUBFORM.PRICE) by CURRNAME`, `plan.yaml:22:43: total "t" of step "orders": unknown field "CURRNAME" in ORDERS; did you mean "CUSTNAME"?`},
		{`count() by CURDATE`, `plan.yaml:22:21: total "t" of step "orders": by ORDERS.CURDATE, a date: a total is grouped by a text, number or boolean field`},
		{`count() by ORDERITEMS_SUBFORM.PARTNAME`, `plan.yaml:22:21: total "t" of step "orders": by ORDERITEMS_SUBFORM.PARTNAME: a total is grouped by a field of its record or of the lines it counts (the record's fields), not of ORDERITEMS_SUBFORM`},
		{`"sum(ORDERITEMS_SUBFORM.TQUANTX)"`, `plan.yaml:22:10: total "t" of step "orders": unknown field "TQUANTX" in ORDERITEMS_SUBFORM; did you mean "TQUANT"?`},
	} {
		p, ds := Decode("plan.yaml", []byte(totalsPlan("      t: "+tc.total+"\n")))
		if p != nil && !ds.HasErrors() {
			ds = append(ds, p.CheckMetadata(demoMetadata(), mustVersion(t, "23.0"))...)
		}
		var got []string
		for _, d := range ds {
			got = append(got, d.String())
		}
		if len(got) != 1 || got[0] != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.total, got, tc.want)
		}
	}
}
