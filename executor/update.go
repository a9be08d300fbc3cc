package executor

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/migrate-tool/migrate/compare"
	"github.com/migrate-tool/migrate/journal"
	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/plan"
	"github.com/migrate-tool/migrate/read"
	"github.com/migrate-tool/migrate/reconcile"
)

// readPending reads the current entities of the records waiting in
// upsert or update mode (GETs in one batch; 404 = absent), then sends a
// PATCH of only the changed fields, an insert of what is absent (upsert),
// and for lines: replace the deletes of the existing lines first.
func (sr *stepRun) readPending() error {
	ws := sr.reads
	sr.reads = nil
	if len(ws) == 0 {
		return nil
	}
	q := sr.readsOf(ws)
	found, err := q.ReadKeys(sr.ctx, q.keys)
	if err != nil {
		return sr.readFailed("reading the current entities", err)
	}
	matchRead := sr.r.rd.Read
	diffs := sr.r.jr.diffs() != nil
	if diffs && sr.step.Mode == plan.ModeInsert {
		if matchRead, err = sr.readMatches(ws); err != nil {
			return sr.readFailed("looking up its documents by match", err)
		}
	}
	for i, w := range ws {
		switch {
		case w == nil:
			continue
		case w.root.key == "":
			err = sr.startKeyless(w, diffs, matchRead)
		default:
			err = sr.startRead(w, found[w.root.key], q.replace[i], diffs)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// readFailed is a step's read that failed (what: what it read): the halt
// of the run as it is, else named with the step.
func (sr *stepRun) readFailed(what string, err error) error {
	if errors.Is(err, errHalt) {
		return err
	}
	return fmt.Errorf("step %s: %s: %w", sr.step.Name, what, err)
}

// pendingReads is the one read of the records waiting for theirs: the
// keys to read, with only the fields the records write, and the sub-forms
// they hold (expand); replace is, by record, the sub-forms whose lines
// lines: replace deletes.
type pendingReads struct {
	read.Keys
	keys    []string
	replace [][]string
}

// readsOf builds the records of ws (a record that fails to build is
// failed, and nil in ws from then on) and the read they need.
func (sr *stepRun) readsOf(ws []*work) *pendingReads {
	r := sr.r
	q := &pendingReads{replace: make([][]string, len(ws))}
	seenField, seenNav := map[string]bool{}, map[string]bool{}
	for i, w := range ws {
		root, err := sr.b.insertOps(w)
		if err != nil {
			sr.buildFailed(w, err)
			ws[i] = nil
			continue
		}
		w.root = root
		if root.key == "" || sr.step.Mode == plan.ModeInsert && standIn(root.key) {
			continue // numbered by the server, or created by the run
		}
		q.keys = append(q.keys, root.key)
		for k := range w.rec.Fields {
			if !seenField[k] {
				seenField[k] = true
				q.Select = append(q.Select, k)
			}
		}
		// A text the record already holds is not sent again (heldTexts):
		// read the texts with the entity.
		for _, k := range root.kids {
			if isTextOp(k) && !seenNav[k.nav] {
				seenNav[k.nav] = true
				q.Expand = append(q.Expand, k.nav)
			}
		}
		// lines: replace deletes the lines it reads; lines: append does not
		// add again a line the record holds (heldLines): both read the
		// lines with the entity.
		seen := map[string]bool{}
		for _, c := range w.rec.Children {
			if c.Single || seen[c.Nav] {
				continue
			}
			seen[c.Nav] = true
			if c.Replace {
				q.replace[i] = append(q.replace[i], c.Nav)
			}
			if !seenNav[c.Nav] {
				seenNav[c.Nav] = true
				q.Expand = append(q.Expand, c.Nav)
			}
		}
	}
	sort.Strings(q.Expand)
	q.Send, q.Set, q.PerBatch = r.sendReads, sr.entity, r.limit
	if set := r.md.EntitySet(sr.entity); set != nil {
		q.Type = set.Type
	}
	return q
}

// startKeyless starts a record that names no key to read it by: the
// server numbers it. In a diff (diffs), an insert first looks for its
// document by the step's match: (matchRead) and is classified.
func (sr *stepRun) startKeyless(w *work, diffs bool, matchRead func(string) (odata.BatchResponse, error)) error {
	root := w.root
	if sr.step.Mode == plan.ModeUpdate {
		sr.buildFailed(w, fmt.Errorf("update: the record has no key to find %s by", sr.entity))
		return nil
	}
	if diffs {
		action, matches := DiffCreate, []string(nil)
		if sr.step.Mode == plan.ModeInsert {
			var err error
			if action, matches, err = sr.matchInsert(w, matchRead); err != nil {
				return fmt.Errorf("step %s: looking up its documents by match: %w", sr.step.Name, err)
			}
		}
		sr.classify(w, action, nil, nil, matches)
		if action != DiffCreate {
			return nil // apply would make a second: not simulated
		}
	}
	return sr.start(w, []unit{flatten(root, nil)})
}

// startRead starts a record by what the read of its key answered
// (resp): a create of what is absent, a PATCH of only the fields that
// changed, the lines and texts it does not hold yet, and, for the
// sub-forms of replace (lines: replace), the deletes of the lines it
// holds first.
func (sr *stepRun) startRead(w *work, resp read.Found, replace []string, diffs bool) error {
	root := w.root
	switch {
	case resp.Status == 404:
		if sr.step.Mode == plan.ModeUpdate {
			sr.classify(w, DiffMissing, nil, nil, nil)
			if !diffs {
				sr.buildFailed(w, fmt.Errorf("update: %s(%s) does not exist", sr.entity, root.key))
			}
			return nil
		}
		sr.classify(w, DiffCreate, nil, nil, nil)
		return sr.start(w, []unit{flatten(root, nil)})
	case resp.Status != 200:
		sr.buildFailed(w, fmt.Errorf("reading %s(%s): %s", sr.entity, root.key, odata.ParseError(resp.Status, nil, resp.Body).Error()))
		return nil
	}
	cur, err := odata.DecodeEntity(resp.Body)
	if err != nil {
		sr.buildFailed(w, fmt.Errorf("reading %s(%s): %v", sr.entity, root.key, err))
		return nil
	}
	if sr.step.Mode == plan.ModeInsert { // read in a diff only
		sr.classify(w, DiffConflict, nil, nil, nil)
		return nil
	}
	changed, before := diffFields(root.typ, w.rec.Fields, cur)
	w.held = heldFields(w.rec.Fields, changed)
	// The sub-forms read with the entity: the lines lines: replace
	// deletes before adding, the lines and texts it holds already.
	var expanded map[string]json.RawMessage
	_ = json.Unmarshal(resp.Body, &expanded)
	held := heldTexts(expanded, root.kids)
	heldLines(sr.r.md, root, expanded, replace, held)
	own := ownLines(w, replace, held)
	var added []*op // the lines apply appends
	for _, k := range root.kids {
		if !k.single && !held[k] && !slices.Contains(replace, k.nav) {
			added = append(added, k)
		}
	}
	switch {
	case len(changed) == 0 && len(added) == 0:
		sr.classify(w, DiffUnchanged, nil, nil, nil)
	default:
		sr.classifyLines(w, changed, before, added)
	}
	// An existing document: its lines go on their own (no deep insert).
	root.carry(false)
	root.abs = odata.KeySegment(sr.entity, root.key)
	root.url = root.abs
	if len(changed) == 0 {
		root.done, root.status = true, 200
	} else {
		root.kind, root.method = journal.OpPatch, "PATCH"
		root.body, _ = odata.MarshalBody(changed)
		root.before, _ = json.Marshal(before)
		root.patch, _ = odata.MarshalBody(changed)
	}
	var first unit
	if !root.done {
		first = append(first, root)
	}
	// lines: replace deletes what the parent has before adding.
	for _, nav := range replace {
		first = append(first, sr.replaced(w, expanded[nav], nav, own[nav])...)
	}
	var rest []unit
	for _, k := range root.kids {
		if held[k] {
			// The document holds it: the record has it, sent or not (a
			// record partly loaded counts it among its lines).
			k.done, k.status = true, 200
			continue
		}
		rest = append(rest, flatten(k, nil))
	}
	if len(first) > 0 && len(replace) > 0 {
		w.then = rest
		return sr.start(w, []unit{first})
	}
	units := rest
	if len(first) > 0 {
		units = append([]unit{first}, rest...)
	}
	return sr.start(w, units)
}

// ownLines marks held the lines an earlier run of the journal added to
// w's document (its outcome, or reconciliation, says so): they are the
// record's whatever the server filled in them, and are not added again.
// Under lines: replace (the sub-forms of replace), once that run's
// deletes were done, nor are they deleted: it returns their keys by
// sub-form.
func ownLines(w *work, replace []string, held map[*op]bool) map[string]map[string]bool {
	own := map[string]map[string]bool{}
	if w.prev == nil {
		return own
	}
	for _, k := range w.root.kids {
		s := w.prev.Subs[k.path]
		if s == nil || !s.OK() || s.Op != journal.OpCreate {
			continue
		}
		if !slices.Contains(replace, k.nav) {
			held[k] = true
		} else if reconcile.Replaced(w.prev, k.nav) {
			held[k] = true
			if own[k.nav] == nil {
				own[k.nav] = map[string]bool{}
			}
			own[k.nav][s.ResultKey] = true
		}
	}
	return own
}

// replaced are the deletes lines: replace sends of the lines of sub-form
// nav that w's document holds (lines, as read with it), but those of own:
// each keeps the line as it was, which undo re-creates it from.
func (sr *stepRun) replaced(w *work, lines json.RawMessage, nav string, own map[string]bool) unit {
	root := w.root
	var coll []json.RawMessage
	if json.Unmarshal(lines, &coll) != nil {
		return nil
	}
	var lt *odata.EntityType
	if root.typ != nil {
		if n := root.typ.Navigation(nav); n != nil {
			lt = sr.r.md.Type(n.Type)
		}
	}
	var out unit
	for _, raw := range coll {
		e, err := odata.DecodeEntity(raw)
		if err != nil || lt == nil {
			continue
		}
		lk := odata.EntityKey(lt, e)
		if lk == "" || own[lk] {
			continue
		}
		before, err := LineBody(raw, lt)
		if err != nil {
			before = raw
		}
		out = append(out, &op{work: w, kind: journal.OpDelete, method: "DELETE", nav: nav,
			url: root.abs + "/" + odata.KeySegment(nav, lk), line: lk, before: before, loc: w.rec.Loc})
	}
	return out
}

// isTextOp reports whether a child is a text sub-form (docs/service.md, Text
// sub-forms): a single-object sub-form that writes TEXT.
func isTextOp(k *op) bool {
	_, ok := k.fields["TEXT"]
	return k.single && ok
}

// heldTexts returns the text children that an existing entity already
// holds, as read with it (its expanded sub-forms): an appended text (APPEND: true) whose
// content is already in the entity's text, or a replacing one equal to it,
// compared on their content (odata.TextContent), since servers read texts
// back normalised. Sending them again would append the text a second time
// each time the plan runs, or rewrite what did not change.
func heldTexts(expanded map[string]json.RawMessage, kids []*op) map[*op]bool {
	held := map[*op]bool{}
	for _, k := range kids {
		if !isTextOp(k) {
			continue
		}
		var got struct{ TEXT *string }
		if cur := expanded[k.nav]; len(cur) == 0 || json.Unmarshal(cur, &got) != nil || got.TEXT == nil {
			continue
		}
		want, _ := k.fields["TEXT"].(string)
		if appendText, _ := k.fields["APPEND"].(bool); appendText {
			held[k] = compare.TextIn(*got.TEXT, want)
		} else {
			held[k] = compare.SameText(*got.TEXT, want)
		}
	}
	return held
}

// heldLines marks in held the lines of root (a record that exists) that
// the record holds already, as read with it (expanded): a line of a
// sub-form it appends to (lines: append, not one of replace) whose every
// field written has the same value in a line of that sub-form, each line
// held standing for one line of the plan (two equal lines of the plan
// need two on the server). Sending them again would add every line a
// second time each time the plan runs. Every line it adds, to a sub-form
// of either kind, keeps the highest key the sub-form held (op.above): a
// line found since with a higher one is the run's.
func heldLines(md *odata.Metadata, root *op, expanded map[string]json.RawMessage, replace []string, held map[*op]bool) {
	byNav := map[string][]*op{}
	var navs []string
	for _, k := range root.kids {
		if k.single {
			continue
		}
		if _, seen := byNav[k.nav]; !seen {
			navs = append(navs, k.nav)
		}
		byNav[k.nav] = append(byNav[k.nav], k)
	}
	for _, nav := range navs {
		var raws []json.RawMessage
		_ = json.Unmarshal(expanded[nav], &raws)
		var lt *odata.EntityType
		if root.typ != nil {
			if n := root.typ.Navigation(nav); n != nil {
				lt = md.Type(n.Type)
			}
		}
		kids := byNav[nav]
		want := make([]map[string]any, len(kids))
		lines := odata.DecodeEntities(raws)
		above := highestKey(lt, lines)
		for i, k := range kids {
			want[i] = k.fields
			k.above = above
		}
		if slices.Contains(replace, nav) {
			continue // its lines are deleted first: none is held
		}
		m := compare.Lines(lt, lines, want)
		for i, j := range m.Held {
			if j >= 0 {
				held[kids[i]] = true
			}
		}
	}
}

// highestKey is the highest key of lines (of type lt) that is a number,
// "0" when there is none: a line added since has a higher one.
func highestKey(lt *odata.EntityType, lines []map[string]any) string {
	high := "0"
	for _, l := range lines {
		if k := odata.EntityKey(lt, l); k != "" {
			if c, ok := reconcile.MarkCompare(k, high); ok && c > 0 {
				high = k
			}
		}
	}
	return high
}

// diffFields returns the record's fields whose value differs from the
// server's (compared after decoding per the metadata type: decimals
// numerically, times as instants), and the server's old values of them.
func diffFields(t *odata.EntityType, want map[string]any, cur map[string]any) (map[string]any, map[string]any) {
	changed := map[string]any{}
	before := map[string]any{}
	for k, v := range want {
		if t != nil && t.IsKey(k) {
			continue
		}
		var p *odata.Property
		if t != nil {
			p = t.Property(k)
		}
		if compare.Value(p, cur[k], v) {
			continue
		}
		changed[k] = v
		before[k] = cur[k]
	}
	return changed, before
}

// heldFields is what of fields the entity holds already (those not
// changed), in the journal's match form: what verify compares besides
// what was sent.
func heldFields(fields, changed map[string]any) json.RawMessage {
	held := make(map[string]any, len(fields))
	for k, v := range fields {
		if _, ok := changed[k]; !ok {
			held[k] = v
		}
	}
	return matchFields(held)
}

// sendReads is the run's read.Send: a read call waits for a slot as a
// write does and counts in the run's statistics.
func (r *runner) sendReads(ctx context.Context, reqs []odata.BatchRequest) ([]odata.BatchResponse, error) {
	select {
	case r.sem <- struct{}{}:
	case <-r.ctx.Done():
		return nil, errHalt
	}
	got, err := r.rd.ReadBatch(ctx, reqs)
	<-r.sem
	r.hook.BatchSent(len(reqs))
	return got, err
}

// LineBody is what re-creates a line, from the line as the server gave it
// when lines: replace read it before the delete: its fields, with the line
// key (so that it gets its old number back where the server lets a client
// choose it), without annotations, sub-forms, empty fields and, when its
// type t is known, the fields the server computes (docs/service.md, Keys:
// read-only). Apply journals it so (it knows the metadata); undo applies it
// again to journals written before.
func LineBody(before json.RawMessage, t *odata.EntityType) ([]byte, error) {
	var fields map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(before))
	dec.UseNumber()
	if err := dec.Decode(&fields); err != nil {
		return nil, err
	}
	for k, v := range fields {
		v = bytes.TrimSpace(v)
		switch {
		case strings.Contains(k, "@"), len(v) == 0, string(v) == "null", v[0] == '{', v[0] == '[':
			delete(fields, k)
		case t != nil && t.Navigation(k) != nil:
			delete(fields, k)
		case t != nil && t.Property(k) != nil && t.Property(k).Computed:
			delete(fields, k)
		}
	}
	if len(fields) == 0 {
		return nil, errors.New("no fields")
	}
	return json.Marshal(fields)
}
