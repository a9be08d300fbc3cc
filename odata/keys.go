package odata

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
)

// ErrBadKey is wrapped by every key and path error.
var ErrBadKey = errors.New("bad key")

// KeyError says what is wrong with a key expression and where.
type KeyError struct {
	Input string
	// Offset is the byte offset in Input where the problem is.
	Offset int
	Msg    string
}

func (e *KeyError) Error() string {
	return fmt.Sprintf("key %q at byte %d: %s", e.Input, e.Offset, e.Msg)
}

// Unwrap lets errors.Is(err, ErrBadKey) hold.
func (e *KeyError) Unwrap() error { return ErrBadKey }

// KeyPart is one name=value of a key; Name is empty for a bare single key.
// Value is a string or an int64.
type KeyPart struct {
	Name  string
	Value any
}

// FormatKey writes a key with its parentheses (docs/service.md, Keys): a
// single key is the value alone, ('A”B') or (12); a composite key is a
// name=value list, (IVNUM='X',IVTYPE='A',DEBIT='D'). With one value and no
// names it writes a line key, (3). Keys are strings or integers; nil cannot
// be a key.
func FormatKey(names []string, values []any) (string, error) {
	if len(values) == 0 {
		return "", fmt.Errorf("a key needs a value: %w", ErrBadKey)
	}
	if len(names) > 1 && len(names) != len(values) || len(names) <= 1 && len(values) != 1 {
		return "", fmt.Errorf("%d key names for %d values: %w", len(names), len(values), ErrBadKey)
	}
	lits := make([]string, len(values))
	for i, v := range values {
		switch v.(type) {
		case nil:
			return "", fmt.Errorf("key %s is null: %w", keyName(names, i), ErrBadKey)
		case bool:
			return "", fmt.Errorf("key %s is a boolean: %w", keyName(names, i), ErrBadKey)
		}
		s, err := FormatLiteral(v)
		if err != nil {
			return "", fmt.Errorf("key %s: %w", keyName(names, i), err)
		}
		lits[i] = s
	}
	if len(values) == 1 {
		return "(" + lits[0] + ")", nil
	}
	var b strings.Builder
	b.WriteByte('(')
	for i, n := range names {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(n)
		b.WriteByte('=')
		b.WriteString(lits[i])
	}
	b.WriteByte(')')
	return b.String(), nil
}

func keyName(names []string, i int) string {
	if i < len(names) {
		return names[i]
	}
	return strconv.Itoa(i + 1)
}

// PathKey is a key expression as it stands between the parentheses of a
// URL path, and as the journal keeps it: FormatKey's expression without
// its parentheses, escaped by the one rule for keys in URLs (escapePathKey:
// 'A&B' is 'A%26B', Hebrew is percent-encoded UTF-8, quotes, commas and
// '=' stay readable). The executor writes every keyed URL with it, plain
// or inside a $batch; the sandbox reads them back with ParsePath.
func PathKey(names []string, values []any) (string, error) {
	k, err := FormatKey(names, values)
	if err != nil {
		return "", err
	}
	return escapePathKey(k[1 : len(k)-1]), nil
}

// ParsePathKey reads a key as PathKey writes it, or as a server writes it
// (raw, or percent-encoded: %27 for quotes, docs/servers.md, Writing and
// batches), with or
// without its parentheses.
func ParsePathKey(s string) ([]KeyPart, error) {
	if u, err := url.PathUnescape(s); err == nil {
		s = u
	}
	return ParseKey(s)
}

// pathKeyOf is PathKey of parts that ParseKey read: the one spelling of a
// key however it arrived.
func pathKeyOf(parts []KeyPart) (string, error) {
	names := make([]string, len(parts))
	values := make([]any, len(parts))
	for i, p := range parts {
		names[i], values[i] = p.Name, p.Value
	}
	return PathKey(names, values)
}

// LocationKey is the key of the entity a Location header names
// (…/ORDERS('SO 1'), …/ORDERITEMS_SUBFORM(3), percent-encoded or not) as
// PathKey writes it.
func LocationKey(loc string) (string, error) {
	s := loc
	if u, err := url.PathUnescape(loc); err == nil {
		s = u
	}
	open, inQuote := -1, false
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '\'':
			inQuote = !inQuote
		case s[i] == '(' && !inQuote:
			open = i
		}
	}
	if open < 0 || !strings.HasSuffix(s, ")") {
		return "", &KeyError{Input: loc, Offset: len(loc), Msg: "no key in parentheses at the end"}
	}
	parts, err := ParseKey(s[open:])
	if err != nil {
		return "", err
	}
	return pathKeyOf(parts)
}

// ParseKey reads a key expression as FormatKey writes it, with or without
// its parentheses: ('A”B'), (12), (IVNUM='X',IVTYPE='A',DEBIT='D').
// Integers are int64; other numbers (1.50, or past int64) are Decimal, so
// that FormatKey writes them back unquoted.
func ParseKey(s string) ([]KeyPart, error) {
	in := s
	body, off := s, 0
	if strings.HasPrefix(s, "(") {
		if !strings.HasSuffix(s, ")") || len(s) < 2 {
			return nil, &KeyError{Input: in, Offset: len(s), Msg: "no closing parenthesis"}
		}
		body, off = s[1:len(s)-1], 1
	}
	p := keyParser{in: in, s: body, off: off}
	return p.parse()
}

type keyParser struct {
	in  string
	s   string
	pos int
	off int
}

func (p *keyParser) errf(format string, args ...any) error {
	return &KeyError{Input: p.in, Offset: p.off + p.pos, Msg: fmt.Sprintf(format, args...)}
}

func (p *keyParser) parse() ([]KeyPart, error) {
	if strings.TrimSpace(p.s) == "" {
		return nil, p.errf("empty key")
	}
	var parts []KeyPart
	names := map[string]bool{}
	for {
		p.skipSpace()
		start := p.pos
		name := ""
		if p.pos < len(p.s) && isNameStart(p.s[p.pos]) {
			for p.pos < len(p.s) && isNameByte(p.s[p.pos]) {
				p.pos++
			}
			ident := p.s[start:p.pos]
			p.skipSpace()
			if p.pos < len(p.s) && p.s[p.pos] == '=' {
				name = ident
				p.pos++
				p.skipSpace()
			} else {
				p.pos = start
			}
		}
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		if name != "" {
			if names[name] {
				p.pos = start
				return nil, p.errf("%s given twice", name)
			}
			names[name] = true
		}
		parts = append(parts, KeyPart{Name: name, Value: v})
		p.skipSpace()
		if p.pos == len(p.s) {
			break
		}
		if p.s[p.pos] != ',' {
			return nil, p.errf("want ',' or the end of the key, found %q", p.s[p.pos])
		}
		p.pos++
	}
	if len(parts) > 1 {
		for _, kp := range parts {
			if kp.Name == "" {
				return nil, p.errf("a composite key needs name=value for every part")
			}
		}
	}
	return parts, nil
}

func (p *keyParser) skipSpace() {
	for p.pos < len(p.s) && p.s[p.pos] == ' ' {
		p.pos++
	}
}

func (p *keyParser) value() (any, error) {
	if p.pos >= len(p.s) {
		return nil, p.errf("missing value")
	}
	if p.s[p.pos] == '\'' {
		var b strings.Builder
		p.pos++
		for {
			i := strings.IndexByte(p.s[p.pos:], '\'')
			if i < 0 {
				p.pos = len(p.s)
				return nil, p.errf("unterminated string")
			}
			b.WriteString(p.s[p.pos : p.pos+i])
			p.pos += i + 1
			if p.pos < len(p.s) && p.s[p.pos] == '\'' {
				b.WriteByte('\'')
				p.pos++
				continue
			}
			return b.String(), nil
		}
	}
	start := p.pos
	for p.pos < len(p.s) && p.s[p.pos] != ',' && p.s[p.pos] != ' ' {
		p.pos++
	}
	lit := p.s[start:p.pos]
	switch {
	case guidRE.MatchString(lit):
		return Guid(lit), nil
	case dateRE.MatchString(lit):
		return Date(lit), nil
	}
	if n, err := strconv.ParseInt(lit, 10, 64); err == nil {
		return n, nil
	}
	if d, err := ParseDecimal(lit, '.'); err == nil && strings.ContainsAny(lit, "0123456789") {
		return d, nil
	}
	p.pos = start
	return nil, p.errf("%q is neither a quoted string, a number, a Guid nor a date", lit)
}

func isNameStart(c byte) bool {
	return c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z'
}

func isNameByte(c byte) bool { return isNameStart(c) || c >= '0' && c <= '9' }

// Segment is one step of a resource path: ORDERS('X'), ORDERITEMS_SUBFORM(3)
// or a reference $1.
type Segment struct {
	Name   string
	Key    []KeyPart
	HasKey bool
	// Ref is the id of a $<id> reference (the segment was "$<id>").
	Ref string
}

// KeySegment is the path segment that addresses an entity of set, or a
// line of sub-form, name by its key expression (EntityKey's): NAME(KEY),
// which ParsePath reads back.
func KeySegment(name, key string) string { return name + "(" + key + ")" }

// ParsePath splits a resource path relative to the service root into
// segments, honouring quotes: ORDERS('A/B')/ORDERITEMS_SUBFORM(3). A
// leading '/' is ignored; the query string must already be removed.
func ParsePath(path string) ([]Segment, error) {
	s := strings.TrimPrefix(path, "/")
	if s == "" {
		return nil, nil
	}
	var segs []Segment
	start, inQuote, depth := 0, false, 0
	flush := func(end int) error {
		seg, err := parseSegment(path, s[start:end], start+len(path)-len(s))
		if err != nil {
			return err
		}
		segs = append(segs, seg)
		return nil
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\'':
			inQuote = !inQuote // a doubled '' toggles twice
		case inQuote:
		case c == '(':
			depth++
		case c == ')':
			depth--
		case c == '/' && depth == 0:
			if err := flush(i); err != nil {
				return nil, err
			}
			start = i + 1
		}
	}
	if inQuote {
		return nil, &KeyError{Input: path, Offset: len(path), Msg: "unterminated string"}
	}
	if err := flush(len(s)); err != nil {
		return nil, err
	}
	return segs, nil
}

func parseSegment(path, seg string, off int) (Segment, error) {
	if seg == "" {
		return Segment{}, &KeyError{Input: path, Offset: off, Msg: "empty path segment"}
	}
	if id, ok := refID(seg); ok {
		return Segment{Ref: id}, nil
	}
	i := strings.IndexByte(seg, '(')
	if i < 0 {
		return Segment{Name: seg}, nil
	}
	if i == 0 {
		return Segment{}, &KeyError{Input: path, Offset: off, Msg: "a key without a name"}
	}
	parts, err := ParseKey(seg[i:])
	if err != nil {
		var ke *KeyError
		if errors.As(err, &ke) {
			ke.Input, ke.Offset = path, ke.Offset+off+i
		}
		return Segment{}, err
	}
	return Segment{Name: seg[:i], Key: parts, HasKey: true}, nil
}

// systemSegments start with '$' but are not references.
var systemSegments = map[string]bool{
	"$metadata": true, "$batch": true, "$count": true, "$ref": true, "$value": true,
	"$entity": true, "$all": true, "$crossjoin": true, "$root": true, "$filter": true, "$each": true,
}

func refID(seg string) (string, bool) {
	if len(seg) < 2 || seg[0] != '$' || systemSegments[seg] || strings.ContainsAny(seg, "()'") {
		return "", false
	}
	return seg[1:], true
}

// SplitReference splits a batch URL that starts with a $<id> reference
// (docs/service.md, Batch): "$1/ORDERITEMS_SUBFORM" gives "1",
// "/ORDERITEMS_SUBFORM"; "$1?$select=X" gives "1", "?$select=X".
func SplitReference(u string) (id, rest string, ok bool) {
	i := strings.IndexAny(u, "/?")
	if i < 0 {
		i = len(u)
	}
	id, ok = refID(u[:i])
	if !ok {
		return "", "", false
	}
	return id, u[i:], true
}

// Reference builds a $<id> URL: Reference("1", "ORDERITEMS_SUBFORM") is
// "$1/ORDERITEMS_SUBFORM".
func Reference(id string, path ...string) string {
	return strings.Join(append([]string{"$" + id}, path...), "/")
}

// EscapePath writes a resource path as PathKey would have: a raw
// ORDERS('SO 1/2')/ORDERITEMS_SUBFORM(3) is ORDERS('SO%201%2F2')/ORDERITEMS_SUBFORM(3).
// What stands inside quotes is escaped by the one rule; names, the key
// syntax and the path's own '/' stay as they are.
func EscapePath(p string) string {
	var b strings.Builder
	start, inQuote := 0, false
	for i := 0; i < len(p); i++ {
		if p[i] != '\'' {
			continue
		}
		if inQuote {
			b.WriteString(escapePathKey(p[start:i]))
		} else {
			b.WriteString(escapeOData(p[start:i], "()'=,:@!$*;/"))
		}
		b.WriteByte('\'')
		start, inQuote = i+1, !inQuote
	}
	if inQuote {
		b.WriteString(escapePathKey(p[start:]))
	} else {
		b.WriteString(escapeOData(p[start:], "()'=,:@!$*;/"))
	}
	return b.String()
}

// escapePathKey percent-encodes what a path segment cannot carry as is,
// keeping the key syntax ( ) ' = , readable.
func escapePathKey(s string) string {
	return escapeOData(s, "()'=,:@!$*;")
}

// escapeOData percent-encodes every byte but unreserved characters and
// those in keep. '+', '&', '#', '?', '%', '/' and spaces are always encoded.
func escapeOData(s, keep string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' ||
			c == '-' || c == '.' || c == '_' || c == '~' || strings.IndexByte(keep, c) >= 0 {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	return b.String()
}

// EntityKey returns the key expression of an entity of type t from field
// values (a record's, or a server response's), or "" when a key field is
// missing. Values from a response are decoded per the metadata type first.
func EntityKey(t *EntityType, fields map[string]any) string {
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
			dv, err := DecodeValue(p.Type, v)
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
	key, err := PathKey(t.Key, vals)
	if err != nil {
		return ""
	}
	return key
}

// KeyParts reads a key expression into the type's key fields and values.
func KeyParts(t *EntityType, key string) ([]KeyPart, error) {
	if t == nil || len(t.Key) == 0 {
		return nil, fmt.Errorf("no key fields known")
	}
	parts, err := ParsePathKey(key)
	if err != nil {
		return nil, err
	}
	if len(parts) == 1 && parts[0].Name == "" && len(t.Key) == 1 {
		parts[0].Name = t.Key[0]
	}
	if len(parts) != len(t.Key) {
		return nil, fmt.Errorf("key %s: %d values for %d key fields", key, len(parts), len(t.Key))
	}
	for _, p := range parts {
		if !t.IsKey(p.Name) {
			return nil, fmt.Errorf("key %s: %s is not a key field", key, p.Name)
		}
	}
	return parts, nil
}

// CanonicalKey is the key expression EntityKey writes for key, so that a key
// as the journal holds it and one read from an answer compare equal
// (composite keys in the type's order).
func CanonicalKey(t *EntityType, key string) string {
	parts, err := KeyParts(t, key)
	if err != nil {
		return key
	}
	m := make(map[string]any, len(parts))
	for _, p := range parts {
		m[p.Name] = p.Value
	}
	if k := EntityKey(t, m); k != "" {
		return k
	}
	return key
}
