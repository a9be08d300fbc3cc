package plan

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/migrate-tool/migrate/internal/didyoumean"
	"github.com/migrate-tool/migrate/odata"
)

// serverNumbered lists the keys a server assigns when a record is created
// without them, so a plan need not write them: document numbers
// (docs/servers.md, Writing and batches: documents are numbered by the
// server when their number is omitted). Keys marked Computed in the metadata
// are server-assigned too.
var serverNumbered = map[string][]string{
	"ORDERS":    {"ORDNAME"},
	"AINVOICES": {"IVNUM"},
}

// ServerNumbered reports whether the server numbers field of entity when a
// record is created without it (ORDERS.ORDNAME): left blank, it is not
// missing.
func ServerNumbered(entity, field string) bool {
	return slices.Contains(serverNumbered[entity], field)
}

// textFields are the fields of a text sub-form (docs/service.md, Text
// sub-forms).
var textFields = []string{"TEXT", "APPEND", "SIGNATURE"}

// attachments is the attachment sub-form of docs/service.md, Attachments.
const attachments = "EXTFILES_SUBFORM"

// CheckMetadata checks the plan against the service's metadata for system
// version v: entities, fields and sub-forms exist at every depth (with a
// suggestion when misspelt), sub-forms are fed as their kind allows,
// server-assigned fields are not written, keys and mandatory fields are
// mapped, constants fit their fields, and version-gated features are
// available (docs/service.md, Versions). A zero v is a target that has no
// version function and declared none: older than 22.0, but not how much
// older. It skips the Mandatory check (25.1) and refuses the features a
// server before 22.0 may lack, since a text sub-form refused after its parent
// was committed leaves half a record; writing at all (17.2) is assumed, as
// its refusal harms nothing.
func (p *Plan) CheckMetadata(md *odata.Metadata, v odata.Version) Diagnostics {
	d := &diags{}
	if md == nil {
		return nil
	}
	known := v.Known()
	switch {
	case known && !v.Writes() && len(p.Steps) > 0:
		d.errorf(posOr(p.StepsPos, p.Steps[0].Pos), "writing records needs system version 17.2; the target runs %s", v)
	case known && !v.Batch() && len(p.Steps) > 0:
		// Every write goes inside a $batch, whose intent and outcome the
		// journal records; one request per operation is not implemented.
		d.errorf(posOr(p.StepsPos, p.Steps[0].Pos), "loading needs $batch, which came with system version 19.1; the target runs %s. migrate sends every write inside $batch so that its journal knows what was sent; load this server with the ERP's own form-load tool, or upgrade it", v)
	}
	mc := &mdChecker{p: p, md: md, v: v, known: known, d: d}
	for i, s := range p.Steps {
		mc.step(s, i)
	}
	for _, l := range p.Lookups {
		mc.targetLookup(l)
	}
	for _, m := range p.Maps {
		mc.mapTarget(m)
	}
	return d.sorted()
}

// targetLookup checks a lookup that reads the target: its entity set and
// fields exist, and its filter is one the service accepts.
func (c *mdChecker) targetLookup(l *Lookup) {
	if l.Entity == "" {
		return
	}
	what := "lookup " + quote(l.Name)
	es := c.entitySet(l.Entity, posOr(l.EntityPos, l.Pos), what)
	if es == nil {
		return
	}
	for _, k := range []string{"key", "value"} {
		f := l.KeyField
		if k == "value" {
			f = l.ValueField
		}
		if f != "" && es.Type.Property(f) == nil {
			c.d.errorf(l.Spans.Value(k, l.Pos), "%s: unknown field %s in %s%s", what, quote(f), l.Entity, didyoumean.Hint(f, es.Type.PropertyNames()))
		}
	}
	if l.Filter != "" {
		if _, err := odata.ParseFilter(es.Type, l.Filter); err != nil {
			c.d.errorf(posOr(l.FilterPos, l.Pos), "%s: %v", what, err)
		}
	}
}

// entitySet is the entity set of that name, with its type; nil when it
// is unknown, which is said at pos with the nearest set.
func (c *mdChecker) entitySet(name string, pos Pos, what string) *odata.EntitySet {
	es := c.md.EntitySet(name)
	if es == nil || es.Type == nil {
		c.d.errorf(pos, "%s: unknown entity %s%s", what, quote(name), didyoumean.Hint(name, setNames(c.md)))
		return nil
	}
	return es
}

// mapTarget checks the codes a file map names: its entity set and field.
func (c *mdChecker) mapTarget(m *ValueMap) {
	if m.TargetEntity == "" {
		return
	}
	what := "map " + quote(m.Name)
	es := c.entitySet(m.TargetEntity, m.TargetPos, what)
	if es == nil {
		return
	}
	if m.TargetKey != "" && es.Type.Property(m.TargetKey) == nil {
		c.d.errorf(m.TargetPos, "%s: unknown field %s in %s%s", what, quote(m.TargetKey), m.TargetEntity, didyoumean.Hint(m.TargetKey, es.Type.PropertyNames()))
	}
}

type mdChecker struct {
	p     *Plan
	md    *odata.Metadata
	v     odata.Version
	known bool
	d     *diags
}

func setNames(md *odata.Metadata) []string {
	out := make([]string, len(md.Sets))
	for i, s := range md.Sets {
		out[i] = s.Name
	}
	return out
}

func (c *mdChecker) step(s *Step, i int) {
	if s.Entity == "" {
		return
	}
	what := stepLabel(s, i)
	es := c.md.EntitySet(s.Entity)
	if es == nil || es.Type == nil {
		msg := fmt.Sprintf("unknown entity %s in %s%s", quote(s.Entity), what, didyoumean.Hint(s.Entity, setNames(c.md)))
		if c.md.Type(s.Entity) != nil && es == nil {
			msg = fmt.Sprintf("%s in %s is a sub-form type, not an entity set; load it as a sub-form of its parent", quote(s.Entity), what)
		}
		c.d.errorf(posOr(s.EntityPos, s.Pos), "%s", msg)
		return
	}
	t := es.Type
	c.fields(t, s.Entity, s.Fields)
	written := writtenSet(s.Fields)
	c.match(t, s, written, what)
	c.exists(t, s.Entity, s.Exists, written, what)
	c.totals(t, s, written, what)

	switch s.Mode {
	case ModeUpdate, ModeUpsert:
		// docs/service.md, Keys: an entity is addressed by its key; an
		// auto-unique key cannot address it in PATCH.
		for _, k := range t.Key {
			prop := t.Property(k)
			if prop != nil && prop.Computed {
				c.d.errorf(posOr(s.ModePos, s.Pos), "%s: mode %s addresses %s by its key, but %s.%s is assigned by the server and cannot address it (docs/service.md, Keys)", what, s.Mode, s.Entity, s.Entity, k)
				continue
			}
			if !written[k] {
				c.d.errorf(posOr(s.ModePos, s.Pos), "%s: mode %s finds each record by its key; map the key field %s of %s", what, s.Mode, k, s.Entity)
			}
		}
	default:
		for _, k := range t.Key {
			prop := t.Property(k)
			if written[k] || ServerNumbered(s.Entity, k) || prop != nil && (prop.Computed || prop.ComputedDefault) {
				continue
			}
			c.d.errorf(s.Pos, "%s does not write the key field %s of %s; map it in fields", what, k, s.Entity)
		}
		c.mandatory(t, s.Entity, written, s.Pos, what)
	}
	c.subforms(t, s.Entity, s.Subforms, what)
}

// exists checks exists: each field is one the step or sub-form writes,
// and each entity an entity set with a key of one field, which the value
// is checked as.
func (c *mdChecker) exists(t *odata.EntityType, entity string, ex []*Exists, written map[string]bool, what string) {
	for _, x := range ex {
		switch {
		case t.Property(x.Field) == nil:
			c.d.errorf(x.Pos, "exists of %s: unknown field %s in %s%s", what, quote(x.Field), entity, didyoumean.Hint(x.Field, t.PropertyNames()))
		case !written[x.Field]:
			c.d.errorf(x.Pos, "exists of %s: %s is not written by it; exists checks fields it writes (add it to fields, or remove it from exists)", what, quote(x.Field))
		}
		es := c.md.EntitySet(x.Entity)
		switch {
		case es == nil || es.Type == nil:
			c.d.errorf(x.EntityPos, "exists of %s: unknown entity %s%s", what, quote(x.Entity), didyoumean.Hint(x.Entity, setNames(c.md)))
		case len(es.Type.Key) != 1:
			c.d.errorf(x.EntityPos, "exists of %s: %s has a key of %d fields (%s); exists checks a value against a key of one field", what, x.Entity, len(es.Type.Key), strings.Join(es.Type.Key, ", "))
		}
	}
}

// match checks match: (each a field the step writes) and suggests it for
// a step that creates documents numbered by the server and has no id: a
// create that goes in doubt is found again by its fields, and only match:
// says which of them tell one document from another.
func (c *mdChecker) match(t *odata.EntityType, s *Step, written map[string]bool, what string) {
	for i, f := range s.Match {
		pos := posOr(s.MatchPos[i], s.Pos)
		switch {
		case t.Property(f) == nil:
			c.d.errorf(pos, "match of %s: unknown field %s in %s%s", what, quote(f), s.Entity, didyoumean.Hint(f, t.PropertyNames()))
		case !written[f]:
			c.d.errorf(pos, "match of %s: %s is not written by the step; match names fields the step writes (add it to fields, or remove it from match)", what, quote(f))
		}
	}
	if len(s.Match) > 0 || s.ID != nil || s.Mode != "" && s.Mode != ModeInsert {
		return
	}
	serverKey := false
	for _, k := range t.Key {
		if p := t.Property(k); !written[k] && (ServerNumbered(s.Entity, k) || p != nil && p.Computed) {
			serverKey = true
		}
	}
	if !serverKey {
		return
	}
	var names []string
	for _, f := range s.Fields {
		if p := t.Property(f.Name); p != nil && p.Type != odata.EdmBoolean && len(names) < 4 {
			names = append(names, f.Name)
		}
	}
	hint := "match: [FIELD, ...]"
	if len(names) > 0 {
		hint = "match: [" + strings.Join(names, ", ") + "]"
	}
	c.d.warnf(s.Pos, "%s creates %s, numbered by the server, and has neither match nor id: if a create goes in doubt, any %s with the same fields may be taken for it; name the fields that tell one document from another, e.g. %s", what, s.Entity, s.Entity, hint)
}

func writtenSet(fs []*Field) map[string]bool {
	m := make(map[string]bool, len(fs))
	for _, f := range fs {
		m[f.Name] = true
	}
	return m
}

// mandatory reports Mandatory fields (docs/service.md, Metadata, from 25.1)
// that a created record would lack.
func (c *mdChecker) mandatory(t *odata.EntityType, entity string, written map[string]bool, pos Pos, what string) {
	if !c.known || !c.v.MandatoryAnnotation() {
		return
	}
	for _, prop := range t.Properties {
		if !prop.Mandatory || !prop.Writable() || written[prop.Name] || ServerNumbered(entity, prop.Name) {
			continue
		}
		c.d.errorf(pos, "%s does not write %s.%s, which is mandatory; map it in fields", what, entity, prop.Name)
	}
}

// fields checks each field of one record against its type.
func (c *mdChecker) fields(t *odata.EntityType, entity string, fs []*Field) {
	for _, f := range fs {
		prop := t.Property(f.Name)
		if prop == nil {
			if t.Navigation(f.Name) != nil {
				c.d.errorf(f.Pos, "%s is a sub-form of %s, not a field; list it under subforms", quote(f.Name), entity)
				continue
			}
			c.d.errorf(f.Pos, "unknown field %s in %s%s", quote(f.Name), entity, didyoumean.Hint(f.Name, t.PropertyNames()))
			continue
		}
		if msg := odata.WriteRefusal(prop); msg != "" {
			c.d.errorf(f.Pos, "%s.%s %s", entity, f.Name, msg)
			continue
		}
		if f.Expr.IsConst {
			if msg := constProblem(f.Expr, prop); msg != "" {
				c.d.errorf(f.Expr.Pos, "%s for %s.%s", msg, entity, f.Name)
			}
		}
	}
}

// constProblem says why a constant cannot be written to prop, or "".
func constProblem(x Expr, prop *odata.Property) string {
	switch v := x.Const.(type) {
	case nil:
		return ""
	case bool:
		if prop.Type == odata.EdmBoolean {
			return ""
		}
		return fmt.Sprintf("the constant %t is true/false, not %s", v, typeWords(prop.Type))
	case string:
		switch prop.Type {
		case odata.EdmString:
			if n := utf8.RuneCountInString(v); prop.MaxLength > 0 && n > prop.MaxLength {
				return fmt.Sprintf("the constant %s is %d characters, longer than MaxLength %d", quote(v), n, prop.MaxLength)
			}
		case odata.EdmInt64:
			if _, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err != nil {
				return fmt.Sprintf("the constant %s is not a whole number (Edm.Int64)", quote(v))
			}
		case odata.EdmDecimal:
			if !isDecimalText(strings.TrimSpace(v)) {
				return fmt.Sprintf("the constant %s is not a decimal number (Edm.Decimal)", quote(v))
			}
		case odata.EdmBoolean:
			if v != "true" && v != "false" {
				return fmt.Sprintf("the constant %s is not true or false (Edm.Boolean)", quote(v))
			}
		case odata.EdmDateTimeOffset:
			if !strings.ContainsAny(v, "0123456789") {
				return fmt.Sprintf("the constant %s is not a date (Edm.DateTimeOffset)", quote(v))
			}
		}
	case int64:
		switch prop.Type {
		case odata.EdmString:
			if n := utf8.RuneCountInString(x.ConstText); prop.MaxLength > 0 && n > prop.MaxLength {
				return fmt.Sprintf("the constant %s is %d characters, longer than MaxLength %d", x.ConstText, n, prop.MaxLength)
			}
		case odata.EdmBoolean, odata.EdmDateTimeOffset:
			return fmt.Sprintf("the constant %s is a number, not %s", x.ConstText, typeWords(prop.Type))
		}
	case float64:
		switch prop.Type {
		case odata.EdmInt64:
			if v != math.Trunc(v) || math.Abs(v) > 1<<62 {
				return fmt.Sprintf("the constant %s is not a whole number (Edm.Int64)", x.ConstText)
			}
		case odata.EdmString:
			if n := utf8.RuneCountInString(x.ConstText); prop.MaxLength > 0 && n > prop.MaxLength {
				return fmt.Sprintf("the constant %s is %d characters, longer than MaxLength %d", x.ConstText, n, prop.MaxLength)
			}
		case odata.EdmBoolean, odata.EdmDateTimeOffset:
			return fmt.Sprintf("the constant %s is a number, not %s", x.ConstText, typeWords(prop.Type))
		}
	}
	return ""
}

func typeWords(t odata.EdmType) string {
	switch t {
	case odata.EdmString:
		return "text (Edm.String)"
	case odata.EdmInt64:
		return "a whole number (Edm.Int64)"
	case odata.EdmDecimal:
		return "a decimal number (Edm.Decimal)"
	case odata.EdmDateTimeOffset:
		return "a date (Edm.DateTimeOffset)"
	case odata.EdmBoolean:
		return "true or false (Edm.Boolean)"
	}
	return string(t)
}

// isDecimalText accepts 12, -12.5, 12,5 and 1.234,50: text the run reads
// as a decimal under one separator or the other (the plan's
// decimal_separator decides which at run time).
func isDecimalText(s string) bool {
	_, dot := odata.ParseDecimalText(s, '.')
	_, comma := odata.ParseDecimalText(s, ',')
	return dot == nil || comma == nil
}

// needs reports feature at pos where the target's version lacks gate g
// (or may lack it: a version unknown).
func (c *mdChecker) needs(pos Pos, g odata.Gate, feature string) {
	f := g.Feature()
	version := f.Since()
	switch {
	case c.known && !c.v.Has(f):
		c.d.errorf(pos, "%s needs system version %s; the target runs %s", feature, version, c.v)
	case c.known:
	case f.AfterVersionFunction():
		c.d.errorf(pos, "%s needs system version %s; the target is older (it has no version function, which came with 22.0)", feature, version)
	default:
		c.d.errorf(pos, "%s needs system version %s; the target has no version function, so it is older than 22.0 and may be older than %s: %s",
			feature, version, version, DeclareVersion)
	}
}

// DeclareVersion tells the user how to say which version a target runs when
// it cannot say itself.
const DeclareVersion = "declare its version with target.system_version in the plan, --system-version or MIGRATE_SYSTEM_VERSION"

// subforms checks sub-forms of a record of type t, at every depth.
func (c *mdChecker) subforms(t *odata.EntityType, entity string, subs []*Subform, owner string) {
	for j, sf := range subs {
		if sf.Name == "" {
			continue
		}
		what := subformLabel(sf, j, owner)
		npos := posOr(sf.NamePos, sf.Pos)
		nav := t.Navigation(sf.Name)
		if nav == nil {
			if t.Property(sf.Name) != nil {
				c.d.errorf(npos, "%s is a field of %s, not a sub-form; map it under fields", quote(sf.Name), entity)
			} else {
				c.d.errorf(npos, "unknown sub-form %s of %s%s", quote(sf.Name), entity, didyoumean.Hint(sf.Name, t.NavigationNames()))
			}
			continue
		}
		ct := c.md.Type(nav.Type)
		if ct == nil {
			c.d.errorf(npos, "the metadata declares sub-form %s of %s with type %s, which it does not define", sf.Name, entity, quote(nav.Type))
			continue
		}
		written := writtenSet(sf.Fields)
		c.exists(ct, sf.Name, sf.Exists, written, what)
		if !nav.Collection {
			// docs/service.md, Sub-forms: a single-object sub-form takes one
			// object, never lines.
			if sf.Source != "" {
				c.d.errorf(posOr(sf.SourcePos, npos), "%s is a single-object sub-form of %s: it takes one object built from the parent's row, not lines from %s; remove \"source\"",
					sf.Name, entity, sourceWords(sf.Source))
			}
			if sf.LinesPos.Line != 0 {
				c.d.errorf(sf.LinesPos, "\"lines\" means nothing for %s, a single-object sub-form of %s; remove it", sf.Name, entity)
			}
		}
		isText := !nav.Collection && (anyWritten(written, textFields) || ct.Property("TEXT") != nil && ct.Property("APPEND") != nil)
		if isText {
			c.needs(npos, odata.GateTextSubforms, fmt.Sprintf("writing the text sub-form %s", sf.Name))
			if !written["TEXT"] && ct.Property("TEXT") != nil {
				// docs/service.md, Text sub-forms: APPEND and SIGNATURE say
				// what to do with TEXT.
				c.d.errorf(npos, "%s is a text sub-form written without TEXT, the text itself; map TEXT in fields", what)
			}
		}
		if sf.Name == attachments {
			if sf.callsFile() {
				c.needs(npos, odata.GateDataURIAttachments, "attaching files (file() in "+attachments+")")
			}
			for _, f := range sf.Fields {
				if f.Name == "SUFFIX" {
					c.needs(f.Pos, odata.GateClearMetadata, "writing SUFFIX of an attachment")
				}
			}
		}
		c.fields(ct, sf.Name, sf.Fields)
		if nav.Collection {
			// Lines are numbered by the server: an Int64 key of a sub-form
			// line (KLINE, EXTFILENUM) need not be written.
			fromParent := odata.FilledFromParent(t, nav, ct)
			for _, k := range ct.Key {
				prop := ct.Property(k)
				if written[k] || prop == nil || prop.Computed || prop.ComputedDefault || fromParent[k] || prop.Type == odata.EdmInt64 || ServerNumbered(nav.Type, k) {
					continue
				}
				c.d.errorf(sf.Pos, "%s does not write the key field %s of %s; map it in fields", what, k, sf.Name)
			}
		}
		c.mandatory(ct, sf.Name, written, sf.Pos, what)
		c.subforms(ct, sf.Name, sf.Subforms, what)
	}
}

func sourceWords(src string) string {
	if src == "group" {
		return "the group"
	}
	return "source " + quote(src)
}

func anyWritten(written map[string]bool, names []string) bool {
	for _, n := range names {
		if written[n] {
			return true
		}
	}
	return false
}

// callsFile reports whether any field of the sub-form calls file().
func (sf *Subform) callsFile() bool { return callFile(sf.Fields) }

// callFile reports whether any of fields calls file().
func callFile(fields []*Field) bool {
	for _, f := range fields {
		if f.Expr.IsConst {
			continue
		}
		if s := scanExpr(&f.Expr, exprScope{rows: []string{"", "", ""}}, &diags{}); s != nil && s.callsFile {
			return true
		}
	}
	return false
}

// ReadsFiles reports whether a field of a step, or of any of its
// sub-forms, calls file(): what such a step loads depends on files its
// sources only name, which the sources' hashes do not cover.
func (p *Plan) ReadsFiles() bool {
	return slices.ContainsFunc(p.Steps, func(st *Step) bool {
		return callFile(st.Fields) || slices.ContainsFunc(st.Subforms, (*Subform).readsFiles)
	})
}

// readsFiles reports whether a field of the sub-form, or of any below it,
// calls file().
func (sf *Subform) readsFiles() bool {
	return sf.callsFile() || slices.ContainsFunc(sf.Subforms, (*Subform).readsFiles)
}
