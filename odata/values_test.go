package odata

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/migrate-tool/migrate/internal/golden"
)

var plus2 = time.FixedZone("+02", 2*3600)

func TestFormatLiteral(t *testing.T) {
	t.Parallel()
	dec, _ := ParseDecimal("12.10", '.')
	tests := []struct {
		in   any
		want string
		err  error
	}{
		{"O'Brien", "'O''Brien'", nil},
		{"", "''", nil},
		{int64(12), "12", nil},
		{int64(-9007199254740993), "-9007199254740993", nil},
		{7, "7", nil},
		{dec, "12.10", nil},
		{&dec, "12.10", nil},
		{true, "true", nil},
		{nil, "null", nil},
		{time.Date(2024, 3, 1, 0, 0, 0, 0, plus2), "2024-03-01T00:00:00+02:00", nil},
		{time.Date(2024, 3, 1, 13, 5, 9, 999, time.UTC), "2024-03-01T13:05:09+00:00", nil},
		{json.Number("1.50"), "1.50", nil},
		{json.Number("1e3"), "1000", nil},
		{json.Number("x"), "", ErrUnsupportedValue},
		{2.5, "2.5", nil},
		{struct{}{}, "", ErrUnsupportedValue},
		{[]string{"a"}, "", ErrUnsupportedValue},
	}
	for _, tc := range tests {
		got, err := FormatLiteral(tc.in)
		if !errors.Is(err, tc.err) || got != tc.want {
			t.Errorf("FormatLiteral(%#v) = %q, %v; want %q, %v", tc.in, got, err, tc.want, tc.err)
		}
	}
	if FormatDate(time.Date(2024, 3, 1, 23, 0, 0, 0, plus2)) != "2024-03-01" {
		t.Errorf("FormatDate")
	}
}

func TestMarshalBody(t *testing.T) {
	t.Parallel()
	price, _ := ParseDecimal("12.10", '.')
	body := map[string]any{
		"ORDNAME":  "SO<1>&",
		"CUSTNAME": "C'1",
		"QUANT":    int64(9007199254740993),
		"PRICE":    price,
		"CURDATE":  time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC),
		"FLAG":     false,
		"NOTE":     nil,
		"ORDERITEMS_SUBFORM": []map[string]any{
			{"PARTNAME": "P1", "TQUANT": DecimalFromInt(3), "ORDERITEMSTEXT_SUBFORM": map[string]any{"TEXT": "hi\n", "APPEND": true}},
			{"PARTNAME": "P2"},
		},
		"LIST": []any{int64(1), "x", nil},
	}
	got, err := MarshalBody(body)
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "testdata/values/body.json", append(got, '\n'))
	again, _ := MarshalBody(body)
	if string(again) != string(got) {
		t.Errorf("not deterministic")
	}
	for _, want := range []string{`"QUANT":9007199254740993`, `"PRICE":12.10`, `"CURDATE":"2024-03-01T00:00:00+00:00"`, `"ORDNAME":"SO<1>&"`} {
		if !strings.Contains(string(got), want) {
			t.Errorf("body lacks %s: %s", want, got)
		}
	}
	back, err := DecodeEntity(got)
	if err != nil {
		t.Fatal(err)
	}
	if back["QUANT"] != json.Number("9007199254740993") || back["PRICE"] != json.Number("12.10") {
		t.Errorf("DecodeEntity lost precision: %#v", back)
	}

	_, err = MarshalBody(map[string]any{"LINES": []map[string]any{{"X": struct{}{}}}})
	if !errors.Is(err, ErrUnsupportedValue) || !strings.Contains(err.Error(), "LINES[0].X") {
		t.Errorf("bad value error = %v", err)
	}
	if b, _ := MarshalBody(nil); string(b) != "{}" {
		t.Errorf("nil map = %s", b)
	}
}

func TestDecodeEntityErrors(t *testing.T) {
	t.Parallel()
	for _, in := range []string{"", "[1]", "null", `{"a":1} {"b":2}`, `{"a":`, `"x"`} {
		if m, err := DecodeEntity([]byte(in)); err == nil {
			t.Errorf("DecodeEntity(%q) = %v, want an error", in, m)
		} else if strings.Contains(err.Error(), "map[string]") {
			t.Errorf("Go type leaked: %v", err)
		}
	}
}

func TestDecodeValue(t *testing.T) {
	t.Parallel()
	d := func(s string) Decimal { v, _ := ParseDecimal(s, '.'); return v }
	tests := []struct {
		typ  EdmType
		in   any
		want any
		bad  bool
	}{
		{EdmString, "x", "x", false},
		{EdmString, nil, nil, false},
		{EdmString, true, nil, true},
		{EdmInt64, json.Number("9007199254740993"), int64(9007199254740993), false},
		{EdmInt64, "42", int64(42), false},
		{EdmInt64, json.Number("12.0"), int64(12), false},
		{EdmInt64, json.Number("12.5"), nil, true},
		{EdmInt64, json.Number("99999999999999999999"), nil, true},
		{EdmInt64, int64(3), int64(3), false},
		{EdmInt64, 3.0, int64(3), false},
		{EdmDecimal, json.Number("12.10"), d("12.10"), false},
		{EdmDecimal, json.Number("-1.5E2"), d("-150"), false},
		{EdmDecimal, "0.5", d("0.5"), false},
		{EdmDecimal, int64(7), d("7"), false},
		{EdmDecimal, d("1.0"), d("1.0"), false},
		{EdmDecimal, "abc", nil, true},
		{EdmDateTimeOffset, "2024-03-01T00:00:00+02:00", time.Date(2024, 3, 1, 0, 0, 0, 0, plus2), false},
		{EdmDateTimeOffset, "2024-03-01T10:00:00Z", time.Date(2024, 3, 1, 10, 0, 0, 0, time.UTC), false},
		{EdmDateTimeOffset, "2024-03-01", time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC), false},
		{EdmDateTimeOffset, "01/03/2024", nil, true},
		{EdmBoolean, true, true, false},
		{EdmBoolean, "false", false, false},
		{EdmBoolean, json.Number("1"), nil, true},
		{"Edm.Stream", "x", nil, true},
	}
	for _, tc := range tests {
		got, err := DecodeValue(tc.typ, tc.in)
		if tc.bad {
			var ve *ValueError
			if !errors.As(err, &ve) || ve.Type != tc.typ {
				t.Errorf("DecodeValue(%s, %#v) err = %v, want a *ValueError", tc.typ, tc.in, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("DecodeValue(%s, %#v): %v", tc.typ, tc.in, err)
			continue
		}
		if gt, ok := got.(time.Time); ok {
			if !gt.Equal(tc.want.(time.Time)) {
				t.Errorf("DecodeValue(%s, %#v) = %v, want %v", tc.typ, tc.in, got, tc.want)
			}
			continue
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("DecodeValue(%s, %#v) = %#v, want %#v", tc.typ, tc.in, got, tc.want)
		}
	}
}

func TestFormatDateTimeRoundTrip(t *testing.T) {
	t.Parallel()
	in := time.Date(2024, 12, 31, 23, 59, 0, 0, time.FixedZone("-0330", -(3*3600+1800)))
	s := FormatDateTime(in)
	if s != "2024-12-31T23:59:00-03:30" {
		t.Fatalf("FormatDateTime = %s", s)
	}
	back, err := ParseDateTime(s)
	if err != nil || !back.Equal(in) {
		t.Errorf("ParseDateTime(%s) = %v, %v", s, back, err)
	}
}

// BenchmarkMarshalBody: an order with twenty lines (deep insert).
func BenchmarkMarshalBody(b *testing.B) {
	price, _ := ParseDecimal("12.10", '.')
	lines := make([]map[string]any, 20)
	for i := range lines {
		lines[i] = map[string]any{"PARTNAME": "P", "TQUANT": price, "DUEDATE": time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC)}
	}
	body := map[string]any{"CUSTNAME": "C1", "ORDERITEMS_SUBFORM": lines}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := MarshalBody(body); err != nil {
			b.Fatal(err)
		}
	}
}

// referenceJSON is encoding/json's own writing of v, HTML escaping off:
// what MarshalBody's fast paths must equal byte for byte.
func referenceJSON(t testing.TB, v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte{'\n'})
}

// TestMarshalBodyIsEncodingJSON: for every value encoding/json writes the
// same way (text, null, integers, json.Number, booleans, deep inserts),
// MarshalBody writes exactly its bytes, plain text copied or not.
func TestMarshalBodyIsEncodingJSON(t *testing.T) {
	t.Parallel()
	tests := []map[string]any{
		{},
		{"CUSTNAME": "C1", "CUSTDES": "Acme Ltd", "PHONE": nil},
		{"A": `quote " and back\slash`, "B": "tab\there\nnew line", "C": "<html> & 'x'"},
		{"HEB": "לקוח", "LS": "line\u2028sep", "BAD": "\xff\xfe", "NUL": "\x00\x1f\x7f"},
		{"PRICE": json.Number("12.50"), "N": int64(3), "OK": true},
		{"ORDERITEMS_SUBFORM": []any{map[string]any{"PARTNAME": "P1", "TQUANT": int64(2)}}, "CUSTNAME": "C1"},
	}
	for i, fields := range tests {
		got, err := MarshalBody(fields)
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		if want := referenceJSON(t, fields); !bytes.Equal(got, want) {
			t.Errorf("case %d:\n got %s\nwant %s", i, got, want)
		}
	}
}

// FuzzMarshalBody: for any text keys and values, MarshalBody writes what
// encoding/json writes.
func FuzzMarshalBody(f *testing.F) {
	f.Add("CUSTNAME", "C1", "CUSTDES", "Acme \"Ltd\"")
	f.Add("A", "\u2028\xff<>&", "B", "")
	f.Add("\x7f", "\x00", "ü", "\\")
	f.Fuzz(func(t *testing.T, k1, v1, k2, v2 string) {
		fields := map[string]any{k1: v1, k2: v2, "NULL": nil}
		got, err := MarshalBody(fields)
		if err != nil {
			t.Fatal(err)
		}
		if want := referenceJSON(t, fields); !bytes.Equal(got, want) {
			t.Fatalf("MarshalBody %q, encoding/json %q", got, want)
		}
	})
}

// BenchmarkMarshalBodyText: the body of a record of seven text fields, as
// the executor marshals one per record.
func BenchmarkMarshalBodyText(b *testing.B) {
	fields := map[string]any{"CUSTNAME": "C0000001", "CUSTDES": "Customer number 1 Ltd", "PHONE": "+972-3-0000001",
		"ADDRESS": "1 Herzl Street", "STATE": "City Number 1", "ZIP": "00001", "AGENTCODE": "AG001"}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := MarshalBody(fields); err != nil {
			b.Fatal(err)
		}
	}
}

// TestValueErrorCutsByCharacters: a long value that does not fit its type
// is named by its first 60 characters, a Hebrew letter never cut in two
// (a message showing \xd7 where a letter was).
func TestValueErrorCutsByCharacters(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("ש", 100)
	_, err := DecodeValue(EdmInt64, long)
	if err == nil {
		t.Fatal("a Hebrew text decoded as Edm.Int64")
	}
	msg := err.Error()
	want := `Edm.Int64 value "` + strings.Repeat("ש", 60) + `"…`
	if !utf8.ValidString(msg) || !strings.HasPrefix(msg, want) {
		t.Errorf("message %q\nwant it to begin %q", msg, want)
	}
}
