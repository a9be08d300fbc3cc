package transform

import (
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/migrate-tool/migrate/internal/diag"
	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/source"
)

// asText formats a scalar value as text: cells, numbers from arithmetic,
// decimals, booleans and dates. ok is false for lists, maps and other values
// that have no sensible text.
func asText(v any) (string, bool) {
	switch x := v.(type) {
	case nil:
		return "", true
	case string:
		return x, true
	case source.Number:
		return string(x), true
	case odata.Decimal:
		return x.String(), true
	case bool:
		if x {
			return "true", true
		}
		return "false", true
	case int:
		return strconv.Itoa(x), true
	case int64:
		return strconv.FormatInt(x, 10), true
	case int32:
		return strconv.FormatInt(int64(x), 10), true
	case int16, int8, uint, uint8, uint16, uint32, uint64:
		return fmt.Sprint(x), true
	case float64:
		return floatText(x)
	case float32:
		return floatText(float64(x))
	case time.Time:
		return timeText(x), true
	}
	return "", false
}

// floatText writes a float from expression arithmetic rounded to the 15
// significant digits a float64 holds, so 0.1+0.2 is "0.3" and 19.99*3 is
// "59.97", not the binary noise after them.
func floatText(f float64) (string, bool) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return "", false
	}
	r, err := strconv.ParseFloat(strconv.FormatFloat(f, 'g', 15, 64), 64)
	if err != nil {
		return "", false
	}
	return strconv.FormatFloat(r, 'f', -1, 64), true
}

// timeText writes a date as 2006-01-02 and a moment as 2006-01-02T15:04:05
// (with its offset when it carries one other than UTC).
func timeText(t time.Time) string {
	h, m, s := t.Clock()
	if h == 0 && m == 0 && s == 0 && t.Nanosecond() == 0 {
		return t.Format("2006-01-02")
	}
	if t.Location() == time.UTC {
		return t.Format("2006-01-02T15:04:05")
	}
	return t.Format("2006-01-02T15:04:05Z07:00")
}

// describe names a value for an error message: text is quoted, anything
// else says what it is.
func describe(v any) string {
	switch x := v.(type) {
	case nil:
		return "empty"
	case string:
		return quote(x)
	case source.Number:
		return "number " + string(x)
	case odata.Decimal:
		return "number " + x.String()
	case bool:
		return fmt.Sprintf("boolean %t", x)
	case time.Time:
		return "date " + timeText(x)
	case int, int64, int32, int16, int8, uint, uint8, uint16, uint32, uint64, float32, float64:
		s, _ := asText(x)
		if s == "" {
			s = fmt.Sprint(x)
		}
		return "number " + s
	case []any:
		return fmt.Sprintf("a list of %d", len(x))
	case map[string]any:
		return "a row or map"
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Slice, reflect.Array:
		return fmt.Sprintf("a list of %d", rv.Len())
	case reflect.Map:
		return "a map"
	case reflect.Func:
		return "a function"
	}
	return fmt.Sprintf("a value of type %T", v)
}

// valueText is the offending value as RowError.Value shows it.
func valueText(v any) string {
	if s, ok := asText(v); ok {
		return s
	}
	return describe(v)
}

// quote quotes text for a message, shortening very long text.
func quote(s string) string { return diag.Quote(s, 120) }

// isBlank reports whether v is an empty cell: nil or text of spaces only.
func isBlank(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case string:
		return strings.TrimSpace(x) == ""
	case source.Number:
		return x == ""
	}
	return false
}
