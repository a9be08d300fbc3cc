package reconcile

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/migrate-tool/migrate/compare"
	"github.com/migrate-tool/migrate/journal"
	"github.com/migrate-tool/migrate/odata"
)

// Journal is where Reconcile journals the outcomes it decided: the
// journal itself, or the dry run's tally of it.
type Journal interface {
	Append(es ...journal.Entry) error
	Snapshot() *journal.State
}

// Reconcile decides every sub-request whose outcome is unknown before
// anything else is sent: found on the server → committed (with its key),
// provably absent → forgotten (it will be sent again), otherwise listed by
// name in undecided (and warned of) and left alone. It journals what it
// decided in jr, whose state it reads by from then on (State).
func (r *Reader) Reconcile(jr Journal) (undecided []string, err error) {
	subs := r.state.InDoubtSubs()
	if len(subs) == 0 {
		return nil, nil
	}
	// Entities first, then their children (a child of an absent parent is
	// absent; a child's parent key may come from reconciling the parent).
	sort.SliceStable(subs, func(i, j int) bool { return journal.Depth(subs[i].Path) < journal.Depth(subs[j].Path) })
	claimed, keyOf, err := claimedKeys(r.state)
	if err != nil {
		return nil, err
	}
	d := &decisions{
		r:          r,
		entity:     StepEntities(r.state, r.opts.Plan), // no plan: undo settles work in doubt with the journal alone
		results:    map[int][]journal.SubResult{},
		absent:     map[string]bool{},
		claimed:    claimed,
		keyOf:      keyOf,
		lineKeyOf:  map[string]string{},
		absentLine: map[string]bool{},
		lookups:    map[*journal.SubState]Found{},
	}
	// The reads go at most 100 to a call. Each depth's reads
	// are known once the depth above it is decided (a line is read under
	// its parent's key), so they are sent ahead, a depth at a time, and
	// the decisions below take their answers from the cache.
	r.cache = map[string]odata.BatchResponse{}
	defer func() { r.cache = nil }()
	for i, s := range subs {
		if i == 0 || journal.Depth(s.Path) != journal.Depth(subs[i-1].Path) {
			// The level above is decided whole before this one is read.
			end := i
			for end < len(subs) && journal.Depth(subs[end].Path) == journal.Depth(s.Path) {
				end++
			}
			if err := d.readLevel(subs[i:end]); err != nil {
				return d.undecided, err
			}
		}
		if err := d.one(s); err != nil {
			return d.undecided, err
		}
	}
	var entries []journal.Entry
	batches := make([]int, 0, len(d.results))
	for b := range d.results {
		batches = append(batches, b)
	}
	sort.Ints(batches)
	for _, b := range batches {
		entries = append(entries, journal.Entry{Kind: journal.KindOutcome, Batch: b, Results: d.results[b]})
	}
	if len(entries) > 0 {
		if err := jr.Append(entries...); err != nil {
			return d.undecided, err
		}
	}
	r.SetState(jr.Snapshot())
	return d.undecided, nil
}

// decisions is what one Reconcile has decided so far, which the
// decisions below it read: what the journal's records already hold and
// what was found (claimed), each record's document key (keyOf), the
// entities and lines found absent, and the outcomes to journal by batch.
type decisions struct {
	r          *Reader
	entity     map[string]string // step → its entity (StepEntities)
	results    map[int][]journal.SubResult
	absent     map[string]bool // step|rec whose entity is absent
	claimed    map[string]bool // as claimedKeys
	keyOf      map[string]string
	lineKeyOf  map[string]string // step|rec|path of a line found here → its key
	absentLine map[string]bool   // step|rec|path of a child found absent here
	lookups    map[*journal.SubState]Found
	undecided  []string
}

// readLevel reads ahead what deciding level (the subs of one depth)
// reads, and looks up its creates whose key the server assigns, all of
// them before any is decided (lookupAll).
func (d *decisions) readLevel(level []*journal.SubState) error {
	var paths []string
	var numbered []*journal.SubState
	for _, s := range level {
		if p := d.path(s); p != "" {
			paths = append(paths, p)
		}
		if s.Path == "" && s.Op == journal.OpCreate && s.Key == "" {
			numbered = append(numbered, s)
		}
	}
	if err := d.r.readAhead(paths, numbered); err != nil {
		return err
	}
	found, err := d.r.lookupAll(numbered, d.claimed)
	if err != nil {
		return err
	}
	for i, s := range numbered {
		d.lookups[s] = found[i]
	}
	return nil
}

// path is what deciding s reads, "" when that is not known ahead.
func (d *decisions) path(s *journal.SubState) string {
	ent, recKey := d.entity[s.Step], s.Step+"|"+s.Rec
	switch {
	case s.Path == "" && s.Op == journal.OpCreate && s.Key != "":
		return odata.KeySegment(ent, s.Key)
	case s.Path == "" && s.Op == journal.OpCreate:
		return d.r.candidatePath(s)
	case s.Op == journal.OpCreate:
		if d.absent[recKey] || d.keyOf[recKey] == "" {
			return ""
		}
		parentURL, _, gone, why := d.r.parentOf(ent, d.keyOf[recKey], s, d.lineKeyOf, d.absentLine)
		if gone || why != "" {
			return ""
		}
		return parentURL + "/" + s.Nav
	case s.Op == journal.OpPatch || s.Op == journal.OpUndoPatch || s.Op == journal.OpDelete || s.Op == journal.OpUndoDelete:
		return s.URL
	}
	return ""
}

// decide journals s's outcome: status -1 forgets it (it will be sent
// again); 0 leaves it in doubt, listed and warned of with why.
func (d *decisions) decide(s *journal.SubState, status int, key, why string) {
	if status == 0 {
		msg := fmt.Sprintf("%s %s%s: %s", s.Step, s.Rec, pathLabel(s), why)
		d.undecided = append(d.undecided, msg)
		d.r.warn("in doubt, not resent: " + msg + "; check it on the server")
		return
	}
	d.results[s.Batch] = append(d.results[s.Batch], journal.SubResult{ID: s.ID, Status: status, Key: key, Error: why})
}

// done decides s done, its entity (key, of type t) found holding
// entity (Outcome).
func (d *decisions) done(s *journal.SubState, status int, key string, t *odata.EntityType, entity map[string]any) {
	res := Outcome(s, status, key, t, entity)
	d.r.NoteFilled(s.Step, s.Nav, res.Fills)
	d.results[s.Batch] = append(d.results[s.Batch], res)
}

// one decides s.
func (d *decisions) one(s *journal.SubState) error {
	switch {
	case s.Path == "" && s.Op == journal.OpCreate && s.Key != "":
		return d.keyedCreate(s)
	case s.Path == "" && s.Op == journal.OpCreate:
		d.numberedCreate(s)
	case s.Op == journal.OpCreate:
		return d.line(s)
	case s.Op == journal.OpPatch || s.Op == journal.OpUndoPatch:
		return d.patch(s)
	case s.Op == journal.OpDelete || s.Op == journal.OpUndoDelete:
		resp, err := d.r.Read(s.URL)
		if err != nil {
			return err
		}
		switch resp.Status {
		case 404:
			d.decide(s, 204, "", "")
		case 200:
			d.decide(s, -1, "", "reconciled: still there")
		default:
			d.decide(s, 0, "", fmt.Sprintf("reading %s gave status %d", s.URL, resp.Status))
		}
	case s.Op == journal.OpUndoCreate:
		// Forgetting it would let undo add the line twice; undo itself
		// looks for it among the lines.
		d.decide(s, 0, "", "a line undo was re-creating: run undo again to settle it")
	default:
		d.decide(s, -1, "", "a read: nothing to reconcile")
	}
	return nil
}

// keyedCreate decides the create of a document whose key the run sent:
// read by that key.
func (d *decisions) keyedCreate(s *journal.SubState) error {
	ent, recKey := d.entity[s.Step], s.Step+"|"+s.Rec
	resp, err := d.r.Read(odata.KeySegment(ent, s.Key))
	if err != nil {
		return err
	}
	switch resp.Status {
	case 200:
		got, _ := odata.DecodeEntity(resp.Body)
		d.done(s, 201, s.Key, TypeAt(d.r.md, ent), got)
		d.keyOf[recKey] = s.Key
	case 404:
		d.decide(s, -1, "", "reconciled: absent")
		d.absent[recKey] = true
	default:
		d.decide(s, 0, "", fmt.Sprintf("reading %s(%s) gave status %d", ent, s.Key, resp.Status))
	}
	return nil
}

// numberedCreate decides the create of a document whose key the server
// assigns, by what its level's lookups found (readLevel).
func (d *decisions) numberedCreate(s *journal.SubState) {
	ent, recKey := d.entity[s.Step], s.Step+"|"+s.Rec
	found, why := d.lookups[s].Candidates, d.lookups[s].Why
	switch {
	case why != "":
		d.decide(s, 0, "", why)
	case len(found) == 1:
		d.done(s, 201, found[0].Key, TypeAt(d.r.md, ent), found[0].entity)
		d.keyOf[recKey] = found[0].Key // claimed by lookupAll
	case len(found) == 0:
		d.decide(s, -1, "", "reconciled: absent")
		d.absent[recKey] = true
	default:
		keys := make([]string, len(found))
		for i, c := range found {
			keys[i] = c.Key
		}
		d.decide(s, 0, "", fmt.Sprintf("%d entities of %s match its fields and lines (%s); decide with migrate resolve", len(found), ent, strings.Join(keys, ", ")))
	}
}

// line decides the create of a line (or of a child of a line) under the
// document its record holds: found among the lines read, by content.
func (d *decisions) line(s *journal.SubState) error {
	ent, recKey := d.entity[s.Step], s.Step+"|"+s.Rec
	if d.absent[recKey] {
		d.decide(s, -1, "", "reconciled: its parent is absent")
		return nil
	}
	pkey := d.keyOf[recKey]
	if pkey == "" && !strings.Contains(s.Path, ".") {
		// A line added to a document that existed: the document
		// is the one its POST was addressed to.
		if k, ok := strings.CutPrefix(s.URL, ent+"("); ok {
			pkey, _ = strings.CutSuffix(k, ")/"+s.Nav)
			if pkey == k {
				pkey = ""
			}
		}
	}
	if pkey == "" {
		d.decide(s, 0, "", "its parent's key is unknown")
		return nil
	}
	// A child of a line (a line's text, docs/service.md, Text
	// sub-forms) is read under that line, whose key is journaled or
	// was found just above.
	parentURL, pt, gone, why := d.r.parentOf(ent, pkey, s, d.lineKeyOf, d.absentLine)
	if u, t := sentBelow(d.r.md, s); why != "" && u != "" {
		parentURL, pt, why = u, t, "" // a delta's text below a line a deep insert carried
	}
	switch {
	case gone:
		d.decide(s, -1, "", "reconciled: its parent line is absent")
		d.absentLine[recKey+"|"+s.Path] = true
		return nil
	case why != "":
		d.decide(s, 0, "", why)
		return nil
	}
	resp, err := d.r.Read(parentURL + "/" + s.Nav)
	if err != nil {
		return err
	}
	if resp.Status == 204 {
		// A single-valued navigation that holds nothing: a
		// standard service answers 204 No Content (a text not
		// written, docs/other-services.md, What differs).
		d.decide(s, -1, "", "reconciled: absent")
		d.absentLine[recKey+"|"+s.Path] = true
		return nil
	}
	if resp.Status != 200 {
		d.decide(s, 0, "", fmt.Sprintf("reading its lines gave status %d", resp.Status))
		return nil
	}
	claimKey := recKey + "|" + s.Nav + "|"
	if i := strings.LastIndexByte(s.Path, '.'); i >= 0 {
		claimKey = recKey + "|" + s.Path[:i] + "|" + s.Nav + "|"
	}
	isClaimed := func(k string) bool { return d.claimed[claimKey+k] }
	// A field the server fills is not matched on (unless nothing
	// else is left).
	match := s.Match
	if fills := d.r.filledFields(s.Step, s.Nav); len(fills) > 0 {
		if rest := journal.Without(match, slices.Collect(maps.Keys(fills))...); rest != nil {
			match = rest
		}
	}
	line, held, found, why := MatchLine(resp.Body, match, isClaimed, d.r.md, pt, s.Nav)
	if !found && why == "" {
		line, held = d.r.nearLine(s, resp.Body, pt, isClaimed)
		found = held != nil
	}
	switch {
	case why != "":
		d.decide(s, 0, "", why)
	case found:
		d.done(s, 201, line, lineType(d.r.md, pt, s.Nav), held)
		if line != "" {
			d.claimed[claimKey+line] = true
			d.lineKeyOf[recKey+"|"+s.Path] = line
		}
	default:
		d.decide(s, -1, "", "reconciled: absent")
		d.absentLine[recKey+"|"+s.Path] = true
	}
	return nil
}

// patch decides a PATCH, apply's or undo's: by what the entity it
// addressed holds now.
func (d *decisions) patch(s *journal.SubState) error {
	recKey := s.Step + "|" + s.Rec
	resp, err := d.r.Read(s.URL)
	if err != nil {
		return err
	}
	if resp.Status != 200 {
		d.decide(s, 0, "", fmt.Sprintf("reading %s gave status %d", s.URL, resp.Status))
		return nil
	}
	if s.Path == "" && s.Key != "" && d.keyOf[recKey] == "" {
		d.keyOf[recKey] = s.Key // the document exists, patched or not: its lines are read under it
	}
	want := s.Match
	if s.Op == journal.OpUndoPatch {
		want = s.Before
	}
	if s.Path != "" && s.Line == "" && WritesText(want) {
		// A text a delta replaced, or undo wrote back (a line's
		// PATCH names its line; another single object, a ship-to
		// address, writes no TEXT): decided by its content, as
		// servers read texts back normalised (docs/servers.md,
		// Reading).
		held, sent, old := HeldText(resp.Body), HeldText(want), HeldText(s.Before)
		switch {
		case compare.SameText(held, sent):
			d.decide(s, 200, s.Key, "")
		case s.Op == journal.OpPatch && compare.SameText(held, old):
			d.decide(s, -1, "", "reconciled: not applied")
		default:
			d.decide(s, 0, "", "the text holds neither the old nor the new one")
		}
		return nil
	}
	// A PATCH applies whole: the fields read back decide it,
	// each by its type.
	pt := TypeAt(d.r.md, s.URL)
	read := []json.RawMessage{resp.Body}
	want, unread := ReadableMatch(read, want)
	before, _ := ReadableMatch(read, s.Before)
	switch {
	case len(want) == 0 && len(unread) > 0:
		d.decide(s, 0, "", fmt.Sprintf("%s is read without %s (a field-level permission): nothing left to tell whether it changed; check it on the server", s.URL, strings.Join(unread, ", ")))
	case compare.SameJSON(pt, resp.Body, want):
		got, _ := odata.DecodeEntity(resp.Body)
		if s.Op == journal.OpUndoPatch {
			got = nil // undo's PATCH is compared with its before-image, not its Match
		}
		d.done(s, 200, s.Key, pt, got)
	case s.Op == journal.OpPatch && compare.SameJSON(pt, resp.Body, before):
		d.decide(s, -1, "", "reconciled: not applied")
	default:
		d.decide(s, 0, "", "the entity holds neither the old nor the new values")
	}
	return nil
}

// claimedKeys lists what the journal's records already hold: step|key,
// step|rec|nav|line and step|rec|parentpath|nav|line (claimed), and each
// record's key by step|rec (keyOf).
func claimedKeys(st *journal.State) (claimed map[string]bool, keyOf map[string]string, err error) {
	claimed, keyOf = map[string]bool{}, map[string]string{}
	// A settled record's lines are claimed by it alone (their keys name
	// the record): only its entity's key can be claimed by another.
	err = st.EachSettled(func(s journal.SettledRecord) error {
		if s.Key != "" {
			claimed[s.Step+"|"+s.Key] = true
			keyOf[s.Step+"|"+s.ID] = s.Key
		}
		return nil
	})
	for _, name := range st.StepNames {
		ss := st.Steps[name]
		for _, id := range ss.IDs {
			rec := ss.Records[id]
			if rec.Key != "" {
				claimed[name+"|"+rec.Key] = true
				keyOf[name+"|"+id] = rec.Key
			}
			for _, s := range rec.Subs {
				if s.OK() && s.ResultKey != "" && s.Path != "" {
					if i := strings.LastIndexByte(s.Path, '.'); i >= 0 {
						claimed[name+"|"+id+"|"+s.Path[:i]+"|"+s.Nav+"|"+s.ResultKey] = true
					} else {
						claimed[name+"|"+id+"|"+s.Nav+"|"+s.ResultKey] = true
					}
				}
			}
		}
	}
	return claimed, keyOf, err
}

// parentOf is the URL and type of an in-doubt child's parent: the
// record's entity, or for a child of a line the line itself, addressed by
// its key (journaled, or found by this reconciliation in lineKeyOf). gone
// says a line on the way was found absent; why, that a key is unknown.
func (r *Reader) parentOf(ent, pkey string, s *journal.SubState, lineKeyOf map[string]string, absentLine map[string]bool) (url string, t *odata.EntityType, gone bool, why string) {
	set := r.md.EntitySet(ent)
	if set == nil {
		return "", nil, false, "its entity set " + ent + " is not in the metadata"
	}
	url, t = odata.KeySegment(ent, pkey), set.Type
	parts := strings.Split(s.Path, ".")
	if len(parts) < 2 {
		return url, t, false, ""
	}
	rec := r.state.Steps[s.Step].Records[s.Rec]
	recKey := s.Step + "|" + s.Rec
	for i := 1; i < len(parts); i++ {
		p := strings.Join(parts[:i], ".")
		if absentLine[recKey+"|"+p] {
			return "", nil, true, ""
		}
		var ps *journal.SubState
		if rec != nil {
			ps = rec.Subs[p]
		}
		if ps == nil {
			return "", nil, false, "its parent line is not in the journal"
		}
		nav := t.Navigation(ps.Nav)
		if nav == nil || r.md.Type(nav.Type) == nil {
			return "", nil, false, "its parent's sub-form " + ps.Nav + " is not in the metadata"
		}
		if nav.Collection {
			key := lineKeyOf[recKey+"|"+p]
			if key == "" && ps.OK() {
				key = ps.ResultKey
			}
			if key == "" {
				return "", nil, false, "its parent line's key is unknown"
			}
			url += "/" + odata.KeySegment(ps.Nav, key)
		} else {
			url += "/" + ps.Nav
		}
		t = r.md.Type(nav.Type)
	}
	return url, t, false, ""
}

// TypeAt is the entity type of what path addresses (ORDERS('SO1'),
// ORDERS('SO1')/ORDERITEMS_SUBFORM(3)), nil when the metadata does not
// know it: the type its fields are compared by.
func TypeAt(md *odata.Metadata, path string) *odata.EntityType {
	if md == nil {
		return nil
	}
	segs, err := odata.ParsePath(path)
	if err != nil || len(segs) == 0 {
		return nil
	}
	set := md.EntitySet(segs[0].Name)
	if set == nil {
		return nil
	}
	t := set.Type
	for _, seg := range segs[1:] {
		n := t.Navigation(seg.Name)
		if n == nil {
			return nil
		}
		if t = md.Type(n.Type); t == nil {
			return nil
		}
	}
	return t
}

func pathLabel(s *journal.SubState) string {
	if s.Path == "" {
		return ""
	}
	return " (" + s.Nav + " #" + s.Path + ")"
}

// MatchLine finds, among a parent's lines (or its single text object), one
// whose fields are the same as match (compare, typed by the lines' type
// when parent is known) and whose key is not claimed; it returns that
// line's key and the line as read (nil for a text). Fields no line carries
// (not returned on read) are not compared; why says so when none is left
// to compare.
func MatchLine(body []byte, match json.RawMessage, claimed func(string) bool, md *odata.Metadata, parent *odata.EntityType, nav string) (key string, line map[string]any, found bool, why string) {
	lt := lineType(md, parent, nav)
	if n := navOf(parent, nav); n != nil && !n.Collection {
		return "", nil, compare.TextInJSON(body, match), ""
	}
	var coll struct {
		Value []json.RawMessage `json:"value"`
	}
	if json.Unmarshal(body, &coll) != nil {
		return "", nil, false, ""
	}
	match, unread := ReadableMatch(coll.Value, match)
	if len(match) == 0 && len(unread) > 0 {
		return "", nil, false, fmt.Sprintf("its lines are read without %s (a field-level permission): nothing left to match it on; check it on the server", strings.Join(unread, ", "))
	}
	for _, raw := range coll.Value {
		if !compare.SameJSON(lt, raw, match) {
			continue
		}
		e, err := odata.DecodeEntity(raw)
		if err != nil {
			continue
		}
		k := ""
		if lt != nil {
			k = odata.EntityKey(lt, e)
		}
		if k != "" && claimed(k) {
			continue
		}
		return k, e, true, ""
	}
	return "", nil, false, ""
}

// Replaced reports a record whose lines: replace deleted the lines its
// sub-form nav held, every delete known done: the lines there since are
// the record's, whatever keys the server gave them (a server may number
// them from 1 again), and a resume does not delete them again.
func Replaced(rec *journal.RecordState, nav string) bool {
	deleted := false
	for _, x := range rec.Extra {
		if x.Op == journal.OpDelete && x.Nav == nav {
			if !x.OK() {
				return false
			}
			deleted = true
		}
	}
	return deleted
}

// nearLine is, for line create s in doubt that no line of its parent
// (body, its lines as read; parent its type) matches, the line that holds
// all it sent but one field, when the parent is the document its record
// created or one whose sub-form its lines: replace emptied, or among the
// lines added to a document that existed since the run read it (keys
// above s.Above): every such line is one the record
// sent, so a line left over by the record's other lines (compare.Lines)
// that is one field off is this one, the field filled by the server
// (compare.Near); taken for absent, it would be sent twice. Its key and
// the line as read; nil when there is none, or it cannot be told which.
func (r *Reader) nearLine(s *journal.SubState, body []byte, parent *odata.EntityType, claimed func(string) bool) (string, map[string]any) {
	rec := r.state.Record(s.Step, s.Rec)
	if rec == nil || parent == nil || strings.Contains(s.Path, ".") {
		return "", nil
	}
	root := rec.Subs[""]
	created := root != nil && root.Op == journal.OpCreate
	// Lines on a document the record created, or where its lines: replace
	// deleted what the sub-form held, are all the record's.
	all := created || Replaced(rec, s.Nav)
	if !all && s.Above == "" {
		return "", nil
	}
	if n := navOf(parent, s.Nav); n == nil || !n.Collection {
		return "", nil
	}
	lt := lineType(r.md, parent, s.Nav)
	if lt == nil {
		return "", nil
	}
	var coll struct {
		Value []json.RawMessage `json:"value"`
	}
	if json.Unmarshal(body, &coll) != nil {
		return "", nil
	}
	var held []map[string]any
	for _, raw := range coll.Value {
		e, err := odata.DecodeEntity(raw)
		if err != nil || claimed(odata.EntityKey(lt, e)) {
			continue
		}
		if !all {
			if c, ok := MarkCompare(odata.EntityKey(lt, e), s.Above); !ok || c <= 0 {
				continue // there before the run
			}
		}
		held = append(held, e)
	}
	var want []map[string]any
	mine := -1
	for _, p := range slices.Sorted(maps.Keys(rec.Subs)) {
		o := rec.Subs[p]
		if p == "" || strings.Contains(p, ".") || o.Nav != s.Nav || o.Op != journal.OpCreate {
			continue
		}
		if o == s {
			mine = len(want)
		}
		m, _ := odata.DecodeEntity(o.Match)
		want = append(want, m)
	}
	if mine < 0 {
		return "", nil
	}
	m, differs := compare.Near(lt, held, want, compare.Lines(lt, held, want))
	if j := m.Held[mine]; j >= 0 && differs[mine] != "" {
		return odata.EntityKey(lt, held[j]), held[j]
	}
	return "", nil
}

// navOf is parent's navigation nav; nil when either is unknown.
func navOf(parent *odata.EntityType, nav string) *odata.NavigationProperty {
	if parent == nil {
		return nil
	}
	return parent.Navigation(nav)
}

// lineType is the type of parent's sub-form nav; nil when unknown.
func lineType(md *odata.Metadata, parent *odata.EntityType, nav string) *odata.EntityType {
	if n := navOf(parent, nav); n != nil && md != nil {
		return md.Type(n.Type)
	}
	return nil
}

// StepEntities is each step's entity, by one rule for every reader of a
// journal: the journal header's (what its runs sent), else the plan's (a
// step the plan that began the journal did not have; none for undo and
// resolve, which have the journal alone), else the entity set its
// records' entities were sent to.
func StepEntities(st *journal.State, plan []journal.Step) map[string]string {
	entity := map[string]string{}
	for _, s := range st.Header.Steps {
		entity[s.Name] = s.Entity
	}
	for _, s := range plan {
		if entity[s.Name] == "" {
			entity[s.Name] = s.Entity
		}
	}
	for _, name := range st.StepNames {
		ss := st.Steps[name]
		if entity[name] != "" || ss == nil {
			continue
		}
		for _, id := range ss.IDs {
			if rec := ss.Records[id]; rec != nil && rec.Subs[""] != nil {
				entity[name] = odata.EntitySetOf(rec.Subs[""].URL)
				break
			}
		}
	}
	return entity
}

// HeldText is the TEXT of a text sub-form as read expanded: "" for none
// (null, or [] as some servers answer an empty one: docs/servers.md, Reading).
func HeldText(raw json.RawMessage) string {
	var one struct{ TEXT *string }
	if json.Unmarshal(raw, &one) != nil || one.TEXT == nil {
		return ""
	}
	return *one.TEXT
}

// WritesText reports whether a single object's PATCH, as journaled (its
// match or before-image), writes a TEXT: a text, decided by its content;
// another single object (a ship-to address) is decided by its fields, and
// undo words its restore so.
func WritesText(body json.RawMessage) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(body, &m) != nil {
		return true // as before single objects other than texts were sent
	}
	_, ok := m["TEXT"]
	return ok
}

// sentBelow is the parent a sub-request of a delta named in its URL (a
// line's text below the line, by its key: ORDERS('SO1')/ORDERITEMS_SUBFORM(1))
// with its type, for reconciliation to read when the journal holds no
// sub-request of that line (a deep insert carried it); "" for a URL that
// names no entity by its key (a reference to a sub-request, $1/NAV).
func sentBelow(md *odata.Metadata, s *journal.SubState) (string, *odata.EntityType) {
	u, ok := strings.CutSuffix(s.URL, "/"+s.Nav)
	if !ok || strings.HasPrefix(u, "$") || !strings.HasSuffix(u, ")") {
		return "", nil
	}
	t := TypeAt(md, u)
	if t == nil {
		return "", nil
	}
	return u, t
}
