package odata

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestFormatKey(t *testing.T) {
	t.Parallel()
	tests := []struct {
		names  []string
		values []any
		want   string
		bad    bool
	}{
		{[]string{"CUSTNAME"}, []any{"A'B"}, "('A''B')", false},
		{[]string{"FAMILY"}, []any{int64(12)}, "(12)", false},
		{nil, []any{int64(3)}, "(3)", false},
		{[]string{"IVNUM", "IVTYPE", "DEBIT"}, []any{"X", "A", "D"}, "(IVNUM='X',IVTYPE='A',DEBIT='D')", false},
		{[]string{"A", "B"}, []any{"x", int64(-2)}, "(A='x',B=-2)", false},
		{[]string{"A", "B"}, []any{"x"}, "", true},
		{[]string{"A"}, nil, "", true},
		{[]string{"A"}, []any{nil}, "", true},
		{[]string{"A"}, []any{true}, "", true},
		{[]string{"A"}, []any{struct{}{}}, "", true},
	}
	for _, tc := range tests {
		got, err := FormatKey(tc.names, tc.values)
		if tc.bad {
			if err == nil {
				t.Errorf("FormatKey(%v, %v) = %q, want an error", tc.names, tc.values, got)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("FormatKey(%v, %v) = %q, %v; want %q", tc.names, tc.values, got, err, tc.want)
		}
		parts, err := ParseKey(got)
		if err != nil || len(parts) != len(tc.values) {
			t.Errorf("ParseKey(%q) = %v, %v", got, parts, err)
			continue
		}
		for i, p := range parts {
			if len(tc.values) > 1 && p.Name != tc.names[i] || p.Value != tc.values[i] {
				t.Errorf("ParseKey(%q)[%d] = %#v", got, i, p)
			}
		}
	}
}

func TestParseKey(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want []KeyPart
		off  int // error offset; -1 when no error
	}{
		{"('A''B')", []KeyPart{{"", "A'B"}}, -1},
		{"'x'", []KeyPart{{"", "x"}}, -1},
		{"(12)", []KeyPart{{"", int64(12)}}, -1},
		{"(-3)", []KeyPart{{"", int64(-3)}}, -1},
		{"(IVNUM='X',IVTYPE='A',DEBIT='D')", []KeyPart{{"IVNUM", "X"}, {"IVTYPE", "A"}, {"DEBIT", "D"}}, -1},
		{"(A = 'a,b=)', B=2)", []KeyPart{{"A", "a,b=)"}, {"B", int64(2)}}, -1},
		{"(KLINE=3)", []KeyPart{{"KLINE", int64(3)}}, -1},
		{"(1.50)", []KeyPart{{"", mustDec(t, "1.50")}}, -1},
		{"()", nil, 1},
		{"(", nil, 1},
		{"('abc)", nil, 5},
		{"(A='x',A='y')", nil, 7},
		{"('x',B=1)", nil, 8},
		{"(abc)", nil, 1},
		{"(A='x' B)", nil, 7},
		{"(99999999999999999999999)", []KeyPart{{"", mustDec(t, "99999999999999999999999")}}, -1},
	}
	for _, tc := range tests {
		got, err := ParseKey(tc.in)
		if tc.off >= 0 {
			var ke *KeyError
			if !errors.As(err, &ke) || !errors.Is(err, ErrBadKey) {
				t.Errorf("ParseKey(%q) = %v, %v; want a *KeyError", tc.in, got, err)
			} else if ke.Offset != tc.off {
				t.Errorf("ParseKey(%q) offset %d, want %d (%v)", tc.in, ke.Offset, tc.off, err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParseKey(%q) = %#v, %v; want %#v", tc.in, got, err, tc.want)
		}
	}
}

func TestParsePath(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want []Segment
		bad  bool
	}{
		{"/ORDERS", []Segment{{Name: "ORDERS"}}, false},
		{"ORDERS('A/B')/ORDERITEMS_SUBFORM(3)", []Segment{
			{Name: "ORDERS", Key: []KeyPart{{"", "A/B"}}, HasKey: true},
			{Name: "ORDERITEMS_SUBFORM", Key: []KeyPart{{"", int64(3)}}, HasKey: true}}, false},
		{"AINVOICES(IVNUM='X',IVTYPE='A',DEBIT='D')/AINVOICEITEMS_SUBFORM", []Segment{
			{Name: "AINVOICES", Key: []KeyPart{{"IVNUM", "X"}, {"IVTYPE", "A"}, {"DEBIT", "D"}}, HasKey: true},
			{Name: "AINVOICEITEMS_SUBFORM"}}, false},
		{"$1/ORDERITEMS_SUBFORM", []Segment{{Ref: "1"}, {Name: "ORDERITEMS_SUBFORM"}}, false},
		{"$metadata", []Segment{{Name: "$metadata"}}, false},
		{"GetMetadataFor(entity='ORDERS')", []Segment{{Name: "GetMetadataFor", Key: []KeyPart{{"entity", "ORDERS"}}, HasKey: true}}, false},
		{"", nil, false},
		{"ORDERS('x", nil, true},
		{"ORDERS//X", nil, true},
		{"(1)", nil, true},
		{"ORDERS(1", nil, true},
	}
	for _, tc := range tests {
		got, err := ParsePath(tc.in)
		if tc.bad {
			if !errors.Is(err, ErrBadKey) {
				t.Errorf("ParsePath(%q) = %v, %v; want ErrBadKey", tc.in, got, err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParsePath(%q) = %#v, %v; want %#v", tc.in, got, err, tc.want)
		}
	}
}

func TestReferences(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, id, rest string
		ok           bool
	}{
		{"$1/ORDERITEMS_SUBFORM", "1", "/ORDERITEMS_SUBFORM", true},
		{"$new", "new", "", true},
		{"$1?$select=KLINE", "1", "?$select=KLINE", true},
		{"$batch", "", "", false},
		{"ORDERS", "", "", false},
		{"$", "", "", false},
	}
	for _, tc := range tests {
		id, rest, ok := SplitReference(tc.in)
		if id != tc.id || rest != tc.rest || ok != tc.ok {
			t.Errorf("SplitReference(%q) = %q, %q, %v", tc.in, id, rest, ok)
		}
	}
	if r := Reference("1", "ORDERITEMS_SUBFORM"); r != "$1/ORDERITEMS_SUBFORM" {
		t.Errorf("Reference = %q", r)
	}
}

func TestServiceRoot(t *testing.T) {
	t.Parallel()
	tests := []struct {
		base string
		lang int
		want string
		bad  bool
	}{
		{"https://h/odata/Priority/tabula.ini/COMPANY", 3, "https://h/odata/Priority/tabula.ini,3/COMPANY", false},
		{"https://h/odata/Priority/tabula.ini,1/COMPANY/", 3, "https://h/odata/Priority/tabula.ini,3/COMPANY", false},
		{"https://h/odata/Priority/tabula.ini,1/COMPANY", 0, "https://h/odata/Priority/tabula.ini/COMPANY", false},
		{"https://h:8443/odata/Priority/tabula.ini/demo", 0, "https://h:8443/odata/Priority/tabula.ini/demo", false},
		{"https://user:secret@h/odata/Priority/tabula.ini/C", 2, "https://h/odata/Priority/tabula.ini,2/C", false},
		{"https://h/COMPANY", 1, "", true},
		{"h/odata/x/y", 1, "", true},
		{"ftp://h/a/b", 1, "", true},
		{"https://h/a,x/b", 1, "", true},
		{"https://h/a/b?x=1", 1, "", true},
		{"https://h/a/b", -1, "", true},
	}
	for _, tc := range tests {
		got, err := ServiceRoot(tc.base, tc.lang)
		if tc.bad {
			if err == nil {
				t.Errorf("ServiceRoot(%q, %d) = %q, want an error", tc.base, tc.lang, got)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ServiceRoot(%q, %d) = %q, %v; want %q", tc.base, tc.lang, got, err, tc.want)
		}
	}
	if _, err := ServiceRoot("https://user:secret@h/x", 1); err == nil || containsSecret(err.Error()) {
		t.Errorf("error leaks the password: %v", err)
	}
}

func containsSecret(s string) bool { return strings.Contains(s, "secret") }

func TestQueryEncode(t *testing.T) {
	t.Parallel()
	when := time.Date(2024, 3, 1, 0, 0, 0, 0, plus2)
	q := Query{
		Top: 100, Skip: 200,
		Select: []string{"ORDNAME", "CUSTNAME"},
		Expand: []string{"ORDERITEMS_SUBFORM($expand=ORDERITEMSTEXT_SUBFORM)"},
		Filter: And(Eq("CUSTNAME", "O'Neil & Sons"), Or(Ge("CURDATE", when), Eq("ORD", int64(5))), ""),
		Format: "application/json;odata.metadata=full",
	}
	want := "$filter=(CUSTNAME%20eq%20'O''Neil%20%26%20Sons')%20and%20((CURDATE%20ge%202024-03-01)%20or%20(ORD%20eq%205))" +
		"&$select=ORDNAME,CUSTNAME&$expand=ORDERITEMS_SUBFORM($expand=ORDERITEMSTEXT_SUBFORM)&$top=100&$skip=200" +
		"&$format=application/json;odata.metadata=full"
	if got := q.Encode(); got != want {
		t.Errorf("Encode =\n%s\nwant\n%s", got, want)
	}
	if (Query{}).Encode() != "" {
		t.Errorf("empty query not empty")
	}
	if got := (Query{Filter: Eq("PRICE", mustDec(t, "1.50"))}).Encode(); got != "$filter=PRICE%20eq%201.50" {
		t.Errorf("decimal filter %s", got)
	}
	if got := (Query{Filter: "D eq " + FormatDateTime(when)}).Encode(); got != "$filter=D%20eq%202024-03-01T00:00:00%2B02:00" {
		t.Errorf("plus sign not encoded: %s", got)
	}
	if got := Eq("X", struct{ A int }{1}); got != "X eq '{1}'" {
		t.Errorf("fallback literal %s", got)
	}
	if got := Or("A eq 1"); got != "A eq 1" {
		t.Errorf("single Or = %s", got)
	}
	if Ne("A", int64(1)) != "A ne 1" || Gt("A", int64(1)) != "A gt 1" || Lt("A", int64(1)) != "A lt 1" || Le("A", int64(1)) != "A le 1" {
		t.Errorf("comparison builders wrong")
	}
}

// FuzzPathKey: the one escaping rule round-trips any text key and any
// integer, composite or not, and EscapePath of the raw path agrees with it.
func FuzzPathKey(f *testing.F) {
	for _, s := range []string{"O'Neil & Co", "A/B#C?D", "50%25", "A+B", "לקוח", "a,b=c)", "''", ""} {
		f.Add(s, int64(3))
	}
	f.Fuzz(func(t *testing.T, s string, n int64) {
		for _, tc := range []struct {
			names  []string
			values []any
		}{{[]string{"K"}, []any{s}}, {nil, []any{n}}, {[]string{"A", "B"}, []any{s, n}}} {
			key, err := PathKey(tc.names, tc.values)
			if err != nil {
				t.Fatal(err)
			}
			parts, err := ParsePathKey(key)
			if err != nil || len(parts) != len(tc.values) {
				t.Fatalf("ParsePathKey(%q) = %v, %v", key, parts, err)
			}
			for i, p := range parts {
				if p.Value != tc.values[i] {
					t.Fatalf("ParsePathKey(%q)[%d] = %#v, want %#v", key, i, p.Value, tc.values[i])
				}
			}
			raw, _ := FormatKey(tc.names, tc.values)
			if got := EscapePath("SET" + raw + "/NAV"); got != "SET("+key+")/NAV" {
				t.Fatalf("EscapePath(%q) = %q, want SET(%s)/NAV", raw, got, key)
			}
			if lk, err := LocationKey("http://h/b/SET(" + key + ")"); err != nil || lk != key {
				t.Fatalf("LocationKey = %q, %v; want %q", lk, err, key)
			}
		}
	})
}
