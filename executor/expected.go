package executor

import (
	"github.com/migrate-tool/migrate/journal"
	"github.com/migrate-tool/migrate/plan"
	"github.com/migrate-tool/migrate/source"
	"github.com/migrate-tool/migrate/source/odatasource"
)

// expectedRows counts the records of step st that can be known cheaply
// before the load, for a step without group_by, where a row is a record:
// a file's by source.CountRows (a CSV's lines, a worksheet's dimension), a
// connection's by its service's $count where the standard defines it
// (odatasource.Count: the odata dialect; the ERP's $count is not to be
// trusted, docs/servers.md, Reading). A grouped step's count comes once
// its rows are read and grouped (transform.WithTotal). A count a little
// high only makes the ETA a little pessimistic.
func (r *runner) expectedRows(st *plan.Step) (int, bool) {
	src := r.opts.Plan.Source(st.Source)
	if st.GroupBy == nil && src != nil && src.Connection != "" {
		if sv, ok := r.opts.services[src.Connection]; ok {
			return odatasource.Count(r.ctx, sv.Client, src.Entity, src.Filter)
		}
		return 0, false
	}
	return expectedRows(r.opts.Plan, st)
}

// expectedRows is a file step's count of rows (runner.expectedRows).
func expectedRows(p *plan.Plan, st *plan.Step) (int, bool) {
	src := p.Source(st.Source)
	if st.GroupBy != nil || src == nil || src.File == "" {
		return 0, false
	}
	n, ok := source.CountRows(source.Options{Path: p.File(src.File), Sheet: src.Sheet, HeaderRow: src.HeaderRow})
	return n, ok && n > 0
}

// tellTotal tells the hook how many records step s will report this run,
// of results in all (a count of its rows, or of its groups and rejected
// rows): a trial's limit caps it, and a resume leaves out what the journal
// settled before, which the run passes over without a word.
func (sr *stepRun) tellTotal(results int) {
	r := sr.r
	if r.opts.Limit > 0 {
		results = min(results, r.opts.Limit)
	}
	if n := results - settledBefore(r.state(), sr.step.Name, r.opts.RetryFailed, r.opts.Limit); n > 0 {
		r.hook.StepTotal(sr.step.Name, n)
	}
}

// settledBefore counts the records of step in state that a run passes over
// without reporting them (stepRun.handle): committed, skipped, waived, in
// doubt, and failed unless this run sends them again.
func settledBefore(state *journal.State, step string, retryFailed bool, limit int) int {
	if state == nil || state.Steps == nil || state.Steps[step] == nil {
		return 0
	}
	c := state.Counts(step) // a lean state's settled records counted too
	n := c.Committed + c.Skipped + c.Waived + c.InDoubt
	if !retryFailed {
		n += c.Failed
		if limit == 0 {
			for _, rec := range state.Steps[step].Records {
				if rec.Status() == journal.Failed && rec.FailedInTrial {
					n-- // the full load sends it again
				}
			}
		}
	}
	return n
}
