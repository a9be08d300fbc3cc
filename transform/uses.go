package transform

import (
	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/plan"
)

// Use is one value the plan takes from a source's column, as migrate
// profile reports it: which field it writes (or which identity it gives),
// and whether the field's expression is the column itself.
type Use struct {
	Step   string
	Form   string // the step's entity, or the sub-form's name
	Source string // the plan's source whose rows `row` holds
	Column string
	// Field is the field written; "id" or "group_by" for a step's identity.
	Field string
	Prop  *odata.Property // the field's metadata; nil offline or unknown
	// Pos is where the plan writes it: the field's name, as its row
	// errors name it (the expression's start for id and group_by).
	Pos plan.Pos
	// Direct: the expression is row.X (or row["X"]) and nothing else, so
	// the column's values are the field's. Otherwise Expr computes it from
	// the column (and perhaps others).
	Direct bool
	Expr   string
	// Key: the value names a record: a key field of the step's entity,
	// or the step's id.
	Key bool
	// Group: the value names a group of rows (group_by, and the id and
	// key fields of a step with group_by): its repeats are the group's
	// rows, but two spellings that differ only in case are two groups.
	Group bool
	// Exists is the entity an exists: check names for this field, and
	// ExistsPos where the check is written.
	Exists    string
	ExistsPos plan.Pos
	// Lookup is the lookup the field's expression is, lookup("NAME",
	// row.X): the column's values must be keys of that lookup's source.
	Lookup string
	// Map is the value map the field's expression is, map("NAME", row.X):
	// the column's values are the map's source values.
	Map string
	// Mandatory: the metadata marks the field mandatory, the server does
	// not number it and its record is always created (an insert step's, a
	// sub-form's line): a blank value is a row error.
	Mandatory bool
	// When is the when: expression that skips the rows, "" for none: of a
	// key, the step's (rows it skips give no record, so their keys cannot
	// repeat another's); of a mandatory field, its form's (a sub-form's
	// own, else the step's: the blanks of rows it skips refuse nothing).
	When string
}

// LookupKey is the column a lookup built from a source takes its keys from,
// when its key expression is row.X.
type LookupKey struct {
	Name, Source, Column string
}

// Uses lists every column a field, id or group_by of the plan reads, in
// the plan's order (a field reading two columns gives two uses, neither
// direct). Sub-forms fed by each: have no source and are left out.
func (p *Program) Uses() []Use {
	var out []Use
	for _, st := range p.plan.Steps {
		sp := p.steps[st.Name]
		if sp == nil {
			continue
		}
		keys := map[string]bool{}
		for _, k := range sp.key {
			keys[k] = true
		}
		src := st.Source
		grouped := sp.groupBy != nil
		add := func(field string, c *compiled, pos plan.Pos, key, mandatory bool, when *plan.Expr, form, source string, prop *odata.Property, exists *plan.Exists) {
			if c == nil || c.expr == nil || c.prog == nil {
				return
			}
			base := Use{Step: st.Name, Form: form, Source: source, Field: field, Prop: prop, Pos: pos,
				Expr: c.expr.Src, Key: key && !grouped, Group: key && grouped, Mandatory: mandatory, Lookup: c.lookup}
			if exists != nil {
				base.Exists, base.ExistsPos = exists.Entity, exists.Pos
			}
			switch {
			case key && !grouped && st.When != nil:
				base.When = st.When.Src
			case mandatory && when != nil:
				base.When = when.Src
			}
			if c.column != "" {
				base.Column, base.Direct = c.column, true
				out = append(out, base)
				return
			}
			for _, col := range c.reads {
				u := base
				u.Column = col
				if col == c.mapped {
					u.Map = c.mapName
				}
				out = append(out, u)
			}
		}
		// With group_by a record is a group of rows: its id and key are
		// given by every row of the group, so they repeat by design (Group).
		if sp.id != nil {
			add("id", sp.id, sp.id.pos, true, false, nil, st.Entity, src, nil, nil)
		}
		if sp.groupBy != nil {
			add("group_by", sp.groupBy, sp.groupBy.pos, true, false, nil, st.Entity, src, nil, nil)
		}
		// when is the when: that skips the form's rows: the step's, or a
		// sub-form's own (its lines), else its parent's.
		var walk func(f *form, name string, exists []*plan.Exists, subs []*plan.Subform, top bool, source string, when *plan.Expr)
		walk = func(f *form, name string, exists []*plan.Exists, subs []*plan.Subform, top bool, source string, when *plan.Expr) {
			ex := map[string]*plan.Exists{}
			for _, e := range exists {
				ex[e.Field] = e
			}
			for _, fl := range f.fields {
				add(fl.name, fl.expr, fl.pos, top && keys[fl.name], fl.mandatory && f.creates, when, name, source, fl.prop, ex[fl.name])
			}
			for i, s := range f.subs {
				if i >= len(subs) || s.kind == subEach || s.source == nil {
					continue
				}
				lineWhen := when
				if subs[i].When != nil {
					lineWhen = subs[i].When
				}
				walk(&s.form, s.name, subs[i].Exists, subs[i].Subforms, false, s.source.Name, lineWhen)
			}
		}
		walk(&sp.form, st.Entity, st.Exists, st.Subforms, true, src, st.When)
	}
	return out
}

// LookupKeys lists the lookups built from a source whose key is one column.
func (p *Program) LookupKeys() []LookupKey {
	var out []LookupKey
	for _, l := range p.lookups {
		if l.source == nil || l.key == nil || l.key.column == "" {
			continue
		}
		out = append(out, LookupKey{Name: l.lookup.Name, Source: l.source.Name, Column: l.key.column})
	}
	return out
}
