package verify

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/migrate-tool/migrate/compare"
	"github.com/migrate-tool/migrate/executor"
	"github.com/migrate-tool/migrate/internal/diag"
	"github.com/migrate-tool/migrate/journal"
	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/plan"
	"github.com/migrate-tool/migrate/transform"
)

// The customer's totals (a step's totals: in the plan) are computed once,
// here, on three sides: from the records the plan builds from the source
// rows (the record stream every command runs on, not a reader of its own),
// from what the journal holds the run loaded, and from what the target
// holds of those records (verify's read). Sums are exact (big.Rat, each
// value as its field stores it: compare.Number), so that 0.1 + 0.2 is 0.3
// on every side. Verify's result carries the rows; every view renders them.

// stepTotals are one step's totals on the three sides.
type stepTotals struct {
	md                   *odata.Metadata
	t                    *odata.EntityType
	step                 *plan.Step
	source, sent, target totals
	// Rejected counts the records of the source that row errors reject
	// (counted by count() alone: their values are unknown); Waived those
	// left out because resolve --waive closed them.
	Rejected, Waived int
}

func newStepTotals(md *odata.Metadata, t *odata.EntityType, s *plan.Step) *stepTotals {
	st := &stepTotals{md: md, t: t, step: s}
	for _, tot := range s.Totals {
		if tot.By == "" {
			// A total nothing adds to is 0 on every side, still shown.
			for _, side := range []*totals{&st.source, &st.sent, &st.target} {
				side.add(totalKey(tot.Name, ""), "0")
			}
		}
	}
	return st
}

// totalKey is a total's key among a side's sums: its name, then its group.
func totalKey(name, group string) string { return name + "\x00" + group }

// add adds one record to side: its fields and its lines of each sub-form.
func (st *stepTotals) add(side *totals, fields map[string]any, lines func(nav string) []map[string]any) {
	for _, tot := range st.step.Totals {
		if tot.Nav == "" {
			st.addOne(side, tot, st.t, fields, nil)
			continue
		}
		n := st.t.Navigation(tot.Nav)
		if n == nil {
			continue // the plan's check refuses it
		}
		lt := st.md.Type(n.Type)
		for _, l := range lines(tot.Nav) {
			st.addOne(side, tot, lt, l, fields)
		}
	}
}

// addOne adds one item (a record, or one of its lines: then parent is the
// record's fields) to a total.
func (st *stepTotals) addOne(side *totals, tot *plan.Total, it *odata.EntityType, item, parent map[string]any) {
	group := ""
	if tot.By != "" {
		src, bt := item, it
		if tot.ByNav == "" && parent != nil {
			src, bt = parent, st.t
		}
		group = groupText(bt.Property(tot.By), src[tot.By])
	}
	key := totalKey(tot.Name, group)
	if !tot.Sum {
		side.add(key, "1")
		return
	}
	side.add(key, "0") // the group exists even when this value is empty
	if n, ok := compare.Number(it.Property(tot.Field), item[tot.Field]); ok {
		side.add(key, n.String())
	}
}

// groupText is the value of a by field as the rows show it: a number as
// its field stores it, a text as it is, an empty value as "".
func groupText(p *odata.Property, v any) string {
	if v == nil {
		return ""
	}
	if p != nil && p.Type.Numeric() {
		if n, ok := compare.Number(p, v); ok {
			return n.String()
		}
	}
	return fmt.Sprint(v)
}

// rejected counts a record the plan's row errors reject: one for count()
// of the records; its values are unknown.
func (st *stepTotals) rejected() {
	st.Rejected++
	for _, tot := range st.step.Totals {
		if tot.Nav == "" && !tot.Sum && tot.By == "" {
			st.source.add(totalKey(tot.Name, ""), "1")
		}
	}
}

// rows are the step's totals, in the plan's order, each group sorted.
func (st *stepTotals) rows() []journal.TotalRow {
	var out []journal.TotalRow
	for _, tot := range st.step.Totals {
		prefix := totalKey(tot.Name, "")
		seen := map[string]bool{}
		var groups []string
		for _, side := range []*totals{&st.source, &st.sent, &st.target} {
			for _, k := range side.order {
				if g, ok := strings.CutPrefix(k, prefix); ok && !seen[g] {
					seen[g] = true
					groups = append(groups, g)
				}
			}
		}
		sort.Strings(groups)
		by := tot.By
		if tot.ByNav != "" {
			by = tot.ByNav + "." + tot.By
		}
		for _, g := range groups {
			k := prefix + g
			sc := max(st.source.scale[k], st.sent.scale[k], st.target.scale[k])
			out = append(out, journal.TotalRow{Step: st.step.Name, Name: tot.Name, Expr: tot.Expr(), By: by, Group: g,
				Source: st.source.text(k, sc), Sent: st.sent.text(k, sc), Target: st.target.text(k, sc)})
		}
	}
	return out
}

// fromSource adds the records the plan builds from the step's source
// rows, as every command builds them (ref() stands in: a total is of
// what the plan writes, not of keys). Records resolve --waive closed
// are left out, as the customer closed them. Of a trial (apply --limit),
// only the records it took count: those the journal holds, but the ones
// it left pending for the full load.
func (st *stepTotals) fromSource(ctx context.Context, run *executor.Prepared, ss *journal.StepState, trial bool) error {
	waived := func(id string) bool {
		if ss == nil {
			return false
		}
		rec := ss.Records[id]
		return rec != nil && rec.Status() == journal.Waived
	}
	untaken := func(id string) bool {
		if !trial {
			return false
		}
		if ss == nil {
			return true
		}
		rec := ss.Records[id]
		return rec == nil || rec.Status() == journal.Pending
	}
	return run.StandInRecords(ctx, st.step.Name, func(res transform.Result) error {
		switch {
		case res.Skipped:
			return nil
		case len(res.Errors) > 0 || res.Record == nil:
			if untaken(executor.RejectedID(res)) {
				return nil
			}
			if waived(executor.RejectedID(res)) {
				st.Waived++
				return nil
			}
			st.rejected()
			return nil
		}
		rec := res.Record
		id := rec.ID
		if id == "" {
			id = rec.Loc.String()
		}
		if untaken(id) {
			return nil
		}
		if waived(id) {
			st.Waived++
			return nil
		}
		st.add(&st.source, rec.Fields, func(nav string) []map[string]any {
			var out []map[string]any
			for _, c := range rec.Children {
				if c.Nav == nav && !c.Single {
					out = append(out, c.Fields)
				}
			}
			return out
		})
		return nil
	})
}

// fromSent adds a record the journal holds loaded: what the run sent of
// it and its lines, and what it found held (an upsert's unchanged fields).
func (st *stepTotals) fromSent(w Want) {
	st.add(&st.sent, w.Sent, func(nav string) []map[string]any {
		var out []map[string]any
		for _, k := range w.Kids[nav] {
			out = append(out, k.Sent)
		}
		return out
	})
}

// fromTarget adds what the target answered for a record: the entity
// and every line it holds of each sub-form (expanded in the read).
func (st *stepTotals) fromTarget(entity map[string]any) {
	st.add(&st.target, entity, func(nav string) []map[string]any {
		var out []map[string]any
		lines, _ := entity[nav].([]any)
		for _, l := range lines {
			if m, ok := l.(map[string]any); ok {
				out = append(out, m)
			}
		}
		return out
	})
}

// reads are the fields and sub-forms the target's read must hold for the
// step's totals.
func (st *stepTotals) reads(fields, navs map[string]bool) {
	for _, tot := range st.step.Totals {
		if tot.Nav != "" {
			navs[tot.Nav] = true
		} else if tot.Field != "" {
			fields[tot.Field] = true
		}
		if tot.By != "" && tot.ByNav == "" {
			fields[tot.By] = true
		}
	}
}

// RecordTotals journals the plan's totals as verify found them at at
// (Result.Recorded), so that the run report shows them
// (executor.RunReportOf): the journal is the run's record, and the report
// is made from it alone, offline.
func RecordTotals(journalPath string, tot journal.Totals, at time.Time) error {
	jr, _, err := journal.Open(journalPath)
	if err != nil {
		return err
	}
	if err := jr.Append(journal.Entry{Kind: journal.KindTotals, At: new(at.UTC()), Totals: &tot}); err != nil {
		jr.Close()
		return err
	}
	return jr.Close()
}

// Recorded is what verify journals of the plan's totals (RecordTotals).
func (r *Result) Recorded() journal.Totals {
	return journal.Totals{Rows: r.Totals, Trial: r.Trial, NotRun: r.NotRun, PlanChanged: r.PlanChanged, SourcesChanged: r.SourcesChanged}
}

// NotVerifiedNotes say, per step, why the records verify did not check
// were not: undo took them back, or the run left them failed, waived,
// pending or in doubt; then the failed records that are partly loaded
// (the company holds their entity and some of their lines, which neither
// the comparison nor the control totals count). Every view of verify
// says them under the totals.
func (r *Result) NotVerifiedNotes() []string {
	var notes []string
	for _, s := range r.Steps {
		if s.NotVerified > 0 {
			notes = append(notes, s.Name+": "+diag.Count(s.NotVerified, "record", "records")+" not verified: "+strings.Join(s.whyNotVerified(), ", "))
		}
		if s.Partly == 0 {
			continue
		}
		is := "records are"
		if s.Partly == 1 {
			is = "record is"
		}
		notes = append(notes, fmt.Sprintf("%s: %d failed %s partly loaded: the server holds its entity and some of its lines, which are not verified and not in the control totals (status lists them; apply --retry-failed sends what is missing)", s.Name, s.Partly, is))
	}
	return notes
}

// whyNotVerified says why the step's records were not verified, a part
// for each reason with its count.
func (s Step) whyNotVerified() []string {
	var why []string
	if s.Undone > 0 {
		why = append(why, fmt.Sprintf("undo took %d back (apply loads %s anew)", s.Undone, diag.Them(s.Undone)))
	}
	for _, st := range []struct {
		status journal.Status
		says   string // %[2]s: the pronoun of the count
	}{
		{journal.Failed, "failed"}, {journal.Waived, "waived (resolve --waive)"}, {journal.Pending, "pending (apply loads %[2]s)"},
		{journal.InDoubt, "in doubt (resolve lists %[2]s)"}, {journal.Committed, "committed without a key to read %[2]s by"},
	} {
		if n := s.Left[st.status]; n > 0 {
			why = append(why, fmt.Sprintf("%[1]d "+st.says, n, diag.Them(n)))
		}
	}
	return why
}

// TotalsNotes are what the plan's totals say beside their rows, in every
// view (verify's text, its workbook, the run report): that the plan or
// the sources changed since the run, whose source side is then of what
// they give now;
// of a trial, that the source side is of what it took; the steps not run
// yet, whose totals are left out.
func TotalsNotes(t journal.Totals) []string {
	var notes []string
	if t.PlanChanged {
		notes = append(notes, "the plan changed since the run: the source's totals are of what it builds now, not of what the run was made from")
	}
	if len(t.SourcesChanged) > 0 {
		notes = append(notes, fmt.Sprintf("the sources changed since the run (%s): the source's totals are of the files as they are now, not as the run read them", strings.Join(t.SourcesChanged, ", ")))
	}
	if t.Trial > 0 {
		records := "records"
		if t.Trial == 1 {
			records = "record"
		}
		notes = append(notes, fmt.Sprintf("a trial of %d %s a step (apply --limit): the source's totals are of the records it took, not of the whole source", t.Trial, records))
	}
	if len(t.NotRun) > 0 {
		notes = append(notes, fmt.Sprintf("not run yet (apply --steps ran others): %s; the plan's totals of them are left out", strings.Join(t.NotRun, ", ")))
	}
	return notes
}
