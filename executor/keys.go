package executor

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/migrate-tool/migrate/odata"
)

// formatKey writes a key expression (spec 2.5): a single key as its
// literal, a composite one as NAME=literal pairs. Literals are
// percent-encoded where a URL needs it. odata.FormatKey did not exist when
// this was written; this follows the same rules.
func formatKey(names []string, values []any) (string, error) {
	if len(names) == 0 || len(names) != len(values) {
		return "", fmt.Errorf("key needs %d values, got %d", len(names), len(values))
	}
	parts := make([]string, len(names))
	for i, n := range names {
		if values[i] == nil {
			return "", fmt.Errorf("key field %s has no value", n)
		}
		lit, err := odata.FormatLiteral(values[i])
		if err != nil {
			return "", fmt.Errorf("key field %s: %w", n, err)
		}
		lit = keyEscaper.Replace(lit)
		if len(names) == 1 {
			return lit, nil
		}
		parts[i] = n + "=" + lit
	}
	return strings.Join(parts, ","), nil
}

// keyEscaper escapes what cannot stand in a URL path segment; quotes,
// commas and '=' stay readable (spec 2.5 writes them bare).
var keyEscaper = strings.NewReplacer("%", "%25", " ", "%20", "/", "%2F", "?", "%3F", "#", "%23", "\"", "%22")

// keyOf returns the key expression of an entity of type t from field
// values (a record's, or a server response's), or "" when a key field is
// missing. Values from a response are decoded per the metadata type first.
func keyOf(t *odata.EntityType, fields map[string]any) string {
	if t == nil || len(t.Key) == 0 {
		return ""
	}
	vals := make([]any, len(t.Key))
	for i, k := range t.Key {
		v, ok := fields[k]
		if !ok || v == nil {
			return ""
		}
		if p := t.Property(k); p != nil {
			dv, err := odata.DecodeValue(p.Type, v)
			if err != nil {
				return ""
			}
			v = dv
		}
		if s, ok := v.(string); ok && s == "" {
			return ""
		}
		vals[i] = v
	}
	key, err := formatKey(t.Key, vals)
	if err != nil {
		return ""
	}
	return key
}

// keyFromLocation takes the key expression from a Location header such as
// .../ORDERS('SO001') or .../ORDERITEMS_SUBFORM(3).
func keyFromLocation(loc string) string {
	if !strings.HasSuffix(loc, ")") {
		return ""
	}
	i := strings.LastIndexByte(loc, '(')
	if i < 0 {
		return ""
	}
	return loc[i+1 : len(loc)-1]
}

// keyValue turns a key expression back into a value for ref(): a single
// key's value (string or int64), or a map of a composite key's values.
func keyValue(key string) any {
	if key == "" {
		return nil
	}
	unesc, err := url.PathUnescape(key)
	if err != nil {
		unesc = key
	}
	parts := splitKey(unesc)
	if len(parts) == 1 && !strings.Contains(parts[0], "=") || len(parts) == 1 && strings.HasPrefix(parts[0], "'") {
		return literalValue(parts[0])
	}
	m := make(map[string]any, len(parts))
	for _, p := range parts {
		name, lit, ok := strings.Cut(p, "=")
		if !ok {
			return literalValue(unesc)
		}
		m[name] = literalValue(lit)
	}
	return m
}

// splitKey splits a composite key at the commas outside quotes.
func splitKey(s string) []string {
	var parts []string
	inQ := false
	start := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\'':
			inQ = !inQ
		case ',':
			if !inQ {
				parts = append(parts, s[start:i])
				start = i + 1
			}
		}
	}
	return append(parts, s[start:])
}

func literalValue(lit string) any {
	if len(lit) >= 2 && lit[0] == '\'' && lit[len(lit)-1] == '\'' {
		return strings.ReplaceAll(lit[1:len(lit)-1], "''", "'")
	}
	if n, err := strconv.ParseInt(lit, 10, 64); err == nil {
		return n
	}
	if d, err := odata.ParseDecimal(lit, '.'); err == nil {
		return d
	}
	return lit
}
