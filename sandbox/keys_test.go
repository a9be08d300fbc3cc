package sandbox_test

import (
	"encoding/json"
	"testing"

	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/sandbox"
)

// TestKeysRoundTrip: one grammar of keys (docs/service.md, Keys). A key
// written by odata.PathKey, the executor's only writer of keyed URLs,
// addresses the same record in a plain URL, in a JSON $batch and in a
// multipart $batch; the Location the sandbox answers reads back
// (odata.LocationKey) as the same key; and a PATCH through each reaches the
// record the sandbox holds.
func TestKeysRoundTrip(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		set    string
		names  []string
		values []any
		body   map[string]any // POST body beside the key fields
		want   string         // PathKey's spelling
	}{
		{"quote doubled", "CUSTOMERS", []string{"CUSTNAME"}, []any{"O'Neil"}, nil, "'O''Neil'"},
		{"two quotes", "CUSTOMERS", []string{"CUSTNAME"}, []any{"''x'"}, nil, "'''''x'''"},
		{"ampersand", "CUSTOMERS", []string{"CUSTNAME"}, []any{"A&B"}, nil, "'A%26B'"},
		{"slash", "CUSTOMERS", []string{"CUSTNAME"}, []any{"A/B"}, nil, "'A%2FB'"},
		{"hash", "CUSTOMERS", []string{"CUSTNAME"}, []any{"A#B"}, nil, "'A%23B'"},
		{"percent", "CUSTOMERS", []string{"CUSTNAME"}, []any{"50%25"}, nil, "'50%2525'"},
		{"plus", "CUSTOMERS", []string{"CUSTNAME"}, []any{"A+B"}, nil, "'A%2BB'"},
		{"space", "CUSTOMERS", []string{"CUSTNAME"}, []any{"A B"}, nil, "'A%20B'"},
		{"question mark", "CUSTOMERS", []string{"CUSTNAME"}, []any{"A?B=1"}, nil, "'A%3FB=1'"},
		{"parentheses and comma", "CUSTOMERS", []string{"CUSTNAME"}, []any{"A(1),B=2"}, nil, "'A(1),B=2'"},
		{"Hebrew", "CUSTOMERS", []string{"CUSTNAME"}, []any{"לקוח"}, nil, "'%D7%9C%D7%A7%D7%95%D7%97'"},
		{"composite", "AINVOICES", []string{"IVNUM", "IVTYPE", "DEBIT"}, []any{"IV&1/2 #", "A", "D"},
			map[string]any{"CUSTNAME": "C100"}, "IVNUM='IV%261%2F2%20%23',IVTYPE='A',DEBIT='D'"},
	}
	c := start(t, sandbox.Options{})
	c.seed()
	for _, tc := range tests {
		key, err := odata.PathKey(tc.names, tc.values)
		if err != nil || key != tc.want {
			t.Errorf("%s: PathKey = %q, %v; want %q", tc.name, key, err, tc.want)
			continue
		}
		body := map[string]any{}
		for k, v := range tc.body {
			body[k] = v
		}
		for i, n := range tc.names {
			body[n] = tc.values[i]
		}
		if tc.set == "CUSTOMERS" {
			body["CUSTDES"] = "created"
		}
		r := c.must(201, "POST", "/"+tc.set, body)
		if lk, err := odata.LocationKey(r.header.Get("Location")); err != nil || lk != key {
			t.Errorf("%s: Location %q reads as %q, %v; want %q", tc.name, r.header.Get("Location"), lk, err, key)
		}
		path := tc.set + "(" + key + ")"
		got := c.must(200, "GET", "/"+path, nil).json(t)
		for i, n := range tc.names {
			if got[n] != tc.values[i] {
				t.Errorf("%s: GET %s gave %s %v, want %v", tc.name, path, n, got[n], tc.values[i])
			}
		}
		for _, format := range []string{"json", "multipart"} {
			field := map[string]string{"CUSTOMERS": "CUSTDES", "AINVOICES": "DETAILS"}[tc.set]
			patch, _ := json.Marshal(map[string]any{field: format})
			_, out := c.batch(format, []odata.BatchRequest{
				{ID: "1", Method: "GET", URL: path},
				{ID: "2", Method: "PATCH", URL: path, Headers: map[string]string{"content-type": "application/json"}, Body: patch},
			})
			if len(out) != 2 || out[0].Status != 200 || out[1].Status != 200 {
				t.Errorf("%s: %s $batch on %s: %s", tc.name, format, path, statuses(out))
				continue
			}
			if held := findEntity(c.sb.Snapshot()[tc.set], tc.names, tc.values); held == nil || held[field] != format {
				t.Errorf("%s: after the %s $batch PATCH the sandbox holds %v", tc.name, format, held)
			}
		}
	}
}

// TestIntegerLineKeyRoundTrip: a sub-form line's integer key
// (docs/service.md, Keys) read from the Location of the POST that made it
// addresses the line.
func TestIntegerLineKeyRoundTrip(t *testing.T) {
	t.Parallel()
	c := start(t, sandbox.Options{})
	c.seed()
	order, err := odata.PathKey([]string{"ORDNAME"}, []any{"SO 1&2"})
	if err != nil {
		t.Fatal(err)
	}
	c.must(201, "POST", "/ORDERS", map[string]any{"ORDNAME": "SO 1&2", "CUSTNAME": "C100"})
	r := c.must(201, "POST", "/ORDERS("+order+")/ORDERITEMS_SUBFORM", map[string]any{"PARTNAME": "P1", "TQUANT": 1})
	line, err := odata.LocationKey(r.header.Get("Location"))
	if err != nil || line != "1" {
		t.Fatalf("line key %q, %v from Location %q", line, err, r.header.Get("Location"))
	}
	parts, err := odata.ParsePathKey(line)
	if err != nil || len(parts) != 1 || parts[0].Value != int64(1) {
		t.Fatalf("ParsePathKey(%q) = %#v, %v", line, parts, err)
	}
	_, out := c.batch("json", []odata.BatchRequest{{ID: "1", Method: "PATCH", URL: "ORDERS(" + order + ")/ORDERITEMS_SUBFORM(" + line + ")",
		Headers: map[string]string{"content-type": "application/json"}, Body: json.RawMessage(`{"TQUANT":7}`)}})
	if len(out) != 1 || out[0].Status != 200 {
		t.Fatalf("PATCH the line: %s", statuses(out))
	}
	o := findEntity(c.sb.Snapshot()["ORDERS"], []string{"ORDNAME"}, []any{"SO 1&2"})
	items, _ := o["ORDERITEMS_SUBFORM"].([]map[string]any)
	if len(items) != 1 || items[0]["TQUANT"] != float64(7) {
		t.Errorf("order held %v", o)
	}
}

func findEntity(rows []map[string]any, names []string, values []any) map[string]any {
next:
	for _, r := range rows {
		for i, n := range names {
			if r[n] != values[i] {
				continue next
			}
		}
		return r
	}
	return nil
}
