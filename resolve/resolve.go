// Package resolve is `migrate resolve`: what reconciliation cannot decide
// (look-alike documents with the same lines) would block every resume and
// undo for ever, so resolve lists it with its candidates (InDoubt) and
// records the user's decision in the journal (Decide), as an outcome that
// apply, undo and status replay; and it closes a failed record that will
// never load with the user's reason (Waive). It reads the journal and the
// service, looking candidates up as apply's reconciliation does
// (reconcile.Candidates); the engine does not import it.
package resolve

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/migrate-tool/migrate/executor"
	"github.com/migrate-tool/migrate/journal"
	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/reconcile"
)

// Record is a record whose work is in doubt, as resolve lists it.
type Record struct {
	Step, Record string
	Entity       string
	Location     string          // the source location, when the journal knows it
	Sent         json.RawMessage // the fields its entity's create wrote
	Lines        int             // sub-form lines it sent
	// Create is set when the entity's own create is in doubt and the server
	// assigns its key: a decision names the key (or "not created").
	Create     bool
	Candidates []reconcile.Candidate
	// Note says why there are no candidates to choose from, or what else
	// is in doubt.
	Note string
}

// Options drive InDoubt and Decide.
type Options struct {
	Client   executor.Client
	Metadata *odata.Metadata
	Hook     executor.Hook
}

// lookup is what reconciliation's lookups read the server with.
func (o Options) lookup() reconcile.Options {
	lo := reconcile.Options{Client: o.Client, Metadata: o.Metadata}
	if o.Hook != nil {
		lo.Warn = o.Hook.Warn
	}
	return lo
}

// InDoubt lists every record of the journal whose work is in doubt, in
// journal order, with the documents that may be its own.
func InDoubt(ctx context.Context, journalPath string, opts Options) ([]Record, error) {
	st, err := journal.Load(journalPath)
	if err != nil {
		return nil, err
	}
	// The candidates of every record whose create is in doubt are looked
	// up at once: their lookups are read ahead, not one call per record.
	var creates []*journal.SubState
	for _, name := range st.StepNames {
		ss := st.Steps[name]
		for _, id := range ss.IDs {
			if root := numberedInDoubt(ss.Records[id]); root != nil {
				creates = append(creates, root)
			}
		}
	}
	found, err := reconcile.Candidates(ctx, st, creates, opts.lookup())
	if err != nil {
		return nil, err
	}
	var out []Record
	entity := reconcile.StepEntities(st, nil)
	for _, name := range st.StepNames {
		ss := st.Steps[name]
		for _, id := range ss.IDs {
			rec := ss.Records[id]
			if rec.Status() != journal.InDoubt {
				continue
			}
			d := describe(rec, entity[name])
			if d.Create {
				f := found[0]
				found = found[1:]
				d.Candidates = f.Candidates
				if len(f.Candidates) == 0 {
					d.Note = f.Why // near candidates say theirs by the field they differ in
				}
				if f.Why == "" && len(f.Candidates) == 0 {
					d.Note = "no document matches: it was not created (apply would send it again)"
				}
			}
			out = append(out, d)
		}
	}
	return out, nil
}

// describe is one record in doubt, of entity, without its candidates.
func describe(rec *journal.RecordState, entity string) Record {
	d := Record{Step: rec.Step, Record: rec.ID, Entity: entity, Location: rec.Loc}
	if d.Location == "" && looksLikeLocation(rec.ID) {
		d.Location = rec.ID
	}
	for path, s := range rec.Subs {
		if path != "" && s.Op == journal.OpCreate {
			d.Lines++
		}
	}
	root := rec.Subs[""]
	for _, l := range root.CarriedLines() {
		d.Lines += len(l)
	}
	switch {
	case numberedInDoubt(rec) != nil:
		d.Create, d.Sent = true, root.Match
	case root != nil && root.InDoubt():
		d.Sent = root.Match
		d.Note = fmt.Sprintf("its %s of %s is in doubt; run apply to reconcile it", root.Op, root.URL)
	default:
		d.Note = "some of its lines are in doubt; run apply to reconcile them"
	}
	return d
}

// numberedInDoubt is the record's own create when it is in doubt and the
// server assigns its key (the candidates are looked up by its fields).
func numberedInDoubt(rec *journal.RecordState) *journal.SubState {
	root := rec.Subs[""]
	if rec.Status() != journal.InDoubt || root == nil || !root.InDoubt() || root.Op != journal.OpCreate || root.Key != "" {
		return nil
	}
	return root
}

// looksLikeLocation: a record without id: is named by its source location.
func looksLikeLocation(id string) bool {
	i := strings.LastIndexAny(id, ":!")
	if i < 0 || i == len(id)-1 {
		return false
	}
	for _, c := range id[i+1:] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// Decision is what the user says of a record in doubt: its document is
// Key, or it was not created.
type Decision struct {
	Step, Record string
	Key          string // as typed: SO26000002 or 'SO26000002'
	NotCreated   bool
}

// DecisionError is a decision that cannot be recorded as given: the
// record is not in doubt, the key names no document or another record's.
type DecisionError struct{ Msg string }

func (e *DecisionError) Error() string { return e.Msg }

func decisionErr(format string, args ...any) error {
	return &DecisionError{Msg: fmt.Sprintf(format, args...)}
}

// Decide records a decision in the journal as an outcome (by "user"):
// with a key, the record's entity is that document (checked to exist and
// to belong to no other record); not created, every sub-request of the
// record in doubt is forgotten and apply sends it again.
func Decide(ctx context.Context, journalPath string, d Decision, opts Options) (string, error) {
	jr, st, err := journal.Open(journalPath)
	if err != nil {
		return "", err
	}
	defer jr.Close()
	rec := st.Record(d.Step, d.Record)
	if rec == nil || rec.Status() != journal.InDoubt {
		return "", decisionErr("%s/%s is not in doubt (`migrate resolve %s` lists what is)", d.Step, d.Record, journalPath)
	}
	results := map[int][]journal.SubResult{}
	var what string
	if d.NotCreated {
		for _, s := range rec.Subs {
			if s.InDoubt() {
				results[s.Batch] = append(results[s.Batch], journal.SubResult{ID: s.ID, Status: -1, Error: "resolved by the user: not created", By: "user"})
			}
		}
		for _, s := range rec.Extra {
			if s.InDoubt() {
				results[s.Batch] = append(results[s.Batch], journal.SubResult{ID: s.ID, Status: -1, Error: "resolved by the user: not done", By: "user"})
			}
		}
		what = "not created: the next apply sends it again"
	} else {
		root := rec.Subs[""]
		if root == nil || !root.InDoubt() || root.Op != journal.OpCreate || root.Key != "" {
			return "", decisionErr("%s/%s: its entity's create is not what is in doubt, so there is no key to choose; run apply to reconcile it, or use --not-created", d.Step, d.Record)
		}
		ent := reconcile.StepEntities(st, nil)[d.Step]
		set := opts.Metadata.EntitySet(ent)
		if set == nil {
			return "", decisionErr("%s/%s: the entity %s is not in the target's metadata", d.Step, d.Record, ent)
		}
		key := keyLiteral(set.Type, d.Key)
		resp, err := reconcile.Get(ctx, odata.KeySegment(ent, key), opts.lookup())
		if err != nil {
			return "", err
		}
		if resp.Status != 200 {
			return "", decisionErr("%s(%s): the target answered %d; give the key of a document that exists (migrate resolve %s lists the candidates)", ent, key, resp.Status, journalPath)
		}
		// A document that exists is not yet the record's. Only
		// one resolve lists as a candidate (created after the step began,
		// matching what the record sent, held by no other record) may be:
		// an order made before the run, taken for the run's own, is one
		// undo would delete.
		found, err := reconcile.Candidates(ctx, st, []*journal.SubState{root}, opts.lookup())
		if err != nil {
			return "", err
		}
		cands, why := found[0].Candidates, found[0].Why
		if !slices.ContainsFunc(cands, func(c reconcile.Candidate) bool { return c.Key == key }) {
			// Candidates leave out what other records hold: the journal is
			// read for it again only to say so.
			held, err := reconcile.Claimed(st, d.Step, key)
			if err != nil {
				return "", err
			}
			if held {
				return "", decisionErr("%s(%s) is already the document of another record of step %s; choose another key", ent, key, d.Step)
			}
			return "", notCandidate(fmt.Sprintf("%s/%s", d.Step, d.Record), ent, key, cands, why, journalPath)
		}
		// What the server filled in place of what the create sent is
		// journaled, as its lost answer would have been: undo then does
		// not take it for a change made since.
		got, _ := odata.DecodeEntity(resp.Body)
		res := reconcile.Outcome(root, 201, key, set.Type, got)
		res.By = "user"
		results[root.Batch] = append(results[root.Batch], res)
		what = fmt.Sprintf("its document is %s(%s); the next apply reconciles its lines under it", ent, key)
	}
	batches := make([]int, 0, len(results))
	for b := range results {
		batches = append(batches, b)
	}
	sort.Ints(batches)
	var entries []journal.Entry
	for _, b := range batches {
		entries = append(entries, journal.Entry{Kind: journal.KindOutcome, Batch: b, Results: results[b]})
	}
	if err := jr.Append(entries...); err != nil {
		return "", err
	}
	return what, nil
}

// notCandidate refuses a key that is not among the record's candidates,
// naming them.
func notCandidate(rec, ent, key string, cands []reconcile.Candidate, why, journalPath string) error {
	if len(cands) == 0 {
		if why == "" {
			why = "no document matches what it sent"
		}
		return decisionErr("%s(%s) is not a candidate of %s, and it has none (%s): a document made before its step began, or matching other fields, is not its own; use --not-created, or run apply to reconcile it", ent, key, rec, why)
	}
	keys := make([]string, len(cands))
	for i, c := range cands {
		keys[i] = c.Key
	}
	return decisionErr("%s(%s) is not a candidate of %s: give one of %s (migrate resolve %s lists them), or --not-created", ent, key, rec, strings.Join(keys, ", "), journalPath)
}

// keyLiteral is a key a person typed as the journal writes it (odata.EntityKey):
// SO26000002 typed for a text key becomes 'SO26000002', SO 1 becomes
// 'SO%201'; a key already written as a literal ('SO 1'), or a composite one
// (NAME=value,...), is spelt as odata.EntityKey spells it.
func keyLiteral(t *odata.EntityType, typed string) string {
	k := strings.TrimSpace(typed)
	if !strings.HasPrefix(k, "'") && !strings.Contains(k, "=") && len(t.Key) == 1 {
		if p := t.Property(t.Key[0]); p != nil && p.Type == odata.EdmString {
			if pk, err := odata.PathKey(t.Key, []any{k}); err == nil {
				return pk
			}
		}
	}
	return odata.CanonicalKey(t, k)
}
