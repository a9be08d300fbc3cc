package odata

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"
)

// FuzzParseKey: keys come from URLs the sandbox receives. What parses must
// format back to a key that parses the same.
func FuzzParseKey(f *testing.F) {
	for _, s := range []string{"('A''B')", "(12)", "(IVNUM='X',IVTYPE='A',DEBIT='D')", "(A = 'a,b=)', B=-2)", "(1.50)", "ORDERS('A/B')/X(3)", "$1/X"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if _, err := ParsePath(s); err != nil && !errors.Is(err, ErrBadKey) {
			t.Fatalf("ParsePath error %v does not wrap ErrBadKey", err)
		}
		parts, err := ParseKey(s)
		if err != nil {
			if !errors.Is(err, ErrBadKey) {
				t.Fatalf("error %v does not wrap ErrBadKey", err)
			}
			return
		}
		var names []string
		var values []any
		for _, p := range parts {
			if len(parts) > 1 {
				names = append(names, p.Name)
			}
			values = append(values, p.Value)
		}
		k, err := FormatKey(names, values)
		if err != nil {
			t.Fatalf("FormatKey of parsed %v: %v", parts, err)
		}
		again, err := ParseKey(k)
		if err != nil {
			t.Fatalf("re-parse of %q: %v", k, err)
		}
		for i := range again {
			if len(parts) == 1 {
				again[i].Name = parts[i].Name
			}
		}
		if !reflect.DeepEqual(parts, again) {
			t.Fatalf("%q -> %v -> %q -> %v", s, parts, k, again)
		}
	})
}

// FuzzDecimal: numbers come from servers and spreadsheets.
func FuzzDecimal(f *testing.F) {
	for _, s := range []string{"12.10", "-0", "1.5e2", `"3"`, "1e999999", ".5", "5."} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var d Decimal
		if err := json.Unmarshal([]byte(s), &d); err != nil {
			return
		}
		b, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		var d2 Decimal
		if err := json.Unmarshal(b, &d2); err != nil || d2 != d {
			t.Fatalf("%q -> %s -> %v, %v", s, b, d2, err)
		}
		if d2.Cmp(d) != 0 {
			t.Fatalf("Cmp differs")
		}
	})
}
