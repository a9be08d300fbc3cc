package executor

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/migrate-tool/migrate/internal/diag"
	"github.com/migrate-tool/migrate/internal/didyoumean"
	"github.com/migrate-tool/migrate/journal"
	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/plan"
	"github.com/migrate-tool/migrate/transform"
)

// limited stops each step after n results (Options.Limit): plan --limit,
// and apply --limit's trial.
//
// In the dry run a ref() to a record past the limit of its step gets a
// placeholder naming it: the record was not read, not missing. In a trial
// a record whose ref() finds no record (one past the limit) is left out,
// neither sent nor journaled: it is the full load's, which sends it once
// the record it refers to is loaded, rather than a failure that only
// --retry-failed would send again.
type limited struct {
	inner RecordSource
	n     int
	trial bool
	// past (a trial) collects the keys of what the trial leaves out, for
	// the later steps whose records name them (trialPast).
	past *trialPast
}

var errLimit = errors.New("limit reached")

func (l limited) Records(ctx context.Context, step string, open transform.Opener, refs transform.Refs, fn func(transform.Result) error) error {
	seen := 0
	var tr *trialRefs
	var lr transform.Refs = unlimitedRefs{refs}
	if l.trial {
		tr = &trialRefs{inner: refs}
		lr = tr
	}
	keys := l.past.collector(step) // nil: no later step names this one's key
	err := l.inner.Records(ctx, step, open, lr, func(r transform.Result) error {
		if tr != nil && tr.missed {
			tr.missed = false
			if len(r.Errors) > 0 {
				keys.addLeftOut(r) // left out: the full load's
				return nil
			}
		}
		if seen >= l.n {
			if keys == nil {
				return errLimit
			}
			// Past the limit: read on for the keys alone, sending nothing.
			if len(r.Errors) == 0 && !r.Skipped {
				keys.add(r.Record)
			}
			return nil
		}
		seen++
		return fn(r)
	})
	if errors.Is(err, errLimit) {
		err = nil
	}
	if err == nil {
		l.past.done(keys)
	}
	return err
}

// trialPast is what a trial leaves of each step for the full load (its
// records past the limit, and those left out for a ref() past it), by the
// key a later step's records name it by: a field of the same name as the
// step's entity's one key field (an order line's PARTNAME names a part of
// LOGPART, whose key is PARTNAME), as the service's own forms name what
// they refer to. A record that names one is the full load's too: in the
// trial the server would refuse it (the part is not there yet), and that is
// the trial's incompleteness, not the record's failure. It is journaled
// pending (stepRun.handle), and the trial exits as unfinished.
type trialPast struct {
	keyOf map[string]string // step → the key field later steps name it by
	// idIsKey: the steps without id:, whose records' ids are their keys
	// (transform's recordID), also when a row error left no record.
	idIsKey  map[string]bool
	mu       sync.Mutex
	finished []*pastKeys // the steps read to their end
}

// pastKeys are the keys one step's trial left out.
type pastKeys struct {
	step, field string
	idIsKey     bool
	keys        map[string]bool
}

// newTrialPast finds the steps whose entity's single key field some other
// step writes under the same name, at any depth (their keys are worth
// collecting).
func newTrialPast(p *plan.Plan, md *odata.Metadata) *trialPast {
	t := &trialPast{keyOf: map[string]string{}, idIsKey: map[string]bool{}}
	named := map[string]map[string]bool{} // field → the steps that write it
	var walk func(step string, fs []*plan.Field, subs []*plan.Subform)
	walk = func(step string, fs []*plan.Field, subs []*plan.Subform) {
		for _, f := range fs {
			if named[f.Name] == nil {
				named[f.Name] = map[string]bool{}
			}
			named[f.Name][step] = true
		}
		for _, sf := range subs {
			walk(step, sf.Fields, sf.Subforms)
		}
	}
	for _, s := range p.Steps {
		walk(s.Name, s.Fields, s.Subforms)
	}
	for _, s := range p.Steps {
		es := md.EntitySet(s.Entity)
		if es == nil || es.Type == nil || len(es.Type.Key) != 1 {
			continue
		}
		k := es.Type.Key[0]
		t.idIsKey[s.Name] = s.ID == nil
		for other := range named[k] {
			if other != s.Name {
				t.keyOf[s.Name] = k
			}
		}
	}
	return t
}

// collector is the keys of step to collect, nil when no other step names
// them (or t is nil: no trial).
func (t *trialPast) collector(step string) *pastKeys {
	if t == nil || t.keyOf[step] == "" {
		return nil
	}
	return &pastKeys{step: step, field: t.keyOf[step], idIsKey: t.idIsKey[step], keys: map[string]bool{}}
}

// addLeftOut adds the key of a record left out of the trial for a ref()
// past it: its row error left no record, but its id is its key.
func (k *pastKeys) addLeftOut(r transform.Result) {
	switch {
	case k == nil:
	case r.Record != nil:
		k.add(r.Record)
	case k.idIsKey && r.ID != "":
		k.keys[r.ID] = true
	}
}

func (k *pastKeys) add(rec *transform.Record) {
	if k == nil || rec == nil {
		return
	}
	if v, ok := rec.Fields[k.field]; ok && v != nil {
		k.keys[fmt.Sprint(v)] = true
	}
}

// done makes a step's keys count: its records are all read.
func (t *trialPast) done(k *pastKeys) {
	if t == nil || k == nil || len(k.keys) == 0 {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.finished = append(t.finished, k)
}

// names reports the first record of another step, left for the full load,
// that rec names ("LOGPART's PARTNAME W-300" style: step and key), or "".
func (t *trialPast) names(step string, rec *transform.Record) string {
	if t == nil || rec == nil {
		return ""
	}
	t.mu.Lock()
	sets := t.finished
	t.mu.Unlock()
	var find func(fields map[string]any, kids []*transform.Child) string
	find = func(fields map[string]any, kids []*transform.Child) string {
		for _, k := range sets {
			if k.step == step {
				continue
			}
			if v, ok := fields[k.field]; ok && v != nil && k.keys[fmt.Sprint(v)] {
				return fmt.Sprintf("%s %v of step %s", k.field, v, k.step)
			}
		}
		for _, c := range kids {
			if s := find(c.Fields, c.Children); s != "" {
				return s
			}
		}
		return ""
	}
	return find(rec.Fields, rec.Children)
}

type unlimitedRefs struct{ inner transform.Refs }

// Placeholders implements transform.Placeholders: the stand-ins of
// records past the limit are no keys to check.
func (unlimitedRefs) Placeholders() bool { return true }

func (u unlimitedRefs) Ref(step, id string) (any, bool) {
	if v, ok := u.inner.Ref(step, id); ok {
		return v, true
	}
	return "{" + step + ":" + id + "}", true
}

// trialRefs notes that a record's ref() found nothing. A step's records
// are built one after another, so the note belongs to the next result.
type trialRefs struct {
	inner  transform.Refs
	missed bool
}

func (t *trialRefs) Ref(step, id string) (any, bool) {
	v, ok := t.inner.Ref(step, id)
	if !ok {
		t.missed = true
	}
	return v, ok
}

// StepsError refuses apply --steps: a step that is no step of the plan, or
// one the chosen steps depend on that the journal does not hold complete.
// Nothing was sent.
type StepsError struct {
	Step    string // as given to --steps
	Depends string // the step it depends on ("" when Step is unknown)
	Why     string
}

func (e *StepsError) Error() string {
	if e.Depends == "" {
		return fmt.Sprintf("--steps %s: %s", e.Step, e.Why)
	}
	return fmt.Sprintf("--steps %s: step %s, which it depends on, is not complete in the journal (%s); nothing was sent: run it first (apply --steps %s, or apply without --steps)",
		e.Step, e.Depends, e.Why, e.Depends)
}

// chooseSteps keeps of waves the steps of Options.Steps, once each step
// they depend on (after:, ref(), exists: on an entity an earlier step
// loads) is complete in the journal: read to its end, and every record
// committed or skipped.
func (r *runner) chooseSteps(waves [][]*plan.Step) ([][]*plan.Step, error) {
	if len(r.opts.Steps) == 0 {
		return waves, nil
	}
	p := r.opts.Plan
	wave := map[string]int{}
	for i, w := range waves {
		for _, s := range w {
			wave[s.Name] = i
		}
	}
	chosen := map[string]bool{}
	for _, name := range r.opts.Steps {
		if _, ok := wave[name]; !ok {
			why := "no such step in the plan"
			names := make([]string, 0, len(p.Steps))
			for _, s := range p.Steps {
				names = append(names, s.Name)
			}
			if sg := didyoumean.Closest(name, names); sg != "" {
				why += "; did you mean " + sg + "?"
			}
			return nil, &StepsError{Step: name, Why: why}
		}
		chosen[name] = true
	}
	for _, name := range r.opts.Steps {
		for _, dep := range dependsOn(p, p.Step(name), waves[:wave[name]]) {
			if chosen[dep] {
				continue
			}
			if why := r.incomplete(dep); why != "" {
				return nil, &StepsError{Step: name, Depends: dep, Why: why}
			}
		}
	}
	var out [][]*plan.Step
	for _, w := range waves {
		var kept []*plan.Step
		for _, s := range w {
			if chosen[s.Name] {
				kept = append(kept, s)
			}
		}
		if len(kept) > 0 {
			out = append(out, kept)
		}
	}
	return out, nil
}

// dependsOn names the steps s depends on: its after: and ref() steps, and
// the steps of earlier waves that load an entity its exists: checks.
func dependsOn(p *plan.Plan, s *plan.Step, earlier [][]*plan.Step) []string {
	deps := p.DependsOn(s.Name)
	entities := map[string]bool{}
	var walk func(ex []*plan.Exists, subs []*plan.Subform)
	walk = func(ex []*plan.Exists, subs []*plan.Subform) {
		for _, e := range ex {
			entities[e.Entity] = true
		}
		for _, sf := range subs {
			walk(sf.Exists, sf.Subforms)
		}
	}
	walk(s.Exists, s.Subforms)
	for _, w := range earlier {
		for _, e := range w {
			if entities[e.Entity] && !slices.Contains(deps, e.Name) {
				deps = append(deps, e.Name)
			}
		}
	}
	return deps
}

// incomplete says why the journal does not hold step complete ("" when it
// does).
func (r *runner) incomplete(step string) string {
	st := r.state()
	c := st.Counts(step)
	var why []string
	if !st.Done[step] {
		switch {
		case st.Runs > 0 && st.LastRun.Limit > 0 && st.Size(step) > 0:
			why = append(why, "only a trial of "+diag.Count(st.LastRun.Limit, "record", "records")+" loaded it")
		default:
			why = append(why, "no run read its source to the end")
		}
	}
	if c.Failed > 0 {
		why = append(why, fmt.Sprintf("%d failed", c.Failed))
	}
	if c.Pending+c.InDoubt > 0 {
		why = append(why, fmt.Sprintf("%d pending or in doubt", c.Pending+c.InDoubt))
	}
	return strings.Join(why, ", ")
}

// runEntry begins the run in the journal: a trial or a choice of steps, so
// that status says what is left.
func (r *runner) runEntry() journal.Entry {
	return journal.Entry{Kind: journal.KindRun, Run: &journal.Run{Limit: r.opts.Limit, Steps: r.opts.Steps, Delta: r.opts.Delta},
		At: new(r.opts.now().UTC())}
}
