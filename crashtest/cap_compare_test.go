package crashtest

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestCompareCAPCatches proves that the CAP rounds' comparison (diffCAP
// over canonCAP) sees each kind of damage in rows as the CAP service
// answers them: Decimals as strings with four places, the text as an
// object or null, lines in any order, Guids and modifiedAt ignored.
func TestCompareCAPCatches(t *testing.T) {
	want := map[string][]string{
		"ORDERS": {
			strings.Join([]string{"C1001", "2026-01-02", canonText("Deliver, gate 2", true),
				strings.Join([]string{canonItem("P-001", "5", "1.50"), canonItem("P-002", "1", "0.05")}, ";")}, "|"),
			strings.Join([]string{"C1002", "2026-01-03", "no text", canonItem("P-001", "2", "3")}, "|"),
		},
		"ORDERITEMS":                {canonItem("P-001", "5", "1.50"), canonItem("P-002", "1", "0.05"), canonItem("P-001", "2", "3")},
		"ORDERS_ORDERSTEXT_SUBFORM": {canonText("Deliver, gate 2", true)},
		"LOGPART":                   {"P-001|Bolt|F00|7290000000001|1/2"},
	}
	const held = `{
	  "ORDERS": [
	    {"ID": "3a943e5e-c925-4fae-b2d5-9e2f0a36c6d8", "CUSTNAME": "C1001", "CURDATE": "2026-01-02", "modifiedAt": "2026-11-27T15:10:37.128Z",
	     "ORDERSTEXT_SUBFORM": {"TEXT": "Deliver, gate 2", "APPEND": true, "up__ID": "3a943e5e-c925-4fae-b2d5-9e2f0a36c6d8"},
	     "ORDERITEMS_SUBFORM": [{"PARTNAME": "P-002", "TQUANT": "1.0000", "PRICE": "0.0500"}, {"PARTNAME": "P-001", "TQUANT": "5.0000", "PRICE": "1.5000"}]},
	    {"ID": "4b943e5e-c925-4fae-b2d5-9e2f0a36c6d8", "CUSTNAME": "C1002", "CURDATE": "2026-01-03", "ORDERSTEXT_SUBFORM": null,
	     "ORDERITEMS_SUBFORM": [{"PARTNAME": "P-001", "TQUANT": "2.0000", "PRICE": "3.0000"}]}
	  ],
	  "ORDERITEMS": [{"PARTNAME": "P-001", "TQUANT": "5.0000", "PRICE": "1.5000"}, {"PARTNAME": "P-002", "TQUANT": "1.0000", "PRICE": "0.0500"},
	                 {"PARTNAME": "P-001", "TQUANT": "2.0000", "PRICE": "3.0000"}],
	  "ORDERS_ORDERSTEXT_SUBFORM": [{"TEXT": "Deliver, gate 2", "APPEND": true}],
	  "LOGPART": [{"PARTNAME": "P-001", "PARTDES": "Bolt", "FAMILYNAME": "F00", "BARCODE": "7290000000001", "PRICE": "0.5000"}]
	}`
	read := func() map[string][]map[string]any {
		var m map[string][]map[string]any
		if err := json.Unmarshal([]byte(held), &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	if d := diffCAP(read(), want); !d.ok() {
		t.Fatalf("exact rows: %v", d)
	}
	for _, tc := range []struct {
		name                 string
		damage               func(m map[string][]map[string]any)
		missing, dup, extras int
	}{
		{"an order twice", func(m map[string][]map[string]any) { m["ORDERS"] = append(m["ORDERS"], m["ORDERS"][1]) }, 0, 1, 0},
		{"an order lost", func(m map[string][]map[string]any) { m["ORDERS"] = m["ORDERS"][:1] }, 1, 0, 0},
		{"a line lost", func(m map[string][]map[string]any) {
			m["ORDERS"][0]["ORDERITEMS_SUBFORM"] = m["ORDERS"][0]["ORDERITEMS_SUBFORM"].([]any)[:1]
		}, 1, 0, 1},
		{"a line's quantity", func(m map[string][]map[string]any) { m["ORDERITEMS"][0]["TQUANT"] = "5.0001" }, 1, 0, 1},
		{"a text doubled", func(m map[string][]map[string]any) {
			m["ORDERS"][0]["ORDERSTEXT_SUBFORM"].(map[string]any)["TEXT"] = "Deliver, gate 2Deliver, gate 2"
		}, 1, 0, 1},
		{"a text where there was none", func(m map[string][]map[string]any) {
			m["ORDERS"][1]["ORDERSTEXT_SUBFORM"] = map[string]any{"TEXT": "x", "APPEND": true}
		}, 1, 0, 1},
		{"an order's date", func(m map[string][]map[string]any) { m["ORDERS"][1]["CURDATE"] = "2026-01-04" }, 1, 0, 1},
		{"a part's price", func(m map[string][]map[string]any) { m["LOGPART"][0]["PRICE"] = "5.0000" }, 1, 0, 1},
		{"a stray text", func(m map[string][]map[string]any) {
			m["ORDERS_ORDERSTEXT_SUBFORM"] = append(m["ORDERS_ORDERSTEXT_SUBFORM"], map[string]any{"TEXT": "y", "APPEND": true})
		}, 0, 0, 1},
		{"a family left", func(m map[string][]map[string]any) {
			m["FAMILY_LOG"] = []map[string]any{{"FAMILYNAME": "F00", "FAMILYDESC": "Bolts", "DEBITFLAG": "N"}}
		}, 0, 0, 1},
	} {
		m := read()
		tc.damage(m)
		d := diffCAP(m, want)
		if len(d.Missing) != tc.missing || len(d.Duplicated) != tc.dup || len(d.Extra) != tc.extras {
			t.Errorf("%s: %v; want %d missing, %d duplicated, %d extra", tc.name, d, tc.missing, tc.dup, tc.extras)
		}
	}

	// Mid-run, an order posted line by line may lack lines and its text
	// yet; it may not be there twice, nor hold a line it should not.
	for _, tc := range []struct {
		name   string
		damage func(m map[string][]map[string]any)
		extras int
	}{
		{"an order without its second line and text yet", func(m map[string][]map[string]any) {
			m["ORDERS"][0]["ORDERITEMS_SUBFORM"] = m["ORDERS"][0]["ORDERITEMS_SUBFORM"].([]any)[1:]
			m["ORDERS"][0]["ORDERSTEXT_SUBFORM"] = nil
		}, 0},
		{"an order without lines yet", func(m map[string][]map[string]any) { m["ORDERS"][1]["ORDERITEMS_SUBFORM"] = []any{} }, 0},
		{"an order twice, the second without lines yet", func(m map[string][]map[string]any) {
			m["ORDERS"] = append(m["ORDERS"], map[string]any{"CUSTNAME": "C1002", "CURDATE": "2026-01-03", "ORDERITEMS_SUBFORM": []any{}})
		}, 1},
		{"an order with a line of another quantity", func(m map[string][]map[string]any) {
			m["ORDERS"][1]["ORDERITEMS_SUBFORM"].([]any)[0].(map[string]any)["TQUANT"] = "3.0000"
		}, 1},
		{"an order with a line twice", func(m map[string][]map[string]any) {
			ls := m["ORDERS"][1]["ORDERITEMS_SUBFORM"].([]any)
			m["ORDERS"][1]["ORDERITEMS_SUBFORM"] = append(ls, ls[0])
		}, 1},
	} {
		m := read()
		tc.damage(m)
		d := diffCAP(m, want)
		if d.ok() {
			t.Errorf("%s: no difference at the end of a run", tc.name)
		}
		if mid := d.midRun(); len(mid.Extra) != tc.extras || len(mid.Duplicated) != 0 {
			t.Errorf("%s: mid-run %v; want %d extra", tc.name, mid, tc.extras)
		}
	}
}
