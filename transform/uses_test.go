package transform

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/migrate-tool/migrate/plan"
)

// Uses says which column feeds which field, and how: row.X and row["X"]
// are the column's; anything else reads it; a key repeats by design under
// group_by; exists: and lookup() are carried to the field.
func TestUses(t *testing.T) {
	t.Parallel()
	p := &plan.Plan{
		Sources: []*plan.Source{{Name: "cust", File: "c.csv"}, {Name: "agents", File: "a.csv"}, {Name: "lines", File: "l.csv"}},
		Lookups: []*plan.Lookup{{Name: "agent", Source: "agents", Key: x("row.Old"), Value: x("row.New")}},
		Steps: []*plan.Step{
			{Name: "customers", Entity: "CUSTOMERS", Source: "cust", When: xp(`row.Skip != "y"`),
				Fields: fields("CUSTNAME", `row["Code"]`, "CUSTDES", "upper(row.Name) + row.Town", "AGENTCODE", `lookup("agent", row.Agent)`)},
			{Name: "orders", Entity: "ORDERS", Source: "lines", GroupBy: xp("row.Order"),
				Fields:   fields("ORDNAME", "row.Order", "CUSTNAME", "row.Cust"),
				Exists:   []*plan.Exists{{Field: "CUSTNAME", Entity: "CUSTOMERS"}},
				Subforms: []*plan.Subform{{Name: "ORDERITEMS_SUBFORM", Source: "group", Fields: fields("PARTNAME", "row.Part")}}},
		},
	}
	prog := mustCompile(t, p, demoMetadata(), testOptions())
	var got []string
	for _, u := range prog.Uses() {
		maxLen := 0
		if u.Prop != nil {
			maxLen = u.Prop.MaxLength
		}
		got = append(got, fmt.Sprintf("%s %s.%s ← %s.%s direct=%v key=%v group=%v mandatory=%v when=%q exists=%q lookup=%q max=%d",
			u.Step, u.Form, u.Field, u.Source, u.Column, u.Direct, u.Key, u.Group, u.Mandatory, u.When, u.Exists, u.Lookup, maxLen))
	}
	want := []string{
		`customers CUSTOMERS.CUSTNAME ← cust.Code direct=true key=true group=false mandatory=false when="row.Skip != \"y\"" exists="" lookup="" max=16`,
		`customers CUSTOMERS.CUSTDES ← cust.Name direct=false key=false group=false mandatory=false when="" exists="" lookup="" max=48`,
		`customers CUSTOMERS.CUSTDES ← cust.Town direct=false key=false group=false mandatory=false when="" exists="" lookup="" max=48`,
		`customers CUSTOMERS.AGENTCODE ← cust.Agent direct=false key=false group=false mandatory=false when="" exists="" lookup="agent" max=8`,
		`orders ORDERS.group_by ← lines.Order direct=true key=false group=true mandatory=false when="" exists="" lookup="" max=0`,
		`orders ORDERS.ORDNAME ← lines.Order direct=true key=false group=true mandatory=false when="" exists="" lookup="" max=16`,
		`orders ORDERS.CUSTNAME ← lines.Cust direct=true key=false group=false mandatory=false when="" exists="CUSTOMERS" lookup="" max=16`,
		`orders ORDERITEMS_SUBFORM.PARTNAME ← lines.Part direct=true key=false group=false mandatory=false when="" exists="" lookup="" max=16`,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Uses:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if got, want := prog.LookupKeys(), []LookupKey{{Name: "agent", Source: "agents", Column: "Old"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("LookupKeys = %+v, want %+v", got, want)
	}
}

// TestUsesMandatory: a field the metadata marks mandatory is Mandatory in
// a record that is always created (an insert step's, a sub-form's line),
// where a blank is a row error, and not in an upsert's, which leaves a
// blank out; the when: that skips its rows is given with it (a line's,
// its sub-form's own).
func TestUsesMandatory(t *testing.T) {
	t.Parallel()
	md := demoMetadata()
	md.Type("CUSTOMERS").Property("CUSTDES").Mandatory = true
	for _, nav := range md.Type("ORDERS").Navigations {
		if nav.Name == "ORDERITEMS_SUBFORM" {
			md.Type(nav.Type).Property("PARTNAME").Mandatory = true
		}
	}
	p := &plan.Plan{
		Sources: []*plan.Source{{Name: "cust", File: "c.csv"}, {Name: "lines", File: "l.csv"}},
		Steps: []*plan.Step{
			{Name: "customers", Entity: "CUSTOMERS", Source: "cust", When: xp(`row.Skip != "y"`), Fields: fields("CUSTNAME", "row.Code", "CUSTDES", "row.Name")},
			{Name: "again", Entity: "CUSTOMERS", Source: "cust", Mode: plan.ModeUpsert, Fields: fields("CUSTNAME", "row.Code", "CUSTDES", "row.Name")},
			{Name: "orders", Entity: "ORDERS", Source: "lines", GroupBy: xp("row.Order"), Fields: fields("ORDNAME", "row.Order"),
				Subforms: []*plan.Subform{{Name: "ORDERITEMS_SUBFORM", Source: "group", When: xp(`row.Qty != "0"`), Fields: fields("PARTNAME", "row.Part")}}},
		},
	}
	prog := mustCompile(t, p, md, testOptions())
	var got []string
	for _, u := range prog.Uses() {
		if u.Mandatory {
			got = append(got, fmt.Sprintf("%s %s.%s when=%q", u.Step, u.Form, u.Field, u.When))
		}
	}
	want := []string{`customers CUSTOMERS.CUSTDES when="row.Skip != \"y\""`, `orders ORDERITEMS_SUBFORM.PARTNAME when="row.Qty != \"0\""`}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("mandatory uses:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
