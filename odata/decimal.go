package odata

import (
	"errors"
	"fmt"
	"math/big"
	"strings"
)

// Decimal is an exact Edm.Decimal value. It keeps the digits it was given
// ("12.10" stays "12.10"), so nothing is rounded through float64 on the way
// to the server; spec 1 wants a decimal point, whatever the locale.
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

// UnmarshalJSON reads a JSON number (or a quoted one) exactly.
func (d *Decimal) UnmarshalJSON(b []byte) error {
	s := strings.Trim(string(b), `"`)
	if strings.ContainsAny(s, "eE") {
		r, ok := new(big.Rat).SetString(s)
		if !ok {
			return fmt.Errorf("%q: %w", s, ErrNotDecimal)
		}
		s = r.FloatString(decimalPlaces(r))
	}
	v, err := ParseDecimal(s, '.')
	if err != nil {
		return err
	}
	*d = v
	return nil
}

// decimalPlaces is how many places an exact rational from an exponent form
// needs; capped so a hostile 1e-999999 cannot allocate without bound.
func decimalPlaces(r *big.Rat) int {
	for p := 0; p <= 64; p++ {
		scaled := new(big.Rat).Mul(r, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(p)), nil)))
		if scaled.IsInt() {
			return p
		}
	}
	return 64
}
