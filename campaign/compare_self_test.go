package campaign

import (
	"encoding/json"
	"fmt"
	"testing"
)

// asSnapshot turns expected data into what Snapshot would hold: with the
// server-assigned fields and nulls the comparison must ignore.
func asSnapshot(t *testing.T, want expected) map[string][]map[string]any {
	t.Helper()
	b, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	var snap map[string][]map[string]any
	if err := json.Unmarshal(b, &snap); err != nil {
		t.Fatal(err)
	}
	for i, o := range snap["ORDERS"] {
		o["ORDNAME"], o["ORD"], o["ORDSTATUSDES"] = fmt.Sprintf("SO%08d", i+1), float64(i+1), nil
		if atts, ok := o["EXTFILES_SUBFORM"].([]any); ok {
			for _, a := range atts {
				a.(map[string]any)["CURDATE"] = "2026-11-01T09:00:00+00:00"
			}
		}
	}
	for i, c := range snap["CUSTOMERS"] {
		c["CUST"] = float64(i + 1)
	}
	return snap
}

// TestCompareCatches proves the campaigns' comparison sees each kind of
// damage they exist to find; a comparison that passes everything would
// make every campaign pass.
func TestCompareCatches(t *testing.T) {
	t.Parallel()
	l := generate(t, t.TempDir(), loadConfig{records: 60, seed: 3})
	if d := compare(l.want, asSnapshot(t, l.want)); !d.ok() || d.Rows != l.records {
		t.Fatalf("the expected data itself: %v", d)
	}
	firstWith := func(snap map[string][]map[string]any, nav string) map[string]any {
		for _, o := range snap["ORDERS"] {
			if o[nav] != nil {
				return o
			}
		}
		t.Fatalf("the load has no order with %s", nav)
		return nil
	}
	tests := []struct {
		name   string
		damage func(snap map[string][]map[string]any)
		check  func(d diff) bool
	}{
		{"order duplicated", func(s map[string][]map[string]any) {
			dup := map[string]any{}
			for k, v := range s["ORDERS"][0] {
				dup[k] = v
			}
			dup["ORDNAME"] = "SO99999999"
			s["ORDERS"] = append(s["ORDERS"], dup)
		}, func(d diff) bool { return len(d.Duplicated) == 1 }},
		{"customer missing", func(s map[string][]map[string]any) { s["CUSTOMERS"] = s["CUSTOMERS"][1:] },
			func(d diff) bool { return len(d.Missing) == 1 }},
		{"part extra", func(s map[string][]map[string]any) {
			s["LOGPART"] = append(s["LOGPART"], map[string]any{"PARTNAME": "X-1", "PARTDES": "stray"})
		}, func(d diff) bool { return len(d.Extra) == 1 }},
		{"line lost", func(s map[string][]map[string]any) {
			o := firstWith(s, "ORDERITEMS_SUBFORM")
			o["ORDERITEMS_SUBFORM"] = o["ORDERITEMS_SUBFORM"].([]any)[1:]
		}, func(d diff) bool { return len(d.Different) == 1 }},
		{"text appended twice", func(s map[string][]map[string]any) {
			txt := firstWith(s, "ORDERSTEXT_SUBFORM")["ORDERSTEXT_SUBFORM"].(map[string]any)
			txt["TEXT"] = txt["TEXT"].(string) + txt["TEXT"].(string)
		}, func(d diff) bool { return len(d.Different) == 1 }},
		{"attachment twice", func(s map[string][]map[string]any) {
			o := firstWith(s, "EXTFILES_SUBFORM")
			atts := o["EXTFILES_SUBFORM"].([]any)
			o["EXTFILES_SUBFORM"] = append(atts, atts[0])
		}, func(d diff) bool { return len(d.Different) == 1 }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			snap := asSnapshot(t, l.want)
			tc.damage(snap)
			if d := compare(l.want, snap); d.ok() || !tc.check(d) {
				t.Errorf("not caught as it should be: %v", d)
			}
		})
	}
}
