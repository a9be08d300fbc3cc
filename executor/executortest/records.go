package executortest

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/plan"
	"github.com/migrate-tool/migrate/source"
	"github.com/migrate-tool/migrate/transform"
)

// Records serves hand-built results per step: an executor.RecordSource.
type Records struct {
	Results map[string][]transform.Result
	// Build, when set, builds a step's results with the refs at hand.
	Build map[string]func(refs transform.Refs) []transform.Result
}

// Records calls fn with step's results.
func (f *Records) Records(ctx context.Context, step string, open transform.Opener, refs transform.Refs, fn func(transform.Result) error) error {
	res := f.Results[step]
	if b := f.Build[step]; b != nil {
		res = b(refs)
	}
	for _, r := range res {
		if err := fn(r); err != nil {
			return err
		}
	}
	return nil
}

// Header is the header of every row the builders make.
var Header = source.NewHeader([]string{"Code", "Name", "Part", "Qty"})

// Loc is row line of file.
func Loc(file string, line int) source.Location { return source.Location{File: file, Line: line} }

// Row is a row of Header at file:line.
func Row(file string, line int, cells ...string) source.Row {
	cs := make([]source.Cell, len(cells))
	for i, c := range cells {
		cs[i] = c
	}
	return source.Row{Loc: Loc(file, line), Header: Header, Cells: cs}
}

// Rec is a record of step, read from row l of STEP.csv.
func Rec(step, entity, id string, l int, fields map[string]any, kids ...*transform.Child) transform.Result {
	r := &transform.Record{Step: step, Entity: entity, ID: id, Loc: Loc(step+".csv", l),
		Row: Row(step+".csv", l, id, "x", "", ""), Fields: fields, Children: kids}
	return transform.Result{Record: r, Loc: r.Loc}
}

// Line is a line of sub-form nav, read from row l of lines.csv.
func Line(nav string, l int, fields map[string]any, kids ...*transform.Child) *transform.Child {
	return &transform.Child{Nav: nav, Loc: Loc("lines.csv", l), Row: Row("lines.csv", l, "", "", fmt.Sprint(fields["PARTNAME"]), ""), Fields: fields, Children: kids}
}

// Single is the single sub-form nav (a text).
func Single(nav string, fields map[string]any) *transform.Child {
	return &transform.Child{Nav: nav, Single: true, Fields: fields}
}

// Dec is s as a decimal; it panics on a malformed s.
func Dec(s string) odata.Decimal {
	d, err := odata.ParseDecimal(s, '.')
	if err != nil {
		panic(err)
	}
	return d
}

// Plan is a plan of steps, named test, hashed h1.
func Plan(steps ...*plan.Step) *plan.Plan {
	return &plan.Plan{Name: "test", Hash: "h1", Version: 1, Steps: steps}
}

// Step is an insert step of entity, after the steps named.
func Step(name, entity string, after ...string) *plan.Step {
	return &plan.Step{Name: name, Entity: entity, After: after, Mode: plan.ModeInsert}
}

// Lines is a snapshot entity's collection sub-form.
func Lines(ent map[string]any, nav string) []map[string]any {
	var out []map[string]any
	switch l := ent[nav].(type) {
	case []map[string]any:
		return l
	case []any:
		for _, x := range l {
			if m, ok := x.(map[string]any); ok {
				out = append(out, m)
			}
		}
	}
	return out
}

// PartsAndCustomers are parts P1..Pn.
func PartsAndCustomers(n int) []transform.Result {
	var out []transform.Result
	for i := 1; i <= n; i++ {
		id := fmt.Sprintf("P%d", i)
		out = append(out, Rec("parts", "LOGPART", id, i+1, map[string]any{"PARTNAME": id, "PARTDES": "part " + id}))
	}
	return out
}

// OrderWithLines is order id of customer cust, a line of each part.
func OrderWithLines(id string, l int, cust string, parts ...string) transform.Result {
	var kids []*transform.Child
	for i, p := range parts {
		kids = append(kids, Line("ORDERITEMS_SUBFORM", l*1000+i, map[string]any{"PARTNAME": p, "TQUANT": Dec("1")}))
	}
	return Rec("orders", "ORDERS", id, l, map[string]any{"CUSTNAME": cust, "DETAILS": id}, kids...)
}

// OrdersPlan loads parts P1..P3 and customer C1, then orders.
func OrdersPlan(orders ...transform.Result) (*plan.Plan, *Records) {
	p := Plan(Step("parts", "LOGPART"), Step("customers", "CUSTOMERS"), Step("orders", "ORDERS", "parts", "customers"))
	return p, &Records{Results: map[string][]transform.Result{
		"parts":     PartsAndCustomers(3),
		"customers": {Rec("customers", "CUSTOMERS", "C1", 2, map[string]any{"CUSTNAME": "C1", "CUSTDES": "Acme"})},
		"orders":    orders,
	}}
}

// DeepOrders is OrdersPlan with the orders sent as deep inserts and parts
// P1..P5.
func DeepOrders(orders ...transform.Result) (*plan.Plan, *Records) {
	p, f := OrdersPlan(orders...)
	p.Steps[2].DeepInsert = true
	f.Results["parts"] = PartsAndCustomers(5)
	return p, f
}

// PartsPlan is one step of parts in mode, hashed by its mode.
func PartsPlan(mode plan.Mode, parts ...transform.Result) (*plan.Plan, *Records) {
	st := Step("parts", "LOGPART")
	st.Mode = mode
	p := Plan(st)
	p.Hash = string(mode)
	return p, &Records{Results: map[string][]transform.Result{"parts": parts}}
}

// Part is part id with its barcode, from row l.
func Part(id string, l int, barcode string) transform.Result {
	return Rec("parts", "LOGPART", id, l, map[string]any{"PARTNAME": id, "PARTDES": "part " + id, "BARCODE": barcode})
}

// DemoLoad is parts and customers, then orders (server-numbered) with
// lines, a text and an attachment.
func DemoLoad() (*plan.Plan, *Records) {
	p := Plan(Step("parts", "LOGPART"), Step("customers", "CUSTOMERS"), Step("orders", "ORDERS", "parts", "customers"))
	f := &Records{Results: map[string][]transform.Result{
		"parts": {
			Rec("parts", "LOGPART", "P1", 2, map[string]any{"PARTNAME": "P1", "PARTDES": "Bolt"}),
			Rec("parts", "LOGPART", "P2", 3, map[string]any{"PARTNAME": "P2", "PARTDES": "Nut"}),
		},
		"customers": {
			Rec("customers", "CUSTOMERS", "C1", 2, map[string]any{"CUSTNAME": "C1", "CUSTDES": "Acme"}),
			{Skipped: true, Loc: Loc("customers.csv", 3)},
		},
		"orders": {
			Rec("orders", "ORDERS", "O1", 2, map[string]any{"CUSTNAME": "C1", "DETAILS": "first"},
				Line("ORDERITEMS_SUBFORM", 2, map[string]any{"PARTNAME": "P1", "TQUANT": Dec("2"), "PRICE": Dec("1.50")}),
				Line("ORDERITEMS_SUBFORM", 3, map[string]any{"PARTNAME": "P2", "TQUANT": Dec("3")}),
				Single("ORDERSTEXT_SUBFORM", map[string]any{"TEXT": "Deliver fast", "APPEND": true}),
				&transform.Child{Nav: "EXTFILES_SUBFORM", Fields: map[string]any{"EXTFILEDES": "drawing", "EXTFILENAME": "data:text/plain;base64,aGVsbG8=", "SUFFIX": ".txt"}},
			),
		},
	}}
	return p, f
}

// RetriedOrder is order O1 of customer C1 with lines of parts P1, part
// and P2 (one unit each) and a text: with part X9, a part that does not
// exist, its second line fails.
func RetriedOrder(part string) transform.Result {
	return Rec("orders", "ORDERS", "O1", 2, map[string]any{"CUSTNAME": "C1", "DETAILS": "O1"},
		Line("ORDERITEMS_SUBFORM", 2001, map[string]any{"PARTNAME": "P1", "TQUANT": Dec("1"), "PRICE": Dec("2")}),
		Line("ORDERITEMS_SUBFORM", 2002, map[string]any{"PARTNAME": part, "TQUANT": Dec("1"), "PRICE": Dec("4")}),
		Line("ORDERITEMS_SUBFORM", 2003, map[string]any{"PARTNAME": "P2", "TQUANT": Dec("1"), "PRICE": Dec("2")}),
		Single("ORDERSTEXT_SUBFORM", map[string]any{"TEXT": "Deliver fast"}))
}

// Keyed gives an order its number, as a source that numbers its own
// documents does.
func Keyed(r transform.Result, ordname string) transform.Result {
	r.Record.Fields["ORDNAME"] = ordname
	return r
}

// LineParts lists an order's lines' parts in line order.
func LineParts(ent map[string]any) string {
	var parts []string
	for _, l := range Lines(ent, "ORDERITEMS_SUBFORM") {
		parts = append(parts, fmt.Sprint(l["PARTNAME"]))
	}
	return strings.Join(parts, ",")
}

// Seed is a plan of its own (hashed "seed") that loads parts: what the
// target held before the run a test makes.
func Seed(parts ...transform.Result) (*plan.Plan, *Records) {
	seed := Plan(Step("parts", "LOGPART"))
	seed.Hash = "seed"
	return seed, &Records{Results: map[string][]transform.Result{"parts": parts}}
}

// BarcodeSeed is part P1 with BARCODE 111, to Seed.
var BarcodeSeed = Rec("parts", "LOGPART", "P1", 2, map[string]any{"PARTNAME": "P1", "PARTDES": "Bolt", "BARCODE": "111"})

// BarcodePlan is one step, in mode, that writes BARCODE 999 to part P1.
func BarcodePlan(mode plan.Mode) (*plan.Plan, *Records) {
	s := Step("parts", "LOGPART")
	s.Mode = mode
	return Plan(s), &Records{Results: map[string][]transform.Result{"parts": {
		Rec("parts", "LOGPART", "P1", 2, map[string]any{"PARTNAME": "P1", "BARCODE": "999"})}}}
}

// EqualJSON reports whether a and b are the same as JSON.
func EqualJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}
