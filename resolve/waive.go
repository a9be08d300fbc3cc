package resolve

import (
	"fmt"
	"sort"
	"strings"

	"github.com/migrate-tool/migrate/executor"
	"github.com/migrate-tool/migrate/internal/didyoumean"
	"github.com/migrate-tool/migrate/journal"
)

// A failed record that will never load (an export's total
// line, a duplicate the customer dropped) kept a run from complete for
// ever. Waive closes it in the journal with the user's reason; status and
// the report count it as waived, and apply never sends it.

// Waive records in the journal that each of recs, a failed record, is
// closed for reason. Nothing is recorded unless every one can be: each
// that cannot (unknown, not failed, partly loaded) is a *DecisionError
// naming why, all of them in one.
func Waive(journalPath string, recs []executor.RecordRef, reason string) ([]executor.WaivedRecord, error) {
	if strings.TrimSpace(reason) == "" {
		return nil, decisionErr("a waive needs its reason (--reason TEXT): the report shows it beside the record")
	}
	jr, st, err := journal.Open(journalPath)
	if err != nil {
		return nil, err
	}
	defer jr.Close()
	var (
		problems []string
		entries  []journal.Entry
		out      []executor.WaivedRecord
		seen     = map[executor.RecordRef]bool{}
	)
	for _, ref := range recs {
		if seen[ref] {
			continue
		}
		seen[ref] = true
		rec := st.Record(ref.Step, ref.Record)
		if rec == nil {
			// A failed record named by the location status and the report
			// give (orders.csv:9) rather than its id.
			if rec = failedAt(st, ref); rec != nil {
				ref.Record = rec.ID
			}
		}
		if why := unwaivable(st, ref, rec); why != "" {
			problems = append(problems, why)
			continue
		}
		entries = append(entries, journal.Entry{Kind: journal.KindRecord, Record: &journal.RecordEntry{
			Step: ref.Step, ID: ref.Record, Status: journal.Waived, Reason: reason}})
		out = append(out, executor.WaivedRecord{Step: ref.Step, Record: ref.Record, Location: rec.Loc, Reason: reason})
	}
	if len(problems) > 0 {
		sort.Strings(problems)
		return nil, decisionErr("nothing was waived: %s", strings.Join(problems, "; "))
	}
	if err := jr.Append(entries...); err != nil {
		return nil, err
	}
	return out, nil
}

// failedAt is the failed record of ref's step whose source location is
// ref.Record, or nil.
func failedAt(st *journal.State, ref executor.RecordRef) *journal.RecordState {
	ss := st.Steps[ref.Step]
	if ss == nil {
		return nil
	}
	for _, id := range ss.IDs {
		if rec := ss.Records[id]; rec != nil && rec.Loc == ref.Record && rec.Status() == journal.Failed {
			return rec
		}
	}
	return nil
}

// unwaivable says why ref cannot be waived, or "".
func unwaivable(st *journal.State, ref executor.RecordRef, rec *journal.RecordState) string {
	if rec == nil {
		if st.Steps[ref.Step] == nil {
			msg := fmt.Sprintf("%s: the journal has no step %q", ref, ref.Step)
			if near := didyoumean.Closest(ref.Step, st.StepNames); near != "" {
				msg += fmt.Sprintf("; did you mean %s/%s?", near, ref.Record)
			}
			return msg
		}
		msg := fmt.Sprintf("%s: no record of step %s has the id or location %q", ref, ref.Step, ref.Record)
		if near := didyoumean.Closest(ref.Record, st.Steps[ref.Step].IDs); near != "" {
			msg += fmt.Sprintf("; did you mean %s/%s?", ref.Step, near)
		}
		return msg
	}
	switch s := rec.Status(); s {
	case journal.Failed:
	case journal.Waived:
		return fmt.Sprintf("%s is waived already (%s)", ref, rec.Reason)
	case journal.InDoubt:
		return fmt.Sprintf("%s is in doubt, not failed: it may exist on the target; decide it first (`migrate resolve` lists it)", ref)
	case journal.Pending:
		return fmt.Sprintf("%s is pending, not failed: run apply to finish it", ref)
	default:
		return fmt.Sprintf("%s is %s, not failed: only a failed record can be waived", ref, s)
	}
	if wrote(rec) {
		what := rec.Partly
		if what == "" {
			what = "the run wrote some of it"
		}
		return fmt.Sprintf("%s is partly loaded (%s): a waive would leave that on the target; correct its rows and apply --retry-failed, or undo the run", ref, what)
	}
	return ""
}

// wrote reports whether any write of the record took effect on the target.
func wrote(rec *journal.RecordState) bool {
	if rec.Partly != "" {
		return true
	}
	for _, s := range rec.Subs {
		if s.OK() && s.Op != journal.OpRead {
			return true
		}
	}
	for _, s := range rec.Extra {
		if s.OK() && s.Op != journal.OpRead {
			return true
		}
	}
	return false
}
