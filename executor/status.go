package executor

import (
	"github.com/migrate-tool/migrate/journal"
	"github.com/migrate-tool/migrate/plan"
	"github.com/migrate-tool/migrate/reconcile"
)

// summarize builds a Summary from a journal's state: counts per step in
// the order of the journal header, and every problem of a failed record.
func summarize(st *journal.State, p *plan.Plan) *Summary {
	sum := &Summary{Plan: st.Header.Plan, Complete: st.Complete(), Standard: st.Header.Dialect != ""}
	if !st.Finished() {
		// What is left: a trial's rest, the steps not chosen, or what a
		// stopped run did not reach.
		sum.Trial, sum.Unfinished, sum.Chosen = st.LastRun.Limit, st.Unfinished(), st.LastRun.Steps
		sum.Interrupted = sum.Trial == 0 && len(sum.Chosen) == 0
	}
	if p != nil && sum.Plan == "" {
		sum.Plan = p.Name
	}
	entity := reconcile.StepEntities(st, journalSteps(p))
	for _, name := range st.StepNames {
		c := st.Counts(name)
		ss := st.Steps[name]
		// Skipped rows are no records; failed ones are (as in the dry run).
		// A lean state holds the unsettled records; the settled ones are
		// counted in the index.
		step := StepSummary{Name: name, Entity: entity[name], Records: st.Size(name) - c.Skipped,
			Skipped: c.Skipped, Committed: c.Committed, Failed: c.Failed, Pending: c.Pending, InDoubt: c.InDoubt, Waived: c.Waived,
			Children: ss.Settled.Children}
		for _, id := range ss.IDs {
			rec := ss.Records[id]
			step.Children += rec.Children()
			if len(rec.Subs) == 0 && rec.Status() == journal.Failed {
				step.Errors++ // rejected before anything was sent: a row error
			}
			if rec.Partly != "" && rec.Status() == journal.Failed {
				step.Partly++
			}
			if rec.Undone && rec.Status() == journal.Pending {
				step.Undone++
			}
		}
		sum.Steps = append(sum.Steps, step)
		for _, id := range ss.IDs {
			rec := ss.Records[id]
			switch rec.Status() {
			case journal.Failed:
				sum.Errors = append(sum.Errors, problemErrors(name, id, rec.Loc, rec.Partly, rec.Errors)...)
			case journal.InDoubt:
				sum.Undecided = append(sum.Undecided, name+" "+id)
			case journal.Waived:
				sum.Waived = append(sum.Waived, WaivedRecord{Step: name, Record: id, Location: rec.Loc, Reason: rec.Reason})
			}
		}
		for _, c := range st.Conflicts[name] {
			sum.Unsent = append(sum.Unsent, UnsentChange{Step: name, Entity: entity[name], Conflict: c})
		}
		for _, id := range st.Gone[name] {
			if rec := st.Record(name, id); rec != nil && rec.Status() == journal.Failed {
				sum.Gone = append(sum.Gone, RecordRef{Step: name, Record: id})
			}
		}
	}
	return sum
}

// StatusOf is the Summary of a journal's state already loaded, as
// Status gives it.
func StatusOf(st *journal.State) *Summary { return summarize(st, nil) }

// Status replays a journal: per step committed, failed, skipped, pending
// and in doubt, whether the run is complete, and every problem.
func Status(journalPath string) (*Summary, error) {
	st, err := journal.LoadIndexed(journalPath)
	if err != nil {
		return nil, err
	}
	return summarize(st, nil), nil
}
