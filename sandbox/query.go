package sandbox

import (
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/migrate-tool/migrate/odata"
)

// queryOpts are the query options of a read (spec 4.1; $filter, $skip and
// $orderby as SERVICE-NOTES describe the real service).
type queryOpts struct {
	sel    []string
	exp    []*expandItem
	top    int // -1: none
	skip   int
	filter filterExpr
	order  []orderItem // none: key order
	full   bool        // odata.metadata=full (spec 2.6)
}

// orderItem is one field of $orderby.
type orderItem struct {
	field string
	desc  bool
}

type expandItem struct {
	nav *odata.NavigationProperty
	sel []string
	exp []*expandItem
}

func (c *call) parseQuery(t *odata.EntityType, q url.Values, hdr http.Header) (*queryOpts, *apiError) {
	o := &queryOpts{top: -1}
	for name, vals := range q {
		if len(vals) > 1 {
			return nil, protoErr(http.StatusBadRequest, "BadRequest", "query option %s given %d times", name, len(vals))
		}
		v := vals[0]
		var err error
		switch name {
		case "$select":
			o.sel, err = parseSelect(t, v)
		case "$expand":
			if !c.s.version.Expand() {
				return nil, protoErr(http.StatusBadRequest, "NotSupported", "$expand is available from system version 18.1 (this server is %s)", c.s.version)
			}
			o.exp, err = c.parseExpand(t, v)
		case "$top", "$skip":
			n, cerr := strconv.Atoi(v)
			if cerr != nil || n < 0 {
				err = fmt.Errorf("%s=%q: want a non-negative integer", name, v)
			} else if name == "$top" {
				o.top = n
			} else {
				o.skip = n
			}
		case "$filter":
			o.filter, err = parseFilter(t, v)
		case "$orderby":
			o.order, err = parseOrderBy(t, v)
		case "$format":
			switch {
			case strings.Contains(v, "odata.metadata=full"):
				o.full = true
			case v == "json" || strings.HasPrefix(v, "application/json"):
			default:
				err = fmt.Errorf("$format=%q: only application/json is served", v)
			}
		default:
			if strings.HasPrefix(name, "$") {
				err = fmt.Errorf("query option %s is not supported", name)
			}
		}
		if err != nil {
			return nil, protoErr(http.StatusBadRequest, "BadRequest", "%v", err)
		}
	}
	if strings.Contains(hdr.Get("Accept"), "odata.metadata=full") {
		o.full = true
	}
	return o, nil
}

func parseSelect(t *odata.EntityType, v string) ([]string, error) {
	var out []string
	for _, f := range strings.Split(v, ",") {
		f = strings.TrimSpace(f)
		if f == "*" {
			return nil, nil
		}
		if t.Property(f) == nil {
			if s := odata.Suggest(f, t.PropertyNames()); s != "" {
				return nil, fmt.Errorf("$select: %s is not a field of %s; did you mean %s?", f, t.Name, s)
			}
			return nil, fmt.Errorf("$select: %s is not a field of %s", f, t.Name)
		}
		out = append(out, f)
	}
	return out, nil
}

// parseOrderBy reads FIELD [asc|desc], ... (SERVICE-NOTES: real servers
// have $orderby; reconciliation reads the highest auto-unique key with it).
func parseOrderBy(t *odata.EntityType, v string) ([]orderItem, error) {
	var out []orderItem
	for _, item := range strings.Split(v, ",") {
		parts := strings.Fields(item)
		if len(parts) == 0 || len(parts) > 2 {
			return nil, fmt.Errorf("$orderby: %q: want FIELD, FIELD asc or FIELD desc", strings.TrimSpace(item))
		}
		if t.Property(parts[0]) == nil {
			if s := odata.Suggest(parts[0], t.PropertyNames()); s != "" {
				return nil, fmt.Errorf("$orderby: %s is not a field of %s; did you mean %s?", parts[0], t.Name, s)
			}
			return nil, fmt.Errorf("$orderby: %s is not a field of %s", parts[0], t.Name)
		}
		o := orderItem{field: parts[0]}
		if len(parts) == 2 {
			switch parts[1] {
			case "asc":
			case "desc":
				o.desc = true
			default:
				return nil, fmt.Errorf("$orderby: %q: the direction is asc or desc", strings.TrimSpace(item))
			}
		}
		out = append(out, o)
	}
	return out, nil
}

// orderRows sorts rows by the $orderby fields, stably, so that rows equal
// on them keep their key order.
func orderRows(rows []*record, order []orderItem) []*record {
	if len(order) == 0 {
		return rows
	}
	out := append([]*record(nil), rows...)
	sort.SliceStable(out, func(i, j int) bool {
		for _, o := range order {
			c := compareValues(out[i].vals[o.field], out[j].vals[o.field])
			if o.desc {
				c = -c
			}
			if c != 0 {
				return c < 0
			}
		}
		return false
	})
	return out
}

// splitTop splits s on sep outside parentheses and quotes.
func splitTop(s string, sep byte) []string {
	var out []string
	depth, start, inQuote := 0, 0, false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\'':
			inQuote = !inQuote
		case inQuote:
		case c == '(':
			depth++
		case c == ')':
			depth--
		case c == sep && depth == 0:
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

// parseExpand reads NAV,NAV2($expand=NAV3($select=A);$select=B) to any depth.
func (c *call) parseExpand(t *odata.EntityType, v string) ([]*expandItem, error) {
	var out []*expandItem
	for _, item := range splitTop(v, ',') {
		item = strings.TrimSpace(item)
		name, inner, hasInner := strings.Cut(item, "(")
		nav := t.Navigation(name)
		if nav == nil {
			return nil, fmt.Errorf("$expand: %s is not a sub-form of %s", name, t.Name)
		}
		nt := c.s.meta.Type(nav.Type)
		if nt == nil {
			return nil, fmt.Errorf("$expand: sub-form %s has no type", name)
		}
		ei := &expandItem{nav: nav}
		if hasInner {
			if !strings.HasSuffix(inner, ")") {
				return nil, fmt.Errorf("$expand: %q: missing closing parenthesis", item)
			}
			for _, opt := range splitTop(inner[:len(inner)-1], ';') {
				k, val, _ := strings.Cut(strings.TrimSpace(opt), "=")
				var err error
				switch k {
				case "$expand":
					ei.exp, err = c.parseExpand(nt, val)
				case "$select":
					ei.sel, err = parseSelect(nt, val)
				default:
					err = fmt.Errorf("$expand: option %q inside %s is not supported", k, name)
				}
				if err != nil {
					return nil, err
				}
			}
		}
		out = append(out, ei)
	}
	return out, nil
}

// filterExpr is a compiled $filter: eq ne gt ge lt le, and, or, parentheses.
type filterExpr interface {
	eval(vals map[string]any) bool
}

type andExpr struct{ l, r filterExpr }
type orExpr struct{ l, r filterExpr }
type cmpExpr struct {
	field string
	typ   odata.EdmType
	op    string
	lit   any // string, json.Number, bool, nil
	date  bool
}

func (e andExpr) eval(v map[string]any) bool { return e.l.eval(v) && e.r.eval(v) }
func (e orExpr) eval(v map[string]any) bool  { return e.l.eval(v) || e.r.eval(v) }

func (e cmpExpr) eval(vals map[string]any) bool {
	v := vals[e.field]
	var c int
	switch {
	case e.lit == nil || v == nil:
		if e.op != "eq" && e.op != "ne" {
			return false
		}
		eq := e.lit == nil && v == nil
		return eq == (e.op == "eq")
	case e.typ == odata.EdmDateTimeOffset:
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
	case e.typ == odata.EdmInt64 || e.typ == odata.EdmDecimal:
		a, ok1 := new(big.Rat).SetString(fmt.Sprint(v))
		b, ok2 := new(big.Rat).SetString(string(e.lit.(json.Number)))
		if !ok1 || !ok2 {
			return false
		}
		c = a.Cmp(b)
	default:
		c = compareValues(v, e.lit)
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

type filterParser struct {
	t    *odata.EntityType
	toks []string
	pos  int
}

func parseFilter(t *odata.EntityType, s string) (filterExpr, error) {
	toks, err := tokenize(s)
	if err != nil {
		return nil, fmt.Errorf("$filter: %v", err)
	}
	p := &filterParser{t: t, toks: toks}
	e, err := p.or()
	if err != nil {
		return nil, fmt.Errorf("$filter: %v", err)
	}
	if p.pos < len(p.toks) {
		return nil, fmt.Errorf("$filter: unexpected %q", p.toks[p.pos])
	}
	return e, nil
}

func tokenize(s string) ([]string, error) {
	var toks []string
	for i := 0; i < len(s); {
		switch c := s[i]; {
		case c == ' ' || c == '\t':
			i++
		case c == '(' || c == ')':
			toks = append(toks, string(c))
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
				return nil, fmt.Errorf("unterminated string at %q", s[i:])
			}
			toks = append(toks, s[i:j+1])
			i = j + 1
		default:
			j := i
			for j < len(s) && !strings.ContainsRune(" \t()'", rune(s[j])) {
				j++
			}
			toks = append(toks, s[i:j])
			i = j
		}
	}
	if len(toks) > 2000 {
		return nil, fmt.Errorf("expression too long")
	}
	return toks, nil
}

func (p *filterParser) peek() string {
	if p.pos < len(p.toks) {
		return p.toks[p.pos]
	}
	return ""
}

func (p *filterParser) or() (filterExpr, error) {
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

func (p *filterParser) and() (filterExpr, error) {
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

func (p *filterParser) primary(depth int) (filterExpr, error) {
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
	p.pos += 3
	prop := p.t.Property(field)
	if prop == nil {
		return nil, fmt.Errorf("%s is not a field of %s", field, p.t.Name)
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
	case odata.EdmString:
		if len(lit) < 2 || lit[0] != '\'' {
			return nil, fmt.Errorf("%s is a string: quote the value", field)
		}
		e.lit = strings.ReplaceAll(lit[1:len(lit)-1], "''", "'")
	case odata.EdmInt64, odata.EdmDecimal:
		if _, ok := new(big.Rat).SetString(lit); !ok || strings.ContainsAny(lit, "/eE,") {
			return nil, fmt.Errorf("%s is a number: %q is not one (decimal point, spec 1)", field, lit)
		}
		e.lit = json.Number(lit)
	case odata.EdmDateTimeOffset:
		if _, err := time.Parse("2006-01-02", lit); err == nil {
			e.lit, e.date = lit, true
		} else if _, err := time.Parse(time.RFC3339, lit); err == nil {
			e.lit = lit
		} else {
			return nil, fmt.Errorf("%s is a date: %q is not YYYY-MM-DD", field, lit)
		}
	case odata.EdmBoolean:
		if lit != "true" && lit != "false" {
			return nil, fmt.Errorf("%s is a boolean: want true or false", field)
		}
		e.lit = lit == "true"
	}
	return e, nil
}
