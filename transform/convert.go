package transform

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/source"
)

// Empty says what becomes of a field whose value is empty (target.empty).
type Empty string

// The empty rules of docs/plan-format.md.
const (
	EmptyOmit Empty = "omit" // leave the field out of the record (default)
	EmptyNull Empty = "null" // send an explicit null
	EmptyKeep Empty = "keep" // send "" (Edm.String only; other types are omitted)
)

// converter turns expression values into Edm values for one source.
type converter struct {
	loc   *time.Location
	sep   byte // the source's decimal separator for text cells
	empty Empty
}

// convError is why a value cannot become its field's type; msg names the
// value and the type.
type convError struct{ msg string }

func (e *convError) Error() string { return e.msg }

// convert returns the value to write for a field of type prop (nil prop:
// no metadata, the value is only checked to be a scalar). omit reports that
// the field is left out of the record.
func (c *converter) convert(v any, prop *odata.Property) (out any, omit bool, err error) {
	var typ odata.EdmType
	if prop != nil {
		typ = prop.Type
	}
	if isEmptyFor(v, typ) {
		switch c.empty {
		case EmptyNull:
			return nil, false, nil
		case EmptyKeep:
			if typ == odata.EdmString || typ == "" {
				return "", false, nil
			}
		}
		return nil, true, nil
	}
	switch typ {
	case "":
		if _, ok := asText(v); !ok {
			return nil, false, &convError{fmt.Sprintf("%s cannot be written as a field value", describe(v))}
		}
		return v, false, nil
	case odata.EdmString:
		return c.toString(v, prop)
	case odata.EdmInt64, odata.EdmInt32, odata.EdmInt16, odata.EdmByte, odata.EdmSByte:
		n, err := toInt64(v)
		if err != nil {
			return nil, false, &convError{fmt.Sprintf("%s is not a whole number (%s)", describe(v), typ)}
		}
		if lo, hi, ok := odata.IntRange(typ); ok && (n < lo || n > hi) {
			return nil, false, &convError{fmt.Sprintf("%d is outside what %s holds (%d to %d)", n, typ, lo, hi)}
		}
		return n, false, nil
	case odata.EdmTimeOfDay:
		if t, ok := v.(time.Time); ok {
			// A workbook's time cell: its time of day, whatever its day.
			return t.Format(odata.TimeOfDayLayout), false, nil
		}
		text, ok := asText(v)
		if !ok {
			return nil, false, &convError{fmt.Sprintf("%s is not a time of day (Edm.TimeOfDay)", describe(v))}
		}
		t, err := odata.ParseTimeOfDay(text)
		if err != nil {
			return nil, false, &convError{err.Error() + " (Edm.TimeOfDay)"}
		}
		return t.Format(odata.TimeOfDayLayout), false, nil
	case odata.EdmDuration:
		text, ok := asText(v)
		if !ok {
			return nil, false, &convError{fmt.Sprintf("%s is not a duration (Edm.Duration)", describe(v))}
		}
		if _, err := odata.ParseDuration(text); err != nil {
			return nil, false, &convError{err.Error() + " (Edm.Duration)"}
		}
		return strings.TrimSpace(text), false, nil
	case odata.EdmDecimal, "Edm.Double", "Edm.Single":
		d, err := toDecimal(v, c.sep)
		if err != nil {
			return nil, false, &convError{decimalMessage(v, err, c.sep, typ)}
		}
		if msg := prop.FitDigits(d); msg != "" {
			return nil, false, &convError{msg}
		}
		return d, false, nil
	case odata.EdmDateTimeOffset, odata.EdmDate:
		t, err := c.toTime(v)
		if err != nil {
			return nil, false, &convError{fmt.Sprintf("%s is not a date (%s); %s", describe(v), typ, err.Error())}
		}
		if typ == odata.EdmDate {
			// A calendar day, as target.timezone sees it, written as the
			// standard writes a Date (docs/other-services.md).
			return odata.Date(t.Format(odata.DateLayout)), false, nil
		}
		if prop.DateOnly {
			// A date-only field (DateType Date) holds a calendar day: the
			// day as target.timezone sees it, sent at midnight UTC, so
			// that no server time zone (TZSERVER, from 21.0) moves it a day.
			y, m, d := t.Date()
			t = time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
		}
		return t, false, nil
	case odata.EdmGuid:
		text, ok := asText(v)
		if !ok {
			return nil, false, &convError{fmt.Sprintf("%s is not a Guid (Edm.Guid)", describe(v))}
		}
		g, err := odata.ParseGuid(text)
		if err != nil {
			return nil, false, &convError{err.Error() + " (Edm.Guid)"}
		}
		return g, false, nil
	case odata.EdmBoolean:
		b, ok := toBool(v)
		if !ok {
			return nil, false, &convError{fmt.Sprintf("%s is not a boolean (Edm.Boolean); use true/false, Y/N or 1/0", describe(v))}
		}
		return b, false, nil
	}
	// A type this tool does not know: send its text unchanged.
	s, ok := asText(v)
	if !ok {
		return nil, false, &convError{fmt.Sprintf("%s cannot be written as %s", describe(v), typ)}
	}
	return s, false, nil
}

// isEmptyFor reports whether v is empty for a field of that type: nil or "",
// and for non-text types text of spaces only too.
func isEmptyFor(v any, typ odata.EdmType) bool {
	if typ == odata.EdmString || typ == "" {
		return isEmptyValue(v)
	}
	return isBlank(v)
}

func (c *converter) toString(v any, prop *odata.Property) (any, bool, error) {
	s, ok := asText(v)
	if !ok {
		return nil, false, &convError{fmt.Sprintf("%s is not text (Edm.String)", describe(v))}
	}
	if prop != nil && prop.MaxLength > 0 {
		// docs/service.md, Types and literals: MaxLength counts characters;
		// Hebrew letters are two bytes each.
		if n := utf8.RuneCountInString(s); n > prop.MaxLength {
			return nil, false, &convError{fmt.Sprintf("%s is %d characters, longer than the %d of Edm.String(MaxLength %d)", quote(s), n, prop.MaxLength, prop.MaxLength)}
		}
	}
	if _, isString := v.(string); isString {
		return v, false, nil // already boxed: no allocation per field
	}
	return s, false, nil
}

// toInt64 reads a whole number: text "12" (also "12.0"), a number cell, a
// whole float from arithmetic, or a decimal with no fraction.
func toInt64(v any) (int64, error) {
	switch x := v.(type) {
	case int:
		return int64(x), nil
	case int64:
		return x, nil
	case int32:
		return int64(x), nil
	case int16:
		return int64(x), nil
	case int8:
		return int64(x), nil
	case uint8:
		return int64(x), nil
	case uint16:
		return int64(x), nil
	case uint32:
		return int64(x), nil
	case uint:
		if uint64(x) <= math.MaxInt64 {
			return int64(x), nil
		}
	case uint64:
		if x <= math.MaxInt64 {
			return int64(x), nil
		}
	case float64:
		if x == math.Trunc(x) && x >= -(1<<63) && x < 1<<63 {
			return int64(x), nil
		}
	case float32:
		return toInt64(float64(x))
	case string:
		t := strings.TrimSpace(x)
		if n, err := strconv.ParseInt(strings.TrimPrefix(t, "+"), 10, 64); err == nil && !strings.HasPrefix(t, "+-") {
			return n, nil
		}
		if d, err := odata.ParseDecimal(t, '.'); err == nil {
			if n, ok := decimalInt(d); ok {
				return n, nil
			}
		}
	case source.Number:
		if d, err := odata.ParseDecimal(string(x), '.'); err == nil {
			if n, ok := decimalInt(d); ok {
				return n, nil
			}
		}
	case odata.Decimal:
		if n, ok := decimalInt(x); ok {
			return n, nil
		}
	}
	return 0, fmt.Errorf("%s is not a whole number", describe(v))
}

func decimalInt(d odata.Decimal) (int64, bool) {
	r := d.Rat()
	if !r.IsInt() || !r.Num().IsInt64() {
		return 0, false
	}
	return r.Num().Int64(), true
}

// toDecimal reads an exact decimal: text with sep as its separator (and
// thousands grouped, see odata.ParseDecimalText), a number
// cell (always '.'), an integer or a float from arithmetic.
func toDecimal(v any, sep byte) (odata.Decimal, error) {
	switch x := v.(type) {
	case odata.Decimal:
		return x, nil
	case string:
		return odata.ParseDecimalText(x, sep)
	case source.Number:
		return odata.ParseDecimal(string(x), '.')
	case float64, float32:
		if s, ok := asText(x); ok {
			return odata.ParseDecimal(s, '.')
		}
	case bool, time.Time:
	default:
		if n, err := toInt64(x); err == nil {
			return odata.DecimalFromInt(n), nil
		}
	}
	return odata.Decimal{}, fmt.Errorf("%s: %w", describe(v), odata.ErrNotDecimal)
}

// decimalMessage says why v is no decimal (err is what reading it gave),
// and what separator would read it.
func decimalMessage(v any, err error, sep byte, typ odata.EdmType) string {
	var amb *odata.AmbiguousDecimalError
	if errors.As(err, &amb) {
		return fmt.Sprintf("%s (%s)", amb.Error(), typ)
	}
	msg := fmt.Sprintf("%s is not a decimal (%s)", describe(v), typ)
	if s, ok := v.(string); ok {
		other := byte(',')
		if sep == ',' {
			other = '.'
		}
		if _, err := odata.ParseDecimalText(s, other); err == nil {
			msg += fmt.Sprintf("; set decimal_separator: %q", string(other))
		}
	}
	return msg
}

func (c *converter) toTime(v any) (time.Time, error) {
	switch x := v.(type) {
	case time.Time:
		return inZone(x, c.loc), nil
	case string:
		if t, ok := parseTimeText(x, nil, c.loc); ok {
			return t, nil
		}
		return time.Time{}, fmt.Errorf("write it as 2006-01-02 or 2006-01-02T15:04:05, or use date(x, layout)")
	}
	return time.Time{}, fmt.Errorf("use date(x) to read it")
}

// toBool reads true/false, Y/N, yes/no and 1/0 in any case.
func toBool(v any) (bool, bool) {
	switch x := v.(type) {
	case bool:
		return x, true
	case string:
		switch strings.ToLower(strings.TrimSpace(x)) {
		case "true", "y", "yes", "1":
			return true, true
		case "false", "n", "no", "0":
			return false, true
		}
	case source.Number:
		return toBool(string(x))
	default:
		if n, err := toInt64(x); err == nil && (n == 0 || n == 1) {
			if _, isTime := x.(time.Time); !isTime {
				return n == 1, true
			}
		}
	}
	return false, false
}
