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

// Under the odata dialect a filter's Guid and Date literals are sent as
// the standard writes them, however the plan wrote them; under the ERP's
// the text goes as it is. Either way they match rows as the service
// answers them.
func TestFilterGuidAndDate(t *testing.T) {
	t.Parallel()
	typ := &EntityType{Name: "ORDERS", Key: []string{"ID"}, Properties: []*Property{
		{Name: "ID", Type: EdmGuid}, {Name: "ORDNAME", Type: EdmString}, {Name: "CURDATE", Type: EdmDate}}}
	const g = "3a943e5e-c925-4fae-b2d5-9e2f0a36c6d8"
	for _, c := range []struct {
		filter, odata, row string
		match              bool
	}{
		{"ID eq " + g, "ID eq " + g, `{"ID":"` + g + `"}`, true},
		{"ID eq '" + g + "'", "ID eq " + g, `{"ID":"` + g + `"}`, true},
		{"ID eq '3A943E5E-C925-4FAE-B2D5-9E2F0A36C6D8'", "ID eq 3A943E5E-C925-4FAE-B2D5-9E2F0A36C6D8", `{"ID":"` + g + `"}`, true},
		{"ID ne '" + g + "'", "ID ne " + g, `{"ID":"` + g + `"}`, false},
		{"ID eq null", "ID eq null", `{"ID":null}`, true},
		{"CURDATE eq 2026-11-03", "CURDATE eq 2026-11-03", `{"CURDATE":"2026-11-03"}`, true},
		{"CURDATE ge '2026-11-04'", "CURDATE ge 2026-11-04", `{"CURDATE":"2026-11-03"}`, false},
		{"CURDATE lt '2026-11-04' and ORDNAME eq '2026-11-04'", "CURDATE lt 2026-11-04 and ORDNAME eq '2026-11-04'", `{"CURDATE":"2026-11-03","ORDNAME":"2026-11-04"}`, true},
		{"(ID eq '" + g + "')  or CURDATE gt '2026-01-01'", "(ID eq " + g + ")  or CURDATE gt 2026-01-01", `{"ID":"x","CURDATE":"2026-11-03"}`, true},
		{"CURDATE ge'2026-11-03'and(ID eq '" + g + "')", "CURDATE ge 2026-11-03 and(ID eq " + g + ")", `{"ID":"` + g + `","CURDATE":"2026-11-03"}`, true},
	} {
		got, err := FilterFor(DialectOData, typ, c.filter)
		if err != nil || got != c.odata {
			t.Errorf("FilterFor(odata, %s) = %q, %v; want %q", c.filter, got, err, c.odata)
		}
		if got, err := FilterFor(DialectPriority, typ, c.filter); err != nil || got != c.filter {
			t.Errorf("FilterFor(priority, %s) = %q, %v; want it as written", c.filter, got, err)
		}
		f, err := ParseFilter(typ, c.filter)
		if err != nil {
			t.Fatal(err)
		}
		row, err := DecodeEntity([]byte(c.row))
		if err != nil {
			t.Fatal(err)
		}
		if f.Match(row) != c.match {
			t.Errorf("%s on %s: %v, want %v", c.filter, c.row, !c.match, c.match)
		}
	}
	for _, c := range []struct{ filter, msg string }{
		{"ID eq 'SO1'", `$filter: ID is a Guid: "SO1" is not 8-4-4-4-12 hexadecimal digits`},
		{"ID eq 3a943e5e", `$filter: ID is a Guid: "3a943e5e" is not 8-4-4-4-12 hexadecimal digits`},
		{"CURDATE eq '03/11/2026'", `$filter: CURDATE is a date: "03/11/2026" is not YYYY-MM-DD`},
		{"CURDATE eq 2026-11-03T00:00:00Z", `$filter: CURDATE is a date: "2026-11-03T00:00:00Z" is not YYYY-MM-DD`},
	} {
		if _, err := FilterFor(DialectOData, typ, c.filter); err == nil || err.Error() != c.msg {
			t.Errorf("%s: error %v, want %s", c.filter, err, c.msg)
		}
	}
}

// FilterFor never panics, and what it writes is a filter it leaves as it
// is: the same text parses, and the standard's literals need no rewriting.
func FuzzFilterFor(f *testing.F) {
	typ := &EntityType{Name: "ORDERS", Key: []string{"ID"}, Properties: []*Property{
		{Name: "ID", Type: EdmGuid}, {Name: "ORDNAME", Type: EdmString}, {Name: "CURDATE", Type: EdmDate}, {Name: "QTY", Type: EdmInt64}}}
	for _, s := range []string{
		"ID eq '3a943e5e-c925-4fae-b2d5-9e2f0a36c6d8'", "(CURDATE ge '2026-11-05') and ORDNAME eq 'ID eq ''x'''",
		"CURDATE eq 2026-11-05 or QTY gt 3", "ID eq null", "ORDNAME eq 'O''Neil' and ID ne ' 3A943E5E-C925-4FAE-B2D5-9E2F0A36C6D8 '",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out, err := FilterFor(DialectOData, typ, s)
		if err != nil {
			return
		}
		again, err := FilterFor(DialectOData, typ, out)
		if err != nil || again != out {
			t.Fatalf("FilterFor(%q) = %q, which gives %q, %v", s, out, again, err)
		}
	})
}
