package executor

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/migrate-tool/migrate/executor/fixture"
	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/plan"
	"github.com/migrate-tool/migrate/transform"
)

// TestUnmadeRefs: the dry run's look at the values records name by key
// warns of each field's values that no step of the entity named makes,
// once every such step is read, and of an entity whose keys are too many
// to keep.
func TestUnmadeRefs(t *testing.T) {
	t.Parallel()
	keyOf := map[string]string{"parts": "PARTNAME", "more": "PARTNAME", "customers": "CUSTNAME"}
	entity := map[string]string{"parts": "LOGPART", "more": "LOGPART", "customers": "CUSTOMERS", "orders": "ORDERS"}
	made := map[string][]string{"parts": {"P1", "P2"}, "more": {"P3"}, "customers": {"C1"}}
	order := func(l int, cust string, parts ...string) *transform.Record {
		r := fixture.Rec("orders", "ORDERS", "", l, map[string]any{"CUSTNAME": cust}).Record
		for i, p := range parts {
			r.Children = append(r.Children, fixture.Line("ORDERITEMS_SUBFORM", l*10+i, map[string]any{"PARTNAME": p}))
		}
		return r
	}
	tests := []struct {
		name  string
		read  []string // the steps read to their end before the orders (+KEY: a key it makes besides)
		cap   int
		skip  [2]string
		want  []string // the warnings, in part
		count int
	}{
		{"every value made", []string{"parts", "more+P9", "customers"}, 100, [2]string{}, nil, 0},
		{"a part no step makes, named twice: one value", []string{"parts", "more", "customers"}, 100, [2]string{},
			[]string{`PARTNAME "P9" names a LOGPART that no step of the plan creates, and nothing checks`}, 1},
		{"one of two steps of LOGPART not read yet: not looked at", []string{"parts", "customers"}, 100, [2]string{}, nil, 0},
		{"an exists: check looks the field up", []string{"parts", "more", "customers"}, 100, [2]string{"orders", "PARTNAME"}, nil, 0},
		{"too many keys to keep", []string{"customers", "parts", "more"}, 2, [2]string{},
			[]string{"the values records name of LOGPART were not looked at"}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			u := newLook(keyOf, entity, tt.cap)
			if tt.skip[0] != "" {
				u.skip[tt.skip] = true
			}
			for _, read := range tt.read {
				step, also, _ := strings.Cut(read, "+")
				keys := made[step]
				if also != "" {
					keys = append(slices.Clone(keys), also)
				}
				var results []transform.Result
				for i, k := range keys {
					results = append(results, fixture.Rec(step, entity[step], k, i+2, map[string]any{keyOf[step]: k}))
				}
				src := collecting{inner: &fixture.Records{Results: map[string][]transform.Result{step: results}}, look: u}
				if err := src.Records(context.Background(), step, nil, nil, func(transform.Result) error { return nil }); err != nil {
					t.Fatal(err)
				}
			}
			u.note("orders", order(2, "C1", "P1", "P3"))
			u.note("orders", order(3, "C1", "P9"))
			u.note("orders", order(4, "C1", "P2", "P9"))
			var got []string
			for _, d := range u.warnings() {
				got = append(got, d.Message())
			}
			if len(got) != len(tt.want) {
				t.Fatalf("warnings %q, want %d", got, len(tt.want))
			}
			for i, w := range tt.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("warning %q, want %q in it", got[i], w)
				}
			}
			if c, more := u.count(); c != tt.count || more {
				t.Errorf("count %d (more %v), want %d", c, more, tt.count)
			}
		})
	}
}

// TestMadeByNoStep: a field named as the one key field of an entity no
// step makes names one of that entity (a part's FAMILYNAME a FAMILY_LOG),
// unless the name keys several entities (then it names none for sure) or
// an entity a step makes (the look at made keys has it); the dry run warns
// of each value of it that nothing checks.
func TestMadeByNoStep(t *testing.T) {
	t.Parallel()
	set := func(name string, key ...string) *odata.EntitySet {
		return &odata.EntitySet{Name: name, Type: &odata.EntityType{Name: name, Key: key}}
	}
	md := &odata.Metadata{Sets: []*odata.EntitySet{
		set("LOGPART", "PARTNAME"), set("FAMILY_LOG", "FAMILYNAME"), set("CURRENCIES", "CODE"), set("UNITS", "CODE"),
		set("PARTBAL", "PARTNAME"), set("AINVOICES", "IVNUM", "IVTYPE"), set("CUSTOMERS", "CUSTNAME"),
	}}
	p := &plan.Plan{Steps: []*plan.Step{{Name: "parts", Entity: "LOGPART"}, {Name: "orders", Entity: "ORDERS"}}}
	got := madeByNoStep(p, md)
	want := []unmadeSet{{set: "CUSTOMERS", key: "CUSTNAME"}, {set: "FAMILY_LOG", key: "FAMILYNAME"}}
	if !slices.Equal(got, want) {
		t.Fatalf("madeByNoStep = %v, want %v", got, want)
	}

	u := newLook(map[string]string{}, map[string]string{"parts": "LOGPART", "orders": "ORDERS"}, 100)
	u.unmade = got
	u.skip[[2]string{"orders", "CUSTNAME"}] = true // an exists: check reads it
	u.note("parts", fixture.Rec("parts", "LOGPART", "P1", 2, map[string]any{"PARTNAME": "P1", "FAMILYNAME": "F1"}).Record)
	u.note("parts", fixture.Rec("parts", "LOGPART", "P2", 3, map[string]any{"PARTNAME": "P2", "FAMILYNAME": nil}).Record)
	u.note("orders", fixture.Rec("orders", "ORDERS", "", 2, map[string]any{"CUSTNAME": "C1"}).Record)
	var msgs []string
	for _, d := range u.warnings() {
		msgs = append(msgs, d.Message())
	}
	if len(msgs) != 1 || !strings.Contains(msgs[0], `FAMILYNAME "F1" names a FAMILY_LOG that no step of the plan creates, and nothing checks`) {
		t.Errorf("warnings %q, want one of FAMILYNAME F1", msgs)
	}
	if c, _ := u.count(); c != 1 {
		t.Errorf("count %d, want 1", c)
	}
}

// TestUnmadeCountDistinct: the values no step makes are counted once each
// however many records name them; past the cap, a new value is not
// counted and the count says it is a lower bound.
func TestUnmadeCountDistinct(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		cap, count int
		more       bool
		inWarning  string
	}{
		{100, 2, false, `FAMILYNAME "F1" names a FAMILY_LOG that no step of the plan creates (and 1 other value), and`},
		{1, 1, true, `(and 0 or more other values: more than --memory keeps apart were named)`},
	} {
		u := newLook(map[string]string{}, map[string]string{"parts": "LOGPART"}, tt.cap)
		u.unmade = []unmadeSet{{set: "FAMILY_LOG", key: "FAMILYNAME"}}
		for i, fam := range []string{"F1", "F1", "F2", "F1"} {
			u.note("parts", fixture.Rec("parts", "LOGPART", "", i+2, map[string]any{"FAMILYNAME": fam}).Record)
		}
		if c, more := u.count(); c != tt.count || more != tt.more {
			t.Errorf("cap %d: count %d more %v, want %d %v", tt.cap, c, more, tt.count, tt.more)
		}
		if ws := u.warnings(); len(ws) != 1 || !strings.Contains(ws[0].Message(), tt.inWarning) {
			t.Errorf("cap %d: warnings %v, want one with %q", tt.cap, ws, tt.inWarning)
		}
		s := &Summary{Unchecked: tt.count, UncheckedMore: tt.more}
		if want := map[bool]string{false: "has the 2 values records name", true: "has the 1 or more values records name"}[tt.more]; !strings.Contains(s.Caveat(), want) {
			t.Errorf("cap %d: caveat %q, want %q in it", tt.cap, s.Caveat(), want)
		}
	}
}
