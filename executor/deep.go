package executor

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/migrate-tool/migrate/compare"
	"github.com/migrate-tool/migrate/journal"
	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/reconcile"
)

// A created document travels as one deep insert (docs/service.md, Deep
// insert), its lines inside its body, so that a call carries up to 100
// documents. The server rolls nothing back (docs/service.md, Batch): a deep
// insert that fails may have left the header and some lines. The engine then
// reads back what the server kept of that document and sends what is missing
// as sub-requests of their own, so that an error is pinned to the line that
// caused it and nothing the server holds is sent again. A resumed
// document whose lines are not all journaled is read back the same way.

// carries reports whether o is a deep insert: children inside its body.
func (o *op) carries() bool {
	for _, k := range o.kids {
		if k.carried {
			return true
		}
	}
	return false
}

// linesMatch is what the journal keeps of the lines a deep insert
// carries (journal.Sub.Lines): each collection line's match fields, by
// sub-form; nil when o carries none.
func (o *op) linesMatch() json.RawMessage {
	// Written by hand: a million documents' worth of encoding/json
	// re-validating each line's fields cost a twentieth of apply's CPU.
	var b []byte
	var navs []string
	for _, k := range o.kids {
		if k.carried && !k.single && !slices.Contains(navs, k.nav) {
			navs = append(navs, k.nav)
		}
	}
	for i, nav := range navs {
		if i == 0 {
			b = append(b, '{')
		} else {
			b = append(b, "],"...)
		}
		b = strconv.AppendQuote(b, nav)
		b = append(b, ":["...)
		n := 0
		for _, k := range o.kids {
			if !k.carried || k.single || k.nav != nav {
				continue
			}
			if n > 0 {
				b = append(b, ',')
			}
			n++
			if m := matchFields(k.fields); m != nil {
				b = append(b, m...)
			} else {
				b = append(b, "{}"...)
			}
		}
	}
	if b == nil {
		return nil
	}
	return append(b, "]}"...)
}

// textsMatch is what the journal keeps of the single sub-forms (texts) a
// deep insert carries (journal.Sub.Texts): each one's match fields, by
// path and sub-form; nil when o carries none.
func (o *op) textsMatch() json.RawMessage {
	var out map[string]map[string]json.RawMessage
	for _, k := range o.kids {
		if !k.carried || !k.single {
			continue
		}
		m := matchFields(k.fields)
		if m == nil {
			// Nothing to compare (a long text), but its path is kept:
			// the lines' paths are counted around it.
			m = json.RawMessage("{}")
		}
		if out == nil {
			out = map[string]map[string]json.RawMessage{}
		}
		out[k.path] = map[string]json.RawMessage{k.nav: m}
	}
	if out == nil {
		return nil
	}
	b, _ := json.Marshal(out)
	return b
}

// carriedOK counts the children o's deep insert wrote inside its body,
// as the server took them (the record's Carried).
func (o *op) carriedOK() int {
	if o == nil {
		return 0
	}
	return o.below(func(k *op) bool { return k.carried && k.ok() })
}

// takeLines gives a deep insert's children their outcome once the server
// answered it as created: the document is whole. Their keys come from the
// answer's lines, in the order sent (from 21.1 the answer holds them,
// docs/service.md, Deep insert); before, a line's key stays unknown.
func (o *op) takeLines(ent map[string]any) {
	perNav := map[string]int{}
	for _, k := range o.kids {
		if !k.carried {
			continue
		}
		k.status, k.done = o.status, true
		var sub map[string]any
		switch v := ent[k.nav].(type) {
		case map[string]any:
			sub = v
		case []any:
			i := perNav[k.nav]
			perNav[k.nav]++
			if i < len(v) {
				sub, _ = v[i].(map[string]any)
			}
		}
		if sub != nil && !k.single && k.typ != nil {
			if key := odata.EntityKey(k.typ, sub); key != "" {
				k.key = key
			}
			k.got = reconcile.Filled(keptOf(k.fields, matchable), sub)
		}
		k.abs = childAbs(o, k)
		k.takeLines(sub)
	}
}

// answerKeeps is what outcome decodes of the answer to o: its key, the
// fields filled compares, and the keys of the lines it carried (takeLines).
// The answer to a deep insert holds every field of every line; decoding
// them all was a fifth of apply's CPU.
func (o *op) answerKeeps() *odata.Projection {
	p := &odata.Projection{}
	if o.typ != nil && !o.single {
		p.Fields = slices.Clip(o.typ.Key)
		if len(o.matched) > 0 || o.carried {
			// The fields it wrote: what the server filled in their place
			// (filled; takeLines for a carried line).
			for f := range o.fields {
				p.Fields = append(p.Fields, f)
			}
		}
	}
	for _, k := range o.kids {
		if !k.carried {
			continue
		}
		if p.Navs == nil {
			p.Navs = map[string]*odata.Projection{}
		}
		p.Navs[k.nav] = mergeKeeps(p.Navs[k.nav], k.answerKeeps())
	}
	return p
}

// mergeKeeps is what two lines of one sub-form keep: they share its type
// (so their fields), but their own lines may differ.
func mergeKeeps(into, from *odata.Projection) *odata.Projection {
	if into == nil {
		return from
	}
	for nav, sub := range from.Navs {
		if into.Navs == nil {
			into.Navs = map[string]*odata.Projection{}
		}
		into.Navs[nav] = mergeKeeps(into.Navs[nav], sub)
	}
	return into
}

// expandOf is the $expand that reads back every sub-form o's children
// write, nested as deep as they go: "ORDERITEMS_SUBFORM($expand=X),Y".
func expandOf(o *op) string {
	var navs []string
	sub := map[string]*op{} // a child per nav whose children go deeper
	for _, k := range o.kids {
		if _, seen := sub[k.nav]; !seen {
			navs = append(navs, k.nav)
			sub[k.nav] = nil
		}
		if len(k.kids) > 0 && sub[k.nav] == nil {
			sub[k.nav] = k
		}
	}
	parts := make([]string, len(navs))
	for i, nav := range navs {
		parts[i] = nav
		if k := sub[nav]; k != nil {
			// Every line of a nav writes the same sub-forms but for
			// blanks: the union of them is read.
			u := &op{}
			for _, c := range o.kids {
				if c.nav == nav {
					u.kids = append(u.kids, c.kids...)
				}
			}
			parts[i] += "($expand=" + expandOf(u) + ")"
		}
	}
	return strings.Join(parts, ",")
}

// kept is what the server holds of a failed deep insert's document.
type kept struct {
	key     string
	doc     json.RawMessage // the document with its sub-forms expanded
	absent  bool            // the header was not stored: nothing was
	unclear string          // why it cannot be told: the record is in doubt
}

// readKept reads back the document a failed deep insert o was creating:
// by its key, or, numbered by the server, found by its fields among the
// documents made since the step's watermark (reconcile.Reader.Lookup, as
// reconciliation does) that no record holds. A document of this run may
// look like it: the lookup is made only when no document of the step in
// flight (sent, not yet journaled) looks like o (lookAlikeInFlight), and
// leaves out the documents the rest of o's batch (batch, answered by
// matched) made. Anything else, or more than one such document, is
// unclear: the record is in doubt, and the next apply reconciles it.
func (sr *stepRun) readKept(o *op, seq int, batch []*op, matched []*odata.BatchResponse) kept {
	r := sr.r
	key := o.key
	if key == "" {
		sr.lookMu.Lock()
		defer sr.lookMu.Unlock()
		if why := sr.lookAlikeInFlight(o, seq); why != "" {
			return kept{unclear: why}
		}
		mates := map[string]bool{} // what the rest of the batch made
		for i, b := range batch {
			if resp := matched[i]; b != o && resp != nil && b.parent == nil && b.kind == journal.OpCreate && resp.Status/100 == 2 {
				if k := keyFromLocation(resp.Header("Location")); k != "" {
					mates[k] = true
				}
			}
		}
		// The journal is asked of the documents found alone,
		// not copied with the key of every record of the run.
		held := func(step string, keys []string) (map[string]bool, error) {
			h, err := r.jr.held(step, keys)
			if err != nil {
				return nil, fmt.Errorf("the journal's index could not be read: %w", err)
			}
			made := map[string]bool{}
			for _, k := range sr.made {
				made[k] = true
			}
			for _, k := range keys {
				h[k] = h[k] || mates[k] || made[k]
			}
			return h, nil
		}
		s := &journal.SubState{Sub: journal.Sub{Step: sr.step.Name, Rec: o.work.id, URL: sr.entity, Match: matchFields(o.fields)}, Batch: seq}
		found, why, err := r.rd.Lookup(s, held)
		switch {
		case err != nil:
			return kept{unclear: err.Error()}
		case why != "":
			return kept{unclear: why}
		case len(found) == 0:
			return kept{absent: true}
		case len(found) > 1:
			keys := make([]string, len(found))
			for i, c := range found {
				keys[i] = c.Key
			}
			return kept{unclear: fmt.Sprintf("%d documents of %s match its fields (%s); decide with migrate resolve", len(found), sr.entity, strings.Join(keys, ", "))}
		}
		key = found[0].Key
	}
	path := sr.entity + "(" + key + ")?$expand=" + expandOf(o)
	resp, err := r.rd.ReadCtx(sr.traced(), path)
	if err != nil {
		return kept{unclear: err.Error()}
	}
	return keptFrom(resp, key, path)
}

// keep takes what the server kept of deep insert o's document (key and
// doc as read back): o and every child found there are done, and the
// children missing are returned as units to send on their own, their
// subtrees no longer carried. A child under a line whose key is unknown
// cannot be addressed: it is listed in lost.
func (o *op) keep(entity, key string, doc json.RawMessage) (missing []unit, lost []*op) {
	o.status, o.done, o.err, o.key = 201, true, "", key
	o.abs = odata.KeySegment(entity, key)
	var walk func(parent *op, raw json.RawMessage)
	walk = func(parent *op, raw json.RawMessage) {
		var fields map[string]json.RawMessage
		_ = json.Unmarshal(raw, &fields)
		lines := lineMatches(parent, fields)
		for _, k := range parent.kids {
			if !k.carried {
				continue
			}
			found := lines[k]
			if k.single {
				want := matchFields(k.fields)
				if r := fields[k.nav]; len(r) > 0 && string(r) != "null" && string(r) != "[]" && (compare.TextInJSON(r, want) || compare.SameJSON(k.typ, r, want)) {
					found = r
				}
			}
			if found == nil {
				k.uncarry()
				if parent.abs == "" {
					lost = append(lost, k)
					continue
				}
				missing = append(missing, flatten(k, nil))
				continue
			}
			k.status, k.done, k.err = 201, true, ""
			if !k.single && k.typ != nil {
				if e, err := odata.DecodeEntity(found); err == nil {
					k.key = odata.EntityKey(k.typ, e)
					k.got = reconcile.Filled(keptOf(k.fields, matchable), e) // as the lost answer would have said
				}
			}
			k.abs = childAbs(parent, k)
			walk(k, found)
		}
	}
	walk(o, doc)
	return missing, lost
}

// lineMatches pairs the carried lines of parent with the lines its
// document holds (fields, its sub-forms as read back), each sub-form's by
// their content (compare.Lines, typed by the lines' type): every line
// sent is found in a distinct line held, or not at all. The document is
// the one the record's deep insert made, so a line left over that holds
// all of a line sent but one field is that line, the field filled by the
// server (compare.Near): sending it again would make it twice.
func lineMatches(parent *op, fields map[string]json.RawMessage) map[*op]json.RawMessage {
	found := map[*op]json.RawMessage{}
	byNav := map[string][]*op{}
	var navs []string
	for _, k := range parent.kids {
		if k.carried && !k.single {
			if byNav[k.nav] == nil {
				navs = append(navs, k.nav)
			}
			byNav[k.nav] = append(byNav[k.nav], k)
		}
	}
	for _, nav := range navs {
		var held []json.RawMessage
		_ = json.Unmarshal(fields[nav], &held)
		kids := byNav[nav]
		wants := make([]json.RawMessage, len(kids))
		for i, k := range kids {
			// A field the server does not return on read (field-level
			// permissions) is never matched on: compared
			// on it, every line would look missing and be sent again.
			wants[i], _ = reconcile.ReadableMatch(held, matchFields(k.fields))
		}
		heldLines, wantLines := compare.DecodeAll(held), compare.DecodeAll(wants)
		m, _ := compare.Near(kids[0].typ, heldLines, wantLines, compare.Lines(kids[0].typ, heldLines, wantLines))
		for i, j := range m.Held {
			if j >= 0 {
				found[kids[i]] = held[j]
			}
		}
	}
	return found
}

// keepAnswer puts what was read back of the failed deep insert o into its
// record (the runner's workMu held): the ops found missing join the record's, to be
// sent once this batch is answered. It returns those units.
func (sr *stepRun) keepAnswer(o *op, k kept) []unit {
	w := o.work
	missing, lost := o.keep(sr.entity, k.key, k.doc)
	w.failed = len(lost) > 0
	for _, l := range lost {
		l.status, l.err = 424, "not sent: the line it belongs to has no key to address it by"
		w.ops = append(w.ops, l)
	}
	for _, u := range missing {
		w.ops = append(w.ops, u...)
		w.left += len(u)
	}
	return missing
}

// resumeDeep continues a deep insert whose document exists from an earlier
// attempt (partly loaded, or reconciled after a lost answer): what the
// server holds of it is read back, with the keys of its lines (which the
// journal does not keep of a deep insert's), and only the rest is sent.
// The reads go up to a batch's worth a call (readDeepPending).
func (sr *stepRun) resumeDeep(w *work) error {
	sr.deepReads = append(sr.deepReads, w)
	if len(sr.deepReads) >= sr.r.limit {
		return sr.readDeepPending()
	}
	return nil
}

// readDeepPending reads back the documents of the records resumeDeep
// queued, in one call, and sends what each lacks.
func (sr *stepRun) readDeepPending() error {
	rs := sr.deepReads
	sr.deepReads = nil
	if len(rs) == 0 {
		return nil
	}
	r := sr.r
	reqs := make([]odata.BatchRequest, len(rs))
	for i, w := range rs {
		reqs[i] = odata.BatchRequest{ID: strconv.Itoa(i + 1), Method: "GET", URL: sr.entity + "(" + w.root.key + ")?$expand=" + expandOf(w.root)}
	}
	resps, err := r.rd.ReadBatch(sr.traced(), reqs)
	if err != nil {
		if oe, ok := odata.Refused(err); ok && oe.Status != http.StatusTooManyRequests || errors.Is(err, ErrInterrupted) {
			return fmt.Errorf("step %s: reading back %d documents to resume them: %w", sr.step.Name, len(rs), err)
		}
		return fmt.Errorf("%w: step %s: reading back %d documents to resume them: %w", ErrInDoubt, sr.step.Name, len(rs), err)
	}
	for i, w := range rs {
		if err := sr.resumeKept(w, keptFrom(resps[i], w.root.key, reqs[i].URL)); err != nil {
			return err
		}
	}
	return nil
}

// keptFrom reads the answer to a read back of the document keyed key.
func keptFrom(resp odata.BatchResponse, key, path string) kept {
	switch resp.Status {
	case http.StatusOK:
		return kept{key: key, doc: resp.Body}
	case http.StatusNotFound:
		return kept{absent: true}
	}
	return kept{unclear: fmt.Sprintf("reading back %s gave status %d", path, resp.Status)}
}

// resumeKept sends what a resumed deep insert's document lacks.
func (sr *stepRun) resumeKept(w *work, k kept) error {
	switch {
	case k.unclear != "":
		return fmt.Errorf("%w: step %s, record %s: %s", ErrInDoubt, sr.step.Name, w.id, k.unclear)
	case k.absent:
		return sr.buildFailed(w, fmt.Errorf("%s(%s), created by an earlier run, is no longer on the server; load it again with --retry-failed", sr.entity, w.root.key))
	}
	sr.r.workMu.Lock()
	missing, lost := w.root.keep(sr.entity, k.key, k.doc)
	for _, o := range subtree(w.root, nil)[1:] {
		if s := w.prev.Subs[o.path]; s != nil && s.OK() && o.ok() {
			o.carried = false // sent on its own by an earlier attempt: journaled
		}
	}
	sr.r.workMu.Unlock()
	if len(lost) > 0 {
		return sr.buildFailed(w, fmt.Errorf("%s(%s): a line's key is unknown, so what belongs under it cannot be sent", sr.entity, w.root.key))
	}
	var left []*op
	for _, u := range missing {
		left = append(left, u...)
	}
	sr.classifyResumed(w, left)
	if len(missing) == 0 {
		sr.finalize(w)
		return nil
	}
	return sr.start(w, missing)
}

// takeOff counts batch (seq) as in flight, with the documents of it the
// server numbers (flying), not while a failed deep insert is looked up.
func (sr *stepRun) takeOff(seq int, batch []*op) {
	sr.lookMu.Lock()
	defer sr.lookMu.Unlock()
	sr.sending.Add(1)
	for _, o := range batch {
		if o.parent == nil && o.kind == journal.OpCreate && o.key == "" {
			if sr.flying == nil {
				sr.flying = map[*op]int{}
			}
			sr.flying[o] = seq
		}
	}
}

// answered takes what the answer of batch (matched, in its order) says
// of its server-numbered documents: one created is known by the key its
// Location gives, no longer a document in flight that could look like
// another's, and no candidate of a failed deep insert's lookup (made).
// With one call at a time, the next batch may be sent before this one is
// journaled: without it, a refused document of the next batch found this
// one's alike and in flight, and stayed in doubt.
func (sr *stepRun) answered(batch []*op, matched []*odata.BatchResponse) {
	sr.lookMu.Lock()
	defer sr.lookMu.Unlock()
	for i, o := range batch {
		if _, ok := sr.flying[o]; !ok || i >= len(matched) || matched[i] == nil || matched[i].Status/100 != 2 {
			continue
		}
		if k := keyFromLocation(matched[i].Header("Location")); k != "" {
			if sr.made == nil {
				sr.made = map[*op]string{}
			}
			sr.made[o] = k
			delete(sr.flying, o)
		}
	}
}

// landed is takeOff undone, once batch's outcome is journaled.
func (sr *stepRun) landed(batch []*op) {
	sr.lookMu.Lock()
	defer sr.lookMu.Unlock()
	for _, o := range batch {
		delete(sr.flying, o)
		delete(sr.made, o)
	}
	sr.sending.Add(-1)
}

// lookAlikeInFlight says why the server-numbered document o, of batch
// seq, cannot be looked up by its fields now: a document of another batch
// in flight (sent, its outcome not yet journaled, so not yet known as the
// run's own) is matched on the same values and could be taken for it. ""
// when none is: documents the step's records tell apart (their match:
// fields differ) are settled at once, whatever else is in flight. (The
// rest of o's own batch is known from its answer: readKept leaves out
// what it made.) The caller holds lookMu.
func (sr *stepRun) lookAlikeInFlight(o *op, seq int) string {
	mine := sr.lookAlike(o)
	for other, s := range sr.flying {
		if s == seq {
			continue
		}
		if mine == "" {
			return "another batch of the step was in flight, and nothing tells its documents from this one"
		}
		if sig := sr.lookAlike(other); sig == "" || sig == mine {
			return fmt.Sprintf("record %s, in flight at the same time, has a document that looks like it (the same %s)", other.work.id, sr.matchedOn(o))
		}
	}
	return ""
}

// matchedOn names the fields documents of the step are matched on.
func (sr *stepRun) matchedOn(o *op) string {
	written, err := odata.DecodeEntity(matchFields(o.fields))
	if err != nil {
		return "fields"
	}
	names, _ := sr.r.rd.MatchNames(sr.step.Name, sr.entity, sr.r.rd.MatchOf(sr.step.Name), written)
	return strings.Join(names, ", ")
}

// lookAlike is what a server-numbered document is found by (its step's
// match: fields, else every field written), each value in a form coarse
// enough that two documents the server could take for one another get the
// same (text without case or outer spaces, numbers by value, any date as
// any other); "" when nothing tells it apart.
func (sr *stepRun) lookAlike(o *op) string {
	written, err := odata.DecodeEntity(matchFields(o.fields))
	if err != nil || len(written) == 0 {
		return ""
	}
	names, why := sr.r.rd.MatchNames(sr.step.Name, sr.entity, sr.r.rd.MatchOf(sr.step.Name), written)
	if why != "" || len(names) == 0 {
		return ""
	}
	names = slices.Clone(names)
	slices.Sort(names)
	var b strings.Builder
	for _, n := range names {
		b.WriteString(n)
		b.WriteByte('=')
		b.WriteString(coarse(written[n]))
		b.WriteByte(0)
	}
	return b.String()
}

func coarse(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case json.Number:
		if r, ok := new(big.Rat).SetString(string(x)); ok {
			return r.RatString()
		}
		return string(x)
	case string:
		if _, err := odata.ParseDateTime(x); err == nil {
			return "date"
		}
		return strings.ToLower(strings.TrimSpace(x))
	}
	b, _ := json.Marshal(v)
	return string(b)
}
