package source

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
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

// zeroPadWidth is the digits a number format pads an integer to with
// leading zeros: 10 for "0000000000" (a phone number, a postal code), 0
// for any other format. Only such a format makes the sheet show something
// other than the stored digits of a whole number ("0501234567" for
// 501234567); the reader then gives what the sheet shows.
func zeroPadWidth(code string) int {
	if first, _, _ := strings.Cut(code, ";"); len(first) >= 2 && strings.Trim(first, "0") == "" {
		return len(first)
	}
	return 0
}
