package odata

import (
	"fmt"
	"testing"
)

// A filter matches rows as a client decodes them (numbers as json.Number,
// Int64 quoted where IEEE754Compatible) as it matches the sandbox's.
func TestFilterMatchesDecodedRows(t *testing.T) {
	t.Parallel()
	typ := &EntityType{Name: "LOGPART", Key: []string{"PARTNAME"}, Properties: []*Property{
		{Name: "PARTNAME", Type: EdmString}, {Name: "PRICE", Type: EdmDecimal}, {Name: "PART", Type: EdmInt64},
		{Name: "ACTIVE", Type: EdmBoolean}, {Name: "UDATE", Type: EdmDateTimeOffset}}}
	tests := []struct {
		filter, row string
		want        bool
	}{
		{"PARTNAME eq 'B-100'", `{"PARTNAME":"B-100"}`, true},
		{"PARTNAME eq 'B-100'", `{"PARTNAME":"B-1000"}`, false},
		{"PARTNAME eq 'O''Neil'", `{"PARTNAME":"O'Neil"}`, true},
		{"PRICE gt 5", `{"PRICE":5.01}`, true},
		{"PRICE gt 5", `{"PRICE":5.00}`, false},
		{"PART ge 10 and PART lt 20", `{"PART":"15"}`, true}, // a quoted Int64
		{"ACTIVE eq true or PRICE eq 0", `{"ACTIVE":false,"PRICE":0}`, true},
		{"ACTIVE eq true", `{"ACTIVE":false}`, false},
		{"UDATE ge 2026-11-01", `{"UDATE":"2026-11-01T09:00:00Z"}`, true},
		{"PARTNAME eq null", `{"PARTNAME":null}`, true},
		{"(PRICE lt 1 or PRICE gt 100) and PARTNAME ne 'X'", `{"PRICE":0.5,"PARTNAME":"Y"}`, true},
	}
	for _, tt := range tests {
		f, err := ParseFilter(typ, tt.filter)
		if err != nil {
			t.Fatalf("%s: %v", tt.filter, err)
		}
		row, err := DecodeEntity([]byte(tt.row))
		if err != nil {
			t.Fatal(err)
		}
		if got := f.Match(row); got != tt.want {
			t.Errorf("%s on %s: %v, want %v", tt.filter, tt.row, got, tt.want)
		}
	}
	for _, bad := range []string{"NOPE eq 1", "PRICE eq 'x'", "PARTNAME like 'B%'", "PARTNAME eq 'open"} {
		if _, err := ParseFilter(typ, bad); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

// Equalities recognises a keyed read's or-chain on one field, and nothing
// else: the sandbox answers only those from its index.
func TestEqualities(t *testing.T) {
	t.Parallel()
	typ := &EntityType{Name: "LOGPART", Key: []string{"PARTNAME"}, Properties: []*Property{
		{Name: "PARTNAME", Type: EdmString}, {Name: "PRICE", Type: EdmDecimal}}}
	for _, c := range []struct {
		filter string
		want   []any
		ok     bool
	}{
		{"PARTNAME eq 'A'", []any{"A"}, true},
		{"PARTNAME eq 'A' or PARTNAME eq 'O''Neil' or PARTNAME eq 'C'", []any{"A", "O'Neil", "C"}, true},
		{"(PARTNAME eq 'A' or PARTNAME eq 'B')", []any{"A", "B"}, true},
		{"PARTNAME eq 'A' or PRICE eq 1", nil, false},
		{"PARTNAME eq 'A' and PRICE eq 1", nil, false},
		{"PARTNAME ne 'A'", nil, false},
		{"PARTNAME eq null", nil, false},
		{"PRICE eq 1", nil, false},
	} {
		f, err := ParseFilter(typ, c.filter)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := Equalities(f, "PARTNAME")
		if ok != c.ok || ok && fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("%s: %v %v, want %v %v", c.filter, got, ok, c.want, c.ok)
		}
	}
}
