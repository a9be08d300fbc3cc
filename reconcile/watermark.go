package reconcile

import (
	"slices"
	"strings"

	"github.com/migrate-tool/migrate/journal"
	"github.com/migrate-tool/migrate/odata"
)

// A document whose create went in doubt is found again by its
// fields; one made by hand before the run, with the same fields, must never
// be taken for it. Before a step first sends a create whose key the server
// assigns, the highest auto-unique key of the entity is journaled; on
// resume only documents above it are candidates.

// autoUnique is the entity's auto-unique field: an Edm.Int64 the server
// assigns (Computed), such as ORD of ORDERS or IV of AINVOICES; "" if none.
func autoUnique(t *odata.EntityType) string {
	if t == nil {
		return ""
	}
	for _, p := range t.Properties {
		if p.Computed && p.Type == odata.EdmInt64 && !slices.Contains(t.Key, p.Name) {
			return p.Name
		}
	}
	return ""
}

// MarkField is the field whose highest value, read before a step's first
// create, bounds the documents the step made: the auto-unique key; where
// there is none and the target is of the odata dialect, a time the server
// sets (Computed Edm.DateTimeOffset, a created time preferred to a
// modified one), so that a document made before the run is not taken for
// one in doubt (docs/other-services.md, Reconciliation); "" if neither.
func (r *Reader) MarkField(t *odata.EntityType) string {
	if f := autoUnique(t); f != "" || t == nil || !r.standard() {
		return f
	}
	field := ""
	for _, p := range t.Properties {
		if !p.Computed || p.Type != odata.EdmDateTimeOffset || slices.Contains(t.Key, p.Name) {
			continue
		}
		if strings.Contains(strings.ToLower(p.Name), "creat") {
			return p.Name
		}
		if field == "" {
			field = p.Name
		}
	}
	return field
}

// standard reports a target of the odata dialect: the run's, as it was
// told (Options.Standard), or the one the journal was written against
// (its header's dialect), which undo and resolve read it by.
func (r *Reader) standard() bool {
	return r.opts.Standard || r.state != nil && r.state.Header.Dialect == string(odata.DialectOData)
}

// SetWatermark is told the watermark a run journaled for its step: a
// failed deep insert is looked up during the run, above this mark, which
// the state replayed at the start does not hold.
func (r *Reader) SetWatermark(wm journal.Watermark) {
	r.mu.Lock()
	if r.marks == nil {
		r.marks = map[string]journal.Watermark{}
	}
	r.marks[wm.Step] = wm
	r.mu.Unlock()
}

// watermarkFor is the watermark that bounds s: this run's for its step
// when it took one, else the journal's.
func (r *Reader) watermarkFor(s *journal.SubState) (journal.Watermark, bool) {
	r.mu.Lock()
	wm, ok := r.marks[s.Step]
	r.mu.Unlock()
	if ok {
		return wm, true
	}
	return r.state.WatermarkFor(s.Step, s.Batch)
}

// MarkCompare compares two values of a watermark field as numbers (an
// auto-unique key) or as instants (a time the server sets); ok is false
// when they are neither.
func MarkCompare(a, b string) (c int, ok bool) {
	if x, err := odata.ParseDecimal(a, '.'); err == nil {
		y, err := odata.ParseDecimal(b, '.')
		return x.Cmp(y), err == nil
	}
	x, err1 := odata.ParseDateTime(a)
	y, err2 := odata.ParseDateTime(b)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return x.Compare(y), true
}
