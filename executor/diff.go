package executor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"sync"

	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/plan"
	"github.com/migrate-tool/migrate/reconcile"
	"github.com/migrate-tool/migrate/transform"
)

// What apply would do to each record, against what the target
// holds now. Diff is the dry run (Plan) with every step reading: an insert
// step reads its keys too, so an existing key is a conflict before the
// server says so.

// DiffAction is what apply would do to a record (DiffRecord.Action).
type DiffAction string

// The diff actions.
const (
	DiffCreate    DiffAction = "create"
	DiffUpdate    DiffAction = "update"
	DiffUnchanged DiffAction = "unchanged"
	DiffConflict  DiffAction = "conflict"  // insert mode on a key that exists
	DiffMissing   DiffAction = "missing"   // update mode on a key that does not
	DiffAmbiguous DiffAction = "ambiguous" // several documents match a server-numbered one
)

// FieldChange is one field an update changes: the target's value and the
// record's, each as JSON.
type FieldChange struct {
	Old, New json.RawMessage
}

// DiffRecord is one record of the plan against the target.
type DiffRecord struct {
	Step     string
	ID       string // the record's id (its id: value, else its key or location)
	Location string // the record's source location
	Key      string // key expression; empty for a document the server numbers
	Action   DiffAction
	Fields   map[string]FieldChange // update: the fields that change
	// Matches (conflict, ambiguous of a server-numbered document): the keys
	// of the documents its match: fields found.
	Matches []string
	// Lines (upsert, update of a record that exists): the lines apply
	// appends to its sub-forms (lines: append), each with the fields it
	// writes; a line the record holds already is not appended.
	Lines []DiffLine
}

// DiffLine is a line apply would append to a record that exists.
type DiffLine struct {
	Nav      string
	Location string                     // its source row
	Fields   map[string]json.RawMessage // as the service's JSON writes them
}

// DiffStep counts one step's records by action (ambiguous counts as a
// conflict).
type DiffStep struct {
	Name, Entity                                 string
	Create, Update, Unchanged, Conflict, Missing int
}

// DiffResult is Diff's answer: the dry run's summary (row errors, calls)
// and the classification of every record, in the order apply takes them.
type DiffResult struct {
	Summary *Summary
	Steps   []DiffStep
	Records []DiffRecord
}

// Conflicts counts the records apply could not write as the plan says:
// conflict, ambiguous and missing.
func (d *DiffResult) Conflicts() int {
	n := 0
	for _, s := range d.Steps {
		n += s.Conflict + s.Missing
	}
	return n
}

// differ collects the classifications while the dry run walks the plan.
type differ struct {
	mu      sync.Mutex
	records []DiffRecord
}

func (d *differ) add(rec DiffRecord) {
	d.mu.Lock()
	d.records = append(d.records, rec)
	d.mu.Unlock()
}

// Diff reads the target for every record the plan would write and
// classifies it. It needs opts.Client: a diff without a target has nothing
// to compare with.
func Diff(ctx context.Context, run *Prepared, opts Options) (*DiffResult, error) {
	if opts.Client == nil {
		return nil, errors.New("executor: Diff needs a Client to read the target")
	}
	d := &differ{}
	sum, err := dryRun(ctx, run, opts, d)
	if sum == nil {
		return nil, err
	}
	res := &DiffResult{Summary: sum, Records: d.records}
	at := map[string]int{}
	for _, st := range sum.Steps {
		at[st.Name] = len(res.Steps)
		res.Steps = append(res.Steps, DiffStep{Name: st.Name, Entity: st.Entity})
	}
	for _, rec := range d.records {
		i, ok := at[rec.Step]
		if !ok {
			continue
		}
		s := &res.Steps[i]
		switch rec.Action {
		case DiffCreate:
			s.Create++
		case DiffUpdate:
			s.Update++
		case DiffUnchanged:
			s.Unchanged++
		case DiffConflict, DiffAmbiguous:
			s.Conflict++
		case DiffMissing:
			s.Missing++
		}
	}
	// Steps run one at a time in the dry run; within one, reads come in
	// batches, so order by step, then as the records came.
	sort.SliceStable(res.Records, func(i, j int) bool { return at[res.Records[i].Step] < at[res.Records[j].Step] })
	return res, err
}

// classify records what apply would do with w: action, and for an update
// the changed fields (the record's values and the target's before them).
func (sr *stepRun) classify(w *work, action DiffAction, changed, before map[string]any, matches []string) {
	if d := sr.r.jr.diffs(); d != nil {
		d.add(sr.diffRecord(w, action, changed, before, matches))
	}
}

func (sr *stepRun) diffRecord(w *work, action DiffAction, changed, before map[string]any, matches []string) DiffRecord {
	rec := DiffRecord{Step: sr.step.Name, ID: w.id, Location: w.rec.Loc.String(), Action: action, Matches: matches}
	if w.root != nil {
		rec.Key = shownKey(w.root.key)
	}
	if len(changed) > 0 {
		rec.Fields = map[string]FieldChange{}
		for k, v := range changed {
			rec.Fields[k] = FieldChange{Old: jsonValue(before[k]), New: jsonValue(v)}
		}
	}
	return rec
}

// classifyLoaded is classify of a record the journal holds loaded (key,
// as the server gave it): apply leaves it alone, unchanged.
func (sr *stepRun) classifyLoaded(rec *transform.Record, id, key string) {
	sr.classify(&work{step: sr, rec: rec, id: id, root: &op{key: key}}, DiffUnchanged, nil, nil, nil)
}

// classifyLines is classify of an update of a record that exists, with
// the lines apply appends to it; with no field to change and no line to
// append, unchanged.
func (sr *stepRun) classifyLines(w *work, changed, before map[string]any, added []*op) {
	d := sr.r.jr.diffs()
	if d == nil {
		return
	}
	if len(changed) == 0 && len(added) == 0 {
		// Nothing to send: the server holds what the sources give.
		d.add(sr.diffRecord(w, DiffUnchanged, nil, nil, nil))
		return
	}
	rec := sr.diffRecord(w, DiffUpdate, changed, before, nil)
	for _, k := range added {
		l := DiffLine{Nav: k.nav, Location: k.loc.String(), Fields: map[string]json.RawMessage{}}
		for f, v := range k.fields {
			l.Fields[f] = jsonValue(v)
		}
		rec.Lines = append(rec.Lines, l)
	}
	d.add(rec)
}

// classifyResumed is classify of a record an earlier attempt of the
// journal began (its document made, or reconciled as made): with nothing
// left to send (left) it is unchanged; else an update that sends the
// rest, with the lines apply appends.
func (sr *stepRun) classifyResumed(w *work, left []*op) {
	if len(left) == 0 {
		sr.classify(w, DiffUnchanged, nil, nil, nil)
		return
	}
	var lines []*op
	for _, o := range left {
		if o.parent == w.root && !o.single {
			lines = append(lines, o)
		}
	}
	sr.classifyLines(w, nil, nil, lines)
}

// jsonValue is one value as the service's JSON writes it.
func jsonValue(v any) json.RawMessage {
	b, err := odata.MarshalBody(map[string]any{"v": v})
	if err != nil {
		b, _ = json.Marshal(map[string]any{"v": v})
	}
	var one struct{ V json.RawMessage }
	if json.Unmarshal(b, &one) != nil || len(one.V) == 0 {
		return json.RawMessage("null")
	}
	return one.V
}

// matchInsert classifies an insert whose key the server assigns by its
// step's match: fields: none found is a create, one a conflict (apply
// would make a second), several ambiguous. Without match: it is a create.
// why, when set, says the lookup proves nothing (the record is then
// reported as a create with the reason as a warning). read answers the
// lookup's GET (readMatches read it ahead with the group's others).
func (sr *stepRun) matchInsert(w *work, read func(string) (odata.BatchResponse, error)) (DiffAction, []string, error) {
	set := sr.r.md.EntitySet(sr.entity)
	conds, want, why := sr.matchQuery(w)
	if len(conds) == 0 && why == "" {
		sr.r.rd.WarnOnce("nomatch "+sr.step.Name, fmt.Sprintf("step %s: the server numbers its %s documents and the step has no match: fields, so whether the server holds them already cannot be told: each is counted a create, and apply would create it even if it were there (give the step match: to look them up)", sr.step.Name, sr.entity))
		return DiffCreate, nil, nil
	}
	var rows []map[string]any
	var err error
	if why == "" {
		rows, why, err = sr.r.rd.FindMatching(sr.entity, conds, want, read)
		if err != nil {
			return "", nil, err
		}
	}
	if why != "" {
		sr.r.rd.WarnOnce("match "+sr.step.Name, "step "+sr.step.Name+": cannot tell whether its documents exist: "+why)
		return DiffCreate, nil, nil
	}
	var keys []string
	for _, e := range rows {
		keys = append(keys, odata.EntityKey(set.Type, e))
	}
	switch len(rows) {
	case 0:
		return DiffCreate, nil, nil
	case 1:
		return DiffConflict, keys, nil
	}
	return DiffAmbiguous, keys, nil
}

// matchQuery is the lookup of a server-numbered insert by its step's
// match: fields; none (no conds, no why) when there is nothing to look up.
func (sr *stepRun) matchQuery(w *work) (conds []reconcile.Cond, want map[string]any, why string) {
	set := sr.r.md.EntitySet(sr.entity)
	if len(sr.step.Match) == 0 || set == nil || set.Type == nil {
		return nil, nil, ""
	}
	raw, err := odata.MarshalBody(w.rec.Fields)
	if err != nil {
		return nil, nil, ""
	}
	written, err := odata.DecodeEntity(raw)
	if err != nil {
		return nil, nil, ""
	}
	names, why := sr.r.rd.MatchNames(sr.step.Name, sr.entity, sr.step.Match, written)
	if why != "" {
		return nil, nil, why
	}
	want, conds = reconcile.MatchConds(set.Type, names, written)
	return conds, want, ""
}

// readMatches reads the match: lookups of a group's server-numbered
// inserts ahead, up to the batch size a call (not one call
// per record), and returns what answers them.
func (sr *stepRun) readMatches(ws []*work) (func(string) (odata.BatchResponse, error), error) {
	got := map[string]odata.BatchResponse{}
	var reqs []odata.BatchRequest
	for _, w := range ws {
		if w == nil || w.root == nil || w.root.key != "" {
			continue
		}
		if conds, _, why := sr.matchQuery(w); len(conds) > 0 && why == "" {
			u := reconcile.MatchURL(sr.entity, conds)
			if _, dup := got[u]; !dup {
				got[u] = odata.BatchResponse{}
				reqs = append(reqs, odata.BatchRequest{Method: "GET", URL: u})
			}
		}
	}
	per := sr.r.rd.PerCall()
	for start := 0; start < len(reqs); start += per {
		chunk := reqs[start:min(start+per, len(reqs))]
		for i := range chunk {
			chunk[i].ID = strconv.Itoa(i + 1)
		}
		resps, err := sr.r.sendReads(sr.ctx, chunk)
		if err != nil {
			return nil, err
		}
		for i, resp := range resps {
			got[chunk[i].URL] = resp
		}
	}
	return func(u string) (odata.BatchResponse, error) {
		if resp, ok := got[u]; ok {
			return resp, nil
		}
		return sr.r.rd.Read(u)
	}, nil
}

// readsAll reports whether every step reads its records' keys: in a diff,
// insert steps too.
func (r *runner) readsAll(mode plan.Mode) bool {
	return mode != plan.ModeInsert || r.jr.diffs() != nil
}
