package sandbox_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/migrate-tool/migrate/internal/golden"
	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/sandbox"
)

// Under real-metadata the document is shaped as real installations write
// it, and the client's parser reads every annotation back.
func TestQuirkRealMetadataDocument(t *testing.T) {
	t.Parallel()
	for _, quirk := range []bool{false, true} {
		c := start(t, sandbox.Options{Quirks: quirkIf(quirk, sandbox.QuirkRealMetadata)})
		doc := c.must(200, "GET", "/$metadata", nil).body
		m, err := odata.ParseMetadata(bytes.NewReader(doc))
		if err != nil {
			t.Fatalf("quirk %v: %v", quirk, err)
		}
		wantNS, wantLines := "Service.OData", "ORDERITEMS_SUBFORM"
		if quirk {
			wantNS, wantLines = "Priority.OData", "ORDERITEMS"
		}
		if m.Namespace != wantNS {
			t.Errorf("quirk %v: namespace %s, want %s", quirk, m.Namespace, wantNS)
		}
		nav := m.EntitySet("ORDERS").Type.Navigation("ORDERITEMS_SUBFORM")
		if nav == nil || nav.Type != wantLines || m.Type(nav.Type) == nil {
			t.Fatalf("quirk %v: ORDERS/ORDERITEMS_SUBFORM = %+v", quirk, nav)
		}
		lines := m.Type(nav.Type)
		orders := m.EntitySet("ORDERS").Type
		checks := []struct {
			name string
			got  bool
		}{
			{"ORD auto-unique", orders.Property("ORD").AutoUnique && orders.Property("ORD").Computed},
			{"CDES read-only", orders.Property("CDES").ReadOnly},
			{"CURDATE date-only", orders.Property("CURDATE").DateOnly},
			{"PRICE Scale 2", lines.Property("PRICE").HasScale && lines.Property("PRICE").Scale == 2 && lines.Property("PRICE").Precision == 16},
			{"PDES read-only", lines.Property("PDES").ReadOnly},
			{"DUEDATE date-only", lines.Property("DUEDATE").DateOnly},
		}
		for _, ch := range checks {
			if ch.got != quirk {
				t.Errorf("quirk %v: %s = %v", quirk, ch.name, ch.got)
			}
		}
		// Without the quirk auto-unique keys are Core.Computed.
		if !orders.Property("ORD").Computed {
			t.Errorf("quirk %v: ORD not computed", quirk)
		}
		if quirk && (strings.Contains(string(doc), "_SUBFORM)") || strings.Contains(string(doc), "Core.Computed")) {
			t.Errorf("the real document still names a _SUBFORM type or Core.Computed:\n%s", doc)
		}
	}
}

// Under real-metadata the server behaves by its annotations: a decimal is
// rounded to its Scale, a date-only field keeps the day in the server's
// time zone (UTC), a read-only field is refused with a screen error.
func TestQuirkRealMetadataBehaviour(t *testing.T) {
	t.Parallel()
	c := start(t, sandbox.Options{Quirks: map[string]bool{sandbox.QuirkRealMetadata: true}})
	c.seed()
	c.must(201, "POST", "/ORDERS", map[string]any{"ORDNAME": "SO1", "CUSTNAME": "C100",
		"CURDATE":            "2026-03-01T00:00:00+14:00",
		"ORDERITEMS_SUBFORM": []any{map[string]any{"PARTNAME": "P1", "TQUANT": 1, "PRICE": 12.345, "DUEDATE": "2026-03-01T00:00:00Z"}}})
	got := c.must(200, "GET", "/ORDERS('SO1')?$expand=ORDERITEMS_SUBFORM", nil).json(t)
	if got["CURDATE"] != "2026-02-28T00:00:00+00:00" {
		t.Errorf("CURDATE = %v: a midnight at +14:00 is the day before in UTC", got["CURDATE"])
	}
	line := got["ORDERITEMS_SUBFORM"].([]any)[0].(map[string]any)
	if line["PRICE"] != 12.35 || line["DUEDATE"] != "2026-03-01T00:00:00+00:00" {
		t.Errorf("line = %v: want PRICE rounded to 12.35 and DUEDATE kept", line)
	}
	r := c.must(400, "PATCH", "/ORDERS('SO1')", map[string]any{"CDES": "Someone else"})
	if !strings.Contains(r.String(), "CDES is a read-only field") {
		t.Errorf("PATCH CDES: %s", r)
	}
}

// The real-shaped document as served, whole (go test -update rewrites it):
// a reviewer sees at a glance what real-metadata changes.
func TestQuirkRealMetadataGolden(t *testing.T) {
	t.Parallel()
	c := start(t, sandbox.Options{Quirks: map[string]bool{sandbox.QuirkRealMetadata: true}})
	golden.Check(t, "testdata/metadata-25.1-real.xml", c.must(200, "GET", "/$metadata", nil).body)
	c.must(200, "GET", "/ORDERS?$top=1", nil)
	golden.Check(t, "testdata/GetMetadataFor-ORDERS-25.1-real.xml", c.must(200, "GET", "/GetMetadataFor(entity='ORDERS')", nil).body)
}
