package executor

import (
	"encoding/json"
	"maps"
	"strings"

	"github.com/migrate-tool/migrate/journal"
	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/plan"
	"github.com/migrate-tool/migrate/reconcile"
)

// newReader is the run's reader of the server (package reconcile): its
// reconciliation, and the reads of its deep inserts, diff, watermarks and
// updates, through the run's client, at most a batch's size to a call, a
// cold form's 404 asked again unless the run's service predicts them.
func (r *runner) newReader() *reconcile.Reader {
	return reconcile.New(r.ctx, nil, reconcile.Options{Client: r.opts.Client, Metadata: r.md, Warn: r.warn,
		Plan: journalSteps(r.opts.Plan), PerCall: r.limit, Standard: r.opts.Version.Standard, Predicted: r.svc.predicts()})
}

// journalSteps is the steps of plan p (none for nil) as a journal's
// header names them: name, entity and match: fields.
func journalSteps(p *plan.Plan) []journal.Step {
	if p == nil {
		return nil
	}
	steps := make([]journal.Step, 0, len(p.Steps))
	for _, s := range p.Steps {
		steps = append(steps, journal.Step{Name: s.Name, Entity: s.Entity, Match: s.Match})
	}
	return steps
}

// state is the journal's state the run goes by: its reader's, the one
// copy the run reads (setState sets it).
func (r *runner) state() *journal.State { return r.rd.State() }

// setState is the journal's state the run goes by from now on.
func (r *runner) setState(st *journal.State) { r.rd.SetState(st) }

// reconcile settles the work in doubt of the journal the run resumes
// (reconcile.Reader.Reconcile) before anything is sent; what it cannot
// decide is the summary's Undecided.
func (r *runner) reconcile() error {
	var jr reconcile.Journal = r.jr
	if !r.jr.reconciles() {
		// The dry run: with a target, apply's reconciliation is made by
		// the same reads, and what it decides is folded into the state of
		// the journal the dry run resumes, in memory, so that what follows
		// is predicted from it. Offline nothing can be read: the work in
		// doubt stays in doubt, left out and said so.
		if r.svc.offline() {
			return nil
		}
		jr = folded{r.state()}
	}
	undecided, err := r.rd.Reconcile(jr)
	r.undec = append(r.undec, undecided...)
	return err
}

// folded is a journal's state that takes what Reconcile decides in
// memory (journal.State.Fold): the dry run's copy of the journal it
// resumes.
type folded struct{ st *journal.State }

func (f folded) Append(es ...journal.Entry) error { return f.st.Fold(es...) }
func (f folded) Snapshot() *journal.State         { return f.st }

// matchFields is what the journal keeps to find a created entity or line
// again: its scalar fields, without long texts and file contents.
func matchFields(fields map[string]any) json.RawMessage { return keptFields(fields, matchable) }

// keptFields is fields as a request's body writes them, without those
// whose value keep refuses; nil when none is left.
func keptFields(fields map[string]any, keep func(any) bool) json.RawMessage {
	m := keptOf(fields, keep)
	if len(m) == 0 {
		return nil
	}
	b, err := odata.MarshalBody(m)
	if err != nil {
		return nil
	}
	return b
}

// keptOf is fields without those whose value keep refuses, copied only
// when there is one (mostly every field is kept).
func keptOf(fields map[string]any, keep func(any) bool) map[string]any {
	m, copied := fields, false
	for k, v := range fields {
		if keep(v) {
			continue
		}
		if !copied {
			m, copied = maps.Clone(fields), true
		}
		delete(m, k)
	}
	return m
}

// matchable is a value worth finding an entity by: not empty, no long text
// or file content.
func matchable(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case string:
		return len(x) <= 200 && !isFile(x)
	}
	return true
}

// isFile reports whether v is a file's contents, as file() gives them (a
// data URI).
func isFile(v any) bool {
	s, ok := v.(string)
	return ok && strings.HasPrefix(s, "data:")
}
