package odata

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/migrate-tool/migrate/internal/diag"
)

// Record field values are Go values: string, int64, Decimal, time.Time,
// bool and nil (docs/service.md, Types and literals). Other integer types are
// accepted where a value goes out, and json.Number where one comes in.

// ErrUnsupportedValue is wrapped when a Go value has no Edm representation.
var ErrUnsupportedValue = errors.New("unsupported value")

// DateTimeLayout is the payload form of docs/service.md, Types and
// literals: ISO 8601 with an explicit offset, never "Z" (docs/servers.md,
// Connection: send an offset always).
const DateTimeLayout = "2006-01-02T15:04:05-07:00"

// DateLayout is the date form docs/service.md, Types and literals uses in
// filters.
const DateLayout = "2006-01-02"

// FormatDateTime writes t as "2024-03-01T00:00:00+02:00", in t's own
// location; UTC gives "+00:00". Fractions of a second are dropped: the
// service keeps minutes.
func FormatDateTime(t time.Time) string { return t.Format(DateTimeLayout) }

// FormatDate writes t's calendar date, in t's own location: "2024-03-01".
func FormatDate(t time.Time) string { return t.Format(DateLayout) }

// FormatLiteral writes v as a URL or key literal: strings single-quoted with
// ' doubled, integers bare, decimals with a '.', times as FormatDateTime,
// booleans as true/false, nil as null. The result is not percent-encoded
// (Query.Encode and the key builders do that).
func FormatLiteral(v any) (string, error) {
	switch x := v.(type) {
	case nil:
		return "null", nil
	case string:
		return "'" + strings.ReplaceAll(x, "'", "''") + "'", nil
	case Guid:
		return string(x), nil
	case Date:
		return string(x), nil
	case time.Time:
		return FormatDateTime(x), nil
	case *time.Time:
		if x == nil {
			return "null", nil
		}
		return FormatDateTime(*x), nil
	}
	return formatScalar(v)
}

// FormatTypedLiteral writes v, a value of a field of type t (as a record or
// an answer holds it), as a literal of that type: an Edm.Date as its day
// (2026-11-03) and an Edm.Guid bare, as the standard writes them in a
// $filter (docs/other-services.md); any other as FormatLiteral writes the
// value DecodeValue gives.
func FormatTypedLiteral(t EdmType, v any) (string, error) {
	dv, err := DecodeValue(t, v)
	if err != nil {
		return "", err
	}
	if tm, ok := dv.(time.Time); ok && t == EdmDate {
		return tm.Format(DateLayout), nil
	}
	return FormatLiteral(dv)
}

// formatScalar writes numbers and booleans the same way in URLs and JSON.
func formatScalar(v any) (string, error) {
	switch x := v.(type) {
	case int64:
		return strconv.FormatInt(x, 10), nil
	case int:
		return strconv.Itoa(x), nil
	case int32:
		return strconv.FormatInt(int64(x), 10), nil
	case int16:
		return strconv.FormatInt(int64(x), 10), nil
	case int8:
		return strconv.FormatInt(int64(x), 10), nil
	case uint64:
		return strconv.FormatUint(x, 10), nil
	case uint:
		return strconv.FormatUint(uint64(x), 10), nil
	case uint32:
		return strconv.FormatUint(uint64(x), 10), nil
	case uint16:
		return strconv.FormatUint(uint64(x), 10), nil
	case uint8:
		return strconv.FormatUint(uint64(x), 10), nil
	case Decimal:
		return x.String(), nil
	case *Decimal:
		if x == nil {
			return "null", nil
		}
		return x.String(), nil
	case bool:
		return strconv.FormatBool(x), nil
	case json.Number:
		d, err := parseDecimalExp(string(x))
		if err != nil {
			return "", fmt.Errorf("number %q: %w", string(x), ErrUnsupportedValue)
		}
		return d.String(), nil
	case float64:
		return formatFloat(x, 64)
	case float32:
		return formatFloat(float64(x), 32)
	}
	return "", fmt.Errorf("a value of type %T: %w", v, ErrUnsupportedValue)
}

func formatFloat(f float64, bits int) (string, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return "", fmt.Errorf("number %v: %w", f, ErrUnsupportedValue)
	}
	return strconv.FormatFloat(f, 'f', -1, bits), nil
}

// MarshalBody writes an entity body: keys sorted, so the same fields give
// the same bytes; nested map[string]any, []map[string]any and []any for
// deep insert; Decimal digits unchanged, int64 exact, times as
// FormatDateTime; no HTML escaping of <, > and &.
//
// It is on every record's path (the dry run spent a fifth of its time
// here): the buffer is sized once and plain text is copied as it is
// (writeJSONString).
func MarshalBody(fields map[string]any) ([]byte, error) {
	n := 2
	for k, v := range fields {
		n += len(k) + 8
		if s, ok := v.(string); ok {
			n += len(s)
		}
	}
	b := bytes.NewBuffer(make([]byte, 0, n))
	if err := writeJSONValue(b, fields, ""); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// writeJSONArray writes the lines of a deep insert (or any list) in order.
func writeJSONArray[T any](b *bytes.Buffer, xs []T, path string) error {
	b.WriteByte('[')
	for i, e := range xs {
		if i > 0 {
			b.WriteByte(',')
		}
		if err := writeJSONValue(b, e, fmt.Sprintf("%s[%d]", path, i)); err != nil {
			return err
		}
	}
	b.WriteByte(']')
	return nil
}

func writeJSONValue(b *bytes.Buffer, v any, path string) error {
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case string:
		writeJSONString(b, x)
	case Guid:
		writeJSONString(b, string(x))
	case Date:
		writeJSONString(b, string(x))
	case time.Time:
		writeJSONString(b, FormatDateTime(x))
	case *time.Time:
		if x == nil {
			b.WriteString("null")
		} else {
			writeJSONString(b, FormatDateTime(*x))
		}
	case map[string]any:
		var arr [32]string
		keys := arr[:0]
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			writeJSONString(b, k)
			b.WriteByte(':')
			if err := writeJSONValue(b, x[k], joinPath(path, k)); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	case []map[string]any:
		return writeJSONArray(b, x, path)
	case []any:
		return writeJSONArray(b, x, path)
	case json.RawMessage:
		if !json.Valid(x) {
			return fmt.Errorf("%s: raw JSON is not valid: %w", pathOr(path), ErrUnsupportedValue)
		}
		b.Write(bytes.TrimSpace(x))
	default:
		s, err := formatScalar(v)
		if err != nil {
			return fmt.Errorf("%s: %w", pathOr(path), err)
		}
		b.WriteString(s)
	}
	return nil
}

func joinPath(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}

func pathOr(p string) string {
	if p == "" {
		return "body"
	}
	return p
}

// writeJSONString writes s as encoding/json writes it with HTML escaping
// off (appendJSONString).
func writeJSONString(b *bytes.Buffer, s string) { b.Write(appendJSONString(b.AvailableBuffer(), s)) }

// plainJSON reports whether encoding/json writes s between quotes unchanged.
func plainJSON(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x80 || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// DecodeEntity reads one JSON object, keeping numbers as json.Number so
// that no Int64 or Decimal passes through float64.
func DecodeEntity(data []byte) (map[string]any, error) { return DecodeEntityOnly(data, nil) }

// DecodeEntities decodes entities, the lines of an expanded sub-form as
// one; what is not an entity is left out.
func DecodeEntities(raws []json.RawMessage) []map[string]any {
	out := make([]map[string]any, 0, len(raws))
	for _, raw := range raws {
		if e, err := DecodeEntity(raw); err == nil {
			out = append(out, e)
		}
	}
	return out
}

// DecodeEntityOnly is DecodeEntity keeping only what keep projects of the
// object (everything when keep is nil): the answer to a deep insert holds
// every field of every line, of which the engine needs the keys.
func DecodeEntityOnly(data []byte, keep *Projection) (map[string]any, error) {
	if m, ok := decodeObject(data, keep); ok {
		return m, nil
	}
	// Not the plain road: encoding/json decides, and words the error.
	m, err := decodeEntitySlow(data)
	if err != nil || keep == nil {
		return m, err
	}
	return keep.apply(m), nil
}

// DecodeObject reads data when it is one JSON object and nothing after it
// but space, as encoding/json with UseNumber reads it, in one pass; false
// for anything else, which the caller decodes (and words) its own way.
func DecodeObject(data []byte) (map[string]any, bool) { return decodeObject(data, nil) }

func decodeObject(data []byte, keep *Projection) (map[string]any, bool) {
	p := jsonScan{s: string(data), ok: true}
	if p.peek() != '{' {
		return nil, false
	}
	v, ok := p.value(0, keep)
	if !ok || p.peek() != 0 || p.i != len(p.s) {
		return nil, false
	}
	return v.(map[string]any), true
}

// apply keeps of a decoded object what p projects.
func (p *Projection) apply(m map[string]any) map[string]any {
	for k, v := range m {
		sub, kept := p.member(k)
		switch {
		case !kept:
			delete(m, k)
		case sub != nil:
			m[k] = sub.applyValue(v)
		}
	}
	return m
}

func (p *Projection) applyValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		return p.apply(x)
	case []any:
		for i := range x {
			x[i] = p.applyValue(x[i])
		}
	}
	return v
}

func decodeEntitySlow(data []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("entity body is not a JSON object: %s", jsonErrText(err))
	}
	if m == nil {
		return nil, errors.New("entity body is null, not a JSON object")
	}
	if _, err := dec.Token(); err == nil {
		return nil, errors.New("entity body has data after the JSON object")
	}
	return m, nil
}

// jsonErrText hides encoding/json's Go type names.
func jsonErrText(err error) string {
	var ute *json.UnmarshalTypeError
	if errors.As(err, &ute) {
		return "found a JSON " + ute.Value
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("%s at byte %d", se.Error(), se.Offset)
	}
	if errors.Is(err, io.EOF) {
		return "empty body"
	}
	return err.Error()
}

// ValueError says which value did not fit its Edm type.
type ValueError struct {
	Type  EdmType
	Value any
	Err   error
}

func (e *ValueError) Error() string {
	return fmt.Sprintf("%s value %s: %v", e.Type, shortValue(e.Value), e.Err)
}

func (e *ValueError) Unwrap() error { return e.Err }

// shortValue is v as a message shows it: a string quoted, at most 60
// characters.
func shortValue(v any) string {
	if str, ok := v.(string); ok {
		return diag.Quote(str, 60)
	}
	return diag.Cut(fmt.Sprint(v), 60)
}

// DecodeValue turns a decoded JSON value (from DecodeEntity) into the Go
// value of type t: Edm.String → string, Edm.Int64 → int64, Edm.Decimal →
// Decimal, Edm.DateTimeOffset → time.Time, Edm.Boolean → bool; null → nil.
// Numbers sent as strings (IEEE754Compatible) are accepted. Values already
// of the right Go type pass through, so server and source values compare
// after both went through it.
func DecodeValue(t EdmType, v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	out, err := decodeValue(t, v)
	if err != nil {
		return nil, &ValueError{Type: t, Value: v, Err: err}
	}
	return out, nil
}

func decodeValue(t EdmType, v any) (any, error) {
	switch t {
	case EdmString:
		switch x := v.(type) {
		case string:
			return x, nil
		case json.Number:
			return string(x), nil
		case Guid:
			return string(x), nil
		}
	case EdmGuid:
		switch x := v.(type) {
		case Guid:
			return x, nil
		case string:
			return ParseGuid(x)
		}
	case EdmInt64, EdmInt32, EdmInt16, EdmByte, EdmSByte:
		switch x := v.(type) {
		case int64:
			return x, nil
		case int:
			return int64(x), nil
		case json.Number:
			return parseInt(string(x))
		case string:
			return parseInt(strings.TrimSpace(x))
		case Decimal:
			if n, ok := x.Int64(); ok {
				return n, nil
			}
			return nil, errors.New("not a whole number")
		case float64:
			if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
				return int64(x), nil
			}
			return nil, errors.New("not an exact whole number")
		}
	case EdmDecimal, "Edm.Double", "Edm.Single":
		switch x := v.(type) {
		case Decimal:
			return x, nil
		case json.Number:
			return parseDecimalExp(string(x))
		case string:
			return parseDecimalExp(strings.TrimSpace(x))
		case int64:
			return DecimalFromInt(x), nil
		case int:
			return DecimalFromInt(int64(x)), nil
		case float64:
			s, err := formatFloat(x, 64)
			if err != nil {
				return nil, err
			}
			return ParseDecimal(s, '.')
		}
	case EdmDateTimeOffset, EdmDate:
		switch x := v.(type) {
		case time.Time:
			return x, nil
		case string:
			return ParseDateTime(x)
		case Date:
			return ParseDateTime(string(x))
		}
	case EdmBoolean:
		switch x := v.(type) {
		case bool:
			return x, nil
		case string:
			b, err := strconv.ParseBool(strings.TrimSpace(x))
			if err != nil {
				return nil, errors.New("not true or false")
			}
			return b, nil
		}
	default:
		return nil, errors.New("the tool does not know this Edm type")
	}
	return nil, fmt.Errorf("a JSON %s does not fit", valueKind(v))
}

func parseInt(s string) (int64, error) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err == nil {
		return n, nil
	}
	// "12.0" or "1e3" from a lenient server: take it when it is whole.
	d, derr := parseDecimalExp(s)
	if derr == nil {
		if n, ok := d.Int64(); ok {
			return n, nil
		}
	}
	var ne *strconv.NumError
	if errors.As(err, &ne) && errors.Is(ne.Err, strconv.ErrRange) {
		return 0, errors.New("out of the Int64 range")
	}
	return 0, errors.New("not an integer")
}

func valueKind(v any) string {
	switch v.(type) {
	case string:
		return "string"
	case json.Number, float64, int64, int:
		return "number"
	case bool:
		return "boolean"
	case map[string]any:
		return "object"
	case []any:
		return "array"
	}
	return fmt.Sprintf("value of type %T", v)
}

// dateTimeLayouts are the forms ParseDateTime accepts, most likely first.
var dateTimeLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02T15:04Z07:00",
	"2006-01-02T15:04:05.999999999",
	"2006-01-02T15:04",
	DateLayout,
}

// ParseDateTime reads a DateTimeOffset as servers send it: RFC 3339 with
// "Z" or an offset; without an offset, or a bare date, it is taken as UTC.
func ParseDateTime(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	for _, l := range dateTimeLayouts {
		if t, err := time.Parse(l, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is not an ISO 8601 date-time", s)
}
