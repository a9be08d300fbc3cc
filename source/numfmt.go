package source

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// normaliseNumber returns the stored number in plain decimal digits:
// "1E-3" → "0.001", "1.5E+3" → "1500", "+7" → "7". The digits are moved,
// never passed through a float, so nothing is rounded. Plain decimals are
// returned as they are ("12.10" stays "12.10").
func normaliseNumber(s string) (Number, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", errors.New("empty number")
	}
	neg := false
	switch s[0] {
	case '-':
		neg, s = true, s[1:]
	case '+':
		s = s[1:]
	}
	mant, exp := s, 0
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		mant = s[:i]
		e, err := strconv.Atoi(s[i+1:])
		if err != nil || e > 400 || e < -400 {
			return "", fmt.Errorf("%q is not a number", s)
		}
		exp = e
	}
	intPart, frac := mant, ""
	if i := strings.IndexByte(mant, '.'); i >= 0 {
		intPart, frac = mant[:i], mant[i+1:]
	}
	if intPart == "" && frac == "" || !digits(intPart) || !digits(frac) {
		return "", fmt.Errorf("%q is not a number", s)
	}
	var out string
	if exp == 0 {
		if intPart == "" {
			intPart = "0"
		}
		out = intPart
		if frac != "" {
			out += "." + frac
		}
	} else {
		all := intPart + frac
		point := len(intPart) + exp // position of the decimal point in all
		switch {
		case point <= 0:
			all = strings.Repeat("0", -point) + all
			point = 0
		case point > len(all):
			all += strings.Repeat("0", point-len(all))
		}
		ip, fp := strings.TrimLeft(all[:point], "0"), strings.TrimRight(all[point:], "0")
		if ip == "" {
			ip = "0"
		}
		out = ip
		if fp != "" {
			out += "." + fp
		}
	}
	if neg && strings.Trim(out, "0.") != "" {
		out = "-" + out
	}
	return Number(out), nil
}

func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// isDateFormat says whether a number format shows a date or a time: the
// built-in ids 14-22 and 45-47, or a format code with d, m, y, h or s
// outside quotes, escapes and brackets ([h], [mm], [ss] elapsed time
// counts; [Red], [$-409] and conditions do not).
func isDateFormat(id int, code string) bool {
	if code == "" {
		return id >= 14 && id <= 22 || id >= 45 && id <= 47
	}
	// Only the first section matters for a positive number.
	for i := 0; i < len(code); i++ {
		switch c := code[i]; c {
		case '"':
			j := strings.IndexByte(code[i+1:], '"')
			if j < 0 {
				return false
			}
			i += j + 1
		case '\\', '_', '*':
			i++ // the next character is literal, or a width or fill
		case '[':
			j := strings.IndexByte(code[i+1:], ']')
			if j < 0 {
				return false
			}
			in := strings.ToLower(code[i+1 : i+1+j])
			if in != "" && strings.Trim(in, "hms") == "" {
				return true
			}
			i += j + 1
		case ';':
			return false
		case 'd', 'D', 'm', 'M', 'y', 'Y', 'h', 'H', 's', 'S':
			return true
		}
	}
	return false
}

// maxSerial is 9999-12-31, the last day Excel shows.
const maxSerial = 2958466

var (
	epoch1900 = time.Date(1899, 12, 30, 0, 0, 0, 0, time.UTC)
	epoch1904 = time.Date(1904, 1, 1, 0, 0, 0, 0, time.UTC)
)

// serialTime turns an Excel date serial into a time in UTC, to the
// millisecond. In the 1900 system Excel believes 1900 was a leap year, so
// serials before 61 are one day later than the count says, and serial 60
// (29 February 1900) is no date at all. A time without a date (0 ≤ serial
// < 1) lands on Excel's day 0, 1899-12-31 (1904-01-01 in the 1904 system).
func serialTime(v string, date1904 bool) (time.Time, error) {
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return time.Time{}, fmt.Errorf("%q is not a date serial number", v)
	}
	if f < 0 || f >= maxSerial {
		return time.Time{}, fmt.Errorf("%s is outside the dates Excel can show (0 to 9999-12-31)", v)
	}
	days := math.Floor(f)
	ms := int64(math.Round((f - days) * 86400000))
	base := epoch1904
	if !date1904 {
		base = epoch1900
		switch {
		case days == 60:
			return time.Time{}, fmt.Errorf("%s is 29 February 1900, a day that does not exist (Excel's 1900 leap-year bug): correct the date", v)
		case days < 60:
			days++ // before the phantom 29 February 1900
		}
	}
	return base.AddDate(0, 0, int(days)).Add(time.Duration(ms) * time.Millisecond), nil
}

// isoTime reads the value of a t="d" cell (ISO 8601).
func isoTime(v string) (time.Time, error) {
	v = strings.TrimSpace(v)
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02T15:04", "2006-01-02", "15:04:05.999999999"} {
		if t, err := time.Parse(layout, v); err == nil {
			y, mo, d := t.Date()
			return time.Date(y, mo, d, t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), time.UTC), nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is not an ISO 8601 date", v)
}

// numShow is how a cell style's number format shows a number that is no
// date, where that differs from the stored digits.
type numShow struct {
	// pattern is a format that spells a whole number out digit by digit,
	// with leading zeros and text ("0000000000", "000-0000000", "(###)
	// ###-####"): a phone number, a postal code. The reader gives what the
	// sheet shows, as text, as a CSV would hold it.
	pattern []patternPart
	// code is the format's code when it changes what the sheet shows and
	// the reader gives the stored digits ("#,##0.00", "0%", "0.00E+00", or
	// a pattern's for a number that is not whole): Formatted says so.
	code string
	// digits: the format shows a whole number as its digits ("0", "#0"),
	// so only a fraction is noted (the sheet rounds it).
	digits bool
}

// patternPart is a digit placeholder (zero: "0" pads, else "#" does not)
// or literal text of a digit pattern.
type patternPart struct {
	digit, zero bool
	text        string
}

// builtinNumberFormats are the codes of the built-in number formats that
// show a number otherwise than its digits (ids 0 "General", 1 "0" and 49
// "@" show a whole number's digits; 14-22 and 45-47 are dates).
var builtinNumberFormats = map[int]string{
	2: "0.00", 3: "#,##0", 4: "#,##0.00", 9: "0%", 10: "0.00%", 11: "0.00E+00",
	12: "# ?/?", 13: "# ??/??", 37: "#,##0 ;(#,##0)", 38: "#,##0 ;[Red](#,##0)",
	39: "#,##0.00;(#,##0.00)", 40: "#,##0.00;[Red](#,##0.00)", 48: "##0.0E+0",
}

// showOf is how the number format id (its code, "" for a built-in) shows
// a number; the zero numShow when it shows the stored digits.
func showOf(id int, code string) numShow {
	if code == "" {
		code = builtinNumberFormats[id]
	}
	switch strings.ToLower(code) {
	case "", "general", "@":
		return numShow{}
	}
	if first, _, _ := strings.Cut(code, ";"); strings.Trim(first, "#") == "0" || strings.Trim(first, "#") == "" {
		return numShow{code: code, digits: true}
	}
	return numShow{pattern: digitPattern(code), code: code}
}

// digitPattern reads a format's first section as a digit pattern: only
// "0" and "#" placeholders and literal text (quoted, escaped, or one of
// the characters Excel shows as they are). Nil for any other format, and
// for one that shows a whole number as its plain digits ("0", "#0").
func digitPattern(code string) []patternPart {
	var parts []patternPart
	zeros, places, literal := 0, 0, false
	lit := func(s string) {
		literal = true
		parts = append(parts, patternPart{text: s})
	}
	for i := 0; i < len(code); i++ {
		switch c := code[i]; c {
		case '0', '#':
			if c == '0' {
				zeros++
			}
			places++
			parts = append(parts, patternPart{digit: true, zero: c == '0'})
		case '"':
			j := strings.IndexByte(code[i+1:], '"')
			if j < 0 {
				return nil
			}
			lit(code[i+1 : i+1+j])
			i += j + 1
		case '\\':
			if i+1 >= len(code) {
				return nil
			}
			_, n := utf8.DecodeRuneInString(code[i+1:])
			lit(code[i+1 : i+1+n])
			i += n
		case ' ', '-', '(', ')', '/', '+', ':', '$':
			lit(string(c))
		case ';':
			i = len(code) // only the first section shows a positive number
		default:
			return nil
		}
	}
	if places == 0 || !literal && zeros < 2 {
		return nil // text alone shows no number; "0" and "#0" show the digits
	}
	return parts
}

// showWhole is a whole number's digits (no sign) as pattern shows them:
// placeholders filled from the right, a "0" past the digits shows 0 and a
// "#" nothing, and digits the placeholders lack go before the first.
func showWhole(pattern []patternPart, digits string) string {
	first := -1
	for i, p := range pattern {
		if p.digit {
			first = i
			break
		}
	}
	out := make([]string, len(pattern))
	d := len(digits)
	for i := len(pattern) - 1; i >= 0; i-- {
		p := pattern[i]
		switch {
		case !p.digit:
			out[i] = p.text
		case i == first:
			switch {
			case d > 0:
				out[i] = digits[:d]
				d = 0
			case p.zero:
				out[i] = "0"
			}
		case d > 0:
			out[i] = digits[d-1 : d]
			d--
		case p.zero:
			out[i] = "0"
		}
	}
	return strings.Join(out, "")
}
