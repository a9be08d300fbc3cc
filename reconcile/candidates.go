package reconcile

import (
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"sort"
	"strings"

	"github.com/migrate-tool/migrate/compare"
	"github.com/migrate-tool/migrate/internal/diag"
	"github.com/migrate-tool/migrate/journal"
	"github.com/migrate-tool/migrate/odata"
)

// Which documents on the server may be the one an in-doubt
// create made, when the server assigns its key. Reconciliation takes the
// only one; resolve lists them for the user.

// Candidate is a document that may be the one an in-doubt create made.
type Candidate struct {
	Key    string         // key expression, as the journal keeps it
	Fields map[string]any // the fields it was matched on
	// Differs, on a near candidate (nearCandidates), is the one field it
	// holds with another value than the create sent; nil on one that
	// matches every field.
	Differs []string
	entity  map[string]any // as read: what the server filled (Filled)
}

// Cond is one comparison of the lookup's $filter.
type Cond struct {
	field string
	p     *odata.Property // the field's, nil when the metadata does not know it
	op    string          // eq, gt
	value any             // as odata.DecodeEntity gives it (json.Number, string, ...)
	lit   string
}

// Lookup finds the candidates of a create in doubt (s): the documents of
// its record's entity that match it: its step's match: fields (else every scalar field it
// wrote), created after the step's watermark, not held by another record
// of the journal (claimed), and not holding a line the record did not
// send. why, when set, says the lookup cannot decide (nothing to match
// on, a filter the server did not apply).
func (r *Reader) Lookup(s *journal.SubState, claimed Claims) ([]Candidate, string, error) {
	ent, t, want, conds, bounded, why := r.candidateQuery(s)
	if why != "" {
		return nil, why, nil
	}
	read := r.Read
	if near := nearPaths(ent, conds, bounded); r.cache == nil && len(near) > 0 {
		// In a run, the lookup and the looser ones a miss needs go in one
		// call: calls are what the server rations, reads inside one are not.
		got := map[string]odata.BatchResponse{}
		if err := r.readInto(got, append([]string{MatchURL(ent, conds)}, near...)); err != nil {
			return nil, "", err
		}
		read = func(p string) (odata.BatchResponse, error) {
			if resp, ok := got[p]; ok {
				return resp, nil
			}
			return r.Read(p)
		}
	}
	all, why, err := r.findRows(ent, conds, read)
	if why != "" || err != nil {
		return nil, why, err
	}
	rows := sameAs(t, all, want)
	keys := make([]string, len(rows))
	for i, e := range rows {
		keys[i] = odata.EntityKey(t, e)
	}
	held, err := claimed(s.Step, keys)
	if err != nil {
		return nil, "", err
	}
	var found []Candidate
	for i, e := range rows {
		k := keys[i]
		if k == "" || held[k] {
			continue
		}
		found = append(found, Candidate{Key: k, Fields: pick(e, want), entity: e})
	}
	if len(found) == 0 {
		near, why, err := r.nearCandidates(ent, t, want, conds, bounded, all, read, func(keys []string) (map[string]bool, error) { return claimed(s.Step, keys) })
		if why != "" || err != nil || len(near) == 0 {
			return nil, why, err
		}
		return near, nearWhy(ent, s, near), nil
	}
	if len(found) < 2 {
		return found, "", nil
	}
	return r.byLines(s, ent, found)
}

// pick is e's values of the fields of want.
func pick(e, want map[string]any) map[string]any {
	fields := make(map[string]any, len(want))
	for f := range want {
		fields[f] = e[f]
	}
	return fields
}

// nearConds are the lookups nearCandidates makes besides the lookup's
// own: its comparisons with one of a field left out, each in turn; none
// when the lookup is not bounded by its step's watermark (documents made
// before the run could be near ones) or has fewer than two comparisons of
// a field (left out, nothing would be compared).
func nearConds(conds []Cond, bounded bool) [][]Cond {
	var eq []int
	for i, c := range conds {
		if c.op == "eq" {
			eq = append(eq, i)
		}
	}
	if !bounded || len(eq) < 2 {
		return nil
	}
	var out [][]Cond
	for _, i := range eq {
		out = append(out, slices.Delete(slices.Clone(conds), i, i+1))
	}
	return out
}

// nearAhead are the looser lookups Lookup will make for create s, known
// once its own lookup's answer has been read ahead (prefetch): none when
// that answer holds a document that matches every field, or was not read
// ahead.
func (r *Reader) nearAhead(s *journal.SubState) []string {
	ent, t, want, conds, bounded, why := r.candidateQuery(s)
	if why != "" {
		return nil
	}
	resp, ok := r.cache[MatchURL(ent, conds)]
	if !ok {
		return nil
	}
	rows, why, err := r.findRows(ent, conds, func(string) (odata.BatchResponse, error) { return resp, nil })
	if why != "" || err != nil || len(sameAs(t, rows, want)) > 0 {
		return nil
	}
	return nearPaths(ent, conds, bounded)
}

// nearPaths are the reads of nearConds, for reading them ahead.
func nearPaths(ent string, conds []Cond, bounded bool) []string {
	var paths []string
	for _, c := range nearConds(conds, bounded) {
		paths = append(paths, MatchURL(ent, c))
	}
	return paths
}

// nearCandidates are, for a create in doubt that no document matches,
// the documents created since its step began (after its watermark), held
// by no record (claimed), that match every field it sent but one: the
// server may have put its own value in that field (a name it fills from a
// reference), so the create may have been made, and taking it for one
// never made would send it again. The lookup's comparisons are each left
// out in turn (nearConds); what comes back is compared field by field.
// why, when set, says a looser lookup proves nothing (as findRows').
func (r *Reader) nearCandidates(ent string, t *odata.EntityType, want map[string]any, conds []Cond, bounded bool, found []map[string]any, read func(string) (odata.BatchResponse, error), claimed func([]string) (map[string]bool, error)) ([]Candidate, string, error) {
	looser := nearConds(conds, bounded)
	if len(looser) == 0 {
		return nil, "", nil
	}
	seen := map[string]bool{}
	var near []Candidate
	rowsOf := [][]map[string]any{found} // the lookup's own: a field compared here only may differ
	for _, c := range looser {
		rows, why, err := r.findRows(ent, c, read)
		if why != "" || err != nil {
			return nil, why, err
		}
		rowsOf = append(rowsOf, rows)
	}
	for _, rows := range rowsOf {
		for _, e := range rows {
			k := odata.EntityKey(t, e)
			if k == "" || seen[k] {
				continue
			}
			seen[k] = true
			if differs := compare.Differs(t, e, want); len(differs) == 1 {
				near = append(near, Candidate{Key: k, Fields: pick(e, want), Differs: differs, entity: e})
			}
		}
	}
	if len(near) == 0 {
		return nil, "", nil
	}
	keys := make([]string, len(near))
	for i, c := range near {
		keys[i] = c.Key
	}
	held, err := claimed(keys)
	if err != nil {
		return nil, "", err
	}
	near = slices.DeleteFunc(near, func(c Candidate) bool { return held[c.Key] })
	sort.Slice(near, func(i, j int) bool { return near[i].Key < near[j].Key })
	return near, "", nil
}

// nearWhy says why a create with near candidates is left in doubt, and
// what decides it.
func nearWhy(ent string, s *journal.SubState, near []Candidate) string {
	var b strings.Builder
	sent, _ := odata.DecodeEntity(s.Match)
	for i, c := range near {
		if i == 3 {
			fmt.Fprintf(&b, " and %d more", len(near)-3)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		f := c.Differs[0]
		fmt.Fprintf(&b, "%s(%s), but for %s (it holds %s, the run sent %s)", ent, c.Key, f, diag.Quote(fmt.Sprint(c.Fields[f]), 40), diag.Quote(fmt.Sprint(sent[f]), 40))
	}
	return fmt.Sprintf("no document matches every field it sent, and %s made since its step began and held by no record matches all but one: %s; the server may fill that field in place of the value sent, so the create may have been made: if one is this record's document, decide with migrate resolve --record %s/%s --key KEY; if none is, with --not-created; and leave a field the server fills out of the step's match:",
		diag.Count(len(near), "document", "documents"), b.String(), s.Step, s.Rec)
}

// Claims says which of keys, of documents found for a record of step,
// other records hold: those are theirs, not its.
type Claims func(step string, keys []string) (map[string]bool, error)

// claimedIn is Claims over claimedKeys' set of every claimed "step|key".
func claimedIn(claimed map[string]bool) Claims {
	return func(step string, keys []string) (map[string]bool, error) {
		held := map[string]bool{}
		for _, k := range keys {
			held[k] = claimed[step+"|"+k]
		}
		return held, nil
	}
}

// candidateQuery is what the lookup of an in-doubt create asks for: its
// entity set and type, the fields a candidate must hold (want) and the
// comparisons of the $filter (conds). why, when set, says there is nothing
// to look it up by.
func (r *Reader) candidateQuery(s *journal.SubState) (ent string, t *odata.EntityType, want map[string]any, conds []Cond, bounded bool, why string) {
	ent = r.entityOf(s.Step)
	if ent == "" {
		ent = s.URL // an entity's create is posted to its entity set
	}
	set := r.md.EntitySet(ent)
	written, err := odata.DecodeEntity(s.Match)
	if len(s.Match) == 0 || err != nil || set == nil {
		return "", nil, nil, nil, false, "nothing to match it on"
	}
	names, why := r.MatchNames(s.Step, ent, r.MatchOf(s.Step), written)
	if why != "" {
		return "", nil, nil, nil, false, why
	}
	want, conds = MatchConds(set.Type, names, written)
	if len(conds) == 0 {
		return "", nil, nil, nil, false, "nothing to match it on"
	}
	if f := r.MarkField(set.Type); f != "" {
		wm, ok := r.watermarkFor(s)
		bounded = ok // an empty value: the set held nothing, so every document is the run's
		if ok && wm.Value != "" {
			p := set.Type.Property(wm.Field)
			var v any = json.Number(wm.Value)
			if p != nil && p.Type == odata.EdmDateTimeOffset {
				v = wm.Value // a time the server sets (MarkField)
			}
			conds = append(conds, Cond{field: wm.Field, p: p, op: "gt", value: v, lit: wm.Value})
		} else if !ok {
			r.WarnOnce("no watermark "+s.Step, fmt.Sprintf("step %s: the journal has no watermark of %s (written by an older version): a document made before the run with the same fields may be taken for the one in doubt; check what reconciliation finds", s.Step, ent))
		}
	} else if r.standard() {
		// Neither an auto-unique key nor a time the server sets bounds
		// the run's documents (docs/other-services.md, Reconciliation).
		r.WarnOnce("no watermark "+s.Step, fmt.Sprintf("step %s: %s has no auto-unique key to tell the run's documents from older ones: a document made before the run with the same fields may be taken for the one in doubt; check what reconciliation finds", s.Step, ent))
	}
	return ent, set.Type, want, conds, bounded, ""
}

// candidatePath is the GET of candidates' lookup, "" when there is
// nothing to look it up by.
func (r *Reader) candidatePath(s *journal.SubState) string {
	ent, _, _, conds, _, why := r.candidateQuery(s)
	if why != "" {
		return ""
	}
	return MatchURL(ent, conds)
}

// MatchNames are the fields a document of step's entity ent is matched
// on: the step's match: (explicit), else every field written. A field the
// server leaves out of its read answers (field-level permissions), or
// that it has answered a write of with another value than the one sent
// (journal.State.FilledFields: a name it fills from a reference), is never
// matched on: named in match:, it makes the lookup impossible (why); among
// the fields written, it is left out with a warning. Matched on, such a
// field would find no document, and the create in doubt would be taken
// for one never made and sent again.
func (r *Reader) MatchNames(step, ent string, explicit []string, written map[string]any) (names []string, why string) {
	unread := r.unreadFields(ent)
	filled := r.filledFields(step, "")
	for _, n := range explicit {
		if unread[n] {
			return nil, fmt.Sprintf("%s does not return %s on read (a field-level permission): it cannot be matched on; let the API user read it, or take it out of the step's match:", ent, n)
		}
		if filled[n] {
			return nil, fmt.Sprintf("the server has answered a write of %s's %s with another value than the one sent (it fills that field): it cannot be matched on; take it out of the step's match:", ent, n)
		}
	}
	if len(explicit) > 0 {
		return explicit, ""
	}
	for k := range written {
		switch {
		case unread[k]:
			r.WarnOnce("unread "+ent+"."+k, fmt.Sprintf("%s does not return %s on read (a field-level permission): documents in doubt are matched without it", ent, k))
			continue
		case filled[k]:
			r.WarnOnce("filled "+ent+"."+k, fmt.Sprintf("the server has answered a write of %s's %s with another value than the one sent (it fills that field): documents in doubt are matched without it", ent, k))
			continue
		}
		names = append(names, k)
	}
	sort.Strings(names)
	return names, ""
}

// unreadFields are the fields of ent that the server leaves out of its
// read answers (docs/servers.md, Reading: fields hidden by field-level
// permissions, 22.1 on), learnt once per run from one row (GET ENT?$top=1,
// which also warms a cold form). A set without rows, or that cannot be read,
// teaches nothing: the lookup's own answer then has nothing to match, or
// fails.
func (r *Reader) unreadFields(ent string) map[string]bool {
	r.mu.Lock()
	known, ok := r.unread[ent]
	r.mu.Unlock()
	if ok {
		return known
	}
	set := r.md.EntitySet(ent)
	resp, err := r.Read(sampleURL(ent))
	if set == nil || err != nil || resp.Status != 200 {
		return nil
	}
	var body struct {
		Value []map[string]json.RawMessage `json:"value"`
	}
	if json.Unmarshal(resp.Body, &body) != nil {
		return nil
	}
	known = map[string]bool{}
	if len(body.Value) > 0 {
		for _, p := range set.Type.Properties {
			if _, returned := body.Value[0][p.Name]; !returned {
				known[p.Name] = true
			}
		}
	}
	r.mu.Lock()
	if r.unread == nil {
		r.unread = map[string]map[string]bool{}
	}
	r.unread[ent] = known
	r.mu.Unlock()
	return known
}

// sampleURL reads one row of ent (unreadFields).
func sampleURL(ent string) string { return ent + "?$top=1" }

// ReadableMatch is want without the fields that no row of an answer
// carries (a field the server does not return on read is never matched
// on), and the fields it left out. Without rows, want stays.
func ReadableMatch(rows []json.RawMessage, want json.RawMessage) (json.RawMessage, []string) {
	if len(rows) == 0 || len(want) == 0 {
		return want, nil
	}
	w, err := odata.DecodeEntity(want)
	if err != nil {
		return want, nil
	}
	returned := map[string]bool{}
	for _, raw := range rows {
		var row map[string]json.RawMessage
		if json.Unmarshal(raw, &row) == nil {
			for k := range row {
				returned[k] = true
			}
		}
	}
	var unread []string
	for k := range w {
		if !returned[k] {
			unread = append(unread, k)
			delete(w, k)
		}
	}
	if len(unread) == 0 {
		return want, nil
	}
	sort.Strings(unread)
	if len(w) == 0 {
		return nil, unread
	}
	kept, err := odata.MarshalBody(w)
	if err != nil {
		return nil, unread
	}
	return kept, unread
}

// MatchConds turns the fields a document is matched on (as
// odata.DecodeEntity gives them) into the $filter's comparisons: want holds
// every named field written, conds those the server can filter on (times
// and booleans are compared on the rows only; at most 8 conditions).
func MatchConds(t *odata.EntityType, names []string, written map[string]any) (map[string]any, []Cond) {
	want := map[string]any{}
	var conds []Cond
	for _, k := range names {
		v, ok := written[k]
		if !ok {
			continue
		}
		want[k] = v
		p := t.Property(k)
		if p == nil || p.Type == odata.EdmDateTimeOffset || p.Type == odata.EdmBoolean || len(conds) == 8 {
			continue
		}
		lit, err := odata.FormatTypedLiteral(p.Type, v)
		if err != nil {
			continue
		}
		conds = append(conds, Cond{field: k, p: p, op: "eq", value: v, lit: lit})
	}
	return want, conds
}

// FindMatching reads (with read) the documents of ent that satisfy conds
// (at most 100) and keeps those whose fields equal want. why, when set, says the answer
// proves nothing: a status, an unreadable body, or a row outside the filter.
func (r *Reader) FindMatching(ent string, conds []Cond, want map[string]any, read func(string) (odata.BatchResponse, error)) ([]map[string]any, string, error) {
	rows, why, err := r.findRows(ent, conds, read)
	if why != "" || err != nil {
		return nil, why, err
	}
	var t *odata.EntityType
	if set := r.md.EntitySet(ent); set != nil {
		t = set.Type
	}
	return sameAs(t, rows, want), "", nil
}

// sameAs are the rows whose fields equal want.
func sameAs(t *odata.EntityType, rows []map[string]any, want map[string]any) []map[string]any {
	var same []map[string]any
	for _, e := range rows {
		if compare.Same(t, e, want) {
			same = append(same, e)
		}
	}
	return same
}

// findRows reads (with read) the documents of ent that satisfy conds (at
// most 100), every row checked against them; why, as FindMatching's.
func (r *Reader) findRows(ent string, conds []Cond, read func(string) (odata.BatchResponse, error)) ([]map[string]any, string, error) {
	resp, err := read(MatchURL(ent, conds))
	if err != nil {
		return nil, "", err
	}
	if resp.Status != 200 {
		return nil, fmt.Sprintf("looking it up gave status %d", resp.Status), nil
	}
	var body struct {
		Value []json.RawMessage `json:"value"`
	}
	if json.Unmarshal(resp.Body, &body) != nil {
		return nil, "the lookup's answer is not a list", nil
	}
	var rows []map[string]any
	for _, raw := range body.Value {
		e, err := odata.DecodeEntity(raw)
		if err != nil {
			return nil, "the lookup's answer holds a row that cannot be read", nil
		}
		// docs/servers.md, Reading: a filter the server cannot apply is ignored
		// silently; a row outside it proves that, and then an empty or
		// partial answer proves nothing.
		for _, c := range conds {
			if _, returned := e[c.field]; !returned {
				return nil, fmt.Sprintf("%s does not return %s on read (a field-level permission): it cannot be matched on; let the API user read it, or take it out of the step's match:", ent, c.field), nil
			}
			if !satisfies(e[c.field], c) {
				return nil, fmt.Sprintf("the server did not apply the filter %s %s %s (a row with %v came back); check on the server", c.field, c.op, c.lit, e[c.field]), nil
			}
		}
		rows = append(rows, e)
	}
	return rows, "", nil
}

// MatchURL is the GET of the documents of ent that satisfy conds (at most
// 100).
func MatchURL(ent string, conds []Cond) string {
	parts := make([]string, len(conds))
	for i, c := range conds {
		parts[i] = c.field + " " + c.op + " " + c.lit
	}
	q := url.Values{"$filter": {strings.Join(parts, " and ")}, "$top": {"100"}}
	return ent + "?" + strings.ReplaceAll(q.Encode(), "+", "%20")
}

// satisfies checks one value of a returned row against a condition.
func satisfies(v any, c Cond) bool {
	if c.op == "eq" {
		return compare.Value(c.p, v, c.value)
	}
	var n string
	switch x := v.(type) {
	case json.Number:
		n = string(x)
	case string: // IEEE754Compatible answers quote Int64; a time is text
		n = x
	default:
		return false
	}
	cmp, ok := MarkCompare(n, c.lit)
	return ok && cmp > 0
}

// byLines keeps the candidates whose lines the record could have written:
// a document holding a line that matches none the record sent is someone
// else's. Each candidate is read with $expand of the sub-forms the record
// wrote.
func (r *Reader) byLines(s *journal.SubState, ent string, cands []Candidate) ([]Candidate, string, error) {
	rec := r.state.Record(s.Step, s.Rec)
	if rec == nil {
		return cands, "", nil
	}
	sent := map[string][]json.RawMessage{} // collection nav → lines' match fields
	for path, sub := range rec.Subs {
		if path == "" || journal.Depth(path) != 1 || sub.Op != journal.OpCreate || len(sub.Match) == 0 {
			continue
		}
		sent[sub.Nav] = append(sent[sub.Nav], sub.Match)
	}
	for nav, l := range rec.Subs[""].CarriedLines() {
		sent[nav] = append(sent[nav], l...)
	}
	set := r.md.EntitySet(ent)
	var navs []string
	for nav := range sent {
		if n := set.Type.Navigation(nav); n != nil && n.Collection {
			navs = append(navs, nav)
		}
	}
	if len(navs) == 0 {
		return cands, "", nil
	}
	sort.Strings(navs)
	expanded := func(c Candidate) string { return ent + "(" + c.Key + ")?$expand=" + strings.Join(navs, ",") }
	paths := make([]string, len(cands))
	for i, c := range cands {
		paths[i] = expanded(c)
	}
	if err := r.prefetch(paths); err != nil {
		return nil, "", err
	}
	var kept []Candidate
	for _, c := range cands {
		resp, err := r.Read(expanded(c))
		if err != nil {
			return nil, "", err
		}
		if resp.Status != 200 {
			return cands, "", nil // cannot tell them apart: all stay
		}
		var doc map[string]json.RawMessage
		if json.Unmarshal(resp.Body, &doc) != nil {
			return cands, "", nil
		}
		if linesFit(r.md, set.Type, doc, navs, sent) {
			kept = append(kept, c)
		}
	}
	return kept, "", nil
}

// linesFit reports whether every line of the document (of type t) is the
// same as a distinct line the record sent (compare.Lines: none extra).
func linesFit(md *odata.Metadata, t *odata.EntityType, doc map[string]json.RawMessage, navs []string, sent map[string][]json.RawMessage) bool {
	for _, nav := range navs {
		var lt *odata.EntityType
		if n := t.Navigation(nav); n != nil {
			lt = md.Type(n.Type)
		}
		var lines []json.RawMessage
		if raw, ok := doc[nav]; ok && string(raw) != "null" {
			if json.Unmarshal(raw, &lines) != nil {
				return false
			}
		}
		sentNav := make([]json.RawMessage, len(sent[nav]))
		for i, m := range sent[nav] {
			if sentNav[i], _ = ReadableMatch(lines, m); len(sentNav[i]) == 0 {
				return true // nothing readable to tell them apart by
			}
		}
		if len(compare.LinesJSON(lt, lines, sentNav).Extra) > 0 {
			return false
		}
	}
	return true
}

// entityOf is a step's entity (StepEntities).
func (r *Reader) entityOf(step string) string { return StepEntities(r.state, r.opts.Plan)[step] }

// MatchOf is a step's match: fields, from the journal header or the plan.
func (r *Reader) MatchOf(step string) []string {
	for _, s := range r.state.Header.Steps {
		if s.Name == step && len(s.Match) > 0 {
			return s.Match
		}
	}
	for _, s := range r.opts.Plan {
		if s.Name == step {
			return s.Match
		}
	}
	return nil
}
