package transform

import (
	"errors"
	"fmt"
	"strings"

	"github.com/migrate-tool/migrate/odata"
)

// parseNumberText reads a decimal as people write it in a spreadsheet: sep
// between the whole part and the fraction, and the whole part grouped in
// thousands by the other separator, a space or a no-break space ("1.234,50"
// under decimal_separator ",", "1,234.50" or "1 234.50" under "."). A value
// that reads two ways ("1.234" under ",": 1234, or 1.234 written with the
// other separator) is refused with an *ambiguousError.
func parseNumberText(s string, sep byte) (odata.Decimal, error) {
	d, err := odata.ParseDecimal(s, sep)
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
		return odata.Decimal{}, err
	}
	if frac == "" && mark == string(other) && len(whole) == len(digits)+1 {
		return odata.Decimal{}, &ambiguousError{text: s, sep: sep}
	}
	return odata.ParseDecimal(sign+digits+frac, sep)
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

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// ambiguousError is a number such as "1.234" under decimal_separator ",":
// 1234 with "." between thousands, or 1.234 in a file that uses ".".
type ambiguousError struct {
	text string
	sep  byte
}

func (e *ambiguousError) Error() string {
	t, o, sep := strings.TrimSpace(e.text), string(otherSep(e.sep)), string(e.sep)
	whole, frac := strings.ReplaceAll(t, o, ""), strings.ReplaceAll(t, o, sep)
	return fmt.Sprintf("%q reads two ways under decimal_separator: %q: %s with %q between thousands, or %s; write it as %s or %s, or set decimal_separator: %q if the file writes decimals with %q",
		e.text, sep, whole, o, frac, whole, frac, o, o)
}

func (e *ambiguousError) Unwrap() error { return odata.ErrNotDecimal }

// decimalMessage says why v is no decimal (err is what reading it gave),
// and what separator would read it.
func decimalMessage(v any, err error, sep byte, typ odata.EdmType) string {
	var amb *ambiguousError
	if errors.As(err, &amb) {
		return fmt.Sprintf("%s (%s)", amb.Error(), typ)
	}
	msg := fmt.Sprintf("%s is not a decimal (%s)", describe(v), typ)
	if s, ok := v.(string); ok {
		other := otherSep(sep)
		if _, err := parseNumberText(s, other); err == nil {
			msg += fmt.Sprintf("; set decimal_separator: %q", string(other))
		}
	}
	return msg
}
