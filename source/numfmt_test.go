package source

import (
	"testing"
	"time"
)

func TestNormaliseNumber(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ in, want, err string }{
		{"12.1", "12.1", ""},
		{"12.10", "12.10", ""},
		{"0", "0", ""},
		{"-0", "0", ""},
		{"+7", "7", ""},
		{".5", "0.5", ""},
		{"12.", "12", ""},
		{"1E-3", "0.001", ""},
		{"1e3", "1000", ""},
		{"1.5E+3", "1500", ""},
		{"1.2345678901234567E+20", "123456789012345670000", ""},
		{"-2.5E-7", "-0.00000025", ""},
		{"123.456E-2", "1.23456", ""},
		{"123.456E1", "1234.56", ""},
		{"0.000E5", "0", ""},
		{"9.99999999999999E+307", "999999999999999" + zeros(293), ""},
		{"", "", "empty number"},
		{"1E", "", `"1E" is not a number`},
		{"1E999", "", `"1E999" is not a number`},
		{"abc", "", `"abc" is not a number`},
		{".", "", `"." is not a number`},
		{"1.2.3", "", `"1.2.3" is not a number`},
		{"--1", "", `"-1" is not a number`},
		{"NaN", "", `"NaN" is not a number`},
	} {
		got, err := normaliseNumber(tt.in)
		if tt.err != "" {
			if err == nil || err.Error() != tt.err {
				t.Errorf("normaliseNumber(%q) error = %v, want %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || string(got) != tt.want {
			t.Errorf("normaliseNumber(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

func zeros(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = '0'
	}
	return string(b)
}

func TestIsDateFormat(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		id   int
		code string
		want bool
	}{
		{14, "", true}, {22, "", true}, {45, "", true}, {47, "", true},
		{0, "", false}, {2, "", false}, {23, "", false}, {49, "", false},
		{164, "dd/mm/yyyy", true},
		{164, "yyyy-mm-dd hh:mm:ss", true},
		{164, "[$-409]d-mmm-yy;@", true},
		{164, "[h]:mm:ss", true},
		{164, "[mm]:ss", true},
		{164, "h:mm AM/PM", true},
		{164, "General", false},
		{164, "0.00", false},
		{164, "#,##0.00 \"days\"", false},
		{164, `0.0\d`, false},
		{164, "[Red]0.00;[Blue]-0.00", false},
		{164, "0.00E+00", false},
		{164, "_(* #,##0_);_(* (#,##0);_(* \"-\"_);_(@_)", false},
		{164, "@", false},
		{164, "0;\"dd\"", false},
		{164, `"unclosed`, false},
		{164, "[unclosed", false},
		{14, "0.00", false}, // a custom code replaces the built-in
	} {
		if got := isDateFormat(tt.id, tt.code); got != tt.want {
			t.Errorf("isDateFormat(%d, %q) = %v, want %v", tt.id, tt.code, got, tt.want)
		}
	}
}

func TestSerialTime(t *testing.T) {
	t.Parallel()
	d := func(y int, m time.Month, day, h, min, s, ms int) time.Time {
		return time.Date(y, m, day, h, min, s, ms*1e6, time.UTC)
	}
	for _, tt := range []struct {
		in   string
		d04  bool
		want time.Time
		err  string
	}{
		{"1", false, d(1900, 1, 1, 0, 0, 0, 0), ""},
		{"59", false, d(1900, 2, 28, 0, 0, 0, 0), ""},
		{"61", false, d(1900, 3, 1, 0, 0, 0, 0), ""},
		{"45292", false, d(2024, 1, 1, 0, 0, 0, 0), ""},
		{"45292.5", false, d(2024, 1, 1, 12, 0, 0, 0), ""},
		{"45292.000011574", false, d(2024, 1, 1, 0, 0, 1, 0), ""},
		{"0.999999999", false, d(1900, 1, 1, 0, 0, 0, 0), ""},
		{"2958465", false, d(9999, 12, 31, 0, 0, 0, 0), ""},
		{"0", true, d(1904, 1, 1, 0, 0, 0, 0), ""},
		{"1462", true, d(1908, 1, 2, 0, 0, 0, 0), ""},
		{"60", false, time.Time{}, "60 is 29 February 1900, a day that does not exist (Excel's 1900 leap-year bug): correct the date"},
		{"-1", false, time.Time{}, "-1 is outside the dates Excel can show (0 to 9999-12-31)"},
		{"2958466", false, time.Time{}, "2958466 is outside the dates Excel can show (0 to 9999-12-31)"},
		{"x", false, time.Time{}, `"x" is not a date serial number`},
		{"NaN", false, time.Time{}, `"NaN" is not a date serial number`},
	} {
		got, err := serialTime(tt.in, tt.d04)
		if tt.err != "" {
			if err == nil || err.Error() != tt.err {
				t.Errorf("serialTime(%q) error = %v, want %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || !got.Equal(tt.want) || got.Location() != time.UTC {
			t.Errorf("serialTime(%q, %v) = %v, %v; want %v", tt.in, tt.d04, got, err, tt.want)
		}
	}
}

func TestZeroPadWidth(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		code string
		want int
	}{
		{"0000000000", 10},
		{"00000", 5},
		{"00000;-00000", 5},
		{"0", 0}, // shows the digits as stored
		{"", 0},
		{"General", 0},
		{"0.00", 0},
		{"#,##0", 0},
		{"000-0000", 0}, // a literal: not read as a padded integer
	} {
		if got := zeroPadWidth(tt.code); got != tt.want {
			t.Errorf("zeroPadWidth(%q) = %d, want %d", tt.code, got, tt.want)
		}
	}
}

// TestZeroPaddedNumbersReadAsShown: examples/plans/data/customer-phones.xlsx was saved by
// LibreOffice Calc with the columns Phone formatted "0000000000" and Zip
// "00000", as a customer keeps phone numbers and postal codes. The reader
// gives what the sheet shows, leading zeros kept, as text; other numbers
// stay numbers.
func TestZeroPaddedNumbersReadAsShown(t *testing.T) {
	t.Parallel()
	r, err := Open(Options{Path: "../examples/plans/data/customer-phones.xlsx"})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	want := [][]Cell{
		{"Dana", "0501234567", "02345", Number("12")},
		{"Eli", "3123456789", "90210", Number("3.5")},
	}
	for i, w := range want {
		row, err := r.Next()
		if err != nil {
			t.Fatalf("row %d: %v", i+2, err)
		}
		for j := range w {
			if row.Cells[j] != w[j] {
				t.Errorf("%s: cell %d is %#v, want %#v", row.Loc, j, row.Cells[j], w[j])
			}
		}
	}
}
