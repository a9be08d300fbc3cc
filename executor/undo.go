package executor

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/migrate-tool/migrate/journal"
	"github.com/migrate-tool/migrate/odata"
)

// UndoOptions drive Undo.
type UndoOptions struct {
	// Yes does it; without it Undo only lists what it would do.
	Yes  bool
	Hook Hook
	// BatchSize caps sub-requests per batch (0: 100, the limit of every
	// server from 21.0 and within the older 1,000).
	BatchSize int
	// Now stamps the journal's entries (default time.Now).
	Now func() time.Time
}

// UndoAction is one thing undo does: delete an entity or a line the run
// created, or restore a before-image.
type UndoAction struct {
	Step, Record string
	Method, URL  string
	What         string // "delete the entity the run created", ...
	Done         bool
	Error        string
}

// UndoSummary lists every action and what became of it.
type UndoSummary struct {
	Actions  []UndoAction
	Done     int
	Failed   int
	Warnings []string // what cannot be undone (texts appended, lines deleted by replace)
}

// Undo removes what the run of journalPath created and restores what it
// changed, in reverse dependency order (later steps first, later records
// first). It is journaled in the same file, so an interrupted undo resumes;
// its deletes and restores are idempotent (a 404 on delete is done).
func Undo(ctx context.Context, journalPath string, client Client, opts UndoOptions) (*UndoSummary, error) {
	hook := opts.Hook
	if hook == nil {
		hook = NopHook{}
	}
	var (
		jr  *journal.Journal
		st  *journal.State
		err error
	)
	if opts.Yes {
		jr, st, err = journal.Open(journalPath)
		if err != nil {
			return nil, err
		}
		defer jr.Close()
	} else if st, err = journal.Load(journalPath); err != nil {
		return nil, err
	}
	if in := st.InDoubtSubs(); len(in) > 0 {
		notUndo := 0
		for _, s := range in {
			if s.Op != journal.OpUndoDelete && s.Op != journal.OpUndoPatch {
				notUndo++
			}
		}
		if notUndo > 0 {
			return nil, fmt.Errorf("%s: %d sub-request(s) are in doubt: run apply first to reconcile them, then undo", journalPath, notUndo)
		}
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	limit := opts.BatchSize
	if limit <= 0 || limit > 100 {
		limit = 100
	}
	entity := map[string]string{}
	wave := map[string]int{}
	for _, s := range st.Header.Steps {
		entity[s.Name], wave[s.Name] = s.Entity, s.Wave
	}
	steps := append([]string(nil), st.StepNames...)
	order := map[string]int{}
	for i, s := range steps {
		order[s] = i
	}
	sort.SliceStable(steps, func(i, j int) bool {
		if wave[steps[i]] != wave[steps[j]] {
			return wave[steps[i]] > wave[steps[j]]
		}
		return order[steps[i]] > order[steps[j]]
	})
	sum := &UndoSummary{}
	for _, name := range steps {
		ss := st.Steps[name]
		ent := entity[name]
		var plan []undoOp
		for i := len(ss.IDs) - 1; i >= 0; i-- {
			rec := ss.Records[ss.IDs[i]]
			if rec.Undone {
				continue
			}
			ops := undoOps(rec, ent, &sum.Warnings)
			if len(ops) == 0 {
				continue
			}
			plan = append(plan, ops...)
		}
		if !opts.Yes {
			for _, u := range plan {
				sum.Actions = append(sum.Actions, *u.act)
			}
			continue
		}
		if len(plan) > 0 {
			hook.StepStarted(name, ent)
		}
		for start := 0; start < len(plan); start += limit {
			end := min(start+limit, len(plan))
			if err := runUndoBatch(ctx, jr, client, plan[start:end], hook, now); err != nil {
				for _, u := range plan[start:end] {
					sum.Actions = append(sum.Actions, *u.act)
				}
				return sum, err
			}
			for _, u := range plan[start:end] {
				sum.Actions = append(sum.Actions, *u.act)
			}
		}
	}
	for _, a := range sum.Actions {
		switch {
		case a.Done:
			sum.Done++
		case a.Error != "":
			sum.Failed++
		}
	}
	if sum.Failed > 0 {
		return sum, fmt.Errorf("undo: %d action(s) failed", sum.Failed)
	}
	return sum, nil
}

type undoOp struct {
	sub  journal.Sub
	rec  *journal.Record
	body []byte
	act  *UndoAction
}

// undoOps lists what undoing one record takes.
func undoOps(rec *journal.Record, ent string, warn *[]string) []undoOp {
	var out []undoOp
	add := func(s journal.Sub, what string, body []byte) {
		if prev := rec.Undo[s.Path+"|"+s.Line]; prev != nil && (prev.OK() || prev.Status == 404 && s.Op == journal.OpUndoDelete) {
			return
		}
		s.Step, s.Rec = rec.Step, rec.ID
		out = append(out, undoOp{sub: s, rec: rec, body: body,
			act: &UndoAction{Step: rec.Step, Record: rec.ID, Method: s.Meth, URL: s.URL, What: what}})
	}
	if rec.Key == "" {
		return nil
	}
	base := ent + "(" + rec.Key + ")"
	if rec.Created {
		add(journal.Sub{Op: journal.OpUndoDelete, Meth: "DELETE", URL: base, Key: rec.Key}, "delete the entity the run created", nil)
		return out
	}
	paths := make([]string, 0, len(rec.Subs))
	for p := range rec.Subs {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for i := len(paths) - 1; i >= 0; i-- {
		s := rec.Subs[paths[i]]
		if !s.OK() {
			continue
		}
		switch {
		case s.Path == "" && s.Op == journal.OpPatch && len(s.Before) > 0:
			add(journal.Sub{Op: journal.OpUndoPatch, Meth: "PATCH", URL: base, Key: rec.Key, Before: s.Before}, "restore the fields the run changed", s.Before)
		case s.Path != "" && s.Op == journal.OpCreate && depth(s.Path) == 1 && s.ResultKey != "":
			add(journal.Sub{Op: journal.OpUndoDelete, Meth: "DELETE", Path: s.Path, Nav: s.Nav, Line: s.ResultKey,
				URL: base + "/" + s.Nav + "(" + s.ResultKey + ")"}, "delete the line the run added", nil)
		case s.Path != "" && s.Op == journal.OpCreate && depth(s.Path) == 1:
			*warn = append(*warn, fmt.Sprintf("%s %s: %s was written into an existing entity and cannot be taken back", rec.Step, rec.ID, s.Nav))
		}
	}
	for _, s := range rec.Extra {
		if s.Op == journal.OpDelete && s.OK() {
			*warn = append(*warn, fmt.Sprintf("%s %s: line %s of %s was deleted by lines: replace; its old content is in the journal", rec.Step, rec.ID, s.Line, s.Nav))
		}
	}
	return out
}

func runUndoBatch(ctx context.Context, jr *journal.Journal, client Client, ops []undoOp, hook Hook, now func() time.Time) error {
	seq := jr.NextBatch()
	reqs := make([]odata.BatchRequest, len(ops))
	subs := make([]journal.Sub, len(ops))
	for i, u := range ops {
		id := itoa(i + 1)
		s := u.sub
		s.ID = id
		subs[i] = s
		reqs[i] = odata.BatchRequest{ID: id, Method: s.Meth, URL: s.URL, Body: u.body}
		if len(u.body) > 0 {
			reqs[i].Headers = map[string]string{"content-type": "application/json"}
		}
	}
	if err := jr.Append(journal.Entry{Kind: journal.KindIntent, Batch: seq, Subs: subs, At: now().UTC()}); err != nil {
		return err
	}
	var calls odata.CallStats
	resps, err := client.Batch(odata.WithCallStats(ctx, &calls), reqs, batchOptions)
	hook.BatchSent(len(reqs))
	answered := now().UTC()
	if err != nil {
		if _, ok := refused(err); ok {
			res := make([]journal.Result, len(ops))
			for i := range ops {
				res[i] = journal.Result{ID: subs[i].ID, Status: -1}
			}
			_ = jr.Append(stampCalls(journal.Entry{Kind: journal.KindOutcome, Batch: seq, Results: res}, answered, &calls))
			return fmt.Errorf("undo: the server refused a batch: %w", err)
		}
		_ = jr.Append(stampCalls(journal.Entry{Kind: journal.KindOutcome, Batch: seq, InDoubt: err.Error()}, answered, &calls))
		// The batch may have been applied: in doubt, as apply's are.
		return undoInDoubt{err}
	}
	byID := map[string]odata.BatchResponse{}
	for _, r := range resps {
		byID[r.ID] = r
	}
	res := make([]journal.Result, 0, len(ops))
	recOK := map[*journal.Record]bool{}
	for i, u := range ops {
		r, ok := byID[subs[i].ID]
		if !ok {
			continue
		}
		if _, seen := recOK[u.rec]; !seen {
			recOK[u.rec] = true
		}
		good := r.Status >= 200 && r.Status < 300 || r.Status == 404 && u.sub.Op == journal.OpUndoDelete
		out := journal.Result{ID: subs[i].ID, Status: r.Status}
		if good {
			u.act.Done = true
		} else {
			u.act.Error = odata.ParseError(r.Status, nil, r.Body).Error()
			out.Error = u.act.Error
			recOK[u.rec] = false
		}
		res = append(res, out)
	}
	entries := []journal.Entry{stampCalls(journal.Entry{Kind: journal.KindOutcome, Batch: seq, Results: res}, answered, &calls)}
	for _, u := range ops {
		if ok, seen := recOK[u.rec]; seen && ok {
			entries = append(entries, journal.Entry{Kind: journal.KindRecord, Record: &journal.RecordEntry{Step: u.rec.Step, ID: u.rec.ID, Status: journal.Committed, Undo: true}})
			delete(recOK, u.rec)
			hook.RecordDone(u.rec.Step, Outcome{ID: u.rec.ID, Status: "undone"})
		}
	}
	if err := jr.Append(entries...); err != nil {
		return err
	}
	if len(res) != len(ops) {
		return errors.New("undo: the server's answer lacks some sub-requests: run undo again")
	}
	return nil
}

// undoInDoubt is an undo batch whose outcome is unknown. errors.Is finds
// ErrInDoubt in it; its advice is undo's own, not apply's.
type undoInDoubt struct{ err error }

func (e undoInDoubt) Error() string {
	return "undo: " + e.err.Error() + " (run undo again: its actions are safe to repeat)"
}

func (e undoInDoubt) Unwrap() []error { return []error{e.err, ErrInDoubt} }
