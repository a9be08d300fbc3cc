package odata

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestParseDecimal(t *testing.T) {
	t.Parallel()
	huge := "123456789012345678901234567890123456789012345678901234567890.000000000000000000000000000001"
	tests := []struct {
		in   string
		sep  byte
		want string
		err  bool
	}{
		{"12.10", '.', "12.10", false},
		{"12,10", ',', "12.10", false},
		{"12,10", '.', "", true},
		{"-0", '.', "0", false},
		{"-0.00", '.', "0.00", false},
		{"+5", '.', "5", false},
		{" 7.5 ", '.', "7.5", false},
		{".5", '.', "0.5", false},
		{"5.", '.', "5", false},
		{"007.50", '.', "7.50", false},
		{"-12.345", '.', "-12.345", false},
		{huge, '.', huge, false},
		{"-" + huge, '.', "-" + huge, false},
		{"", '.', "", true},
		{".", '.', "", true},
		{"-", '.', "", true},
		{"1e5", '.', "", true},
		{"1,000.5", '.', "", true},
		{"1 000", '.', "", true},
		{"--1", '.', "", true},
		{"+-1", '.', "", true},
		{"١٢", '.', "", true},
		{"NaN", '.', "", true},
	}
	for _, tc := range tests {
		d, err := ParseDecimal(tc.in, tc.sep)
		if tc.err {
			if !errors.Is(err, ErrNotDecimal) {
				t.Errorf("ParseDecimal(%q) = %v, %v; want ErrNotDecimal", tc.in, d, err)
			}
			continue
		}
		if err != nil || d.String() != tc.want {
			t.Errorf("ParseDecimal(%q, %q) = %q, %v; want %q", tc.in, tc.sep, d.String(), err, tc.want)
		}
	}
}

func TestDecimalJSON(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, want string
		err      bool
	}{
		{`12.10`, "12.10", false},
		{`"12.10"`, "12.10", false},
		{`-0`, "0", false},
		{`1.5e2`, "150", false},
		{`1.50E+1`, "15.0", false},
		{`125e-2`, "1.25", false},
		{`-3e-3`, "-0.003", false},
		{`0e5`, "0", false},
		{`1e999999999`, "", true},
		{`1e-401`, "", true},
		{`"12`, "", true},
		{`"1,5"`, "", true},
		{`true`, "", true},
		{`1e`, "", true},
	}
	for _, tc := range tests {
		var d Decimal
		err := json.Unmarshal([]byte(tc.in), &d)
		if tc.err {
			if err == nil {
				t.Errorf("Unmarshal(%s) = %v, want an error", tc.in, d)
			}
			continue
		}
		if err != nil || d.String() != tc.want {
			t.Errorf("Unmarshal(%s) = %q, %v; want %q", tc.in, d.String(), err, tc.want)
		}
	}
	// null leaves the value as it was.
	d := DecimalFromInt(4)
	if err := json.Unmarshal([]byte("null"), &d); err != nil || d.String() != "4" {
		t.Errorf("null: %v %v", d, err)
	}
	// Marshal keeps the digits, inside structs too.
	v := struct{ P Decimal }{mustDec(t, "-0.50")}
	b, _ := json.Marshal(v)
	if string(b) != `{"P":-0.50}` {
		t.Errorf("Marshal = %s", b)
	}
	var zero Decimal
	if b, _ := json.Marshal(zero); string(b) != "0" || !zero.IsZero() {
		t.Errorf("zero value = %s", b)
	}
}

func mustDec(t *testing.T, s string) Decimal {
	t.Helper()
	d, err := ParseDecimal(s, '.')
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestDecimalArithmetic(t *testing.T) {
	t.Parallel()
	if mustDec(t, "12.1").Cmp(mustDec(t, "12.10")) != 0 || mustDec(t, "-1").Cmp(mustDec(t, "0")) >= 0 {
		t.Errorf("Cmp wrong")
	}
	big := mustDec(t, "99999999999999999999999999.5")
	if big.Cmp(mustDec(t, "99999999999999999999999999.49")) <= 0 {
		t.Errorf("Cmp of huge values wrong")
	}
	if n, ok := mustDec(t, "12.00").Int64(); !ok || n != 12 {
		t.Errorf("Int64(12.00) = %d %v", n, ok)
	}
	if _, ok := mustDec(t, "12.5").Int64(); ok {
		t.Errorf("Int64(12.5) ok")
	}
	if _, ok := mustDec(t, "99999999999999999999").Int64(); ok {
		t.Errorf("Int64 out of range ok")
	}
	if s := mustDec(t, "1.250").Scale(); s != 3 {
		t.Errorf("Scale = %d", s)
	}
	if mustDec(t, "-0.0").Sign() != 0 || mustDec(t, "-0.1").Sign() != -1 {
		t.Errorf("Sign wrong")
	}
	if DecimalFromInt(-9223372036854775808).String() != "-9223372036854775808" {
		t.Errorf("DecimalFromInt(min)")
	}
	var d Decimal
	if err := d.UnmarshalText([]byte("3.30")); err != nil || d.String() != "3.30" {
		t.Errorf("UnmarshalText: %v %v", d, err)
	}
	if b, _ := d.MarshalText(); string(b) != "3.30" {
		t.Errorf("MarshalText = %s", b)
	}
	if err := d.UnmarshalText([]byte("x")); err == nil || !strings.Contains(err.Error(), "not a decimal") {
		t.Errorf("UnmarshalText(x) = %v", err)
	}
}

// Thousands grouped as spreadsheets write them; a single group of the other
// separator reads two ways and is refused.
func TestParseDecimalText(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		sep  byte
		want string // "" for an error
		amb  bool   // the error is an *AmbiguousDecimalError
	}{
		{"1.234,50", ',', "1234.50", false},
		{"-1.234.567", ',', "-1234567", false},
		{"1,234.5", '.', "1234.5", false},
		{"1 234,5", ',', "1234.5", false},
		{"12\u00a0345.25", '.', "12345.25", false},
		{"1\u202f000\u202f000", ',', "1000000", false},
		{"12,5", ',', "12.5", false},
		{"1.234", '.', "1.234", false},
		{"1.234", ',', "", true},
		{"+12,500", '.', "", true},
		{"0.250", ',', "", false},
		{"1.23,5", ',', "", false},
		{"1.234 567", ',', "", false},
		{"1234.567,5", ',', "", false},
		{"1,234.5", ',', "", false},
		{" ", ',', "", false},
	} {
		d, err := ParseDecimalText(tc.in, tc.sep)
		var amb *AmbiguousDecimalError
		switch {
		case tc.want != "" && (err != nil || d.String() != tc.want):
			t.Errorf("ParseDecimalText(%q, %q) = %v, %v; want %s", tc.in, tc.sep, d, err, tc.want)
		case tc.want == "" && (err == nil || !errors.Is(err, ErrNotDecimal) || errors.As(err, &amb) != tc.amb):
			t.Errorf("ParseDecimalText(%q, %q) = %v, %v; want an error (ambiguous: %v)", tc.in, tc.sep, d, err, tc.amb)
		}
	}
}

func TestFitDigits(t *testing.T) {
	t.Parallel()
	p := &Property{Name: "PRICE", Type: EdmDecimal, Precision: 6, Scale: 2, HasScale: true}
	noScale := &Property{Name: "QTY", Type: EdmDecimal, Precision: 4}
	tests := []struct {
		p    *Property
		v    string
		want string
	}{
		{p, "1234.56", ""},
		{p, "-1234.5", ""},
		{p, "0.10", ""},
		{p, "12.3400", ""}, // trailing zeros do not count
		{p, "0001234", ""}, // nor leading ones
		{p, "1.005", "1.005 has 3 digits after the point; PRICE takes 2 (Scale 2), and the server would round it: round it in the source or in the plan"},
		{p, "12345", "12345 has 5 digits before the point; PRICE takes 4 (Precision 6, Scale 2)"},
		{noScale, "1234.5678", ""},
		{noScale, "12345", "12345 has 5 digits before the point; QTY takes 4 (Precision 4)"},
		{nil, "1.23456", ""},
	}
	for _, tt := range tests {
		d, err := ParseDecimal(tt.v, '.')
		if err != nil {
			t.Fatal(err)
		}
		if got := tt.p.FitDigits(d); got != tt.want {
			t.Errorf("FitDigits(%s) = %q, want %q", tt.v, got, tt.want)
		}
	}
}
