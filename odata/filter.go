package odata

import (
	"encoding/json"
	"fmt"
	"math/big"
	"strings"
	"time"
)

// Filter is a compiled $filter of the grammar the service accepts
// (docs/servers.md, Reading): eq ne gt ge lt le, and, or, parentheses. The
// sandbox applies it; the client checks with it that a server applied a
// filter (one it cannot apply is ignored silently: a row outside it proves
// that).
type Filter interface {
	// Match reports whether an entity's values (as the service's JSON
	// decodes, or as the sandbox stores them) satisfy the filter.
	Match(vals map[string]any) bool
}

type andExpr struct{ l, r Filter }
type orExpr struct{ l, r Filter }
type cmpExpr struct {
	field string
	typ   EdmType
	op    string
	lit   any // string, json.Number, bool, nil
	date  bool
}

// FilterFields names the fields a filter compares, each once, in order: the
// fields a row must carry for Match to tell, and the ones to name when a
// server returned a row outside the filter.
func FilterFields(f Filter) []string {
	var out []string
	var walk func(Filter)
	walk = func(f Filter) {
		switch e := f.(type) {
		case andExpr:
			walk(e.l)
			walk(e.r)
		case orExpr:
			walk(e.l)
			walk(e.r)
		case cmpExpr:
			for _, n := range out {
				if n == e.field {
					return
				}
			}
			out = append(out, e.field)
		}
	}
	walk(f)
	return out
}

func (e andExpr) Match(v map[string]any) bool { return e.l.Match(v) && e.r.Match(v) }
func (e orExpr) Match(v map[string]any) bool  { return e.l.Match(v) || e.r.Match(v) }

func (e cmpExpr) Match(vals map[string]any) bool {
	v := vals[e.field]
	var c int
	switch {
	case e.lit == nil || v == nil:
		if e.op != "eq" && e.op != "ne" {
			return false
		}
		eq := e.lit == nil && v == nil
		return eq == (e.op == "eq")
	case e.typ == EdmGuid:
		// Guids compare without regard to case (docs/other-services.md).
		c = strings.Compare(strings.ToLower(fmt.Sprint(v)), strings.ToLower(e.lit.(string)))
	case e.typ == EdmDate:
		s := fmt.Sprint(v)
		if len(s) > 10 {
			s = s[:10]
		}
		c = strings.Compare(s, e.lit.(string))
	case e.typ == EdmDateTimeOffset:
		s, _ := v.(string)
		lit := e.lit.(string)
		if e.date {
			if len(s) > 10 {
				s = s[:10]
			}
			c = strings.Compare(s, lit)
		} else {
			a, err1 := time.Parse(time.RFC3339, s)
			b, err2 := time.Parse(time.RFC3339, lit)
			if err1 != nil || err2 != nil {
				return false
			}
			c = a.Compare(b)
		}
	case e.typ == EdmInt64 || e.typ == EdmDecimal:
		a, ok1 := new(big.Rat).SetString(fmt.Sprint(v))
		b, ok2 := new(big.Rat).SetString(string(e.lit.(json.Number)))
		if !ok1 || !ok2 {
			return false
		}
		c = a.Cmp(b)
	default:
		c = CompareValues(v, e.lit)
	}
	switch e.op {
	case "eq":
		return c == 0
	case "ne":
		return c != 0
	case "gt":
		return c > 0
	case "ge":
		return c >= 0
	case "lt":
		return c < 0
	}
	return c <= 0
}

// Equalities returns the literals of a filter that is an or-chain of
// `FIELD eq literal` on field alone (what a keyed read sends); ok is false
// for any other filter. A server answers such a read from its index; the
// sandbox does the same with it.
func Equalities(f Filter, field string) (lits []any, ok bool) {
	switch e := f.(type) {
	case orExpr:
		l, ok1 := Equalities(e.l, field)
		r, ok2 := Equalities(e.r, field)
		return append(l, r...), ok1 && ok2
	case cmpExpr:
		return []any{e.lit}, e.field == field && e.op == "eq" && e.lit != nil && !e.date
	}
	return nil, false
}

// KeyEqualities reads a filter that is an or-chain of key equalities, what
// a keyed read sends (K eq 'a' or K eq 'b'; (A eq 'x' and B eq 2) or ...),
// into the key values of each alternative, by field; ok is false for any
// other filter. The dry run's simulated service answers such a read as the
// server would.
func KeyEqualities(f Filter, key []string) (alts []map[string]any, ok bool) {
	switch e := f.(type) {
	case orExpr:
		l, ok1 := KeyEqualities(e.l, key)
		r, ok2 := KeyEqualities(e.r, key)
		return append(l, r...), ok1 && ok2
	}
	vals := map[string]any{}
	if !conjunctEqualities(f, vals) || len(vals) != len(key) {
		return nil, false
	}
	for _, k := range key {
		if _, ok := vals[k]; !ok {
			return nil, false
		}
	}
	return []map[string]any{vals}, true
}

// conjunctEqualities adds the FIELD eq literal comparisons of an and-chain
// to vals; false for anything else, or a field compared twice.
func conjunctEqualities(f Filter, vals map[string]any) bool {
	switch e := f.(type) {
	case andExpr:
		return conjunctEqualities(e.l, vals) && conjunctEqualities(e.r, vals)
	case cmpExpr:
		if e.op != "eq" || e.lit == nil || e.date {
			return false
		}
		if _, twice := vals[e.field]; twice {
			return false
		}
		vals[e.field] = e.lit
		return true
	}
	return false
}

type filterParser struct {
	t    *EntityType
	toks []string
	offs []int // where each token starts in the text
	pos  int
	// standard holds, by token index, a literal as the standard writes it
	// where the text wrote it otherwise (a quoted Guid or Date).
	standard map[int]string
}

// UnknownFieldError is a $filter naming a field its entity type does not
// have (or, in the sandbox, one the user may not read): what real servers
// ignore silently (docs/servers.md, Reading).
type UnknownFieldError struct{ Field, Type string }

func (e *UnknownFieldError) Error() string { return e.Field + " is not a field of " + e.Type }

// ParseFilter compiles s against t: each field must be one of t, each
// literal of its type.
func ParseFilter(t *EntityType, s string) (Filter, error) {
	e, _, err := parseFilter(t, s)
	return e, err
}

// FilterFor is s as a service of dialect d reads it: under the odata
// dialect an Edm.Guid literal bare and an Edm.Date literal as YYYY-MM-DD
// without quotes, however the plan or the command line wrote them
// (docs/other-services.md); under the ERP's, s as it is. The rest of the
// text is kept as written.
func FilterFor(d Dialect, t *EntityType, s string) (string, error) {
	_, p, err := parseFilter(t, s)
	if err != nil || !d.Standard() || len(p.standard) == 0 {
		return s, err
	}
	var b strings.Builder
	last := 0
	for i, tok := range p.toks {
		lit, ok := p.standard[i]
		if !ok {
			continue
		}
		start, end := p.offs[i], p.offs[i]+len(tok)
		b.WriteString(s[last:start])
		// A quoted literal may touch its neighbours ("ge'2026-11-05'"); a
		// bare one may not.
		if start > 0 && !strings.ContainsRune(" \t(", rune(s[start-1])) {
			b.WriteByte(' ')
		}
		b.WriteString(lit)
		if end < len(s) && !strings.ContainsRune(" \t)", rune(s[end])) {
			b.WriteByte(' ')
		}
		last = end
	}
	b.WriteString(s[last:])
	return b.String(), nil
}

func parseFilter(t *EntityType, s string) (Filter, *filterParser, error) {
	toks, offs, err := tokenize(s)
	if err != nil {
		return nil, nil, fmt.Errorf("$filter: %v", err)
	}
	p := &filterParser{t: t, toks: toks, offs: offs}
	e, err := p.or()
	if err != nil {
		return nil, nil, fmt.Errorf("$filter: %w", err)
	}
	if p.pos < len(p.toks) {
		return nil, nil, fmt.Errorf("$filter: unexpected %q", p.toks[p.pos])
	}
	return e, p, nil
}

// tokenize splits s into tokens, and says where each starts.
func tokenize(s string) ([]string, []int, error) {
	var toks []string
	var offs []int
	for i := 0; i < len(s); {
		switch c := s[i]; {
		case c == ' ' || c == '\t':
			i++
		case c == '(' || c == ')':
			toks, offs = append(toks, string(c)), append(offs, i)
			i++
		case c == '\'':
			j := i + 1
			for ; j < len(s); j++ {
				if s[j] == '\'' {
					if j+1 < len(s) && s[j+1] == '\'' {
						j++
						continue
					}
					break
				}
			}
			if j >= len(s) {
				return nil, nil, fmt.Errorf("unterminated string at %q", s[i:])
			}
			toks, offs = append(toks, s[i:j+1]), append(offs, i)
			i = j + 1
		default:
			j := i
			for j < len(s) && !strings.ContainsRune(" \t()'", rune(s[j])) {
				j++
			}
			toks, offs = append(toks, s[i:j]), append(offs, i)
			i = j
		}
	}
	if len(toks) > 2000 {
		return nil, nil, fmt.Errorf("expression too long")
	}
	return toks, offs, nil
}

func (p *filterParser) peek() string {
	if p.pos < len(p.toks) {
		return p.toks[p.pos]
	}
	return ""
}

func (p *filterParser) or() (Filter, error) {
	l, err := p.and()
	if err != nil {
		return nil, err
	}
	for p.peek() == "or" {
		p.pos++
		r, err := p.and()
		if err != nil {
			return nil, err
		}
		l = orExpr{l, r}
	}
	return l, nil
}

func (p *filterParser) and() (Filter, error) {
	l, err := p.primary(0)
	if err != nil {
		return nil, err
	}
	for p.peek() == "and" {
		p.pos++
		r, err := p.primary(0)
		if err != nil {
			return nil, err
		}
		l = andExpr{l, r}
	}
	return l, nil
}

func (p *filterParser) primary(depth int) (Filter, error) {
	if depth > 50 {
		return nil, fmt.Errorf("parentheses nested too deep")
	}
	if p.peek() == "(" {
		p.pos++
		e, err := p.or()
		if err != nil {
			return nil, err
		}
		if p.peek() != ")" {
			return nil, fmt.Errorf("missing )")
		}
		p.pos++
		return e, nil
	}
	if p.pos+3 > len(p.toks) {
		return nil, fmt.Errorf("incomplete comparison; want FIELD op value")
	}
	field, op, lit := p.toks[p.pos], p.toks[p.pos+1], p.toks[p.pos+2]
	litAt := p.pos + 2
	p.pos += 3
	prop := p.t.Property(field)
	if prop == nil {
		return nil, &UnknownFieldError{Field: field, Type: p.t.Name}
	}
	switch op {
	case "eq", "ne", "gt", "ge", "lt", "le":
	default:
		return nil, fmt.Errorf("operator %q is not supported (eq ne gt ge lt le)", op)
	}
	e := cmpExpr{field: field, typ: prop.Type, op: op}
	if lit == "null" {
		return e, nil
	}
	switch prop.Type {
	case EdmString:
		if len(lit) < 2 || lit[0] != '\'' {
			return nil, fmt.Errorf("%s is a string: quote the value", field)
		}
		e.lit = strings.ReplaceAll(lit[1:len(lit)-1], "''", "'")
	case EdmInt64, EdmDecimal:
		if _, ok := new(big.Rat).SetString(lit); !ok || strings.ContainsAny(lit, "/eE,") {
			return nil, fmt.Errorf("%s is a number: %q is not one (a decimal point: docs/service.md, Types and literals)", field, lit)
		}
		e.lit = json.Number(lit)
	case EdmDateTimeOffset:
		if _, err := time.Parse("2006-01-02", lit); err == nil {
			e.lit, e.date = lit, true
		} else if _, err := time.Parse(time.RFC3339, lit); err == nil {
			e.lit = lit
		} else {
			return nil, fmt.Errorf("%s is a date: %q is not YYYY-MM-DD", field, lit)
		}
	case EdmBoolean:
		if lit != "true" && lit != "false" {
			return nil, fmt.Errorf("%s is a boolean: want true or false", field)
		}
		e.lit = lit == "true"
	case EdmGuid:
		g, err := ParseGuid(unquote(lit))
		if err != nil {
			return nil, fmt.Errorf("%s is a Guid: %q is not 8-4-4-4-12 hexadecimal digits", field, unquote(lit))
		}
		e.lit = string(g)
		p.standardLiteral(litAt, string(g))
	case EdmDate:
		d := unquote(lit)
		if _, err := time.Parse(DateLayout, d); err != nil {
			return nil, fmt.Errorf("%s is a date: %q is not YYYY-MM-DD", field, d)
		}
		e.lit = d
		p.standardLiteral(litAt, d)
	}
	return e, nil
}

// unquote is a literal's text without its quotes, if it has them.
func unquote(lit string) string {
	if len(lit) >= 2 && lit[0] == '\'' {
		return strings.ReplaceAll(lit[1:len(lit)-1], "''", "'")
	}
	return lit
}

// standardLiteral notes that the token at i is written std by the
// standard, when it was written otherwise.
func (p *filterParser) standardLiteral(i int, std string) {
	if p.toks[i] == std {
		return
	}
	if p.standard == nil {
		p.standard = map[int]string{}
	}
	p.standard[i] = std
}

// CompareValues orders two values of one field: numbers numerically
// (int64, or json.Number as decoded), booleans false first, nil first, the
// rest as text. The sandbox sorts with it and $filter compares with it.
func CompareValues(a, b any) int {
	switch x := a.(type) {
	case int64:
		if y, ok := b.(int64); ok {
			switch {
			case x < y:
				return -1
			case x > y:
				return 1
			}
			return 0
		}
	case json.Number:
		if y, ok := b.(json.Number); ok {
			rx, ok1 := new(big.Rat).SetString(string(x))
			ry, ok2 := new(big.Rat).SetString(string(y))
			if ok1 && ok2 {
				return rx.Cmp(ry)
			}
		}
	case string:
		if y, ok := b.(string); ok {
			return strings.Compare(x, y) // as below, without fmt's cost
		}
	case bool:
		if y, ok := b.(bool); ok {
			switch {
			case x == y:
				return 0
			case !x:
				return -1
			}
			return 1
		}
	case nil:
		if b == nil {
			return 0
		}
		return -1
	}
	if b == nil {
		return 1
	}
	return strings.Compare(fmt.Sprint(a), fmt.Sprint(b))
}
