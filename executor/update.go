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
	r := sr.r
	replaceNavs := make([][]string, len(ws))
	var keys, fields, expand []string
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
		keys = append(keys, root.key)
		for k := range w.rec.Fields {
			if !seenField[k] {
				seenField[k] = true
				fields = append(fields, k)
			}
		}
		// A text the record already holds is not sent again (heldTexts):
		// read the texts with the entity.
		for _, k := range root.kids {
			if isTextOp(k) && !seenNav[k.nav] {
				seenNav[k.nav] = true
				expand = append(expand, k.nav)
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
				replaceNavs[i] = append(replaceNavs[i], c.Nav)
			}
			if !seenNav[c.Nav] {
				seenNav[c.Nav] = true
				expand = append(expand, c.Nav)
			}
		}
	}
	// One read for many records: only the fields the records
	// write, with the lines that lines: replace deletes.
	var t *odata.EntityType
	if set := r.md.EntitySet(sr.entity); set != nil {
		t = set.Type
	}
	sort.Strings(expand)
	rd := &read.Keys{Send: r.sendReads, Set: sr.entity, Type: t, Select: fields, Expand: expand, PerBatch: r.limit}
	found, err := rd.ReadKeys(sr.ctx, keys)
	if err != nil {
		if errors.Is(err, errHalt) {
			return err
		}
		return fmt.Errorf("step %s: reading the current entities: %w", sr.step.Name, err)
	}
	matchRead := sr.r.rd.Read
	diffs := r.jr.diffs()
	if diffs != nil && sr.step.Mode == plan.ModeInsert {
		if matchRead, err = sr.readMatches(ws); err != nil {
			if errors.Is(err, errHalt) {
				return err
			}
			return fmt.Errorf("step %s: looking up its documents by match: %w", sr.step.Name, err)
		}
	}
	for i, w := range ws {
		if w == nil {
			continue
		}
		root := w.root
		if root.key == "" {
			if sr.step.Mode == plan.ModeUpdate {
				sr.buildFailed(w, fmt.Errorf("update: the record has no key to find %s by", sr.entity))
				continue
			}
			if diffs != nil {
				action, matches := DiffCreate, []string(nil)
				if sr.step.Mode == plan.ModeInsert && root.key == "" {
					var err error
					if action, matches, err = sr.matchInsert(w, matchRead); err != nil {
						return fmt.Errorf("step %s: looking up its documents by match: %w", sr.step.Name, err)
					}
				}
				sr.classify(w, action, nil, nil, matches)
				if action != DiffCreate {
					continue // apply would make a second: not simulated
				}
			}
			if err := sr.start(w, []unit{flatten(root, nil)}); err != nil {
				return err
			}
			continue
		}
		resp := found[root.key]
		switch {
		case resp.Status == 404:
			if sr.step.Mode == plan.ModeUpdate {
				sr.classify(w, DiffMissing, nil, nil, nil)
				if diffs == nil {
					sr.buildFailed(w, fmt.Errorf("update: %s(%s) does not exist", sr.entity, root.key))
				}
				continue
			}
			sr.classify(w, DiffCreate, nil, nil, nil)
			if err := sr.start(w, []unit{flatten(root, nil)}); err != nil {
				return err
			}
			continue
		case resp.Status != 200:
			sr.buildFailed(w, fmt.Errorf("reading %s(%s): %s", sr.entity, root.key, odata.ParseError(resp.Status, nil, resp.Body).Error()))
			continue
		}
		cur, err := odata.DecodeEntity(resp.Body)
		if err != nil {
			sr.buildFailed(w, fmt.Errorf("reading %s(%s): %v", sr.entity, root.key, err))
			continue
		}
		if sr.step.Mode == plan.ModeInsert { // read in a diff only
			sr.classify(w, DiffConflict, nil, nil, nil)
			continue
		}
		changed, before := diffFields(root.typ, w.rec.Fields, cur)
		w.held = heldFields(w.rec.Fields, changed)
		// The sub-forms read with the entity: the lines lines: replace
		// deletes before adding, the lines and texts it holds already.
		var expanded map[string]json.RawMessage
		_ = json.Unmarshal(resp.Body, &expanded)
		held := heldTexts(expanded, root.kids)
		heldLines(sr.r.md, root, expanded, replaceNavs[i], held)
		// A line an earlier run of the journal added (its outcome, or
		// reconciliation, says so) is the record's whatever the server
		// filled in it: not added again; under lines: replace, once that
		// run's deletes were done, nor deleted.
		own := map[string]map[string]bool{} // sub-form: keys of those lines
		if w.prev != nil {
			for _, k := range root.kids {
				s := w.prev.Subs[k.path]
				if s == nil || !s.OK() || s.Op != journal.OpCreate {
					continue
				}
				if !slices.Contains(replaceNavs[i], k.nav) {
					held[k] = true
				} else if reconcile.Replaced(w.prev, k.nav) {
					held[k] = true
					if own[k.nav] == nil {
						own[k.nav] = map[string]bool{}
					}
					own[k.nav][s.ResultKey] = true
				}
			}
		}
		var added []*op // the lines apply appends
		for _, k := range root.kids {
			if !k.single && !held[k] && !slices.Contains(replaceNavs[i], k.nav) {
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
		for _, nav := range replaceNavs[i] {
			var coll struct {
				Value []json.RawMessage
			}
			if json.Unmarshal(expanded[nav], &coll.Value) != nil {
				continue
			}
			var lt *odata.EntityType
			if root.typ != nil {
				if n := root.typ.Navigation(nav); n != nil {
					lt = sr.r.md.Type(n.Type)
				}
			}
			for _, raw := range coll.Value {
				e, err := odata.DecodeEntity(raw)
				if err != nil || lt == nil {
					continue
				}
				lk := odata.EntityKey(lt, e)
				if lk == "" || own[nav][lk] {
					continue
				}
				// What undo re-creates the line from.
				before, err := LineBody(raw, lt)
				if err != nil {
					before = raw
				}
				first = append(first, &op{work: w, kind: journal.OpDelete, method: "DELETE", nav: nav,
					url: root.abs + "/" + odata.KeySegment(nav, lk), line: lk, before: before, loc: w.rec.Loc})
			}
		}
		var rest []unit
		for _, k := range root.kids {
			if held[k] {
				continue
			}
			rest = append(rest, flatten(k, nil))
		}
		if len(first) > 0 && len(replaceNavs[i]) > 0 {
			w.then = rest
			if err := sr.start(w, []unit{first}); err != nil {
				return err
			}
			continue
		}
		units := rest
		if len(first) > 0 {
			units = append([]unit{first}, rest...)
		}
		if err := sr.start(w, units); err != nil {
			return err
		}
	}
	return nil
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
	r.subs.Add(int64(len(reqs)))
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
