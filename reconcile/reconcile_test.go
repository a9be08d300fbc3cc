package reconcile

import (
	"context"
	"encoding/json"
	"maps"
	"testing"

	"github.com/migrate-tool/migrate/journal"
	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/sandbox"
)

// A single object's PATCH that writes a TEXT is a text, decided by its
// content; another (a ship-to address) by its fields.
func TestWritesText(t *testing.T) {
	t.Parallel()
	for body, want := range map[string]bool{`{"TEXT":"x","APPEND":false}`: true, `{"ADDRESS":"x"}`: false, `{"TEXT":null}`: true} {
		if got := WritesText(json.RawMessage(body)); got != want {
			t.Errorf("WritesText(%s) = %v, want %v", body, got, want)
		}
	}
}

// TestTypeAt: a PATCH in doubt is compared by the type of what its URL
// addresses: an entity, a line, a line's text; nil for what the metadata
// does not know.
func TestTypeAt(t *testing.T) {
	t.Parallel()
	md := sandbox.DemoMetadata()
	for path, want := range map[string]string{
		"ORDERS('SO26000001')":                                              "ORDERS",
		"ORDERS('SO%2026')/ORDERITEMS_SUBFORM(3)":                           "ORDERITEMS_SUBFORM",
		"ORDERS('SO26000001')/ORDERITEMS_SUBFORM(3)/ORDERITEMSTEXT_SUBFORM": "ORDERITEMSTEXT_SUBFORM",
		"LOGPART('O''Neil & Co')":                                           "LOGPART",
		"NOPE('x')":                                                         "",
		"ORDERS('SO1')/NOPE(1)":                                             "",
	} {
		got := ""
		if et := TypeAt(md, path); et != nil {
			got = et.Name
		}
		if got != want {
			t.Errorf("TypeAt(%s) = %q, want %q", path, got, want)
		}
	}
}

// The auto-unique key is the watermark's field.
func TestAutoUnique(t *testing.T) {
	t.Parallel()
	md := sandbox.DemoMetadata()
	for ent, want := range map[string]string{"ORDERS": "ORD", "AINVOICES": "IV", "CUSTOMERS": "CUST", "CURRENCIES": ""} {
		if got := autoUnique(md.EntitySet(ent).Type); got != want {
			t.Errorf("%s: %q, want %q", ent, got, want)
		}
	}
}

// A returned row is checked against every condition of the lookup.
func TestSatisfies(t *testing.T) {
	t.Parallel()
	gt := Cond{field: "ORD", op: "gt", lit: "41"}
	eq := Cond{field: "CUSTNAME", op: "eq", value: "C1", lit: "'C1'"}
	since := Cond{field: "modifiedAt", op: "gt", value: "2026-11-27T15:10:37.128Z", lit: "2026-11-27T15:10:37.128Z"}
	tests := []struct {
		v    any
		c    Cond
		want bool
	}{
		{json.Number("42"), gt, true},
		{json.Number("41"), gt, false},
		{"42", gt, true}, // IEEE754Compatible
		{nil, gt, false},
		{"C1", eq, true},
		{"c1", eq, false}, // a server that compares without case gave it: not our filter
		{"2026-11-27T15:10:37.129Z", since, true},
		{"2026-11-27T17:10:37.128+02:00", since, false}, // the same instant
		{"2026-11-27T15:10:37Z", since, false},
		{"soon", since, false},
	}
	for _, tt := range tests {
		if got := satisfies(tt.v, tt.c); got != tt.want {
			t.Errorf("satisfies(%v, %s %s %s) = %v", tt.v, tt.c.field, tt.c.op, tt.c.lit, got)
		}
	}
}

// TestStepEntities: a step's entity is the journal header's (what its runs
// sent), even where the plan now names another; else the plan's; else the
// entity set its records' entities were sent to.
func TestStepEntities(t *testing.T) {
	t.Parallel()
	st := &journal.State{
		Header: journal.Header{Steps: []journal.Step{{Name: "orders", Entity: "ORDERS"}}},
		Steps: map[string]*journal.StepState{
			"old": {Name: "old", IDs: []string{"r1", "r2"}, Records: map[string]*journal.RecordState{
				"r1": {Step: "old", ID: "r1"},
				"r2": {Step: "old", ID: "r2", Subs: map[string]*journal.SubState{"": {Sub: journal.Sub{URL: "CUSTOMERS('C1')"}}}},
			}},
		},
		StepNames: []string{"orders", "old"},
	}
	plan := []journal.Step{{Name: "orders", Entity: "DOCUMENTS_P"}, {Name: "parts", Entity: "LOGPART"}}
	for _, tc := range []struct {
		plan []journal.Step
		want map[string]string
	}{
		{plan, map[string]string{"orders": "ORDERS", "parts": "LOGPART", "old": "CUSTOMERS"}},
		{nil, map[string]string{"orders": "ORDERS", "old": "CUSTOMERS"}},
	} {
		if got := StepEntities(st, tc.plan); !maps.Equal(got, tc.want) {
			t.Errorf("StepEntities(plan %v) = %v, want %v", tc.plan, got, tc.want)
		}
	}
}

// TestMarkFieldOfAStandardJournal: a journal written against a standard
// OData service is bounded by the time the server sets, for whoever reads
// it (undo's Settle, resolve's lookups), not only for the run that was
// told the dialect: without it a document made before the run with the
// same fields is a candidate, and undo could delete it.
func TestMarkFieldOfAStandardJournal(t *testing.T) {
	t.Parallel()
	typ := &odata.EntityType{Name: "Orders", Key: []string{"ID"}, Properties: []*odata.Property{
		{Name: "ID", Type: odata.EdmGuid, Computed: true},
		{Name: "modifiedAt", Type: odata.EdmDateTimeOffset, Computed: true},
		{Name: "createdAt", Type: odata.EdmDateTimeOffset, Computed: true},
	}}
	for _, tc := range []struct {
		name    string
		dialect string
		opts    Options
		want    string
	}{
		{"the ERP's journal", "", Options{}, ""},
		{"a standard service's journal", string(odata.DialectOData), Options{}, "createdAt"},
		{"a run told the dialect", "", Options{Standard: true}, "createdAt"},
	} {
		st := &journal.State{Header: journal.Header{Dialect: tc.dialect}}
		if got := New(context.Background(), st, tc.opts).MarkField(typ); got != tc.want {
			t.Errorf("%s: MarkField = %q, want %q", tc.name, got, tc.want)
		}
	}
}
