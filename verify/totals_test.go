package verify

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/migrate-tool/migrate/executor/fixture"
	"github.com/migrate-tool/migrate/journal"
	"github.com/migrate-tool/migrate/plan"
	"github.com/migrate-tool/migrate/sandbox"
)

// An order as a side sees it: its fields and its lines.
type totalsOrder struct {
	fields map[string]any
	lines  []map[string]any
}

func (o totalsOrder) linesOf(nav string) []map[string]any {
	if nav != "ORDERITEMS_SUBFORM" {
		return nil
	}
	return o.lines
}

// num is a number as the journal and the target decode it.
func num(s string) json.Number { return json.Number(s) }

// Each side's totals are exact and grouped as the plan says, whatever
// form a number comes in (a Decimal from the source, a JSON number from
// the journal, a text from a server under IEEE754Compatible).
func TestStepTotals(t *testing.T) {
	t.Parallel()
	md := sandbox.DemoMetadata()
	orders := md.EntitySet("ORDERS").Type
	lines := "ORDERITEMS_SUBFORM"
	records := &plan.Total{Name: "orders"}
	count := &plan.Total{Name: "lines", Nav: lines}
	qty := &plan.Total{Name: "quantity", Sum: true, Nav: lines, Field: "TQUANT"}
	perCurrency := &plan.Total{Name: "amount", Sum: true, Nav: lines, Field: "PRICE", ByNav: lines, By: "ICODE"}
	perCustomer := &plan.Total{Name: "lines per customer", Nav: lines, By: "CUSTNAME"}
	o := func(cust string, ls ...map[string]any) totalsOrder {
		return totalsOrder{fields: map[string]any{"CUSTNAME": cust}, lines: ls}
	}
	l := func(q, price any, cur string) map[string]any {
		return map[string]any{"TQUANT": q, "PRICE": price, "ICODE": cur}
	}
	for _, tc := range []struct {
		name                 string
		totals               []*plan.Total
		source, sent, target []totalsOrder
		want                 []journal.TotalRow
	}{
		{
			name:   "decimals add up exactly",
			totals: []*plan.Total{records, count, qty},
			source: []totalsOrder{o("C1", l(fixture.Dec("0.1"), nil, ""), l(fixture.Dec("0.2"), nil, "")), o("C2", l(fixture.Dec("0.7"), nil, ""))},
			sent:   []totalsOrder{o("C1", l(num("0.1"), nil, ""), l(num("0.2"), nil, "")), o("C2", l(num("0.7"), nil, ""))},
			target: []totalsOrder{o("C1", l("0.10", nil, ""), l("0.2000", nil, "")), o("C2", l(num("0.7"), nil, ""))},
			want: []journal.TotalRow{
				{Name: "orders", Expr: "count()", Source: "2", Sent: "2", Target: "2"},
				{Name: "lines", Expr: "count(ORDERITEMS_SUBFORM)", Source: "3", Sent: "3", Target: "3"},
				{Name: "quantity", Expr: "sum(ORDERITEMS_SUBFORM.TQUANT)", Source: "1.0000", Sent: "1.0000", Target: "1.0000"},
			},
		},
		{
			name:   "a sum per currency",
			totals: []*plan.Total{perCurrency},
			source: []totalsOrder{o("C1", l(nil, fixture.Dec("10.50"), "USD"), l(nil, fixture.Dec("3"), "EUR")), o("C2", l(nil, fixture.Dec("4.25"), "USD"))},
			sent:   []totalsOrder{o("C1", l(nil, num("10.5"), "USD"), l(nil, num("3"), "EUR")), o("C2", l(nil, num("4.25"), "USD"))},
			target: []totalsOrder{o("C1", l(nil, num("10.5"), "USD"), l(nil, num("3"), "EUR")), o("C2", l(nil, num("4.26"), "USD"))},
			want: []journal.TotalRow{
				{Name: "amount", Expr: "sum(ORDERITEMS_SUBFORM.PRICE) by ORDERITEMS_SUBFORM.ICODE", By: "ORDERITEMS_SUBFORM.ICODE", Group: "EUR", Source: "3", Sent: "3", Target: "3"},
				{Name: "amount", Expr: "sum(ORDERITEMS_SUBFORM.PRICE) by ORDERITEMS_SUBFORM.ICODE", By: "ORDERITEMS_SUBFORM.ICODE", Group: "USD", Source: "14.75", Sent: "14.75", Target: "14.76"},
			},
		},
		{
			name:   "lines grouped by their record's field; a group one side lacks is 0 there",
			totals: []*plan.Total{perCustomer},
			source: []totalsOrder{o("C1", l(nil, nil, ""), l(nil, nil, "")), o("C2", l(nil, nil, ""))},
			sent:   []totalsOrder{o("C1", l(nil, nil, ""), l(nil, nil, ""))},
			target: []totalsOrder{o("C1", l(nil, nil, ""), l(nil, nil, ""), l(nil, nil, ""))},
			want: []journal.TotalRow{
				{Name: "lines per customer", Expr: "count(ORDERITEMS_SUBFORM) by CUSTNAME", By: "CUSTNAME", Group: "C1", Source: "2", Sent: "2", Target: "3"},
				{Name: "lines per customer", Expr: "count(ORDERITEMS_SUBFORM) by CUSTNAME", By: "CUSTNAME", Group: "C2", Source: "1", Sent: "0", Target: "0"},
			},
		},
		{
			name:   "nothing on a side is 0, and nothing anywhere still shows",
			totals: []*plan.Total{records, qty},
			source: []totalsOrder{o("C1", l(fixture.Dec("2.5"), nil, ""))},
			want: []journal.TotalRow{
				{Name: "orders", Expr: "count()", Source: "1", Sent: "0", Target: "0"},
				{Name: "quantity", Expr: "sum(ORDERITEMS_SUBFORM.TQUANT)", Source: "2.5", Sent: "0.0", Target: "0.0"},
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := newStepTotals(md, orders, &plan.Step{Name: "orders", Entity: "ORDERS", Totals: tc.totals})
			for _, side := range []struct {
				to     *totals
				orders []totalsOrder
			}{{&st.source, tc.source}, {&st.sent, tc.sent}, {&st.target, tc.target}} {
				for _, o := range side.orders {
					st.add(side.to, o.fields, o.linesOf)
				}
			}
			got := st.rows()
			for i := range tc.want {
				tc.want[i].Step = "orders"
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("rows:\n got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

// A record the plan's row errors reject counts in count() of the source
// alone: its lines and values are unknown.
func TestStepTotalsRejected(t *testing.T) {
	t.Parallel()
	md := sandbox.DemoMetadata()
	st := newStepTotals(md, md.EntitySet("ORDERS").Type, &plan.Step{Name: "orders", Totals: []*plan.Total{
		{Name: "orders"}, {Name: "lines", Nav: "ORDERITEMS_SUBFORM"}}})
	st.rejected()
	got := st.rows()
	if got[0].Source != "1" || got[0].Sent != "0" || !got[0].Differs() || got[1].Source != "0" || got[1].Differs() {
		t.Errorf("a rejected record: %+v", got)
	}
}
