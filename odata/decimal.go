package odata

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"strconv"
	"strings"
)

// Decimal is an exact Edm.Decimal value. It keeps the digits it was given
// ("12.10" stays "12.10"), so nothing is rounded through float64 on the way
// to the server; docs/service.md, Service root: a decimal point, whatever the
// locale.
type Decimal struct {
	text string // canonical: optional '-', digits, optional '.' and digits
}

// ErrNotDecimal is returned (wrapped) for text that is not a decimal number.
var ErrNotDecimal = errors.New("not a decimal number")

// ParseDecimal reads s, with sep as its decimal separator ('.' or ','). A
// leading '+' or '-', surrounding spaces and a leading or trailing separator
// (".5", "5.") are accepted; exponents, thousands separators and anything
// else are not.
func ParseDecimal(s string, sep byte) (Decimal, error) {
	t := strings.TrimSpace(s)
	neg := false
	if t != "" && (t[0] == '+' || t[0] == '-') {
		neg = t[0] == '-'
		t = t[1:]
	}
	intPart, frac, hasSep := t, "", false
	if i := strings.IndexByte(t, sep); i >= 0 {
		intPart, frac, hasSep = t[:i], t[i+1:], true
	}
	if intPart == "" && frac == "" || !allDigits(intPart) || !allDigits(frac) {
		return Decimal{}, fmt.Errorf("%q: %w", s, ErrNotDecimal)
	}
	intPart = strings.TrimLeft(intPart, "0")
	if intPart == "" {
		intPart = "0"
	}
	var b strings.Builder
	if neg && (strings.Trim(intPart, "0") != "" || strings.Trim(frac, "0") != "") {
		b.WriteByte('-')
	}
	b.WriteString(intPart)
	if hasSep && frac != "" {
		b.WriteByte('.')
		b.WriteString(frac)
	}
	return Decimal{text: b.String()}, nil
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// DecimalFromInt returns the decimal of an integer.
func DecimalFromInt(n int64) Decimal { return Decimal{text: fmt.Sprint(n)} }

// String returns the decimal with a decimal point, as URLs and bodies want it.
func (d Decimal) String() string {
	if d.text == "" {
		return "0"
	}
	return d.text
}

// IsZero reports whether d is the zero Decimal value (never set).
func (d Decimal) IsZero() bool { return d.text == "" }

// Rat returns d as an exact rational.
func (d Decimal) Rat() *big.Rat {
	r, ok := new(big.Rat).SetString(d.String())
	if !ok {
		return new(big.Rat)
	}
	return r
}

// Cmp compares numerically: "12.1" equals "12.10".
func (d Decimal) Cmp(o Decimal) int { return d.Rat().Cmp(o.Rat()) }

// MarshalJSON writes the decimal as a bare JSON number, digits unchanged.
func (d Decimal) MarshalJSON() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalJSON reads a JSON number (or a quoted one) exactly. null leaves
// d unchanged, as encoding/json does for other types.
func (d *Decimal) UnmarshalJSON(b []byte) error {
	s := strings.TrimSpace(string(b))
	if s == "null" {
		return nil
	}
	if strings.HasPrefix(s, `"`) {
		var q string
		if err := json.Unmarshal([]byte(s), &q); err != nil {
			return fmt.Errorf("%s: %w", s, ErrNotDecimal)
		}
		s = q
	}
	v, err := parseDecimalExp(s)
	if err != nil {
		return err
	}
	*d = v
	return nil
}

// maxExponent bounds the exponent of 1.5e3-style input, so a hostile
// 1e999999999 cannot make a billion-digit string.
const maxExponent = 400

// parseDecimalExp reads a decimal that may carry an exponent ("1.50e2"),
// shifting the point in the text so no digit is lost or invented.
func parseDecimalExp(s string) (Decimal, error) {
	i := strings.IndexAny(s, "eE")
	if i < 0 {
		return ParseDecimal(s, '.')
	}
	exp, err := strconv.Atoi(strings.TrimPrefix(s[i+1:], "+"))
	if err != nil || exp > maxExponent || exp < -maxExponent || strings.TrimSpace(s[i+1:]) != s[i+1:] {
		return Decimal{}, fmt.Errorf("%q: %w", s, ErrNotDecimal)
	}
	m, err := ParseDecimal(s[:i], '.')
	if err != nil || strings.TrimSpace(s[:i]) != s[:i] {
		return Decimal{}, fmt.Errorf("%q: %w", s, ErrNotDecimal)
	}
	neg, digits, scale := m.parts()
	// value = digits * 10^(exp-scale)
	scale -= exp
	if scale < 0 {
		digits += strings.Repeat("0", -scale)
		scale = 0
	}
	if len(digits) <= scale {
		digits = strings.Repeat("0", scale-len(digits)+1) + digits
	}
	text := digits[:len(digits)-scale]
	if scale > 0 {
		text += "." + digits[len(digits)-scale:]
	}
	if neg {
		text = "-" + text
	}
	return ParseDecimal(text, '.')
}

// parts splits d into sign, all digits and the number of them after the
// point: "-12.50" gives true, "1250", 2.
func (d Decimal) parts() (neg bool, digits string, scale int) {
	s := d.String()
	if strings.HasPrefix(s, "-") {
		neg, s = true, s[1:]
	}
	ip, fp, _ := strings.Cut(s, ".")
	return neg, ip + fp, len(fp)
}

// Scale is the number of digits after the decimal point as written.
func (d Decimal) Scale() int {
	_, _, scale := d.parts()
	return scale
}

// Sign returns -1, 0 or +1.
func (d Decimal) Sign() int { return d.Rat().Sign() }

// Int64 returns d as an integer when it is a whole number in range
// ("12.00" is 12).
func (d Decimal) Int64() (int64, bool) {
	r := d.Rat()
	if !r.IsInt() || !r.Num().IsInt64() {
		return 0, false
	}
	return r.Num().Int64(), true
}

// MarshalText writes the digits, for YAML, journals and map keys.
func (d Decimal) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalText reads what MarshalText wrote (a '.' separator).
func (d *Decimal) UnmarshalText(b []byte) error {
	v, err := ParseDecimal(string(b), '.')
	if err != nil {
		return err
	}
	*d = v
	return nil
}

// ParseDecimalText reads a decimal as people write it in a spreadsheet: sep
// between the whole part and the fraction, and the whole part grouped in
// thousands by the other separator, a space or a no-break space ("1.234,50"
// under decimal_separator ",", "1,234.50" or "1 234.50" under "."). A value
// that reads two ways ("1.234" under ",": 1234, or 1.234 written with the
// other separator) is refused with an *AmbiguousDecimalError.
func ParseDecimalText(s string, sep byte) (Decimal, error) {
	d, err := ParseDecimal(s, sep)
	if err == nil {
		return d, nil
	}
	t := strings.TrimSpace(s)
	sign := ""
	if t != "" && (t[0] == '+' || t[0] == '-') {
		sign, t = t[:1], t[1:]
	}
	whole, frac := t, ""
	if i := strings.IndexByte(t, sep); i >= 0 {
		whole, frac = t[:i], t[i:]
	}
	other := otherSep(sep)
	digits, mark, ok := ungroup(whole, other)
	if !ok {
		return Decimal{}, err
	}
	if frac == "" && mark == string(other) && len(whole) == len(digits)+1 {
		return Decimal{}, &AmbiguousDecimalError{text: s, sep: sep}
	}
	return ParseDecimal(sign+digits+frac, sep)
}

func otherSep(sep byte) byte {
	if sep == ',' {
		return '.'
	}
	return ','
}

// ungroup takes the thousands marks out of a whole number written as
// 1.234.567 (mark the other decimal separator, a space, a no-break space or
// a narrow no-break space): one mark throughout, a first group of one to
// three digits not starting with 0, then groups of three.
func ungroup(whole string, other byte) (digits, mark string, ok bool) {
	i := strings.IndexFunc(whole, func(r rune) bool { return r < '0' || r > '9' })
	if i <= 0 {
		return "", "", false
	}
	for _, m := range []string{string(other), " ", "\u00a0", "\u202f"} {
		if strings.HasPrefix(whole[i:], m) {
			mark = m
			break
		}
	}
	if mark == "" {
		return "", "", false
	}
	groups := strings.Split(whole, mark)
	if len(groups[0]) > 3 || groups[0][0] == '0' {
		return "", "", false
	}
	for _, g := range groups[1:] {
		if len(g) != 3 || !allDigits(g) {
			return "", "", false
		}
	}
	return strings.Join(groups, ""), mark, true
}

// AmbiguousDecimalError is a number such as "1.234" under decimal_separator ",":
// 1234 with "." between thousands, or 1.234 in a file that uses ".".
type AmbiguousDecimalError struct {
	text string
	sep  byte
}

func (e *AmbiguousDecimalError) Error() string {
	t, o, sep := strings.TrimSpace(e.text), string(otherSep(e.sep)), string(e.sep)
	whole, frac := strings.ReplaceAll(t, o, ""), strings.ReplaceAll(t, o, sep)
	return fmt.Sprintf("%q reads two ways under decimal_separator: %q: %s with %q between thousands, or %s; write it as %s or %s, or set decimal_separator: %q if the file writes decimals with %q",
		e.text, sep, whole, o, frac, whole, frac, o, o)
}

func (e *AmbiguousDecimalError) Unwrap() error { return ErrNotDecimal }

// FitDigits checks d against the Precision and Scale a decimal field
// declares (real documents carry them: Precision="16" Scale="2"). A value
// with more significant digits after the point than Scale would be rounded
// by the server, so that a later read disagrees with what was sent; it is
// refused instead, and nothing is lost silently. Trailing zeros do not
// count: "12.50" fits Scale 1. The answer is "" or why d does not fit.
func (p *Property) FitDigits(d Decimal) string {
	if p == nil {
		return ""
	}
	_, digits, scale := d.parts()
	frac := digits[len(digits)-scale:]
	frac = strings.TrimRight(frac, "0")
	whole := strings.TrimLeft(digits[:len(digits)-scale], "0")
	if p.HasScale && len(frac) > p.Scale {
		return fmt.Sprintf("%s has %d digits after the point; %s takes %d (Scale %d), and the server would round it: round it in the source or in the plan",
			d.String(), len(frac), p.Name, p.Scale, p.Scale)
	}
	if p.Precision > 0 {
		maxWhole := p.Precision
		if p.HasScale {
			maxWhole -= p.Scale
		}
		if len(whole) > maxWhole {
			facets := fmt.Sprintf("Precision %d", p.Precision)
			if p.HasScale {
				facets += fmt.Sprintf(", Scale %d", p.Scale)
			}
			return fmt.Sprintf("%s has %d digits before the point; %s takes %d (%s)",
				d.String(), len(whole), p.Name, maxWhole, facets)
		}
	}
	return ""
}
