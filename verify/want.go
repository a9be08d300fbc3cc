package verify

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"

	"github.com/migrate-tool/migrate/compare"
	"github.com/migrate-tool/migrate/journal"
	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/reconcile"
)

// Verify and undo ask the same question of a record,
// "does the server hold what the run left there?", and answered it from
// different parts of the journal (verify from the first payload of a
// retried deep insert, line by position; undo from the header alone). A
// record's wanted state is worked out once here, from the last attempt at
// each path, and compared once (CheckRecord), by compare's rule.

// Want is what a record's entity should hold after the run: the
// fields it left (its create or patch, with what the server filled in) and
// those an upsert found held already, and every first-level child it
// wrote, the last attempt at each path (a retry's line replaces the
// payload that failed), a deep insert's lines and texts included.
type Want struct {
	// Fields is what the entity should hold; Sent is what the run sent of
	// it, and held (the source side of the control totals).
	Fields, Sent map[string]any
	// Kids are the children by sub-form: lines of a collection, texts of
	// a single sub-form.
	Kids map[string][]wantKid
	// Whole: every line the entity holds is the run's (it created the
	// entity, or lines: replace deleted the others); a line it holds and
	// the run did not write is extra.
	Whole bool
}

// wantKid is one child the run wrote.
type wantKid struct {
	Path string
	// Key is the line key the server gave it ("" for a line a deep insert
	// carried: the journal has none).
	Key string
	// Left is what it should hold, Sent what was sent; Match as the
	// journal keeps it (a text's TEXT is compared by its content).
	Left, Sent map[string]any
	Match      json.RawMessage
	// Carried is its place among its sub-form's lines in the deep insert
	// that carried it, from 1; 0 for a child sent on its own.
	Carried int
}

// WantOf is the wanted state of rec from the journal.
func WantOf(rec *journal.RecordState) Want {
	w := Want{Fields: map[string]any{}, Sent: map[string]any{}, Kids: map[string][]wantKid{}, Whole: rec.Created}
	own := map[string]bool{}
	var paths []string
	for p, s := range rec.Subs {
		if p != "" && journal.Depth(p) == 1 {
			own[p] = true
		}
		if written(s) {
			paths = append(paths, p)
		}
	}
	sort.Slice(paths, func(i, j int) bool { return pathLess(paths[i], paths[j]) })
	// What the server filled in place of what a carried line sent, as
	// its answer said (or reconciliation found): the line holds that, and
	// it is no change made since. What a delta found a line or text
	// holding already as the sources gave it, and did not send, is wanted
	// as if it had been sent.
	filled, heldKid := map[string]json.RawMessage{}, map[string]journal.WroteKid{}
	if kids, err := journal.DecodeKids(rec.WroteKids); err == nil {
		for _, k := range kids {
			filled[k.Path] = k.Filled
			if len(k.Held) > 0 {
				heldKid[k.Path] = k
			}
		}
	}
	hold := func(k *wantKid) {
		held := heldKid[k.Path].Held
		delete(heldKid, k.Path)
		h, err := odata.DecodeEntity(held)
		if err != nil || len(h) == 0 {
			return
		}
		k.Left, k.Sent, k.Match = overlaid(k.Left, h), overlaid(k.Sent, h), journal.Overlay(k.Match, held)
	}
	// under holds, of a carried line a delta load patched on its own since,
	// what the deep insert wrote: the PATCH stands over it.
	under := map[string]json.RawMessage{}
	for _, p := range paths {
		s := rec.Subs[p]
		if p == "" {
			for k, v := range Left(s) {
				w.Fields[k] = v
			}
			for k, v := range sentBy(s) {
				w.Sent[k] = v
			}
			place := map[string]int{}
			for _, c := range s.Carried() {
				place[c.Nav]++
				if own[c.Path] {
					if s := rec.Subs[c.Path]; s.Op == journal.OpPatch && s.Over == "" {
						under[c.Path] = c.Match
					}
					continue // sent again on its own: its last attempt counts
				}
				m, _ := odata.DecodeEntity(c.Match)
				k := wantKid{Path: c.Path, Left: m, Sent: m, Match: c.Match}
				if f, err := odata.DecodeEntity(filled[c.Path]); err == nil && len(f) > 0 {
					k.Left, k.Match = overlaid(m, f), journal.Overlay(c.Match, filled[c.Path])
				}
				if !c.Single {
					k.Carried = place[c.Nav]
				}
				hold(&k)
				w.Kids[c.Nav] = append(w.Kids[c.Nav], k)
			}
			continue
		}
		key := s.ResultKey
		if key == "" {
			key = s.Line
		}
		k := wantKid{Path: p, Key: key, Left: Left(s), Sent: sentBy(s), Match: s.Match}
		if base := under[p]; base != nil {
			m, _ := odata.DecodeEntity(base)
			k.Left, k.Sent = overlaid(m, k.Left), overlaid(m, k.Sent)
			k.Match = journal.Overlay(base, s.Match)
		}
		hold(&k)
		w.Kids[s.Nav] = append(w.Kids[s.Nav], k)
	}
	// A child nothing was ever sent to, which the server held already as
	// the sources gave it (a text someone typed in before the delta).
	for _, p := range slices.Sorted(maps.Keys(heldKid)) {
		wk := heldKid[p]
		if h, err := odata.DecodeEntity(wk.Held); err == nil && len(h) > 0 {
			w.Kids[wk.Nav] = append(w.Kids[wk.Nav], wantKid{Path: p, Key: wk.Key, Left: h, Sent: h, Match: wk.Held})
		}
	}
	for _, s := range rec.Extra {
		if s.Op == journal.OpDelete && s.OK() {
			w.Whole = true
		}
	}
	// What the server was found holding already stands over what was sent
	// before: an upsert's fields it did not send, a delta's fields the
	// server held as the source gave them, over the load's.
	if held, err := odata.DecodeEntity(rec.Held); err == nil {
		for k, v := range held {
			w.Fields[k], w.Sent[k] = v, v
		}
	}
	return w
}

// overlaid is top's members written over a copy of base.
func overlaid(base, top map[string]any) map[string]any {
	out := make(map[string]any, len(base)+len(top))
	for k, v := range base {
		out[k] = v
	}
	for k, v := range top {
		out[k] = v
	}
	return out
}

// Navs are the sub-forms the record's children were written to, sorted.
func (w Want) Navs() []string { return slices.Sorted(maps.Keys(w.Kids)) }

// RecordCheck is what CheckRecord found.
type RecordCheck struct {
	Findings []RecordFinding
	// Entity is the entity as read; Lines, by sub-form, the lines that
	// count as the record's (every one held where the record is Whole,
	// else those paired with a line written): the target side of the
	// control totals.
	Entity map[string]any
	Lines  map[string][]map[string]any
	// Compared counts the fields, lines and texts compared with a value
	// read: none with something written is a record not verifiable.
	Compared int
}

// RecordFinding is one field, line or text not as the run left it.
type RecordFinding struct {
	// URL is the path below the entity: "" the entity itself,
	// "/NAV" a text, "/NAV(KEY)" a line.
	URL          string
	Field        string
	Problem      string
	Sent, Found  any
	Detail       string
	Line, Single bool
}

// Extra is a problem: a line the entity holds that the run did not write.
const Extra = "extra"

// CheckRecord compares the entity read (body, with its sub-forms
// expanded) with what w wants, by compare's rule: typed by t and md where
// they are known (verify), untyped where not (undo reads no metadata).
// A line the server gave a key (one sent on its own) is the line of that
// key; the others (a deep insert's, whose keys the journal lacks) are
// paired by content (compare.Lines), else with a held line no other took,
// in order, whose fields are then named; with neither a line is gone.
func CheckRecord(md *odata.Metadata, t *odata.EntityType, w Want, body []byte) (RecordCheck, error) {
	var c RecordCheck
	got, err := odata.DecodeEntity(body)
	var raw map[string]json.RawMessage
	if err == nil {
		err = json.Unmarshal(body, &raw)
	}
	if err != nil {
		return c, err
	}
	c.Entity = got
	for _, d := range compare.Fields(t, got, w.Fields) {
		c.Findings = append(c.Findings, RecordFinding{Field: d.Field, Problem: problemOf(d), Sent: d.Left, Found: d.Found})
	}
	for k := range w.Fields {
		if _, ok := got[k]; ok && (t == nil || !t.IsKey(k)) {
			c.Compared++
		}
	}
	c.Lines = map[string][]map[string]any{}
	for _, nav := range w.Navs() {
		var lt *odata.EntityType
		collection := len(raw[nav]) > 0 && raw[nav][0] == '['
		if t != nil {
			n := t.Navigation(nav)
			if n == nil {
				continue
			}
			lt, collection = md.Type(n.Type), n.Collection
		}
		if collection {
			c.lines(lt, nav, w.Kids[nav], raw[nav], w.Whole)
		} else {
			c.texts(lt, nav, w.Kids[nav], raw[nav])
		}
	}
	return c, nil
}

// texts compares the single sub-form nav (a text: read back normalised,
// holding every text appended to it; else field by field) with what was
// written to it.
func (c *RecordCheck) texts(lt *odata.EntityType, nav string, kids []wantKid, held json.RawMessage) {
	for _, k := range kids {
		if len(k.Left) == 0 {
			continue // nothing of it journaled to compare (a text too long)
		}
		c.Compared++
		if compare.TextInJSON(held, k.Match) || compare.SameJSON(lt, held, k.Match) {
			continue
		}
		if !reconcile.WritesText(k.Match) {
			c.single(lt, nav, k, held)
			continue
		}
		var want, have struct{ TEXT string }
		_ = json.Unmarshal(k.Match, &want)
		_ = json.Unmarshal(held, &have)
		c.Findings = append(c.Findings, RecordFinding{URL: "/" + nav, Field: "TEXT", Problem: Differs, Single: true,
			Sent: odata.TextContent(want.TEXT), Found: odata.TextContent(have.TEXT)})
	}
}

// single compares a single sub-form other than a text (a ship-to
// address) field by field with what was written to it; one the entity
// no longer holds is gone.
func (c *RecordCheck) single(lt *odata.EntityType, nav string, k wantKid, held json.RawMessage) {
	have, err := odata.DecodeEntity(held)
	if err != nil || have == nil {
		c.Findings = append(c.Findings, RecordFinding{URL: "/" + nav, Problem: Gone, Single: true})
		return
	}
	for _, d := range compare.Fields(lt, have, k.Left) {
		c.Findings = append(c.Findings, RecordFinding{URL: "/" + nav, Field: d.Field, Problem: problemOf(d), Sent: d.Left, Found: d.Found, Single: true})
	}
}

// lines compares the lines of sub-form nav (held, as read) with those
// written.
func (c *RecordCheck) lines(lt *odata.EntityType, nav string, kids []wantKid, body json.RawMessage, whole bool) {
	var raws []json.RawMessage
	_ = json.Unmarshal(body, &raws)
	held := odata.DecodeEntities(raws)
	// A field the server leaves out of its answers (field-level
	// permissions) is not paired on: every line would look gone.
	readable := map[string]bool{}
	for _, h := range held {
		for k := range h {
			readable[k] = true
		}
	}
	wants := make([]map[string]any, len(kids))
	for i, k := range kids {
		wants[i] = map[string]any{}
		for f, v := range k.Left {
			if readable[f] || len(held) == 0 {
				wants[i][f] = v
			}
		}
	}
	// A line the server gave a key to is that line (identity, not a look
	// alike); the others, a deep insert's, are paired by content.
	pairedTo := make([]int, len(kids))
	taken := make([]bool, len(held))
	for i, k := range kids {
		pairedTo[i] = -1
		if k.Key == "" || lt == nil {
			continue
		}
		for j, h := range held {
			if !taken[j] && odata.EntityKey(lt, h) == odata.CanonicalKey(lt, k.Key) {
				pairedTo[i], taken[j] = j, true
				break
			}
		}
	}
	var restKids, restHeld []int
	for i := range kids {
		if pairedTo[i] < 0 {
			restKids = append(restKids, i)
		}
	}
	for j := range held {
		if !taken[j] {
			restHeld = append(restHeld, j)
		}
	}
	someWants, someHeld := make([]map[string]any, len(restKids)), make([]map[string]any, len(restHeld))
	for a, i := range restKids {
		someWants[a] = wants[i]
	}
	for b, j := range restHeld {
		someHeld[b] = held[j]
	}
	for a, b := range compare.Lines(lt, someHeld, someWants).Held {
		if b >= 0 {
			pairedTo[restKids[a]], taken[restHeld[b]] = restHeld[b], true
		}
	}
	// Not the same as any held line: a line left over, in order, whose
	// fields are then named.
	next := 0
	for i := range kids {
		if pairedTo[i] >= 0 {
			continue
		}
		for next < len(held) && taken[next] {
			next++
		}
		if next < len(held) && kids[i].Key == "" {
			pairedTo[i], taken[next] = next, true
		}
	}
	lineURL := func(h map[string]any, key string) string {
		if k := odata.EntityKey(lt, h); k != "" {
			key = k
		}
		if key == "" {
			return "/" + nav
		}
		return "/" + odata.KeySegment(nav, key)
	}
	for i, k := range kids {
		j := pairedTo[i]
		if j < 0 {
			f := RecordFinding{URL: lineURL(nil, k.Key), Problem: Gone, Line: true}
			if k.Carried > 0 {
				f.Detail = fmt.Sprintf("line %d of the deep insert", k.Carried)
			}
			c.Findings = append(c.Findings, f)
			continue
		}
		c.Compared++
		if !whole {
			c.Lines[nav] = append(c.Lines[nav], pick(held[j], k.Sent))
		}
		for _, d := range compare.Fields(lt, held[j], k.Left) {
			c.Findings = append(c.Findings, RecordFinding{URL: lineURL(held[j], k.Key), Field: d.Field, Problem: problemOf(d), Sent: d.Left, Found: d.Found, Line: true})
		}
	}
	if !whole {
		return
	}
	written := map[string]any{}
	for _, k := range kids {
		for f := range k.Sent {
			written[f] = true
		}
	}
	for j, h := range held {
		c.Lines[nav] = append(c.Lines[nav], pick(h, written))
		if !taken[j] {
			c.Findings = append(c.Findings, RecordFinding{URL: lineURL(h, ""), Problem: Extra, Found: h, Line: true,
				Detail: "a line the run did not write"})
		}
	}
}

// leftBy is what sub-request s left on the server: the fields it wrote,
// with the server's values where it did not take them as sent.
func leftBy(s *journal.SubState) json.RawMessage {
	if len(s.Filled) == 0 {
		return s.Match
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(s.Match, &m) != nil || json.Unmarshal(s.Filled, &m) != nil {
		return s.Match
	}
	b, _ := json.Marshal(m)
	return b
}
