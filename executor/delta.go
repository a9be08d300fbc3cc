package executor

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/migrate-tool/migrate/compare"
	"github.com/migrate-tool/migrate/internal/diag"
	"github.com/migrate-tool/migrate/journal"
	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/plan"
	"github.com/migrate-tool/migrate/read"
	"github.com/migrate-tool/migrate/transform"
)

// A delta load (docs/cli.md, "Delta loads"): the journal's last run loaded
// everything, and the sources changed since. Each committed record carries
// the hash of its source rows, what its entity was written with and the
// hash of its lines; the records the sources give now are compared with
// them. apply lists what changed and sends nothing; apply --delta creates
// the new records and patches the changed fields of the changed ones,
// after reading what the server holds of those fields: one that is no
// longer what the journal wrote was changed by someone since, and is not
// overwritten unless asked. Gone records are never deleted.

// Delta is what changed in the sources since each record was loaded.
type Delta struct {
	// Sent is set when apply --delta sent it; unset, it was only listed,
	// and nothing was read (no conflict is looked for).
	Sent bool
	// Predicted: the dry run's (plan --delta, diff --delta): Sent then
	// says that apply --delta would send it.
	Predicted bool
	// GoesOn: a run without --delta goes on with the delta the journal's
	// last run left unfinished (runOptions.goesOnWithDelta).
	GoesOn bool
	// Steps are the steps with something to say, in the plan's order.
	Steps []DeltaStep
}

// DeltaStep is one step's delta.
type DeltaStep struct {
	Name, Entity string
	// New are the records the sources give that the journal does not hold.
	New []DeltaRecord
	// Changed are committed records whose rows changed: Fields the entity's
	// fields that are written differently now.
	Changed []DeltaRecord
	// Gone are committed records the sources no longer give: never deleted,
	// listed for a decision.
	Gone []DeltaRecord
	// Unknown counts the committed records whose journal entry keeps no hash
	// of their source or of what they were written with (journals written
	// before it was kept): they are taken as unchanged.
	Unknown int
	// Held names, by record ID, the changed fields (FIELD), line fields
	// (NAV(KEY)/FIELD) and texts (NAV/TEXT) the server held already as the
	// sources give them (the same change made there): not sent.
	Held map[string][]string
	// Conflicts are fields that changed in the source and on the server
	// since the journal wrote them.
	Conflicts []DeltaConflict
}

// DeltaRecord is one record of a delta.
type DeltaRecord struct {
	ID, Loc, Key string
	Fields       []DeltaField
	// Lines are its lines changed, new and gone (delta_lines.go).
	Lines []DeltaLine
	// Unsent says what of a changed record a delta does not send (a text
	// the journal keeps no content hash of, a line it keeps no key of, or
	// a key field).
	Unsent string
	// Error is why a new record could not be built (its row's error).
	Error string
}

// DeltaField is one field of a changed record: as the journal wrote it,
// as the source gives it now (JSON as sent).
type DeltaField struct {
	Field    string
	Was, Now json.RawMessage
}

// DeltaConflict is a field changed in the source that someone changed on
// the server since the journal wrote it (journal.Conflict says what each
// side holds). Overwritten is set when --overwrite sent Now anyway.
type DeltaConflict struct {
	journal.Conflict
	Overwritten bool
}

// Counts adds up the steps' lists.
func (d *Delta) Counts() (created, changed, gone, conflicts, unknown int) {
	for _, s := range d.Steps {
		created += len(s.New)
		changed += len(s.Changed)
		gone += len(s.Gone)
		unknown += s.Unknown
		conflicts += len(s.unsent())
	}
	return
}

// unsent are the step's conflicts that were not sent (--overwrite sends
// them).
func (s *DeltaStep) unsent() []journal.Conflict {
	var out []journal.Conflict
	for _, c := range s.Conflicts {
		if !c.Overwritten {
			out = append(out, c.Conflict)
		}
	}
	return out
}

// HeldCount counts the changes the server held already, of every step.
func (d *Delta) HeldCount() int {
	n := 0
	for _, s := range d.Steps {
		n += s.HeldCount()
	}
	return n
}

// HeldCount counts the changes of the step the server held already.
func (s *DeltaStep) HeldCount() int {
	n := 0
	for _, h := range s.Held {
		n += len(h)
	}
	return n
}

// Headline says in a line what changed and what became of it: listed
// (nothing read or sent), predicted (what apply --delta would send) or
// sent. Conflicts are counted only where the server was read.
func (d *Delta) Headline() string {
	n, c, g, x, _ := d.Counts()
	t := fmt.Sprintf("delta since the last load: %d new, %d changed, %d gone", n, c, g)
	if d.Sent {
		t += ", " + diag.Count(x, "conflict", "conflicts")
	}
	switch {
	case n+c+g+x == 0:
		return t + " (nothing to send)"
	case !d.Sent:
		return t + " (listed: nothing read or sent; apply --delta reads the changed records for changes made on the server since, then sends the new records and lines and the changed fields; plan --delta predicts it)"
	}
	var not []string
	if x > 0 {
		not = append(not, "the conflicts")
	}
	if bad := d.failedNew(); bad > 0 {
		not = append(not, "the "+diag.Count(bad, "new record", "new records")+" whose rows give an error (below)")
	}
	if h := d.HeldCount(); h > 0 {
		not = append(not, "the "+diag.Count(h, "change", "changes")+" the server holds already")
	}
	rest := ""
	if len(not) > 0 {
		rest = "; not " + strings.Join(not, ", nor ")
	}
	if d.Predicted {
		return t + " (" + d.Command() + " would send the new records and lines and patch the changed fields" + rest + ")"
	}
	return t + " (sent: the new records and lines created, the changed fields patched" + rest + ")"
}

// failedNew counts the new records whose rows give an error: listed as
// new, never sent.
func (d *Delta) failedNew() int {
	n := 0
	for _, s := range d.Steps {
		for _, r := range s.New {
			if r.Error != "" {
				n++
			}
		}
	}
	return n
}

// Command is the command that sends the delta: apply --delta, or apply
// where it goes on with the delta the journal's last run left unfinished
// (GoesOn).
func (d *Delta) Command() string {
	if d.GoesOn {
		return "apply"
	}
	return "apply --delta"
}

// DeltaError is apply --delta or a delta listing that cannot go on: the
// journal is not one a delta starts from.
type DeltaError struct{ Journal, Reason string }

func (e *DeltaError) Error() string {
	return fmt.Sprintf("%s: %s; nothing was sent", e.Journal, e.Reason)
}

// deltaRun is a run's delta, built as the steps read their records.
type deltaRun struct {
	send      bool
	overwrite bool
	predicted bool // the dry run's
	goesOn    bool // Delta.GoesOn
	mu        sync.Mutex
	steps     map[string]*DeltaStep
	seen      map[string]map[string]bool
	// names maps, in the listing, a step's new record ids to a stand-in for
	// their key: what ref() gives a record that refers to one.
	names map[string]map[string]bool
}

func newDeltaRun(send, overwrite bool) *deltaRun {
	return &deltaRun{send: send, overwrite: overwrite, steps: map[string]*DeltaStep{}, seen: map[string]map[string]bool{}, names: map[string]map[string]bool{}}
}

func (d *deltaRun) step(name, entity string) *DeltaStep {
	d.mu.Lock()
	defer d.mu.Unlock()
	s := d.steps[name]
	if s == nil {
		s = &DeltaStep{Name: name, Entity: entity}
		d.steps[name] = s
	}
	return s
}

// see notes that the sources gave the record id of step.
func (d *deltaRun) see(step, id string) {
	d.mu.Lock()
	if d.seen[step] == nil {
		d.seen[step] = map[string]bool{}
	}
	d.seen[step][id] = true
	d.mu.Unlock()
}

func (d *deltaRun) add(fn func()) {
	d.mu.Lock()
	fn()
	d.mu.Unlock()
}

// result is the delta in the plan's order.
func (d *deltaRun) result(p *plan.Plan) *Delta {
	out := &Delta{Sent: d.send, Predicted: d.predicted, GoesOn: d.goesOn}
	for _, s := range p.Steps {
		ds := d.steps[s.Name]
		if ds == nil {
			continue
		}
		out.Steps = append(out.Steps, *ds)
	}
	return out
}

// unsent is the conflicts of step the delta did not send, as its step's
// done line journals them.
func (d *deltaRun) unsent(step string) []journal.Conflict {
	d.mu.Lock()
	defer d.mu.Unlock()
	if s := d.steps[step]; s != nil {
		return s.unsent()
	}
	return nil
}

// gone lists the committed records of step that the sources no longer
// gave (the step was read to its end).
func (d *deltaRun) gone(st *journal.State, step, entity string) error {
	ds := d.step(step, entity)
	d.mu.Lock()
	seen := d.seen[step]
	d.mu.Unlock()
	var out []DeltaRecord
	add := func(id, key string) {
		if !seen[id] {
			out = append(out, DeltaRecord{ID: id, Key: key})
		}
	}
	if ss := st.Steps[step]; ss != nil {
		for _, id := range ss.IDs {
			if rec := ss.Records[id]; rec != nil && rec.Status() == journal.Committed && !rec.Undone {
				add(id, rec.Key)
			}
		}
	}
	if st.Lean() {
		err := st.EachSettled(func(r journal.SettledRecord) error {
			if r.Step == step && r.Status == journal.Committed {
				add(r.ID, r.Key)
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	out = slices.CompactFunc(out, func(a, b DeltaRecord) bool { return a.ID == b.ID })
	d.add(func() { ds.Gone = out })
	return nil
}

// wroteFields is what a committed record's entity is journaled as written
// with (journal.RecordEntry.Wrote): its fields as sent, without long texts
// and file contents (a change of those is not looked for).
func wroteFields(fields map[string]any) json.RawMessage {
	return keptFields(fields, func(v any) bool { return v == nil || matchable(v) })
}

// linesHash is the hash journaled with a committed record of the
// sub-form children it was built with, their fields as sent, depth first.
func linesHash(children []*transform.Child) string {
	if len(children) == 0 {
		return ""
	}
	h := sha256.New()
	var walk func(cs []*transform.Child, depth int)
	walk = func(cs []*transform.Child, depth int) {
		for _, c := range cs {
			body, _ := odata.MarshalBody(c.Fields)
			fmt.Fprintf(h, "%d %s %d:%s\n", depth, c.Nav, len(body), body)
			walk(c.Children, depth+1)
		}
	}
	walk(children, 0)
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// wire is v as the body of a request writes it.
func wire(v any) json.RawMessage {
	b, err := odata.MarshalBody(map[string]any{"v": v})
	if err != nil {
		return json.RawMessage("null")
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(b, &m) != nil || m["v"] == nil {
		return json.RawMessage("null")
	}
	return m["v"]
}

// deltaKind is what a committed record is to a delta.
type deltaKind int

const (
	deltaSame deltaKind = iota
	deltaUnknown
	deltaChanged
)

// deltaChange is what deltaOf found of a committed record.
type deltaChange struct {
	kind   deltaKind
	fields []DeltaField
	lines  []DeltaLine
	unsent string
}

// sends reports whether apply --delta has something of it to send.
func (c deltaChange) sends() bool {
	return len(c.fields) > 0 || slices.ContainsFunc(c.lines, DeltaLine.sends)
}

// deltaOf compares a committed record with the record its rows give now:
// the same, unknown (the journal keeps nothing to compare with), or
// changed, with the entity's fields written differently now, its lines
// changed, new and gone (kidsDelta), and what of the change a delta does
// not send.
func deltaOf(md *odata.Metadata, t *odata.EntityType, prev *journal.RecordState, rec *transform.Record) deltaChange {
	if prev.SrcHash == "" || prev.Wrote == nil {
		return deltaChange{kind: deltaUnknown}
	}
	if prev.SrcHash == srcHash(rec) && !holdsFiles(rec.Fields, rec.Children) {
		// Its rows are as loaded. (A file a row names may have changed
		// all the same: such a record is compared in full.)
		return deltaChange{kind: deltaSame}
	}
	was, err := odata.DecodeEntity(prev.Wrote)
	if err != nil {
		return deltaChange{kind: deltaUnknown}
	}
	fields, keys := changedFields(t, was, rec.Fields)
	var unsent []string
	if len(keys) > 0 {
		unsent = append(unsent, "its key ("+strings.Join(keys, ", ")+") changed: a delta does not move a record")
	}
	lines, kidsUnsent := kidsDelta(md, t, prev, rec)
	unsent = append(unsent, kidsUnsent...)
	if len(fields) == 0 && len(lines) == 0 && len(unsent) == 0 {
		return deltaChange{kind: deltaSame} // a column no field takes changed
	}
	return deltaChange{kind: deltaChanged, fields: fields, lines: lines, unsent: strings.Join(unsent, "; ")}
}

// holdsFiles reports whether fields, or those of children and theirs,
// hold a file's contents (file(): a data URI), which the rows that name
// the file do not show.
func holdsFiles(fields map[string]any, children []*transform.Child) bool {
	for _, v := range fields {
		if isFile(v) {
			return true
		}
	}
	for _, c := range children {
		if holdsFiles(c.Fields, c.Children) {
			return true
		}
	}
	return false
}

// loaded reports a record a delta patches, never creates: committed, or
// committed once and since worked on by a delta (its PATCH pending, in doubt
// and settled, or refused).
func loaded(prev *journal.RecordState) bool {
	if prev == nil {
		return false
	}
	switch prev.Status() {
	case journal.Committed:
		return true
	case journal.InDoubt, journal.Waived, journal.Skipped:
		return false
	}
	return prev.SrcHash != "" && prev.Key != ""
}

// patchedView is a record a delta's PATCH left pending, as the journal
// would hold it committed: what it was written with, with what the PATCH
// wrote when it took.
func patchedView(prev *journal.RecordState, rec *transform.Record) *journal.RecordState {
	p := *prev
	if s := prev.Subs[""]; s != nil && s.Op == journal.OpPatch && s.OK() {
		// Its Match is what the load and the PATCH wrote together (the
		// journal's replay lays a PATCH over what it patched).
		// What the server filled stands for the fields the PATCH left as
		// they were.
		var sent, was map[string]json.RawMessage
		_ = json.Unmarshal(s.Match, &sent)
		_ = json.Unmarshal(prev.Wrote, &was)
		var patched []string
		for k, v := range sent {
			if string(was[k]) != string(v) {
				patched = append(patched, k)
			}
		}
		p.Wrote = journal.Overlay(prev.Wrote, s.Match)
		p.Filled = journal.Without(prev.Filled, patched...)
	}
	singles := map[string]bool{} // true: a text
	var note func(cs []*transform.Child)
	note = func(cs []*transform.Child) {
		for _, c := range cs {
			if c.Single {
				_, text := c.Fields["TEXT"]
				singles[c.Nav] = text
			} else {
				note(c.Children) // a line's own text
			}
		}
	}
	note(rec.Children)
	p.WroteKids = kidsTaken(prev, singles)
	return &p
}

// kidsTaken is the children of a record a delta left pending as the
// journal would hold them committed: the lines, single objects and texts
// (singles names the single-object sub-forms, true for a text) its
// PATCHes and POSTs wrote, where they took.
func kidsTaken(prev *journal.RecordState, singles map[string]bool) json.RawMessage {
	kids, err := journal.DecodeKids(prev.WroteKids)
	if err != nil || prev.WroteKids == nil && prev.LinesHash != "" {
		return prev.WroteKids
	}
	changed := false
	for _, path := range slices.SortedFunc(maps.Keys(prev.Subs), func(a, b string) int { return journal.Depth(a) - journal.Depth(b) }) {
		s := prev.Subs[path]
		if path == "" || journal.Depth(path) > 2 || !s.OK() {
			continue
		}
		list, i := kidList(&kids, path)
		known := i >= 0
		switch {
		case list == nil:
		case singles[s.Nav] && (s.Op == journal.OpPatch && known || s.Op == journal.OpCreate && !known):
			// A text replaced or added: its content is what the next
			// delta compares.
			var sent struct{ TEXT any }
			_ = json.Unmarshal(s.Match, &sent)
			k := journal.WroteKid{Path: path, Nav: s.Nav, Single: true, Wrote: s.Match, TextHash: textHash(sent.TEXT)}
			if known {
				(*list)[i] = k
			} else {
				*list = append(*list, k)
			}
			changed = true
		case s.Op == journal.OpPatch && known:
			var sent map[string]json.RawMessage
			_ = json.Unmarshal(s.Match, &sent)
			(*list)[i].Wrote = journal.Overlay((*list)[i].Wrote, s.Match)
			(*list)[i].Filled = journal.Without((*list)[i].Filled, slices.Collect(maps.Keys(sent))...)
			changed = true
		case s.Op == journal.OpCreate && !known && (journal.Depth(path) == 1 || singles[s.Nav]):
			_, single := singles[s.Nav]
			*list = append(*list, journal.WroteKid{Path: path, Nav: s.Nav, Single: single, Key: s.ResultKey, Wrote: s.Match, Filled: s.Filled})
			changed = true
		}
	}
	if !changed {
		return prev.WroteKids
	}
	return encodeKids(kids)
}

// deltaCommitted takes a loaded record the sources give again, in a delta
// run: unchanged, unknown or changed; apply --delta patches the changed
// fields and lines, and adds the new lines, once the server's are read
// (deltaPending). A record an earlier delta left pending is journaled
// committed once nothing is left to send.
func (sr *stepRun) deltaCommitted(prev *journal.RecordState, rec *transform.Record, id string) error {
	d := sr.r.delta
	ds := d.step(sr.step.Name, sr.entity)
	settled := prev.Status() == journal.Committed
	if !settled {
		prev = patchedView(prev, rec)
	}
	ch := deltaOf(sr.r.md, sr.entityType(), prev, rec)
	sr.r.jr.loadedBefore()
	send := ch.kind == deltaChanged && d.send && ch.sends() && prev.Key != ""
	if !send {
		w := &work{step: sr, rec: rec, id: id, delta: &deltaPatch{lines: prev.LinesHash, kids: prev.WroteKids, filled: prev.Filled, had: prev.Children()}}
		sr.classifyLoaded(rec, id, prev.Key)
		if !settled && d.send {
			if ch.unsent != "" || len(ch.lines) > 0 {
				w.delta.src = prev.SrcHash
			}
			sr.finalize(w)
		}
	}
	switch ch.kind {
	case deltaUnknown:
		d.add(func() { ds.Unknown++ })
		return nil
	case deltaSame:
		return nil
	}
	d.add(func() {
		ds.Changed = append(ds.Changed, DeltaRecord{ID: id, Loc: rec.Loc.String(), Key: prev.Key, Fields: ch.fields, Lines: ch.lines, Unsent: ch.unsent})
	})
	if !send {
		return nil
	}
	w := &work{step: sr, rec: rec, id: id, delta: &deltaPatch{lines: prev.LinesHash, kids: prev.WroteKids, had: prev.Children()}}
	if ch.unsent != "" || slices.ContainsFunc(ch.lines, func(l DeltaLine) bool { return l.Gone }) {
		// What is not sent stays a change: the next delta lists it again.
		w.delta.src = prev.SrcHash
	} else {
		w.delta.lines = linesHash(rec.Children)
	}
	sr.deltas = append(sr.deltas, deltaWork{w: w, prev: prev, fields: ch.fields, lines: ch.lines})
	if len(sr.deltas) >= sr.r.readWindow() {
		return sr.deltaPending()
	}
	return nil
}

// deltaWork is a changed record waiting for the read of what the server
// holds of its changed fields and lines.
type deltaWork struct {
	w      *work
	prev   *journal.RecordState
	fields []DeltaField
	lines  []DeltaLine
}

func (sr *stepRun) entityType() *odata.EntityType {
	if set := sr.r.md.EntitySet(sr.entity); set != nil {
		return set.Type
	}
	return sr.r.md.Type(sr.entity)
}

// deltaPending reads what the server holds of the changed fields (and,
// expanded, the sub-forms of the changed lines) of the changed records
// waiting, and sends a PATCH of those fields for each whose fields are
// still what the journal wrote (or, with --overwrite, for each), the
// values read its before-image; a PATCH of each changed line, likewise;
// and a POST of each new line.
func (sr *stepRun) deltaPending() error {
	ds := sr.deltas
	sr.deltas = nil
	if len(ds) == 0 {
		return nil
	}
	r := sr.r
	var found map[string]read.Found
	if !r.svc.offline() {
		rd, keys := sr.deltaRead(ds)
		var err error
		if found, err = rd.ReadKeys(sr.ctx, keys); err != nil {
			return sr.readFailed("reading the changed records", err)
		}
	}
	for _, dw := range ds {
		resp := found[dw.prev.Key]
		if r.svc.offline() {
			// A dry run without a target: the server taken to hold what
			// the journal wrote (no conflict can be foreseen).
			resp = read.Found{Status: 200, Body: dw.prev.Wrote}
		}
		if err := sr.startDelta(dw, resp); err != nil {
			return err
		}
	}
	return nil
}

// deltaRead is the one read of the changed records ds: their keys, with
// their changed fields and, expanded, the sub-forms of their changed
// lines.
func (sr *stepRun) deltaRead(ds []deltaWork) (*read.Keys, []string) {
	t := sr.entityType()
	var keys []string
	sel, exp := map[string]bool{}, map[string]map[string]bool{}
	for _, dw := range ds {
		keys = append(keys, dw.prev.Key)
		for _, f := range dw.fields {
			sel[f.Field] = true
		}
		for _, l := range dw.lines {
			if !l.sends() || l.New && !l.Single {
				continue // a new text or single object is read too: the server must hold none
			}
			if l.Parent == "" {
				exp[l.Nav] = mapOr(exp[l.Nav])
				continue
			}
			exp[l.pnav] = mapOr(exp[l.pnav]) // a line's own: read with its lines
			exp[l.pnav][l.Nav] = true
		}
	}
	if len(sel) == 0 && t != nil && len(t.Key) > 0 {
		sel[t.Key[0]] = true // the key alone: the record's lines or existence are what is read
	}
	var expand []string
	for _, nav := range slices.Sorted(maps.Keys(exp)) {
		if len(exp[nav]) == 0 {
			expand = append(expand, nav)
			continue
		}
		expand = append(expand, nav+"($expand="+strings.Join(slices.Sorted(maps.Keys(exp[nav])), ",")+")")
	}
	return &read.Keys{Send: sr.r.sendReads, Set: sr.entity, Type: t, Select: slices.Sorted(maps.Keys(sel)), Expand: expand, PerBatch: sr.r.limit}, keys
}

// startDelta starts the PATCHes and POSTs of changed record dw by what
// the read of its key answered (resp), or lists its conflicts (without
// --overwrite, then sending nothing).
func (sr *stepRun) startDelta(dw deltaWork, resp read.Found) error {
	r := sr.r
	t := sr.entityType()
	w, prev := dw.w, dw.prev
	if resp.Status != 200 {
		msg := fmt.Sprintf("reading %s(%s) before patching it: ", sr.entity, prev.Key)
		if resp.Status == 404 {
			msg += "it no longer exists; nothing was sent for it"
		} else {
			msg += odata.ParseError(resp.Status, nil, resp.Body).Error()
		}
		sr.buildFailed(w, errors.New(msg))
		return nil
	}
	cur, err := odata.DecodeEntity(resp.Body)
	if err != nil {
		sr.buildFailed(w, fmt.Errorf("reading %s(%s): %v", sr.entity, prev.Key, err))
		return nil
	}
	curLines := map[string]map[string]any{}
	if r.svc.offline() {
		for _, l := range dw.lines {
			curLines[l.path] = oursOf(l.was)
		}
	} else {
		var gone string
		if curLines, gone = linesRead(r.md, t, resp.Body, dw.lines); gone != "" {
			sr.buildFailed(w, fmt.Errorf("reading %s(%s) before patching it: its line %s no longer exists; nothing was sent for the record", sr.entity, prev.Key, gone))
			return nil
		}
	}
	c := sr.deltaCheck(dw, cur, curLines)
	if held := c.heldNames(); len(held) > 0 {
		step := r.delta.step(sr.step.Name, sr.entity)
		r.delta.add(func() {
			if step.Held == nil {
				step.Held = map[string][]string{}
			}
			step.Held[w.id] = held
		})
	}
	root := &op{work: w, kind: journal.OpPatch, method: "PATCH", typ: t, fields: c.changed, key: prev.Key, loc: w.rec.Loc}
	root.abs = odata.KeySegment(sr.entity, prev.Key)
	root.url = root.abs
	w.root = root // diff names the record by its key, a conflict too
	if len(c.conflicts) > 0 {
		step := r.delta.step(sr.step.Name, sr.entity)
		r.delta.add(func() { step.Conflicts = append(step.Conflicts, c.conflicts...) })
		if !r.delta.overwrite {
			sr.classify(w, DiffConflict, c.shown, c.was, nil)
			return nil // listed; the record stays as the journal has it
		}
	}
	var units []unit
	if len(c.changed) > 0 {
		root.body, _ = odata.MarshalBody(c.changed)
		root.patch = root.body
		root.before, _ = json.Marshal(c.before)
		units = append(units, unit{root})
	} else {
		root.done, root.status = true, 200
	}
	lines, err := sr.lineOps(w, root, dw.lines, c.lineBefore, c.lineHeld)
	if err != nil {
		sr.buildFailed(w, err)
		return nil
	}
	units = append(units, lines...)
	sr.classifyLines(w, c.shown, c.was, newKids(root))
	// What the server filled of the fields it now holds as the source
	// gives them is no longer the journal's: the source's value is.
	w.delta.filled = journal.Without(prev.Filled, slices.Concat(slices.Collect(maps.Keys(c.changed)), slices.Collect(maps.Keys(c.held)))...)
	w.delta.keep = len(c.changed) == 0
	// The fields the server holds as the source gives them are journaled
	// held; the journal's replay keeps those held before as they were,
	// but for the fields the sources changed (deltaHeld).
	if len(c.held) > 0 {
		w.held, _ = odata.MarshalBody(c.held)
	}
	return sr.start(w, units)
}

// deltaChecked is what a changed record's delta sends and shows, and
// where the server no longer holds what the journal wrote.
type deltaChecked struct {
	changed, before map[string]any // the entity's fields to PATCH, and what the server holds of them
	// shown and was are what diff shows: the entity's fields, and each
	// changed line's as NAV(KEY)/FIELD.
	shown, was map[string]any
	lineBefore map[string]map[string]any // by line path: what the server holds of the fields sent
	// held are the entity's fields the server holds as the source now
	// gives them (the same change made there), as it holds them: nothing
	// is sent of them, and the journal keeps them as held
	// (RecordEntry.Held), which verify compares. lineHeld are a line's or
	// a text's, by line path (journal.WroteKid.Held).
	held      map[string]any
	lineHeld  map[string]map[string]any
	heldNamed []string // lineHeld as diff names them: NAV(KEY)/FIELD, NAV/TEXT
	conflicts []DeltaConflict
}

// heldNames names the fields, line fields and texts held, as diff names
// them: FIELD, NAV(KEY)/FIELD, NAV/TEXT.
func (c *deltaChecked) heldNames() []string {
	return append(slices.Sorted(maps.Keys(c.held)), slices.Sorted(slices.Values(c.heldNamed))...)
}

// holdLine notes that the server holds field of line l as the source
// gives it now (as value).
func (c *deltaChecked) holdLine(l DeltaLine, field string, value any) {
	if c.lineHeld[l.path] == nil {
		c.lineHeld[l.path] = map[string]any{}
	}
	c.lineHeld[l.path][field] = value
	c.heldNamed = append(c.heldNamed, l.Name()+"/"+field)
}

// deltaCheck compares what the server holds of changed record dw (cur,
// its entity; curLines, its changed lines by path) with what the journal
// wrote: each field and line field sent must still be what was written,
// each text its content (a new text or single object: none held).
func (sr *stepRun) deltaCheck(dw deltaWork, cur map[string]any, curLines map[string]map[string]any) deltaChecked {
	r := sr.r
	t := sr.entityType()
	w, prev := dw.w, dw.prev
	ours := map[string]any{}
	if m, err := odata.DecodeEntity(prev.Wrote); err == nil {
		ours = m
	}
	if m, err := odata.DecodeEntity(prev.Filled); err == nil && len(prev.Filled) > 0 {
		maps.Copy(ours, m) // the server's own form of what it took
	}
	c := deltaChecked{changed: map[string]any{}, before: map[string]any{}, shown: map[string]any{}, was: map[string]any{}, lineBefore: map[string]map[string]any{},
		held: map[string]any{}, lineHeld: map[string]map[string]any{}}
	// A field the server holds as the source now gives it is the same
	// change made on both sides: no conflict, and nothing is sent of it
	// (held). One it holds otherwise than the journal wrote it was changed
	// there since: that change would be lost.
	check := func(p *odata.Property, line, field string, theirs, ours, now any, nowJSON json.RawMessage) (held bool) {
		if compare.Value(p, theirs, now) {
			return !r.svc.offline()
		}
		if !compare.Value(p, theirs, ours) {
			c.conflicts = append(c.conflicts, DeltaConflict{Conflict: journal.Conflict{ID: w.id, Key: prev.Key, Field: field, Line: line,
				Ours: wire(ours), Theirs: wire(theirs), Now: nowJSON}, Overwritten: r.delta.overwrite})
		}
		return false
	}
	for _, f := range dw.fields {
		var p *odata.Property
		if t != nil {
			p = t.Property(f.Field)
		}
		if check(p, "", f.Field, cur[f.Field], ours[f.Field], w.rec.Fields[f.Field], f.Now) {
			c.held[f.Field] = cur[f.Field]
			continue
		}
		c.changed[f.Field] = w.rec.Fields[f.Field]
		c.before[f.Field] = cur[f.Field]
		c.shown[f.Field], c.was[f.Field] = c.changed[f.Field], c.before[f.Field]
	}
	for _, l := range dw.lines {
		if !l.sends() || !l.Text {
			continue
		}
		// A text: what the server holds must be what the journal
		// wrote (a new one: none), by its content.
		held, _ := curLines[l.path]["TEXT"].(string)
		now := l.child.Fields["TEXT"]
		same := odata.TextContent(held) == ""
		if !l.New {
			same = r.svc.offline() || textHash(held) == l.was.TextHash
		}
		if textHash(held) == textHash(now) && !r.svc.offline() {
			c.holdLine(l, "TEXT", held) // the same change made on the server
			continue
		}
		if !same {
			c.conflicts = append(c.conflicts, DeltaConflict{Conflict: journal.Conflict{ID: w.id, Key: prev.Key, Field: "TEXT", Line: l.Name(), Text: true,
				Ours: l.Fields[0].Was, Theirs: wire(odata.TextContent(held)), Now: wire(now)}, Overwritten: r.delta.overwrite})
		}
		c.lineBefore[l.path] = map[string]any{"TEXT": held}
		c.shown[l.Name()+"/TEXT"], c.was[l.Name()+"/TEXT"] = now, odata.TextContent(held)
	}
	for _, l := range dw.lines {
		if !l.sends() || l.Text || l.New && !l.Single {
			continue
		}
		// A line, or a single object (a ship-to address): each field
		// sent must be on the server what the journal wrote (of a new
		// single object: none).
		lt := lineType(r.md, t, l.Nav)
		if l.Parent != "" {
			lt = lineType(r.md, lineType(r.md, t, l.pnav), l.Nav)
		}
		ours, theirs := oursOf(l.was), curLines[l.path]
		c.lineBefore[l.path] = map[string]any{}
		for _, f := range l.Fields {
			var p *odata.Property
			if lt != nil {
				p = lt.Property(f.Field)
			}
			if check(p, l.Name(), f.Field, theirs[f.Field], ours[f.Field], l.child.Fields[f.Field], f.Now) && !l.New {
				c.holdLine(l, f.Field, theirs[f.Field])
				continue
			}
			c.lineBefore[l.path][f.Field] = theirs[f.Field]
			c.shown[l.Name()+"/"+f.Field], c.was[l.Name()+"/"+f.Field] = l.child.Fields[f.Field], theirs[f.Field]
		}
	}
	return c
}

// newKids are the lines a delta adds under root (a text added is shown
// as its TEXT's change).
func newKids(root *op) []*op {
	var out []*op
	for _, k := range root.kids {
		if k.kind == journal.OpCreate && !k.single {
			out = append(out, k)
		}
	}
	return out
}

// deltaPatch is what a record patched by a delta keeps of its journal
// entry: its lines' hash (the old one while part of the change of its
// lines is not sent), its source hash when part of the change was not
// sent (src; "" the new one), what the server filled of the fields the
// PATCH did not send, and its children's.
type deltaPatch struct {
	lines, src string
	filled     json.RawMessage
	// kids is what the record's children were written with as the journal
	// held them (RecordEntry.WroteKids): the lines the delta sends are
	// written over them (kidsSent).
	kids json.RawMessage
	// keep: the entity was not patched (only lines were sent): what the
	// journal holds of it stays.
	keep bool
	// had is the lines the record had from the journal's runs before
	// the delta (RecordState.Children): a delta adds to them, never
	// deletes (a line gone from the sources stays on the server).
	had int
}

// built is the lines a record a delta went over has now: those it had,
// and those the delta created under it.
func (d *deltaPatch) built(root *op) int {
	if root == nil {
		return d.had
	}
	return d.had + root.below(func(o *op) bool { return o.kind == journal.OpCreate && o.ok() })
}

// journaled completes a finished record's journal entry: what it was
// written with and how the server took it, its sources' and lines' hashes.
func (w *work) journaled(re *journal.RecordEntry) {
	re.SrcHash = srcHash(w.rec)
	re.Wrote = wroteFields(w.rec.Fields)
	re.LinesHash = linesHash(w.rec.Children)
	re.WroteKids = wroteKids(w)
	if w.root != nil {
		re.Filled = w.root.got
	}
	d := w.delta
	if d == nil {
		return
	}
	// The rows and keys the load journaled stay the record's (report
	// --created); the rows of the lines the delta added are journaled to
	// be added to them.
	re.Keyed = addedRows(re.Keyed)
	re.LinesHash = d.lines
	if d.src != "" {
		re.SrcHash = d.src
	}
	var sent []*op
	if w.root != nil {
		sent = w.root.kids
	}
	re.WroteKids = kidsSent(d.kids, sent)
	if d.keep {
		re.Filled = d.filled
		return
	}
	re.Filled = journal.Overlay(d.filled, re.Filled)
}

// addedRows are, of a delta's record's keyed rows (keyedRows), those of
// the lines it added: the entity's row is the load's. The first keeps its
// header, as the journal's replay adds them after the load's rows.
func addedRows(rows []journal.KeyedRow) []journal.KeyedRow {
	var out []journal.KeyedRow
	var header []string
	for _, kr := range rows {
		if kr.Header != nil {
			header = kr.Header
		}
		if kr.Path == "" {
			continue
		}
		if len(out) == 0 && kr.Header == nil {
			kr.Header = header
		}
		out = append(out, kr)
	}
	return out
}

// deltaListing reports an apply without --delta over a journal whose last
// run loaded everything, from the same plan, whose sources changed since
// (or whose last run was a delta, which may have left changes unsent, or
// whose plan reads files the sources name, which may have been replaced
// under the same name): it lists what changed and sends nothing (a resume
// of changed sources is --allow-plan-change's, a retry --retry-failed's).
func (o *runOptions) deltaListing(st *journal.State, now journal.Header) bool {
	if o.Delta || o.AllowPlanChange || o.RetryFailed || o.Limit > 0 || len(o.Steps) > 0 {
		return false
	}
	if !st.Header.MarksFinish || !st.Complete() || st.Header.PlanHash != now.PlanHash {
		return false
	}
	if !slices.Equal(slices.Sorted(maps.Keys(st.Header.Sources)), slices.Sorted(maps.Keys(now.Sources))) {
		return false
	}
	return st.LastRun.Delta || !maps.Equal(st.Header.Sources, now.Sources) || o.Plan.ReadsFiles()
}

// goesOnWithDelta reports whether apply, run without --delta over st,
// goes on as a delta: the last run was one and did not end complete (a
// crash, Ctrl-C, a record the server refused), so the records it was
// patching are patched, not taken for creates. Its dry run does the same.
func (o *runOptions) goesOnWithDelta(st *journal.State, listing bool) bool {
	return st.LastRun.Delta && !st.Complete() && !o.Delta && !listing
}

// deltaStart refuses apply --delta over a journal whose last run did not
// end, or left work in doubt or pending: that run is resumed first. A delta
// that stopped midway is resumed by the next (reconciliation first).
func deltaStart(path string, st *journal.State) error {
	if st.LastRun.Delta {
		return nil
	}
	if !st.Finished() {
		return &DeltaError{Journal: path, Reason: "its last run did not load every step to its end: resume it with apply (without --delta) first"}
	}
	for _, name := range st.StepNames {
		if c := st.Counts(name); c.InDoubt+c.Pending > 0 {
			return &DeltaError{Journal: path, Reason: fmt.Sprintf("step %s has records in doubt or pending: resume the run with apply (without --delta) first", name)}
		}
	}
	return nil
}

// resultID is the journal identity of a result of the record stream.
// (as apply's handle takes it).
func resultID(res transform.Result) string {
	switch {
	case res.Skipped:
	case res.Record != nil && res.Record.ID != "":
		return res.Record.ID
	case (len(res.Errors) > 0 || res.Record == nil) && res.ID != "":
		return res.ID
	}
	return res.Loc.String()
}

// listDelta is apply without --delta over a complete journal whose
// sources changed: every step's records are built and compared with the
// journal, nothing is sent and nothing journaled.
func (r *runner) listDelta(waves [][]*plan.Step) (*Summary, error) {
	defer r.rd.Release() // after the journal closes
	defer r.jr.Close()
	refs := deltaRefs{r}
	for _, wave := range waves {
		for _, s := range wave {
			ds := r.delta.step(s.Name, s.Entity)
			sr := &stepRun{r: r, ctx: r.ctx, step: s, entity: s.Entity}
			err := r.opts.records.Records(r.ctx, s.Name, r.opts.open, refs, func(res transform.Result) error {
				return sr.listOne(ds, res)
			})
			if err != nil {
				return nil, err
			}
			if err := r.delta.gone(r.state(), s.Name, s.Entity); err != nil {
				return nil, err
			}
		}
	}
	r.jr.Close()
	sum := r.summary()
	sum.Delta = r.delta.result(r.opts.Plan)
	return sum, nil
}

// listOne takes one result of the record stream in a delta listing.
func (sr *stepRun) listOne(ds *DeltaStep, res transform.Result) error {
	d := sr.r.delta
	id := resultID(res)
	d.see(sr.step.Name, id)
	if res.Skipped {
		return nil
	}
	prev := sr.r.state().Record(sr.step.Name, id)
	if len(res.Errors) > 0 || res.Record == nil {
		d.rowError(sr.step.Name, sr.entity, id, prev, res)
		return nil
	}
	switch {
	case prev == nil:
		d.add(func() {
			ds.New = append(ds.New, DeltaRecord{ID: id, Loc: res.Loc.String()})
			if d.names[sr.step.Name] == nil {
				d.names[sr.step.Name] = map[string]bool{}
			}
			d.names[sr.step.Name][id] = true
		})
	case prev.Status() == journal.Committed:
		return sr.deltaCommitted(prev, res.Record, id)
	}
	return nil
}

// rowError lists a result of the record stream that gives no record (its
// row's error): a new record that will fail, or a loaded one whose rows
// now give an error, which a delta leaves as it is (it reports true).
func (d *deltaRun) rowError(step, entity, id string, prev *journal.RecordState, res transform.Result) bool {
	ds := d.step(step, entity)
	msg := "the row gave no record"
	if len(res.Errors) > 0 {
		msg = res.Errors[0].Message
	}
	switch {
	case prev == nil:
		d.add(func() { ds.New = append(ds.New, DeltaRecord{ID: id, Loc: res.Loc.String(), Error: msg}) })
	case prev.Status() == journal.Committed:
		d.add(func() {
			ds.Changed = append(ds.Changed, DeltaRecord{ID: id, Loc: res.Loc.String(), Key: prev.Key, Unsent: "its rows now give an error: " + msg})
		})
		return true
	}
	return false
}

// deltaRefs is ref() in a delta listing: the key the journal holds, or for
// a record the listing found new a stand-in ("{step:id}"), as in a dry run.
type deltaRefs struct{ r *runner }

func (d deltaRefs) Ref(step, id string) (any, bool) {
	if rec := d.r.state().Record(step, id); rec != nil && rec.Key != "" {
		return KeyValue(rec.Key), true
	}
	d.r.delta.mu.Lock()
	defer d.r.delta.mu.Unlock()
	if d.r.delta.names[step][id] {
		return "{" + step + ":" + id + "}", true
	}
	return nil, false
}

func (deltaRefs) Placeholders() bool { return true }

// mapOr is m, or a new map when m is nil.
func mapOr(m map[string]bool) map[string]bool {
	if m == nil {
		return map[string]bool{}
	}
	return m
}
