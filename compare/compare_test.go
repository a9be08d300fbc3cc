package compare_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/migrate-tool/migrate/compare"
	"github.com/migrate-tool/migrate/odata"
)

func dec(t *testing.T, s string) odata.Decimal {
	t.Helper()
	d, err := odata.ParseDecimal(s, '.')
	if err != nil {
		t.Fatal(err)
	}
	return d
}

var (
	int64Field   = &odata.Property{Name: "KLINE", Type: odata.EdmInt64}
	decimalField = &odata.Property{Name: "PRICE", Type: odata.EdmDecimal}
	scaledField  = &odata.Property{Name: "PRICE", Type: odata.EdmDecimal, Precision: 16, Scale: 2, HasScale: true}
	momentField  = &odata.Property{Name: "UDATE", Type: odata.EdmDateTimeOffset}
	dayField     = &odata.Property{Name: "CURDATE", Type: odata.EdmDateTimeOffset, DateOnly: true}
	boolField    = &odata.Property{Name: "FLAG", Type: odata.EdmBoolean}
	stringField  = &odata.Property{Name: "PARTNAME", Type: odata.EdmString}
	guidField    = &odata.Property{Name: "ID", Type: odata.EdmGuid}
	edmDateField = &odata.Property{Name: "CURDATE", Type: odata.EdmDate}
)

// TestValue: the one rule, by the field's type, for values as a server's
// JSON gives them (numbers as json.Number, or as strings under
// IEEE754Compatible) and as the run wrote them (int64, odata.Decimal,
// time.Time). Each case holds both ways round except where the server's
// side matters (a date-only day in the server's time zone).
func TestValue(t *testing.T) {
	t.Parallel()
	when := time.Date(2024, 2, 29, 22, 0, 0, 0, time.UTC)
	tests := []struct {
		name      string
		p         *odata.Property
		got, want any
		same      bool
		oneWay    bool // got is the server's: not checked swapped
	}{
		// Decimal: numerically, in any form.
		{"decimal 500.0000 as a string is 500", decimalField, "500.0000", int64(500), true, false},
		{"decimal 500.0000 as a number is 500", decimalField, json.Number("500.0000"), dec(t, "500"), true, false},
		{"decimal as a string, another value", decimalField, "500.0001", dec(t, "500"), false, false},
		{"decimal 12.10 is 12.1", decimalField, json.Number("12.10"), dec(t, "12.1"), true, false},
		{"decimal from a float", decimalField, float64(1.5), json.Number("1.50"), true, false},
		// Scale: both rounded as the server stores it.
		{"scale 2: 500.005 is stored 500.01", scaledField, "500.01", dec(t, "500.005"), true, false},
		{"scale 2: 500.004 is stored 500.00", scaledField, json.Number("500"), dec(t, "500.004"), true, false},
		{"scale 2: a cent apart", scaledField, json.Number("500.01"), dec(t, "500"), false, false},
		{"no scale: 500.005 is not 500.01", decimalField, "500.01", dec(t, "500.005"), false, false},
		{"scale 2: 0.355 is stored 0.36", scaledField, json.Number("0.36"), json.Number("0.355"), true, false},
		{"scale 2: 0.35 is not a rounding of 0.355", scaledField, json.Number("0.35"), json.Number("0.355"), false, false},
		{"unknown field: no rounding", nil, json.Number("0.36"), json.Number("0.355"), false, false},
		// Int64: the number, or its text (IEEE754Compatible, as CAP answers).
		{"int64 as a string", int64Field, "5", int64(5), true, false},
		{"int64 as a string, json.Number", int64Field, "5", json.Number("5"), true, false},
		{"int64 as a number", int64Field, json.Number("5"), int64(5), true, false},
		{"int64 5 is not 6", int64Field, "6", int64(5), false, false},
		{"int64 not a number", int64Field, "five", int64(5), false, false},
		{"int64 blank", int64Field, nil, int64(0), false, false},
		// The standard's other types.
		{"int32 as a string", &odata.Property{Type: odata.EdmInt32}, "7", int64(7), true, false},
		{"time of day 09:30 is 09:30:00.000", &odata.Property{Type: odata.EdmTimeOfDay}, "09:30:00.000", "09:30", true, false},
		{"time of day a second apart", &odata.Property{Type: odata.EdmTimeOfDay}, "09:30:01", "09:30:00", false, false},
		{"duration PT1H is PT60M", &odata.Property{Type: odata.EdmDuration}, "PT1H", "PT60M", true, false},
		{"duration P1D is PT24H", &odata.Property{Type: odata.EdmDuration}, "P1D", "PT24H", true, false},
		{"duration PT1H is not PT61M", &odata.Property{Type: odata.EdmDuration}, "PT1H", "PT61M", false, false},
		// Guid and Date, as other services give them (docs/other-services.md).
		{"guid in either case", guidField, "3a943e5e-c925-4fae-b2d5-9e2f0a36c6d8", odata.Guid("3A943E5E-C925-4FAE-B2D5-9E2F0A36C6D8"), true, false},
		{"guid another", guidField, "3a943e5e-c925-4fae-b2d5-9e2f0a36c6d9", odata.Guid("3a943e5e-c925-4fae-b2d5-9e2f0a36c6d8"), false, false},
		{"Edm.Date the day written", edmDateField, "2026-11-03", odata.Date("2026-11-03"), true, false},
		{"Edm.Date another day", edmDateField, "2026-11-04", odata.Date("2026-11-03"), false, false},
		// DateTimeOffset: instants.
		{"instant with an offset", momentField, "2024-03-01T00:00:00+02:00", when, true, false},
		{"instant as text both", momentField, "2024-03-01T00:00:00+02:00", "2024-02-29T22:00:00Z", true, false},
		{"instant a second apart", momentField, when, when.Add(time.Second), false, false},
		{"instant not a date", momentField, when, "not a date", false, false},
		// Date-only: the day, as the server's zone or UTC sees it.
		{"date-only: the day in UTC", dayField, "2024-02-29T00:00:00Z", time.Date(2024, 3, 1, 0, 0, 0, 0, time.FixedZone("+14", 14*3600)), true, true},
		{"date-only: the day as sent", dayField, "2024-03-01T00:00:00Z", time.Date(2024, 3, 1, 0, 0, 0, 0, time.FixedZone("+14", 14*3600)), true, true},
		{"date-only: another day", dayField, "2024-03-02T00:00:00Z", "2024-03-01T09:00:00Z", false, false},
		{"date-only: a time of the same day", dayField, "2024-03-01T00:00:00Z", "2024-03-01T09:30:00Z", true, false},
		{"instant: a time of the same day differs", momentField, "2024-03-01T00:00:00Z", "2024-03-01T09:30:00Z", false, false},
		// Boolean.
		{"boolean", boolField, true, true, true, false},
		{"boolean as text", boolField, "true", true, true, false},
		{"boolean differs", boolField, true, false, false, false},
		// String: its text; null and empty are one.
		{"string", stringField, "P1", "P1", true, false},
		{"string case", stringField, "P1", "p1", false, false},
		{"string null is empty", stringField, nil, "", true, false},
		{"string 007 is not 7", stringField, "007", "7", false, false},
		// Untyped (a field the metadata does not know): as before, and a
		// number equals its text.
		{"untyped nil nil", nil, nil, nil, true, false},
		{"untyped nil empty", nil, nil, "", true, false},
		{"untyped nil x", nil, nil, "x", false, false},
		{"untyped 0 nil", nil, int64(0), nil, false, false},
		{"untyped false nil", nil, false, nil, false, false},
		{"untyped text", nil, "a", "a", true, false},
		{"untyped text case", nil, "a", "A", false, false},
		{"untyped 12.10", nil, json.Number("12.10"), dec(t, "12.1"), true, false},
		{"untyped 12.11", nil, json.Number("12.11"), dec(t, "12.1"), false, false},
		{"untyped 5 int64", nil, json.Number("5"), int64(5), true, false},
		{"untyped 5 5.00", nil, int64(5), dec(t, "5.00"), true, false},
		{"untyped a number's text", nil, "5", json.Number("5"), true, false},
		{"untyped a decimal's text", nil, "500.0000", int64(500), true, false},
		{"untyped another number's text", nil, "5.1", json.Number("5"), false, false},
		{"untyped text not a number", nil, "SO5", int64(5), false, false},
		{"untyped two texts stay texts", nil, "5", "5.0", false, false},
		{"untyped date text", nil, " 2024-02-29T22:00:00Z", when, true, false},
		{"untyped day text", nil, "2024-02-29", "2024-02-29T00:00:00Z", true, false},
		{"untyped not a date", nil, "2024/02/29", "2024-02-29T00:00:00Z", false, false},
		{"untyped a date inside a text", nil, "SO2024-02-29", "2024-02-29T00:00:00Z", false, false},
		{"untyped true", nil, true, true, true, false},
		{"untyped true false", nil, true, false, false, false},
		{"untyped true text", nil, true, "true", false, false},
		{"untyped objects", nil, map[string]any{"TEXT": "x"}, map[string]any{"TEXT": "x"}, true, false},
		{"untyped lists", nil, []any{json.Number("1")}, []any{json.Number("2")}, false, false},
	}
	for _, tc := range tests {
		if got := compare.Value(tc.p, tc.got, tc.want); got != tc.same {
			t.Errorf("%s: Value(%#v, %#v) = %v, want %v", tc.name, tc.got, tc.want, got, tc.same)
		}
		if tc.oneWay {
			continue
		}
		if got := compare.Value(tc.p, tc.want, tc.got); got != tc.same {
			t.Errorf("%s: Value(%#v, %#v) = %v, want %v (swapped)", tc.name, tc.want, tc.got, got, tc.same)
		}
	}
}

var lineType = &odata.EntityType{Name: "ORDERITEMS_SUBFORM", Key: []string{"KLINE"}, Properties: []*odata.Property{
	int64Field, {Name: "PARTNAME", Type: odata.EdmString}, {Name: "TQUANT", Type: odata.EdmDecimal}, scaledField, dayField,
}}

// TestFields: an entity's fields, each by its type; what differs is named
// with what was found (a number given as a string shown as the number) and
// what was written, and a field the answer does
// not hold is absent, not a value.
func TestFields(t *testing.T) {
	t.Parallel()
	got := map[string]any{"KLINE": "1", "PARTNAME": "P1", "TQUANT": "2.0000", "PRICE": "500.01", "CURDATE": "2024-03-01T00:00:00Z"}
	want := map[string]any{"KLINE": int64(1), "PARTNAME": "P1", "TQUANT": dec(t, "2"), "PRICE": dec(t, "500.005"), "CURDATE": "2024-03-01T08:00:00+02:00"}
	if d := compare.Fields(lineType, got, want); d != nil {
		t.Errorf("Fields of the same line: %+v", d)
	}
	if !compare.Same(lineType, got, want) {
		t.Error("Same of the same line: false")
	}
	want["TQUANT"], want["NOTE"], want["PARTNAME"] = dec(t, "3"), "x", "P2"
	wantDiffs := []compare.Diff{
		{Field: "NOTE", Found: nil, Left: "x", Absent: true},
		{Field: "PARTNAME", Found: "P1", Left: "P2"},
		{Field: "TQUANT", Found: json.Number("2.0000"), Left: dec(t, "3")}, // shown as the number it is
	}
	if d := compare.Fields(lineType, got, want); !reflect.DeepEqual(d, wantDiffs) {
		t.Errorf("Fields = %+v\nwant %+v", d, wantDiffs)
	}
	if compare.Same(lineType, got, want) {
		t.Error("Same of another line: true")
	}
	if compare.Same(lineType, got, nil) || compare.SameJSON(lineType, []byte(`{"KLINE":"1"}`), nil) {
		t.Error("nothing wanted proves nothing, and is never the same")
	}
	// Untyped, a line read as strings is not the line sent by its JSON
	// alone; typed, it is.
	held, sent := []byte(`{"KLINE":"1","TQUANT":"2","PRICE":"500.01"}`), []byte(`{"TQUANT":2,"PRICE":500.005}`)
	if !compare.SameJSON(lineType, held, sent) {
		t.Error("SameJSON typed: a line answered with strings differs from the line sent")
	}
	if compare.SameJSON(nil, held, sent) {
		t.Error("SameJSON untyped: 500.01 equals 500.005 without the Scale")
	}
	if compare.SameJSON(lineType, []byte(`not json`), sent) {
		t.Error("SameJSON of a body that is not JSON")
	}
}

// TestText: a text sub-form's TEXT by its content, as a server reads it
// back normalised.
func TestText(t *testing.T) {
	t.Parallel()
	held := `<style>p{}</style><p dir=rtl>Deliver before noon.<br> Ring twice.</p>`
	for _, tc := range []struct {
		want string
		in   bool
	}{
		{"Deliver before noon. <br> Ring twice.", true},
		{"Ring twice.", true},
		{"Ring three times.", false},
		{"", false},
	} {
		if got := compare.TextIn(held, tc.want); got != tc.in {
			t.Errorf("TextIn(%q) = %v, want %v", tc.want, got, tc.in)
		}
	}
	if !compare.SameText(held, "Deliver before noon. <br>Ring twice.") || compare.SameText(held, "Ring twice.") {
		t.Error("SameText: by the whole content")
	}
	heldJSON, _ := json.Marshal(map[string]any{"TEXT": held, "APPEND": nil})
	if !compare.TextInJSON(heldJSON, []byte(`{"TEXT":"Ring twice.","APPEND":true}`)) || compare.TextInJSON(heldJSON, []byte(`{"TEXT":"No."}`)) {
		t.Error("TextInJSON")
	}
}

// TestLines: each wanted line is paired with a distinct held line whose
// fields are all the same, by type; what is left on either side is
// reported. Lines alike in every field written each find their own, and a
// first choice that would leave a line unpaired gives way.
func TestLines(t *testing.T) {
	t.Parallel()
	line := func(part string, quant any) map[string]any {
		return map[string]any{"PARTNAME": part, "TQUANT": quant}
	}
	tests := []struct {
		name       string
		held, want []map[string]any
		pairs      []int
		missing    []int
		extra      []int
	}{
		{"as strings, in order",
			[]map[string]any{line("P1", "2"), line("P2", "1.0000"), line("P1", "1")},
			[]map[string]any{line("P1", dec(t, "2")), line("P2", int64(1)), line("P1", json.Number("1"))},
			[]int{0, 1, 2}, nil, nil},
		{"in another order",
			[]map[string]any{line("P2", "1"), line("P1", "2")},
			[]map[string]any{line("P1", int64(2)), line("P2", int64(1))},
			[]int{1, 0}, nil, nil},
		{"two alike, one held: one missing",
			[]map[string]any{line("P1", "1")},
			[]map[string]any{line("P1", int64(1)), line("P1", int64(1))},
			[]int{0, -1}, []int{1}, nil},
		{"doubled on the server: extra",
			[]map[string]any{line("P1", "1"), line("P2", "1"), line("P1", "1"), line("P2", "1")},
			[]map[string]any{line("P1", int64(1)), line("P2", int64(1))},
			[]int{0, 1}, nil, []int{2, 3}},
		{"a first choice gives way",
			[]map[string]any{line("P1", "1"), line("P1", "2")},
			[]map[string]any{{"PARTNAME": "P1"}, line("P1", int64(1))},
			[]int{1, 0}, nil, nil},
		{"another quantity",
			[]map[string]any{line("P1", "3")},
			[]map[string]any{line("P1", int64(1))},
			[]int{-1}, []int{0}, []int{0}},
		{"nothing held", nil, []map[string]any{line("P1", int64(1))}, []int{-1}, []int{0}, nil},
	}
	for _, tc := range tests {
		m := compare.Lines(lineType, tc.held, tc.want)
		if fmt.Sprint(m.Held) != fmt.Sprint(tc.pairs) || fmt.Sprint(m.Missing) != fmt.Sprint(tc.missing) || fmt.Sprint(m.Extra) != fmt.Sprint(tc.extra) {
			t.Errorf("%s: Lines = held %v missing %v extra %v, want %v %v %v", tc.name, m.Held, m.Missing, m.Extra, tc.pairs, tc.missing, tc.extra)
		}
		if m.Complete() != (tc.missing == nil && tc.extra == nil) {
			t.Errorf("%s: Complete() = %v", tc.name, m.Complete())
		}
	}
	held := []json.RawMessage{json.RawMessage(`{"PARTNAME":"P1","TQUANT":"2"}`)}
	if m := compare.LinesJSON(lineType, held, []json.RawMessage{json.RawMessage(`{"PARTNAME":"P1","TQUANT":2}`)}); !m.Complete() {
		t.Errorf("LinesJSON: %+v", m)
	}
}

// TestNumber: a number in any form as the field stores it, for control
// totals: rounded to a declared Scale, else as it is.
func TestNumber(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		p    *odata.Property
		v    any
		want string
	}{
		{scaledField, "500.005", "500.01"},
		{scaledField, json.Number("2"), "2"},
		{scaledField, "0.355", "0.36"},
		{decimalField, "500.005", "500.005"},
		{nil, json.Number("1.50"), "1.50"},
		{int64Field, "7", "7"},
		{decimalField, "abc", ""},
	} {
		got, ok := compare.Number(tc.p, tc.v)
		if ok != (tc.want != "") || ok && got.String() != tc.want {
			t.Errorf("Number(%v, %#v) = %s, %v; want %q", tc.p, tc.v, got, ok, tc.want)
		}
	}
}

// TestNear: after the exact pairing, a missing line and a left-over line
// one field apart are paired when each is the other's only such line;
// two alike, or a line of one field, are left as they are.
func TestNear(t *testing.T) {
	t.Parallel()
	line := func(part, qty, des string) map[string]any {
		m := map[string]any{"PARTNAME": part, "TQUANT": qty}
		if des != "" {
			m["PDES"] = des
		}
		return m
	}
	for _, tc := range []struct {
		name       string
		held, want []map[string]any
		paired     []int  // Held after Near
		differs    string // of want[0]
	}{
		{"one field filled", []map[string]any{line("P1", "1", "Bolt")}, []map[string]any{line("P1", "1", "typed")}, []int{0}, "PDES"},
		{"exact first", []map[string]any{line("P1", "1", "Bolt"), line("P1", "2", "typed")},
			[]map[string]any{line("P1", "1", "typed"), line("P1", "2", "typed")}, []int{0, 1}, "PDES"},
		{"two fields off", []map[string]any{line("P1", "2", "Bolt")}, []map[string]any{line("P1", "1", "typed")}, []int{-1}, ""},
		{"two alike", []map[string]any{line("P1", "1", "Bolt"), line("P1", "1", "Nut")},
			[]map[string]any{line("P1", "1", "typed")}, []int{-1}, ""},
		{"one field only", []map[string]any{{"PARTNAME": "P2"}}, []map[string]any{{"PARTNAME": "P1"}}, []int{-1}, ""},
	} {
		m, differs := compare.Near(nil, tc.held, tc.want, compare.Lines(nil, tc.held, tc.want))
		if !slices.Equal(m.Held, tc.paired) || differs[0] != tc.differs {
			t.Errorf("%s: paired %v, differs %v; want %v, %q", tc.name, m.Held, differs, tc.paired, tc.differs)
		}
	}
}
