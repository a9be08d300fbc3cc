package plan

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/migrate-tool/migrate/internal/didyoumean"
	"go.yaml.in/yaml/v3"

	"github.com/migrate-tool/migrate/odata"
)

// Total is one of a step's control totals (totals: NAME: count(...) or
// sum(...)): a count of its records or of the lines of a sub-form, or a
// sum of a number field, perhaps one per value of a field (by).
type Total struct {
	Name string
	// Sum is true for sum(...), false for count(...).
	Sum bool
	// Nav is the sub-form whose lines are counted or summed; "" for the
	// step's records.
	Nav string
	// Field is the field summed (of the record, or of Nav's lines); "" for
	// a count.
	Field string
	// ByNav and By: one total per value of By, a field of the record
	// (ByNav "") or of Nav's lines (ByNav is Nav); By "" for one total.
	ByNav, By string
	Pos       Pos // of the total's name
	ValuePos  Pos // of its expression
	// parts are the column of each name in the expression (Nav, Field,
	// ByNav, By) within the plan's line, for messages; zero when the value
	// is quoted or spans lines.
	navCol, fieldCol, byCol int
}

// Expr is the total as the plan writes it, normalised:
// "sum(ORDERITEMS_SUBFORM.PRICE) by CURRNAME".
func (t *Total) Expr() string {
	var b strings.Builder
	path := func(nav, field string) string {
		if nav != "" && field != "" {
			return nav + "." + field
		}
		return nav + field
	}
	if t.Sum {
		b.WriteString("sum(" + path(t.Nav, t.Field) + ")")
	} else {
		b.WriteString("count(" + t.Nav + ")")
	}
	if t.By != "" {
		b.WriteString(" by " + path(t.ByNav, t.By))
	}
	return b.String()
}

var totalRE = regexp.MustCompile(`^\s*(count|sum)\s*\(\s*([A-Za-z0-9_]*)(?:\.([A-Za-z0-9_]+))?\s*\)\s*(?:by\s+([A-Za-z0-9_]+)(?:\.([A-Za-z0-9_]+))?\s*)?$`)

// totalGrammar is what a total may be, for messages.
const totalGrammar = "count(), count(NAV), sum(FIELD) or sum(NAV.FIELD), perhaps followed by `by FIELD` or `by NAV.FIELD`"

// parseTotal reads one total's expression; the error says what is wrong.
func parseTotal(name, text string) (*Total, error) {
	m := totalRE.FindStringSubmatchIndex(text)
	if m == nil {
		return nil, fmt.Errorf("%q is not a total: write %s", text, totalGrammar)
	}
	part := func(i int) string {
		if m[2*i] < 0 {
			return ""
		}
		return text[m[2*i]:m[2*i+1]]
	}
	t := &Total{Name: name, Sum: part(1) == "sum"}
	first, second := part(2), part(3)
	switch {
	case t.Sum && first == "":
		return nil, fmt.Errorf("sum() needs the field it sums: sum(FIELD) or sum(NAV.FIELD)")
	case t.Sum && second == "":
		t.Field = first
		t.fieldCol = m[4]
	case t.Sum:
		t.Nav, t.Field = first, second
		t.navCol, t.fieldCol = m[4], m[6]
	case second != "":
		return nil, fmt.Errorf("count(%s.%s) counts no field: count() counts the records, count(NAV) the lines of a sub-form", first, second)
	default:
		t.Nav = first
		t.navCol = m[4]
	}
	if by, byField := part(4), part(5); byField != "" {
		t.ByNav, t.By, t.byCol = by, byField, m[8]
	} else if by != "" {
		t.By, t.byCol = by, m[8]
	}
	return t, nil
}

// decodeTotals reads totals: {NAME: EXPRESSION, ...}.
func (w *walker) decodeTotals(e entry, what string) []*Total {
	var out []*Total
	for _, fe := range w.namedEntries(e, fmt.Sprintf("\"totals\" of %s", what), fmt.Sprintf("a total's name in %s is empty", what)) {
		if fe.val.Kind != yaml.ScalarNode || isNull(fe.val) || fe.val.ShortTag() != "!!str" {
			w.errorf(w.pos(fe.val), "total %s of %s must be %s, not %s", quote(fe.key), what, totalGrammar, describe(fe.val))
			continue
		}
		t, err := parseTotal(fe.key, fe.val.Value)
		if err != nil {
			w.errorf(w.pos(fe.val), "total %s of %s: %v", quote(fe.key), what, err)
			continue
		}
		t.Pos, t.ValuePos = fe.kpos, w.pos(fe.val)
		if fe.val.Style != 0 || strings.Contains(fe.val.Value, "\n") {
			t.navCol, t.fieldCol, t.byCol = 0, 0, 0 // quoted: columns would be off
		}
		out = append(out, t)
	}
	return out
}

// at is the position of the name at column offset col of the total's
// expression, else the expression's.
func (t *Total) at(col int) Pos {
	p := t.ValuePos
	if col > 0 && p.Line > 0 {
		p.Col += col
	}
	return p
}

// totals checks a step's totals against the metadata: each sub-form one
// of the step's collections that it writes lines to, each field one it
// writes (a total is of what the plan writes, so that the source, what
// was sent and the target can be set side by side), a sum's field a
// number, a by field a text, number or boolean.
func (c *mdChecker) totals(t *odata.EntityType, s *Step, written map[string]bool, what string) {
	for _, tot := range s.Totals {
		tw := fmt.Sprintf("total %s of %s", quote(tot.Name), what)
		lineType, lineWritten := t, written
		if tot.Nav != "" {
			lt, lw, ok := c.totalNav(t, s, tot.Nav, tot.at(tot.navCol), tw)
			if !ok {
				continue
			}
			lineType, lineWritten = lt, lw
		}
		if tot.Field != "" {
			where := s.Entity
			if tot.Nav != "" {
				where = tot.Nav
			}
			if p := c.totalField(lineType, lineWritten, where, tot.Field, tot.at(tot.fieldCol), tw); p != nil && !p.Type.Numeric() {
				c.d.errorf(tot.at(tot.fieldCol), "%s: %s.%s is %s, not a number: sum adds up numbers (count() counts records, count(NAV) lines)", tw, where, tot.Field, typeWords(p.Type))
			}
		}
		if tot.By == "" {
			continue
		}
		byType, byWritten, where := t, written, s.Entity
		if tot.ByNav != "" {
			if tot.ByNav != tot.Nav {
				c.d.errorf(tot.at(tot.byCol), "%s: by %s.%s: a total is grouped by a field of its record or of the lines it counts (%s), not of %s", tw, tot.ByNav, tot.By, orRecord(tot.Nav), tot.ByNav)
				continue
			}
			byType, byWritten, where = lineType, lineWritten, tot.Nav
		}
		if p := c.totalField(byType, byWritten, where, tot.By, tot.at(tot.byCol), tw); p != nil && (p.Type == odata.EdmDateTimeOffset || p.Type == "Edm.Date") {
			c.d.errorf(tot.at(tot.byCol), "%s: by %s.%s, a date: a total is grouped by a text, number or boolean field", tw, where, tot.By)
		}
	}
}

func orRecord(nav string) string {
	if nav == "" {
		return "the record's fields"
	}
	return "its record or " + nav
}

// totalNav is the type of sub-form nav of a step's entity and the fields
// the step writes to its lines; ok false when it is no sub-form of lines
// the step writes, which is said at pos.
func (c *mdChecker) totalNav(t *odata.EntityType, s *Step, nav string, pos Pos, what string) (*odata.EntityType, map[string]bool, bool) {
	n := t.Navigation(nav)
	if n == nil {
		c.d.errorf(pos, "%s: unknown sub-form %s of %s%s", what, quote(nav), s.Entity, didyoumean.Hint(nav, t.NavigationNames()))
		return nil, nil, false
	}
	if !n.Collection {
		c.d.errorf(pos, "%s: %s is a single-object sub-form of %s: it has no lines to count or sum", what, nav, s.Entity)
		return nil, nil, false
	}
	var sf *Subform
	var written []string
	for _, x := range s.Subforms {
		written = append(written, x.Name)
		if x.Name == nav {
			sf = x
		}
	}
	if sf == nil {
		c.d.errorf(pos, "%s: the step writes no lines of %s%s: a total is of what the plan writes (add the sub-form under subforms)", what, nav, didyoumean.Hint(nav, written))
		return nil, nil, false
	}
	lt := c.md.Type(n.Type)
	if lt == nil {
		return nil, nil, false // the sub-forms' check says so
	}
	return lt, writtenSet(sf.Fields), true
}

// totalField is field of t, which a total names: nil when t has none or
// the plan does not write it, which is said at pos.
func (c *mdChecker) totalField(t *odata.EntityType, written map[string]bool, where, field string, pos Pos, what string) *odata.Property {
	p := t.Property(field)
	switch {
	case p == nil:
		c.d.errorf(pos, "%s: unknown field %s in %s%s", what, quote(field), where, didyoumean.Hint(field, t.PropertyNames()))
		return nil
	case !written[field]:
		c.d.errorf(pos, "%s: %s.%s is not written by the plan: a total is of what the plan writes, so that the source, what was sent and the target can be set side by side (add it to fields)", what, where, field)
		return nil
	}
	return p
}
