package executor

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"strings"

	"github.com/migrate-tool/migrate/journal"
	"github.com/migrate-tool/migrate/plan"
	"github.com/migrate-tool/migrate/source"
	"github.com/migrate-tool/migrate/transform"
)

// Without id:, a record's identity is its source location. A row
// deleted or inserted before a resume shifts every later row, and the row
// now at a committed location would be taken for done (or a failed
// location would resend a committed row). The journal keeps a hash of the
// row sent from each such location; a resume over a changed source checks
// them before anything is sent.

// ShiftedError is a resume refused because rows moved under locations that
// identify records.
type ShiftedError struct {
	Problems []string // each: step, location and what is there now
}

func (e *ShiftedError) Error() string {
	return fmt.Sprintf("the source changed under records identified by their row: %s; nothing was sent. Restore the rows as they were (a failed row may be corrected in place, not removed or moved), or give the step an id: that names each record by its data (plan-format.md, \"id\")",
		strings.Join(e.Problems, "; "))
}

// rowHash is the hash journaled for a record's entity sub-request when the
// record's identity is its location.
func (o *op) rowHash() string {
	if o == nil || o.parent != nil || o.work == nil || o.work.rec == nil || o.work.id != o.work.rec.Loc.String() {
		return ""
	}
	return hashRow(rowOf(o.work.rec.Row))
}

// srcHash is the hash journaled with a committed record (whatever its
// identity) of every source row it was built from: its own or its group's,
// and its lines' (a linked sub-form's rows are their own).
func srcHash(rec *transform.Record) string {
	h := fnv.New64a()
	var kids func(cs []*transform.Child)
	row := func(r source.Row) {
		for i, c := range r.Cells {
			name := ""
			if r.Header != nil && i < len(r.Header.Names) {
				name = r.Header.Names[i]
			}
			t := cellText(c)
			fmt.Fprintf(h, "%d:%s=%d:%s\n", len(name), name, len(t), t)
		}
		h.Write([]byte{0})
	}
	kids = func(cs []*transform.Child) {
		for _, c := range cs {
			if c.Row.Header != nil {
				row(c.Row)
			}
			kids(c.Children)
		}
	}
	for _, r := range rec.SourceRows() {
		row(r)
	}
	kids(rec.Children)
	return hex.EncodeToString(h.Sum(nil))
}

// failedIDs are the failed records of step: a run that reads the step to
// its end and meets none of some of them says they are gone.
func failedIDs(st *journal.State, step string) map[string]bool {
	out := map[string]bool{}
	if ss := st.Steps[step]; ss != nil {
		for _, id := range ss.IDs {
			if rec := ss.Records[id]; rec != nil && rec.Status() == journal.Failed {
				out[id] = true
			}
		}
	}
	return out
}

// hashRow is a short hash of a row's cells under their column names.
func hashRow(r *journal.Row) string {
	if r == nil {
		return ""
	}
	h := sha256.New()
	for i, c := range r.Cells {
		name := ""
		if i < len(r.Header) {
			name = r.Header[i]
		}
		fmt.Fprintf(h, "%d:%s=%d:%s\n", len(name), name, len(c), c)
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// refuseShifted compares, for every step whose source file changed since
// the journal began, the row now at each location with the row that was
// sent from it. A committed or in-doubt record whose row changed, or a row
// that now holds what another location sent, is a shift. A failed record
// whose row changed is the user's correction, which --retry-failed is for.
func (r *runner) refuseShifted() error {
	now := sourceHashes(r.opts.Plan)
	files := map[string]string{} // source name → file, for changed files
	for _, s := range r.opts.Plan.Sources {
		if old, ok := r.state().Header.Sources[s.File]; ok && old != now[s.File] {
			files[s.Name] = s.File
		}
	}
	if len(files) == 0 {
		return nil
	}
	var problems []string
	for _, s := range r.opts.Plan.Steps {
		if _, ok := files[s.Source]; !ok {
			continue
		}
		p, err := r.shiftedRows(s)
		if err != nil {
			return err
		}
		problems = append(problems, p...)
	}
	if len(problems) == 0 {
		return nil
	}
	sortStrings(problems)
	return &ShiftedError{Problems: problems}
}

// shiftedRows reads one step's records again (nothing is sent) and lists
// the locations whose row moved.
func (r *runner) shiftedRows(s *plan.Step) ([]string, error) {
	st := r.state().Steps[s.Name]
	if st == nil {
		return nil, nil
	}
	sentAt := map[string]string{}     // location of a committed or in-doubt record → its row's hash
	sentFrom := map[string][]string{} // the same by hash (identical rows share one)
	for _, id := range st.IDs {
		rec := st.Records[id]
		if rec.RowHash != "" && settled(rec) {
			sentAt[id] = rec.RowHash
			sentFrom[rec.RowHash] = append(sentFrom[rec.RowHash], id)
		}
	}
	// A lean state's committed records are in the journal's index.
	err := r.state().EachSettled(func(rec journal.SettledRecord) error {
		if rec.Step == s.Name && rec.RowHash != "" && rec.Status == journal.Committed {
			sentAt[rec.ID] = rec.RowHash
			sentFrom[rec.RowHash] = append(sentFrom[rec.RowHash], rec.ID)
		}
		return nil
	})
	if err != nil || len(sentAt) == 0 {
		return nil, err
	}
	seen := map[string]bool{}
	var problems []string
	err = r.opts.records.Records(r.ctx, s.Name, r.opts.open, r, func(res transform.Result) error {
		loc := res.Loc.String()
		seen[loc] = true
		var h string
		switch {
		case res.Record != nil:
			h = hashRow(rowOf(res.Record.Row))
		case len(res.Rows) > 0: // a rejected row carries itself
			h = hashRow(rowOf(res.Rows[0]))
		}
		prev := r.state().Record(s.Name, loc)
		switch {
		case sentAt[loc] != "":
			if h != sentAt[loc] {
				problems = append(problems, fmt.Sprintf("step %s, %s: the record sent from this row is %s, and the row now holds something else", s.Name, loc, prev.Status()))
			}
		case prev != nil && prev.RowHash == h:
			// A failed row as it was: identical to a committed one, maybe,
			// but not moved.
		case len(sentFrom[h]) > 0:
			problems = append(problems, fmt.Sprintf("step %s, %s: the row now holds what was sent from %s", s.Name, loc, sentFrom[h][0]))
		}
		return nil
	})
	if err != nil && !errors.Is(err, errHalt) {
		return nil, err
	}
	for loc := range sentAt {
		if !seen[loc] {
			problems = append(problems, fmt.Sprintf("step %s, %s: the row the record was sent from is no longer there", s.Name, loc))
		}
	}
	return problems, nil
}

// settled: committed or in doubt, so that a shifted row would be skipped or
// taken for it.
func settled(rec *journal.RecordState) bool {
	switch rec.Status() {
	case journal.Committed, journal.InDoubt:
		return true
	}
	return false
}
