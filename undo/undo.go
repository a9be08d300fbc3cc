// Package undo takes a run back from its journal: what it created is
// deleted, what it changed restored, the lines lines: replace deleted
// re-created, each record read first. It reads the journal and the
// service, journals in the run's journal, and settles work in doubt as
// apply does (reconcile.Settle); the engine does not import it.
package undo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/migrate-tool/migrate/compare"
	"github.com/migrate-tool/migrate/executor"
	"github.com/migrate-tool/migrate/internal/diag"
	"github.com/migrate-tool/migrate/journal"
	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/read"
	"github.com/migrate-tool/migrate/reconcile"
	"github.com/migrate-tool/migrate/verify"
)

// Options drive Undo.
type Options struct {
	// Yes does it; without it Undo only lists what it would do.
	Yes bool
	// Target is the service root the client talks to. A journal written to
	// another service is refused before anything is read or sent
	// (CheckTarget): undo must touch the journal's company and no other.
	Target string
	// Force undoes records that changed since the run too; without it they
	// are left alone and listed in Summary.Skipped.
	Force bool
	Hook  executor.Hook
	// BatchSize caps sub-requests per batch (0: 100, the limit of every
	// server from 21.0 and within the older 1,000).
	BatchSize int
	// Now stamps the journal's entries (default time.Now).
	Now func() time.Time
	// Metadata, when given, lets undo settle the run's work in doubt
	// itself, by reading the server as apply's reconciliation does (not by
	// an apply, which would re-create what undo deleted), and compare what it
	// reads by each field's type (a price the server rounded to its Scale is
	// what the run left); without it work in doubt is left as it is and
	// values compare by the untyped rule. It is called once, and only when
	// undo has something to read (a real $metadata is megabytes).
	Metadata func(context.Context) (*odata.Metadata, error)
}

// Action is one thing undo does: delete an entity or a line the run
// created, restore a before-image, or re-create a line the run deleted.
type Action struct {
	Step, Record string
	Method, URL  string
	What         string // "delete the entity the run created", ...
	Done         bool
	Error        string
}

// Summary lists every action and what became of it.
type Summary struct {
	// Target is the service undo touches (without credentials).
	Target   string
	Actions  []Action
	Done     int
	Failed   int
	Skipped  []string // records changed since the run, left alone (without Force)
	Warnings []string // what cannot be undone (texts written into existing entities)
	// InDoubt lists the records (STEP/ID) left as they are because their
	// work is in doubt.
	InDoubt []string
	// WithDocuments lists the records (STEP/ID) that wrote into a document
	// the run created (a text an update step appended to an order): undo
	// deletes the document, and what they wrote goes with it. They are
	// journaled undone with it.
	WithDocuments []string
}

// Undo removes what the run of journalPath created, restores what it
// changed and re-creates the lines lines: replace deleted, in reverse
// dependency order (later steps first, later records first). Before it
// touches a record it reads it: a record whose fields are no longer what
// the run left was changed by someone since, and is skipped unless Force.
// It is journaled in the same file, so an interrupted undo resumes; its
// deletes and restores are idempotent (a 404 on delete is done), and a
// re-created line whose outcome was lost is looked for before it is sent
// again.
func Undo(ctx context.Context, journalPath string, client executor.Client, opts Options) (*Summary, error) {
	hook := opts.Hook
	if hook == nil {
		hook = executor.NopHook{}
	}
	jr, st, done, err := openJournal(journalPath, opts)
	if err != nil {
		return nil, err
	}
	defer done()
	// The run's work in doubt is settled here, by reading, as
	// apply's reconciliation settles it (found: the run's, undone; absent:
	// never done), not by an apply that would also re-create what undo
	// deleted.
	u := &undoRun{ctx: ctx, client: client, hook: hook, opts: &opts, limit: opts.BatchSize,
		left: map[*journal.RecordState]int{}, failed: map[*journal.RecordState]bool{}}
	if opts.Metadata != nil && runInDoubt(st) {
		md, err := u.metadata()
		if err != nil {
			return nil, err
		}
		if st, err = reconcile.Settle(ctx, jr, st, reconcile.Options{Client: client, Metadata: md, Warn: hook.Warn}); err != nil {
			return nil, undoInDoubt{fmt.Errorf("settling the run's work in doubt: %w", err)}
		}
	}
	// Records whose own work is still in doubt are left as they are
	// (undoing a document that may not be the run's would delete someone
	// else's); everything else is undone, and the summary lists what was
	// left.
	inDoubt, left := recordsInDoubt(st)
	u.jr = jr
	if u.limit <= 0 || u.limit > 100 {
		u.limit = 100
	}
	entity := reconcile.StepEntities(st, nil)
	sum := &Summary{Target: executor.Redact(opts.Target), InDoubt: left}
	// The documents undo deletes whole: what other records wrote into them
	// goes with them (u.covered).
	deleted := map[string]bool{}
	for _, name := range st.StepNames {
		for _, rec := range st.Steps[name].Records {
			if rec.Created && !rec.Undone && !inDoubt[rec] && rec.Key != "" {
				deleted[odata.KeySegment(entity[name], rec.Key)] = true
			}
		}
	}
	u.covered = map[string][]*journal.RecordState{}
	if sum.Target == "" {
		sum.Target = st.Header.Target
	}
	for _, name := range undoOrder(st) {
		ss := st.Steps[name]
		ent := entity[name]
		var plan []undoOp
		for i := len(ss.IDs) - 1; i >= 0; i-- {
			rec := ss.Records[ss.IDs[i]]
			if rec.Undone || inDoubt[rec] {
				continue
			}
			if base := odata.KeySegment(ent, rec.Key); !rec.Created && rec.Key != "" && deleted[base] {
				u.covered[base] = append(u.covered[base], rec)
				continue
			}
			plan = append(plan, undoOps(rec, ent, &sum.Warnings)...)
		}
		if len(plan) == 0 {
			continue
		}
		if opts.Yes {
			hook.StepStarted(name, ent)
		}
		if err := u.step(plan, sum); err != nil {
			return sum.tally(), err
		}
	}
	if sum.tally().Failed > 0 {
		return sum, fmt.Errorf("undo: %s failed", diag.Count(sum.Failed, "action", "actions"))
	}
	if len(sum.InDoubt) > 0 {
		return sum, leftInDoubt(fmt.Sprintf("%s in doubt left as they are: %s; reading the server could not tell whether they are the run's: decide them with `migrate resolve %s`, then undo again",
			diag.Count(len(sum.InDoubt), "record", "records"), strings.Join(sum.InDoubt, ", "), journalPath))
	}
	return sum, nil
}

// openJournal opens the journal at path for undo: with --yes (opts.Yes)
// for writing; without, a scratch copy of it (the preview is undo
// itself, run over the copy with nothing sent but reads, so that what it
// lists is what --yes does: the same reads, the same records left
// alone). It refuses a target that is not the journal's. done closes
// what it opened.
func openJournal(path string, opts Options) (jr *journal.Journal, st *journal.State, done func(), err error) {
	if opts.Yes {
		if jr, st, err = journal.Open(path); err != nil {
			return nil, nil, nil, err
		}
		done = func() { jr.Close() }
	} else if st, err = journal.Load(path); err != nil {
		return nil, nil, nil, err
	}
	if err := executor.CheckTarget(path, st.Header, opts.Target); err != nil {
		if done != nil {
			done()
		}
		return nil, nil, nil, err
	}
	if !opts.Yes {
		return scratchJournal(path)
	}
	return jr, st, done, nil
}

// recordsInDoubt are the records of st whose own work is still in doubt
// (undo's own excepted), and their names (STEP/ID) in journal order.
func recordsInDoubt(st *journal.State) (map[*journal.RecordState]bool, []string) {
	inDoubt := map[*journal.RecordState]bool{}
	var names []string
	for _, s := range st.InDoubtSubs() {
		if !s.Op.Undo() {
			if rec := st.Record(s.Step, s.Rec); !inDoubt[rec] {
				inDoubt[rec] = true
				names = append(names, s.Step+"/"+s.Rec)
			}
		}
	}
	return inDoubt, names
}

// undoOrder is the order undo takes st's steps in: the last wave first,
// and within a wave the last step first, so that what refers to a
// record is undone before it.
func undoOrder(st *journal.State) []string {
	wave := map[string]int{}
	for _, s := range st.Header.Steps {
		wave[s.Name] = s.Wave
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
	return steps
}

// step undoes the actions of one step (plan), or, without --yes, lists
// them in sum: those whose target changed since the run are skipped
// (unchanged); deletes and restores go first, then the re-created lines,
// since a line the run added may hold the key of the old line it
// replaced.
func (u *undoRun) step(plan []undoOp, sum *Summary) error {
	all := plan
	plan, skipped, err := u.unchanged(plan)
	sum.Skipped = append(sum.Skipped, skipped...)
	if err != nil {
		return err
	}
	u.goWith(all, plan, sum)
	if !u.opts.Yes {
		for _, op := range plan {
			if !op.act.Done { // a lost re-create found: nothing to do
				sum.Actions = append(sum.Actions, *op.act)
			}
		}
		return nil
	}
	var first, then []undoOp
	for _, op := range plan {
		switch {
		case op.act.Done: // a lost re-create, found: nothing to send
		case op.sub.Op == journal.OpUndoCreate:
			then = append(then, op)
			u.left[op.rec]++
		default:
			first = append(first, op)
			u.left[op.rec]++
		}
	}
	err = u.send(first)
	if err == nil {
		err = u.send(then)
	}
	for _, op := range plan {
		sum.Actions = append(sum.Actions, *op.act)
	}
	return err
}

// goWith lists the records whose writes go with the documents the kept
// ops of a step delete; of a document left alone (changed since the run),
// it says that what they wrote stays.
func (u *undoRun) goWith(all, kept []undoOp, sum *Summary) {
	deletes := map[string]bool{}
	for _, op := range kept {
		if op.sub.Op == journal.OpUndoDelete && op.sub.Path == "" {
			deletes[op.sub.URL] = true
			for _, rec := range u.covered[op.sub.URL] {
				sum.WithDocuments = append(sum.WithDocuments, rec.Step+"/"+rec.ID)
			}
		}
	}
	for _, op := range all {
		if op.sub.Op != journal.OpUndoDelete || op.sub.Path != "" || deletes[op.sub.URL] {
			continue
		}
		for _, rec := range u.covered[op.sub.URL] {
			sum.Warnings = append(sum.Warnings, fmt.Sprintf("%s %s: what it wrote into %s stays: undo leaves that document alone", rec.Step, rec.ID, op.sub.URL))
		}
		delete(u.covered, op.sub.URL)
	}
}

// leftInDoubt is undo finished except for records in doubt; errors.Is
// finds executor.ErrInDoubt in it (exit 4).
type leftInDoubt string

func (e leftInDoubt) Error() string { return string(e) }

func (e leftInDoubt) Unwrap() error { return executor.ErrInDoubt }

// tally counts the actions done and failed.
func (sum *Summary) tally() *Summary {
	sum.Done, sum.Failed = 0, 0
	for _, a := range sum.Actions {
		switch {
		case a.Done:
			sum.Done++
		case a.Error != "":
			sum.Failed++
		}
	}
	return sum
}

type undoOp struct {
	sub  journal.Sub
	rec  *journal.RecordState
	body []byte
	act  *Action
	// want is what the run left at sub.URL (the fields it wrote; of an
	// entity it created, its lines and texts too), to be compared with
	// what read (sub.URL, with the sub-forms expanded) finds there now;
	// restored is what a restore puts back (a lost restore may have
	// happened).
	want     *verify.Want
	read     string
	restored json.RawMessage
	// redo is a re-create whose earlier attempt's outcome was lost.
	redo *journal.SubState
}

// undoOps lists what undoing one record takes.
func undoOps(rec *journal.RecordState, ent string, warn *[]string) []undoOp {
	var out []undoOp
	add := func(s journal.Sub, what string, body json.RawMessage, want *verify.Want, restored json.RawMessage) {
		s.Step, s.Rec = rec.Step, rec.ID
		prev := rec.Undo[s.UndoKey()]
		if prev != nil && (prev.OK() || prev.Status == 404 && s.Op == journal.OpUndoDelete) {
			return
		}
		op := undoOp{sub: s, rec: rec, body: body, want: want, read: s.URL, restored: restored,
			act: &Action{Step: rec.Step, Record: rec.ID, Method: s.Meth, URL: s.URL, What: what}}
		if prev != nil && prev.InDoubt() && s.Op == journal.OpUndoCreate {
			op.redo = prev // deletes and restores are safe to repeat; a POST is not
		}
		out = append(out, op)
	}
	if rec.Key == "" {
		return nil
	}
	base := odata.KeySegment(ent, rec.Key)
	if rec.Created {
		// The document is deleted whole, so every field the run
		// wrote into it counts, its lines' and texts' too.
		w := verify.WantOf(rec)
		add(journal.Sub{Op: journal.OpUndoDelete, Meth: "DELETE", URL: base, Key: rec.Key}, "delete the entity the run created", nil, &w, nil)
		if navs := w.Navs(); len(out) > 0 && len(navs) > 0 {
			out[len(out)-1].read = base + "?$expand=" + strings.Join(navs, ",")
		}
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
			add(journal.Sub{Op: journal.OpUndoPatch, Meth: "PATCH", URL: base, Key: rec.Key, Before: s.Before}, "restore the fields the run changed", s.Before, fieldsLeft(s), s.Before)
		case s.Path != "" && journal.Depth(s.Path) == 1 && s.Op == journal.OpPatch && s.Line == "" && s.ResultKey == "" && len(s.Before) > 0:
			// A text a delta load replaced (a line's PATCH names its line):
			// written back whole as the server held it, APPEND false; or
			// the fields a delta changed of another single sub-form (a
			// ship-to address).
			what, held := "restore the text the run replaced", "the text"
			if !reconcile.WritesText(s.Before) {
				what, held = "restore the "+s.Nav+" fields the run changed", "the values"
			}
			add(journal.Sub{Op: journal.OpUndoPatch, Meth: "PATCH", Path: s.Path, Nav: s.Nav, URL: base + "/" + s.Nav, Key: rec.Key, Before: s.Before},
				what, s.Before, nil, nil)
			if s.Over == journal.OpCreate {
				*warn = append(*warn, fmt.Sprintf("%s %s: %s was written into an existing entity and cannot be taken back: it gets %s back that it held before the delta load replaced it", rec.Step, rec.ID, s.Nav, held))
			}
		case s.Path != "" && (s.Op == journal.OpCreate || s.Op == journal.OpPatch && s.Over == journal.OpCreate) && journal.Depth(s.Path) == 1 && s.ResultKey != "":
			// A line the run added, a delta load's PATCH of it since too.
			add(journal.Sub{Op: journal.OpUndoDelete, Meth: "DELETE", Path: s.Path, Nav: s.Nav, Line: s.ResultKey,
				URL: base + "/" + odata.KeySegment(s.Nav, s.ResultKey)}, "delete the line the run added", nil, fieldsLeft(s), nil)
		case s.Path != "" && s.Op == journal.OpCreate && journal.Depth(s.Path) == 1:
			*warn = append(*warn, fmt.Sprintf("%s %s: %s was written into an existing entity and cannot be taken back", rec.Step, rec.ID, s.Nav))
		}
	}
	for _, s := range rec.Extra {
		if s.Op != journal.OpDelete || !s.OK() {
			continue
		}
		body, err := executor.LineBody(s.Before, nil)
		if err != nil {
			*warn = append(*warn, fmt.Sprintf("%s %s: line %s of %s was deleted by lines: replace, and its journaled content cannot be read back: %v", rec.Step, rec.ID, s.Line, s.Nav, err))
			continue
		}
		add(journal.Sub{Op: journal.OpUndoCreate, Meth: "POST", URL: base + "/" + s.Nav, Key: rec.Key, Nav: s.Nav, Line: s.Line, Before: s.Before},
			"re-create line "+s.Line+" that lines: replace deleted", body, nil, nil)
	}
	return out
}

// fieldsLeft is what sub-request s left on the server as a wanted state
// of its own: nil when the journal knows nothing of it to compare.
func fieldsLeft(s *journal.SubState) *verify.Want {
	m := verify.Left(s)
	if len(m) == 0 {
		return nil
	}
	return &verify.Want{Fields: m}
}

// undoRun is one Undo with --yes.
type undoRun struct {
	ctx    context.Context
	jr     *journal.Journal
	client executor.Client
	hook   executor.Hook
	opts   *Options
	limit  int
	// left counts each record's actions without an outcome; failed marks a
	// record one of whose actions failed. A record is journaled as undone
	// when its last action succeeds, not before: a re-created line comes
	// in a later batch than the deletes of its record.
	left   map[*journal.RecordState]int
	failed map[*journal.RecordState]bool
	// covered are, per document undo deletes whole (its URL), the records
	// that wrote into it: undone when it is deleted.
	covered map[string][]*journal.RecordState
	warm    read.Warmth // entity sets whose 404 is the truth
	// md is the target's metadata once asked for (metadata).
	md    *odata.Metadata
	mdErr error
	mdAsk bool
}

// metadata is opts.Metadata's answer, asked for once; nil without it.
func (u *undoRun) metadata() (*odata.Metadata, error) {
	if !u.mdAsk && u.opts.Metadata != nil {
		u.mdAsk = true
		u.md, u.mdErr = u.opts.Metadata(u.ctx)
	}
	return u.md, u.mdErr
}

// unchanged reads what the plan is about to touch and keeps the actions of
// the records that still hold what the run left. A record changed since
// (a field the run wrote has another value now, or an entity the run
// patched is gone) is dropped with a line saying so, unless Force. It also
// settles re-creates whose earlier outcome was lost: the line found with
// its content is done.
func (u *undoRun) unchanged(plan []undoOp) ([]undoOp, []string, error) {
	var reqs []odata.BatchRequest
	idx := make([]int, len(plan))
	for i, op := range plan {
		idx[i] = -1
		url := ""
		switch {
		case op.redo != nil:
			url = op.sub.URL // the lines, since the server may have numbered it anew
		case op.want != nil && !u.opts.Force:
			url = op.read
		default:
			continue
		}
		idx[i] = len(reqs)
		reqs = append(reqs, odata.BatchRequest{ID: strconv.Itoa(len(reqs) + 1), Method: "GET", URL: url})
	}
	if len(reqs) == 0 {
		return plan, nil, nil
	}
	md, err := u.metadata()
	if err != nil {
		return nil, nil, fmt.Errorf("undo: reading the target's metadata: %w", err)
	}
	resps, err := readBatches(u.ctx, u.client, reqs, u.limit, u.hook, &u.warm)
	if _, ok := odata.Refused(err); ok {
		return nil, nil, fmt.Errorf("undo: reading what the run left: %w", err)
	} else if err != nil {
		// The server cannot be read just now: nothing was changed, and the
		// next undo reads again (exit 4, as apply's reconciliation).
		return nil, nil, undoInDoubt{fmt.Errorf("reading what the run left: %w", err)}
	}
	why := map[*journal.RecordState]string{}
	var settled []journal.Entry
	for i, op := range plan {
		if idx[i] < 0 {
			continue
		}
		resp := resps[reqs[idx[i]].ID]
		if op.redo != nil {
			// Settle the lost attempt either way, so that nothing is left
			// in doubt: found, it is done; absent, it never took effect
			// and is sent again; unreadable, the record waits.
			_, _, found, unreadable := reconcile.MatchLine(resp.Body, op.body, func(string) bool { return false }, nil, nil, op.sub.Nav)
			res := journal.SubResult{ID: op.redo.ID, Status: 201, Key: op.sub.Line}
			switch {
			case resp.Status != 200:
				why[op.rec] = fmt.Sprintf("%s cannot be read to see whether line %s was re-created: %s; left alone: run undo again", op.sub.URL, op.sub.Line, odata.ParseError(resp.Status, nil, resp.Body).Error())
				continue
			case unreadable != "":
				why[op.rec] = fmt.Sprintf("%s: whether line %s was re-created cannot be told: %s; left alone", op.sub.URL, op.sub.Line, unreadable)
				continue
			case found:
				op.act.Done = true
			default:
				res = journal.SubResult{ID: op.redo.ID, Status: -1, Error: "reconciled: absent"}
			}
			settled = append(settled, journal.Entry{Kind: journal.KindOutcome, Batch: op.redo.Batch, Results: []journal.SubResult{res}})
			continue
		}
		if _, seen := why[op.rec]; seen {
			continue
		}
		switch {
		case resp.Status == 404 && op.sub.Op == journal.OpUndoDelete:
			// Already gone: the delete will find nothing, which is done.
		case resp.Status == 404:
			why[op.rec] = op.sub.URL + " no longer exists" + leftAlone
		case resp.Status != 200:
			why[op.rec] = fmt.Sprintf("%s cannot be read to see whether it changed since the run: %s%s", op.sub.URL, odata.ParseError(resp.Status, nil, resp.Body).Error(), leftAlone)
		case len(op.restored) > 0 && compare.SameJSON(nil, resp.Body, op.restored):
			// An earlier undo restored it and its outcome was lost.
		default:
			if diffs := changes(md, op.sub.URL, resp.Body, *op.want); len(diffs) > 0 {
				why[op.rec] = op.sub.URL + " changed since the run: " + strings.Join(diffs, ", ") + leftAlone
			}
		}
	}
	kept := plan[:0:0]
	var skipped []string
	unsent := map[*journal.RecordState]bool{} // records with something to send
	for _, op := range plan {
		if _, changed := why[op.rec]; changed {
			if why[op.rec] != "" {
				skipped = append(skipped, op.rec.Step+" "+op.rec.ID+": "+why[op.rec])
				why[op.rec] = ""
			}
			continue
		}
		kept = append(kept, op) // a lost re-create found is listed as done
		if !op.act.Done {
			unsent[op.rec] = true
		}
	}
	// A record whose only actions were lost re-creates, all found, is
	// undone now: nothing of it is sent.
	var finished []*journal.RecordState
	for _, op := range kept {
		if op.redo != nil && op.act.Done && !unsent[op.rec] {
			unsent[op.rec] = true // once
			finished = append(finished, op.rec)
			settled = append(settled, undoneEntry(op.rec))
		}
	}
	if len(settled) > 0 {
		if err := u.jr.Append(settled...); err != nil {
			return nil, nil, err
		}
	}
	for _, rec := range finished {
		if u.opts.Yes {
			u.hook.RecordDone(rec.Step, executor.Outcome{ID: rec.ID, Status: "undone"})
		}
	}
	return kept, skipped, nil
}

const leftAlone = "; left alone (undo --force undoes it anyway)"

// undoneEntry journals that undo removed every effect of rec.
func undoneEntry(rec *journal.RecordState) journal.Entry {
	return journal.Entry{Kind: journal.KindRecord, Record: &journal.RecordEntry{Step: rec.Step, ID: rec.ID, Status: journal.Committed, Undo: true}}
}

// changes lists, as "FIELD is now X, the run wrote Y", what of w the
// entity at url (body, as read with its sub-forms expanded) no longer
// holds: the one comparison verify makes (verify.CheckRecord), typed by md where
// given. A body that cannot be read is one change.
func changes(md *odata.Metadata, url string, body []byte, w verify.Want) []string {
	c, err := verify.CheckRecord(md, reconcile.TypeAt(md, url), w, body)
	if err != nil {
		return []string{"cannot be read: " + err.Error()}
	}
	var out []string
	for _, f := range c.Findings {
		where := ""
		if f.URL != "" {
			where = strings.TrimPrefix(f.URL, "/") + " "
		}
		switch {
		case f.Problem == verify.NotReadable && f.Line:
			// A line is found by the fields read back, as apply's
			// reconciliation finds it: one the server hides from every
			// line (field-level permissions) is no sign of a change.
		case f.Problem == verify.NotReadable:
			// Field-level permissions: what it holds now is
			// unknown, so undo must not write over it.
			out = append(out, fmt.Sprintf("%s%s is not returned on read (a field-level permission), so whether it changed cannot be told", where, f.Field))
		case f.Problem == verify.Gone:
			what := "a line the run wrote"
			if f.Detail != "" {
				what = f.Detail
			}
			out = append(out, fmt.Sprintf("%s%s is gone", where, what))
		case f.Problem == verify.Extra:
			out = append(out, where+"is a line the run did not write")
		default:
			out = append(out, fmt.Sprintf("%s%s is now %s, the run wrote %s", where, f.Field, shortValue(f.Found), shortValue(f.Sent)))
		}
	}
	return out
}

func shortValue(v any) string {
	if v == nil {
		return "empty"
	}
	b, _ := json.Marshal(v)
	return diag.Cut(string(b), 40)
}

// readBatches sends GETs in batches of at most limit; reads change
// nothing, so a batch whose answer was lost, or broke the $batch protocol,
// is sent again. A 404 is confirmed first (read.Warmth.ConfirmAbsent): undo must not
// take a cold form for a record that is gone.
func readBatches(ctx context.Context, client executor.Client, reqs []odata.BatchRequest, limit int, hook executor.Hook, warm *read.Warmth) (map[string]odata.BatchResponse, error) {
	send := read.Via(client)
	once := func(chunk []odata.BatchRequest) ([]odata.BatchResponse, error) { return send(ctx, chunk) }
	out := make(map[string]odata.BatchResponse, len(reqs))
	for start := 0; start < len(reqs); start += limit {
		end := min(start+limit, len(reqs))
		got, err := once(reqs[start:end])
		hook.BatchSent(end - start)
		if err == nil {
			got, err = warm.ConfirmAbsent(reqs[start:end], got, once)
		}
		if err != nil {
			return nil, err
		}
		for _, g := range got {
			out[g.ID] = g
		}
	}
	return out, nil
}

// send runs ops in batches of at most limit. An op of a record whose
// earlier action failed is not sent (a line is not re-created beside the
// run's line that could not be deleted).
func (u *undoRun) send(ops []undoOp) error {
	var ready []undoOp
	for _, op := range ops {
		if u.failed[op.rec] {
			op.act.Error = "not sent: an earlier action of the record failed"
			continue
		}
		ready = append(ready, op)
	}
	for start := 0; start < len(ready); start += u.limit {
		end := min(start+u.limit, len(ready))
		if err := u.batch(ready[start:end]); err != nil {
			return err
		}
	}
	return nil
}

func (u *undoRun) batch(ops []undoOp) error {
	seq := u.jr.NextBatch()
	reqs := make([]odata.BatchRequest, len(ops))
	subs := make([]journal.Sub, len(ops))
	for i, op := range ops {
		id := strconv.Itoa(i + 1)
		s := op.sub
		s.ID = id
		subs[i] = s
		reqs[i] = odata.BatchRequest{ID: id, Method: s.Meth, URL: s.URL, Body: op.body}
		if len(op.body) > 0 {
			reqs[i].Headers = map[string]string{"content-type": "application/json"}
		}
	}
	now := u.opts.Now
	if now == nil {
		now = time.Now
	}
	if err := u.jr.Append(journal.Entry{Kind: journal.KindIntent, Batch: seq, Subs: subs, At: new(now().UTC())}); err != nil {
		return err
	}
	var calls odata.CallStats
	resps, err := u.client.Batch(odata.WithCallStats(u.ctx, &calls), reqs, executor.BatchOptions)
	answered := now().UTC()
	u.hook.BatchSent(len(reqs))
	if err != nil {
		if _, ok := odata.Refused(err); ok {
			res := make([]journal.SubResult, len(ops))
			for i := range ops {
				res[i] = journal.SubResult{ID: subs[i].ID, Status: -1}
			}
			_ = u.jr.Append(executor.StampCalls(journal.Entry{Kind: journal.KindOutcome, Batch: seq, Results: res}, answered, &calls))
			return fmt.Errorf("undo: the server refused a batch: %w", err)
		}
		_ = u.jr.Append(executor.StampCalls(journal.Entry{Kind: journal.KindOutcome, Batch: seq, InDoubt: err.Error()}, answered, &calls))
		// The batch may have been applied: in doubt, as apply's are.
		return undoInDoubt{err}
	}
	// Before 22.1 answers carry ids of another form (odata.MatchResponses);
	// an action without an answer to trust stays without an outcome.
	matched, _ := odata.MatchResponses(reqs, resps)
	res := make([]journal.SubResult, 0, len(ops))
	var finished []*journal.RecordState
	var cold []undoOp
	var warmUps []odata.BatchRequest
	for i, op := range ops {
		if matched[i] == nil {
			continue
		}
		r := *matched[i]
		if !u.warm.Answered(op.sub.URL, r.Status) {
			// A cold form's 404 (docs/servers.md, Reading) is no proof that
			// the record is gone: no outcome yet; warm its set and send it
			// again.
			cold = append(cold, op)
			set := odata.EntitySetOf(op.sub.URL)
			warmUps = append(warmUps, odata.BatchRequest{ID: strconv.Itoa(len(warmUps) + 1), Method: http.MethodGet, URL: set + "?$top=1"})
			continue
		}
		good := r.Status >= 200 && r.Status < 300 || r.Status == 404 && op.sub.Op == journal.OpUndoDelete
		out := journal.SubResult{ID: subs[i].ID, Status: r.Status}
		if good {
			op.act.Done = true
		} else {
			op.act.Error = odata.ParseError(r.Status, nil, r.Body).Error()
			out.Error = op.act.Error
			u.failed[op.rec] = true
		}
		res = append(res, out)
		if u.left[op.rec]--; u.left[op.rec] == 0 && !u.failed[op.rec] {
			finished = append(finished, op.rec)
			if op.sub.Op == journal.OpUndoDelete && op.sub.Path == "" {
				finished = append(finished, u.covered[op.sub.URL]...)
				delete(u.covered, op.sub.URL)
			}
		}
	}
	entries := []journal.Entry{executor.StampCalls(journal.Entry{Kind: journal.KindOutcome, Batch: seq, Results: res}, answered, &calls)}
	for _, rec := range finished {
		entries = append(entries, undoneEntry(rec))
	}
	if err := u.jr.Append(entries...); err != nil {
		return err
	}
	for _, rec := range finished {
		u.hook.RecordDone(rec.Step, executor.Outcome{ID: rec.ID, Status: "undone"})
	}
	if len(res)+len(cold) != len(ops) {
		return errors.New("undo: the server's answer lacks some sub-requests: run undo again")
	}
	if len(cold) == 0 {
		return nil
	}
	get := read.Via(u.client)
	if err := u.warm.WarmUp(dedupeWarmUps(warmUps), func(reqs []odata.BatchRequest) ([]odata.BatchResponse, error) { return get(u.ctx, reqs) }); err != nil {
		return undoInDoubt{fmt.Errorf("warming up a form that answered 404: %w", err)}
	}
	return u.batch(cold)
}

// dedupeWarmUps keeps one warm-up per set, numbered anew.
func dedupeWarmUps(reqs []odata.BatchRequest) []odata.BatchRequest {
	var out []odata.BatchRequest
	seen := map[string]bool{}
	for _, r := range reqs {
		if !seen[r.URL] {
			seen[r.URL] = true
			r.ID = strconv.Itoa(len(out) + 1)
			out = append(out, r)
		}
	}
	return out
}

// undoInDoubt is an undo batch whose outcome is unknown. errors.Is finds
// executor.ErrInDoubt in it; its advice is undo's own, not apply's.
type undoInDoubt struct{ err error }

func (e undoInDoubt) Error() string {
	return "undo: " + e.err.Error() + " (run undo again: its actions are safe to repeat)"
}

func (e undoInDoubt) Unwrap() []error { return []error{e.err, executor.ErrInDoubt} }

// scratchJournal opens a copy of the journal at path in a temporary
// folder: undo's preview journals there what --yes would journal (the
// work in doubt it settled, the lost re-creates it found), and nothing of
// it is kept. done closes and removes it.
func scratchJournal(path string) (*journal.Journal, *journal.State, func(), error) {
	dir, err := os.MkdirTemp("", "migrate-undo-preview-")
	if err != nil {
		return nil, nil, nil, err
	}
	fail := func(err error) (*journal.Journal, *journal.State, func(), error) {
		os.RemoveAll(dir)
		return nil, nil, nil, fmt.Errorf("undo: a scratch copy of %s for the preview: %w", path, err)
	}
	src, err := os.Open(path)
	if err != nil {
		return fail(err)
	}
	defer src.Close()
	copyPath := filepath.Join(dir, filepath.Base(path))
	dst, err := os.OpenFile(copyPath, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fail(err)
	}
	_, err = io.Copy(dst, src)
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fail(err)
	}
	jr, st, err := journal.Open(copyPath)
	if err != nil {
		return fail(err)
	}
	return jr, st, func() { jr.Close(); os.RemoveAll(dir) }, nil
}

// runInDoubt reports whether some work of the run itself (not of an
// earlier undo) is in doubt.
func runInDoubt(st *journal.State) bool {
	for _, s := range st.InDoubtSubs() {
		if !s.Op.Undo() {
			return true
		}
	}
	return false
}
