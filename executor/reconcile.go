package executor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"sort"
	"strconv"
	"strings"

	"github.com/migrate-tool/migrate/compare"
	"github.com/migrate-tool/migrate/journal"
	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/read"
)

// matchFields is what the journal keeps to find a created entity or line
// again: its scalar fields, without long texts and file contents.
func matchFields(fields map[string]any) json.RawMessage { return keptFields(fields, matchable) }

// keptFields is fields as a request's body writes them, without those
// whose value keep refuses; nil when none is left.
func keptFields(fields map[string]any, keep func(any) bool) json.RawMessage {
	m, copied := fields, false // mostly every field is kept: no copy
	for k, v := range fields {
		if keep(v) {
			continue
		}
		if !copied {
			m, copied = maps.Clone(fields), true
		}
		delete(m, k)
	}
	if len(m) == 0 {
		return nil
	}
	b, err := odata.MarshalBody(m)
	if err != nil {
		return nil
	}
	return b
}

// matchable is a value worth finding an entity by: not empty, no long text
// or file content.
func matchable(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case string:
		return len(x) <= 200 && !strings.HasPrefix(x, "data:")
	}
	return true
}

// reconcile decides every sub-request whose outcome is unknown before
// anything else is sent: found on the server → committed (with its key),
// provably absent → forgotten (it will be sent again), otherwise listed by
// name in Summary.Undecided and left alone.
func (r *runner) reconcile() error {
	subs := r.state.InDoubtSubs()
	if len(subs) == 0 {
		return nil
	}
	// Entities first, then their children (a child of an absent parent is
	// absent; a child's parent key may come from reconciling the parent).
	sort.SliceStable(subs, func(i, j int) bool { return journal.Depth(subs[i].Path) < journal.Depth(subs[j].Path) })
	entity := StepEntities(r.state)
	if r.opts.Plan != nil { // undo settles work in doubt with the journal alone
		for _, s := range r.opts.Plan.Steps {
			entity[s.Name] = s.Entity
		}
	}
	results := map[int][]journal.SubResult{}
	absent := map[string]bool{} // step|rec whose entity is absent
	claimed, keyOf, err := claimedKeys(r.state)
	if err != nil {
		return err
	}
	lineKeyOf := map[string]string{} // step|rec|path of a line found here → its key
	absentLine := map[string]bool{}  // step|rec|path of a child found absent here

	// The reads go at most 100 to a call. Each depth's reads
	// are known once the depth above it is decided (a line is read under
	// its parent's key), so they are sent ahead, a depth at a time, and
	// the decisions below take their answers from the cache.
	r.readCache = map[string]odata.BatchResponse{}
	defer func() { r.readCache = nil }()
	pathOf := func(s *journal.SubState) string {
		ent, recKey := entity[s.Step], s.Step+"|"+s.Rec
		switch {
		case s.Path == "" && s.Op == journal.OpCreate && s.Key != "":
			return ent + "(" + s.Key + ")"
		case s.Path == "" && s.Op == journal.OpCreate:
			return r.candidatePath(s)
		case s.Op == journal.OpCreate:
			if absent[recKey] || keyOf[recKey] == "" {
				return ""
			}
			parentURL, _, gone, why := r.parentOf(ent, keyOf[recKey], s, lineKeyOf, absentLine)
			if gone || why != "" {
				return ""
			}
			return parentURL + "/" + s.Nav
		case s.Op == journal.OpPatch || s.Op == journal.OpUndoPatch || s.Op == journal.OpDelete || s.Op == journal.OpUndoDelete:
			return s.URL
		}
		return ""
	}
	for i, s := range subs {
		if i == 0 || journal.Depth(s.Path) != journal.Depth(subs[i-1].Path) {
			var paths []string
			for _, next := range subs[i:] {
				if journal.Depth(next.Path) != journal.Depth(s.Path) {
					break
				}
				if p := pathOf(next); p != "" {
					paths = append(paths, p)
				}
			}
			if err := r.prefetch(paths); err != nil {
				return err
			}
		}
		ent := entity[s.Step]
		recKey := s.Step + "|" + s.Rec
		decide := func(status int, key, why string) {
			if status == 0 {
				msg := fmt.Sprintf("%s %s%s: %s", s.Step, s.Rec, pathLabel(s), why)
				r.undec = append(r.undec, msg)
				r.hook.Warn("in doubt, not resent: " + msg + "; check it on the server")
				return
			}
			results[s.Batch] = append(results[s.Batch], journal.SubResult{ID: s.ID, Status: status, Key: key, Error: why})
		}
		switch {
		case s.Path == "" && s.Op == journal.OpCreate:
			if s.Key != "" {
				resp, err := r.read(ent + "(" + s.Key + ")")
				if err != nil {
					return err
				}
				switch resp.Status {
				case 200:
					decide(201, s.Key, "")
					keyOf[recKey] = s.Key
				case 404:
					decide(-1, "", "reconciled: absent")
					absent[recKey] = true
				default:
					decide(0, "", fmt.Sprintf("reading %s(%s) gave status %d", ent, s.Key, resp.Status))
				}
				continue
			}
			found, why, err := r.candidates(s, claimedIn(claimed))
			if err != nil {
				return err
			}
			switch {
			case why != "":
				decide(0, "", why)
			case len(found) == 1:
				decide(201, found[0].Key, "")
				keyOf[recKey] = found[0].Key
				claimed[s.Step+"|"+found[0].Key] = true
			case len(found) == 0:
				decide(-1, "", "reconciled: absent")
				absent[recKey] = true
			default:
				keys := make([]string, len(found))
				for i, c := range found {
					keys[i] = c.Key
				}
				decide(0, "", fmt.Sprintf("%d entities of %s match its fields and lines (%s); decide with migrate resolve", len(found), ent, strings.Join(keys, ", ")))
			}
		case s.Op == journal.OpCreate:
			if absent[recKey] {
				decide(-1, "", "reconciled: its parent is absent")
				continue
			}
			pkey := keyOf[recKey]
			if pkey == "" {
				decide(0, "", "its parent's key is unknown")
				continue
			}
			// A child of a line (a line's text, docs/service.md, Text
			// sub-forms) is read under that line, whose key is journaled or
			// was found just above.
			parentURL, pt, gone, why := r.parentOf(ent, pkey, s, lineKeyOf, absentLine)
			if u, t := sentBelow(r.md, s); why != "" && u != "" {
				parentURL, pt, why = u, t, "" // a delta's text below a line a deep insert carried
			}
			switch {
			case gone:
				decide(-1, "", "reconciled: its parent line is absent")
				absentLine[recKey+"|"+s.Path] = true
				continue
			case why != "":
				decide(0, "", why)
				continue
			}
			resp, err := r.read(parentURL + "/" + s.Nav)
			if err != nil {
				return err
			}
			if resp.Status == 204 {
				// A single-valued navigation that holds nothing: a
				// standard service answers 204 No Content (a text not
				// written, docs/other-services.md, What differs).
				decide(-1, "", "reconciled: absent")
				absentLine[recKey+"|"+s.Path] = true
				continue
			}
			if resp.Status != 200 {
				decide(0, "", fmt.Sprintf("reading its lines gave status %d", resp.Status))
				continue
			}
			claimKey := recKey + "|" + s.Nav + "|"
			if i := strings.LastIndexByte(s.Path, '.'); i >= 0 {
				claimKey = recKey + "|" + s.Path[:i] + "|" + s.Nav + "|"
			}
			line, found, why := MatchLine(resp.Body, s.Match, func(k string) bool { return claimed[claimKey+k] }, r.md, pt, s.Nav)
			switch {
			case why != "":
				decide(0, "", why)
			case found:
				decide(201, line, "")
				if line != "" {
					claimed[claimKey+line] = true
					lineKeyOf[recKey+"|"+s.Path] = line
				}
			default:
				decide(-1, "", "reconciled: absent")
				absentLine[recKey+"|"+s.Path] = true
			}
		case s.Op == journal.OpPatch || s.Op == journal.OpUndoPatch:
			resp, err := r.read(s.URL)
			if err != nil {
				return err
			}
			if resp.Status != 200 {
				decide(0, "", fmt.Sprintf("reading %s gave status %d", s.URL, resp.Status))
				continue
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
				held, sent, old := heldText(resp.Body), heldText(want), heldText(s.Before)
				switch {
				case compare.SameText(held, sent):
					decide(200, s.Key, "")
				case s.Op == journal.OpPatch && compare.SameText(held, old):
					decide(-1, "", "reconciled: not applied")
				default:
					decide(0, "", "the text holds neither the old nor the new one")
				}
				continue
			}
			// A PATCH applies whole: the fields read back decide it,
			// each by its type.
			pt := TypeAt(r.md, s.URL)
			read := []json.RawMessage{resp.Body}
			want, unread := readableMatch(read, want)
			before, _ := readableMatch(read, s.Before)
			switch {
			case len(want) == 0 && len(unread) > 0:
				decide(0, "", fmt.Sprintf("%s is read without %s (a field-level permission): nothing left to tell whether it changed; check it on the server", s.URL, strings.Join(unread, ", ")))
			case compare.SameJSON(pt, resp.Body, want):
				decide(200, s.Key, "")
			case s.Op == journal.OpPatch && compare.SameJSON(pt, resp.Body, before):
				decide(-1, "", "reconciled: not applied")
			default:
				decide(0, "", "the entity holds neither the old nor the new values")
			}
		case s.Op == journal.OpDelete || s.Op == journal.OpUndoDelete:
			resp, err := r.read(s.URL)
			if err != nil {
				return err
			}
			switch resp.Status {
			case 404:
				decide(204, "", "")
			case 200:
				decide(-1, "", "reconciled: still there")
			default:
				decide(0, "", fmt.Sprintf("reading %s gave status %d", s.URL, resp.Status))
			}
		case s.Op == journal.OpUndoCreate:
			// Forgetting it would let undo add the line twice; undo itself
			// looks for it among the lines.
			decide(0, "", "a line undo was re-creating: run undo again to settle it")
		default:
			decide(-1, "", "a read: nothing to reconcile")
		}
	}
	var entries []journal.Entry
	batches := make([]int, 0, len(results))
	for b := range results {
		batches = append(batches, b)
	}
	sort.Ints(batches)
	for _, b := range batches {
		entries = append(entries, journal.Entry{Kind: journal.KindOutcome, Batch: b, Results: results[b]})
	}
	if len(entries) > 0 {
		if err := r.jr.Append(entries...); err != nil {
			return err
		}
	}
	r.state = r.jr.Snapshot()
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
func (r *runner) parentOf(ent, pkey string, s *journal.SubState, lineKeyOf map[string]string, absentLine map[string]bool) (url string, t *odata.EntityType, gone bool, why string) {
	set := r.md.EntitySet(ent)
	if set == nil {
		return "", nil, false, "its entity set " + ent + " is not in the metadata"
	}
	url, t = ent+"("+pkey+")", set.Type
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
			url += "/" + ps.Nav + "(" + key + ")"
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

// read GETs one path through a batch of one (reads are idempotent), or
// takes its answer from what prefetch read ahead.
func (r *runner) read(path string) (odata.BatchResponse, error) {
	if resp, ok := r.readCache[path]; ok {
		return resp, nil
	}
	return r.readCtx(r.ctx, path)
}

// readCtx is read with a context of its own (odata.WithCallStats), never
// from the cache.
func (r *runner) readCtx(ctx context.Context, path string) (odata.BatchResponse, error) {
	resps, err := r.readBatch(ctx, []odata.BatchRequest{{ID: "1", Method: "GET", URL: path}})
	if err != nil {
		return odata.BatchResponse{}, reconcileErr(path, err)
	}
	return resps[0], nil
}

// prefetch reads paths ahead, at most min(batch size, 100) to a call, into
// the cache that read answers from (while reconcile has one).
func (r *runner) prefetch(paths []string) error {
	if r.readCache == nil {
		return nil
	}
	var reqs []odata.BatchRequest
	asked := map[string]bool{}
	for _, p := range paths {
		if _, ok := r.readCache[p]; ok || asked[p] {
			continue
		}
		asked[p] = true
		reqs = append(reqs, odata.BatchRequest{Method: http.MethodGet, URL: p})
	}
	per := r.readsPerCall()
	for start := 0; start < len(reqs); start += per {
		chunk := reqs[start:min(start+per, len(reqs))]
		for i := range chunk {
			chunk[i].ID = strconv.Itoa(i + 1)
		}
		resps, err := r.readBatch(r.ctx, chunk)
		if err != nil {
			return reconcileErr(chunk[0].URL, err)
		}
		for i, resp := range resps {
			r.readCache[chunk[i].URL] = resp
		}
	}
	return nil
}

// readsPerCall is how many GETs go in one call: the batch size, at most
// 100, not one call per read (a server before 21.0 takes 1,000 writes a call,
// but a read answers up to 2,000 rows each).
func (r *runner) readsPerCall() int {
	if r.limit > 0 && r.limit < read.PerBatch {
		return r.limit
	}
	return read.PerBatch
}

// reconcileErr is a failed read of reconciliation: the server cannot be
// read just now (lost connections, 5xx, throttling), so the work stays in
// doubt for the next apply, which is the CLI's exit 4, not a target that
// cannot be reached; a refusal or an interruption is what it is.
func reconcileErr(path string, err error) error {
	if oe, ok := odata.Refused(err); ok && oe.Status != http.StatusTooManyRequests || errors.Is(err, ErrInterrupted) {
		return fmt.Errorf("reconciling %s: %w", path, err)
	}
	return fmt.Errorf("%w: reconciling %s: %w", ErrInDoubt, path, err)
}

// readBatchOnce sends reads and returns their answers in the order of reqs
// (readBatch, in reads.go, also asks again what a cold form denied).
// A read changes nothing: unlike a write, it is safe to try again after a
// lost answer, a 5xx or an answer that breaks the $batch protocol (an id
// twice, missing or never asked for), up to read.Attempts times. A batch the
// server refuses is not tried again.
//
// ctx is the run's, or a step's naming it (batchStep).
func (r *runner) readBatchOnce(ctx context.Context, reqs []odata.BatchRequest) ([]odata.BatchResponse, error) {
	var err error
	for attempt := 0; attempt < read.Attempts; attempt++ {
		var got []odata.BatchResponse
		got, err = r.opts.Client.Batch(ctx, reqs, BatchOptions)
		if err == nil {
			out, problem := read.Answers(reqs, got)
			if out != nil {
				return out, nil
			}
			// Nothing was written: the run stops, and apply run again
			// reads again.
			err = fmt.Errorf("%w: the server's answer to a read broke the $batch protocol: %s", ErrInterrupted, problem)
			continue
		}
		if _, ok := odata.Refused(err); ok || r.ctx.Err() != nil {
			break
		}
	}
	return nil, err
}

// MatchLine finds, among a parent's lines (or its single text object), one
// whose fields are the same as match (compare, typed by the lines' type
// when parent is known) and whose key is not claimed; it returns that
// line's key. Fields no line carries (not returned on read) are not
// compared; why says so when none is left to compare.
func MatchLine(body []byte, match json.RawMessage, claimed func(string) bool, md *odata.Metadata, parent *odata.EntityType, nav string) (key string, found bool, why string) {
	var lt *odata.EntityType
	if parent != nil {
		if n := parent.Navigation(nav); n != nil {
			lt = md.Type(n.Type)
			if !n.Collection {
				return "", compare.TextInJSON(body, match), ""
			}
		}
	}
	var coll struct {
		Value []json.RawMessage `json:"value"`
	}
	if json.Unmarshal(body, &coll) != nil {
		return "", false, ""
	}
	match, unread := readableMatch(coll.Value, match)
	if len(match) == 0 && len(unread) > 0 {
		return "", false, fmt.Sprintf("its lines are read without %s (a field-level permission): nothing left to match it on; check it on the server", strings.Join(unread, ", "))
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
		return k, true, ""
	}
	return "", false, ""
}

// StepEntities is each step's entity: the journal header's, else (a step
// the plan that began the journal did not have) the entity set its
// records' entities were sent to.
func StepEntities(st *journal.State) map[string]string {
	entity := map[string]string{}
	for _, s := range st.Header.Steps {
		entity[s.Name] = s.Entity
	}
	for _, name := range st.StepNames {
		ss := st.Steps[name]
		for _, id := range ss.IDs {
			if entity[name] != "" {
				break
			}
			if rec := ss.Records[id]; rec != nil && rec.Subs[""] != nil {
				entity[name] = odata.EntitySetOf(rec.Subs[""].URL)
			}
		}
	}
	return entity
}
