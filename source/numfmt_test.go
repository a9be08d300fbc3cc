package source

import (
	"fmt"
	"io"
	"reflect"
	"strings"
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

// TestNumberShown: a digit pattern spells a whole number out as the sheet
// shows it; any other format that changes what the sheet shows is noted
// (code) and the digits kept; General, "0" and "@" show the digits.
func TestNumberShown(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		id     int
		code   string
		digits string
		shown  string // "" when no pattern applies
		noted  bool   // the format changes what the sheet shows
	}{
		{164, "0000000000", "501234567", "0501234567", true},
		{164, "00000", "2134", "02134", true},
		{164, "00000;-00000", "2134", "02134", true},
		{164, "000-0000000", "501234567", "050-1234567", true},
		{164, "(###) ###-####", "5551234567", "(555) 123-4567", true},
		{164, `"+972 "0#-#######`, "501234567", "+972 50-1234567", true},
		{164, `\A000`, "7", "A007", true},
		{164, "00000", "1234567", "1234567", true}, // more digits than places: all shown
		{164, "0", "7", "", true},                  // digits: only a fraction is noted
		{164, "#0", "7", "", true},
		{0, "", "7", "", false},
		{164, "General", "7", "", false},
		{49, "", "7", "", false},
		{164, "@", "7", "", false},
		{164, "0.00", "7", "", true},
		{164, "#,##0", "7", "", true},
		{3, "", "7", "", true},
		{9, "", "7", "", true},
		{164, "0%", "7", "", true},
		{164, "[Red]0000", "7", "", true}, // a colour: not spelled out here
		{164, `"N/A"`, "7", "", true},     // text alone: no number shown (found by FuzzNumberShown)
	} {
		sh := showOf(tt.id, tt.code)
		if got := sh.code != ""; got != tt.noted {
			t.Errorf("showOf(%d, %q) notes = %v, want %v", tt.id, tt.code, got, tt.noted)
		}
		got := ""
		if sh.pattern != nil {
			got = showWhole(sh.pattern, tt.digits)
		}
		if got != tt.shown {
			t.Errorf("showOf(%d, %q) shows %s as %q, want %q", tt.id, tt.code, tt.digits, got, tt.shown)
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

// TestFormattedNumbers: examples/plans/data/customer-formats.xlsx was saved
// by LibreOffice Calc with Phone formatted 000-0000000 (a digit pattern:
// read as the sheet shows it) and Zip #,##0 (read as its digits, and the
// column noted with its first cell and count). Reading it twice through one
// Files counts its cells once.
func TestFormattedNumbers(t *testing.T) {
	t.Parallel()
	var files Files
	defer files.Close()
	opts := Options{Name: "customer-formats.xlsx", Path: "../examples/plans/data/customer-formats.xlsx"}
	var phones, zips []Cell
	for pass := 0; pass < 2; pass++ {
		r, err := files.Open(opts)
		if err != nil {
			t.Fatal(err)
		}
		for {
			row, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if pass == 0 {
				phones, zips = append(phones, row.Get("Phone")), append(zips, row.Get("Zip"))
			}
		}
		r.Close()
	}
	if got, want := fmt.Sprint(phones), "[050-1234567 003-1234567 054-1112223]"; got != want {
		t.Errorf("phones = %s, want %s", got, want)
	}
	if want := []Cell{Number("12345"), Number("90210"), Number("7020")}; !reflect.DeepEqual(zips, want) {
		t.Errorf("zips = %#v, want the numbers %v", zips, want)
	}
	want := []Formatted{{File: "customer-formats.xlsx", Sheet: "Customers", Column: "Zip", Row: 2, Col: 3, Format: "#,##0", Value: "12345", Cells: 3}}
	if got := files.Formatted(); !reflect.DeepEqual(got, want) {
		t.Errorf("Formatted() = %+v, want %+v", got, want)
	}
}

// FuzzNumberShown: no format code makes the reader panic, and a digit
// pattern shows every digit of a whole number, in order, as the sheet does
// (placeholders only add zeros and text around them).
func FuzzNumberShown(f *testing.F) {
	for _, c := range []string{"0000000000", "000-0000000", "(###) ###-####", `"+972 "0#-#######`, `\A000`, "#,##0.00", "0%", "[Red]0", `"`, `\`, "0;-0;", "", `""`} {
		f.Add(c, "501234567")
	}
	f.Fuzz(func(t *testing.T, code, digits string) {
		sh := showOf(164, code)
		if sh.pattern == nil || digits == "" || strings.Trim(digits, "0123456789") != "" {
			return
		}
		shown := showWhole(sh.pattern, digits)
		rest := digits // the number's digits, each found after the one before
		for i := 0; i < len(shown) && rest != ""; i++ {
			if shown[i] == rest[0] {
				rest = rest[1:]
			}
		}
		if rest != "" {
			t.Fatalf("%q shows %s as %q: digits lost", code, digits, shown)
		}
	})
}
