package sandbox

import (
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/migrate-tool/migrate/internal/didyoumean"
	"github.com/migrate-tool/migrate/odata"
)

// queryOpts are the query options of a read (docs/service.md, Queries;
// $filter, $skip and $orderby as real servers have them, docs/servers.md,
// Reading).
type queryOpts struct {
	sel    []string
	exp    []*expandItem
	top    int // -1: none
	skip   int
	filter odata.Filter
	order  []orderItem // none: key order
	full   bool        // odata.metadata=full (docs/service.md, Payloads)
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
			o.sel, err = parseSelect(c.s.readable(t), v)
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
			o.filter, err = c.s.parseFilter(t, v)
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
			if s := didyoumean.Closest(f, t.PropertyNames()); s != "" {
				return nil, fmt.Errorf("$select: %s is not a field of %s; did you mean %s?", f, t.Name, s)
			}
			return nil, fmt.Errorf("$select: %s is not a field of %s", f, t.Name)
		}
		out = append(out, f)
	}
	return out, nil
}

// parseOrderBy reads FIELD [asc|desc], ... (docs/servers.md, Reading: real
// servers have $orderby; reconciliation reads the highest auto-unique key
// with it).
func parseOrderBy(t *odata.EntityType, v string) ([]orderItem, error) {
	var out []orderItem
	for _, item := range strings.Split(v, ",") {
		parts := strings.Fields(item)
		if len(parts) == 0 || len(parts) > 2 {
			return nil, fmt.Errorf("$orderby: %q: want FIELD, FIELD asc or FIELD desc", strings.TrimSpace(item))
		}
		if t.Property(parts[0]) == nil {
			if s := didyoumean.Closest(parts[0], t.PropertyNames()); s != "" {
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
			c := odata.CompareValues(out[i].vals[o.field], out[j].vals[o.field])
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
