package report

import (
	"encoding/json"
	"io"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/migrate-tool/migrate/executor"
)

// The diff's page: what apply would do to each record against
// what the target holds now, for the customer to sign before the load.
// It is drawn by the run report's template set (report_html.go), with
// its styles, heading and failures table.

// DiffShown is how many records of one action the page lists; the rest
// are in the workbook diff --out writes.
const DiffShown = 1000

// DiffReport is what the diff's page shows.
type DiffReport struct {
	ReportInfo
	Steps []executor.DiffStep
	Total executor.DiffStep
	// Groups are the records apply would not leave as they are, by what
	// it would do: conflicts first, then missing keys, updates, creates.
	Groups []DiffGroup
	// References are the values of exists: fields on neither the target
	// nor an earlier step, each at the first cell that gives it.
	References []executor.RecordError
	Failures   []FailureGroup // the row errors, by message
	Prediction
}

// DiffGroup is the records of one action.
type DiffGroup struct {
	Action      executor.DiffAction
	Title, Hint string
	Records     []DiffRow // the first DiffShown
	More        int       // how many more there are
}

// DiffRow is one record of a group, its changes in field order.
type DiffRow struct {
	Step, Location, Key string
	Action              executor.DiffAction
	Matches             []string
	Changes             []DiffChange
}

// DiffChange is one field an update changes, each value as the page shows
// it (shownValue).
type DiffChange struct {
	Field, Old, New string
}

// diffGroups are the page's groups in the order it shows them: what
// stops apply from writing as the plan says comes first.
var diffGroups = []struct {
	title, hint string
	actions     []executor.DiffAction
}{
	{"Conflicts", "Insert on a key the target already holds (apply would fail), or a document the server numbers whose match: fields find one or more already there (apply would make another)", []executor.DiffAction{executor.DiffConflict, executor.DiffAmbiguous}},
	{"Missing", "Update of a key the target does not hold: apply would fail", []executor.DiffAction{executor.DiffMissing}},
	{"Updates", "Each changed field, as the target holds it → as apply would write it", []executor.DiffAction{executor.DiffUpdate}},
	{"Creates", "Records the target does not hold", []executor.DiffAction{executor.DiffCreate}},
}

// DiffReportOf is the page of a diff; unresolved are the exists: values
// CheckReferences found on neither the target nor an earlier step.
func DiffReportOf(res *executor.DiffResult, info ReportInfo, unresolved []executor.RecordError) *DiffReport {
	rep := &DiffReport{ReportInfo: info, Steps: res.Steps, References: unresolved, Total: executor.DiffStep{Name: "total"}}
	if res.Summary != nil {
		rep.Failures = groupFailures(res.Summary.Errors)
		rep.Prediction = predictionOf(res.Summary)
		if rep.Plan == "" {
			rep.Plan = res.Summary.Plan
		}
	}
	for _, s := range res.Steps {
		rep.Total.Create += s.Create
		rep.Total.Update += s.Update
		rep.Total.Unchanged += s.Unchanged
		rep.Total.Conflict += s.Conflict
		rep.Total.Missing += s.Missing
	}
	for _, g := range diffGroups {
		grp := DiffGroup{Action: g.actions[0], Title: g.title, Hint: g.hint}
		for _, r := range res.Records {
			if !slices.Contains(g.actions, r.Action) {
				continue
			}
			if len(grp.Records) == DiffShown {
				grp.More++
				continue
			}
			grp.Records = append(grp.Records, diffRow(r))
		}
		if len(grp.Records) > 0 {
			rep.Groups = append(rep.Groups, grp)
		}
	}
	return rep
}

func diffRow(r executor.DiffRecord) DiffRow {
	row := DiffRow{Step: r.Step, Location: r.Location, Key: r.Key, Action: r.Action, Matches: r.Matches}
	for k, c := range r.Fields {
		row.Changes = append(row.Changes, DiffChange{Field: k, Old: shownValue(c.Old), New: shownValue(c.New)})
	}
	sort.Slice(row.Changes, func(i, j int) bool { return row.Changes[i].Field < row.Changes[j].Field })
	for _, l := range r.Lines {
		row.Changes = append(row.Changes, DiffChange{Field: l.Nav + " (new line, " + l.Location + ")", Old: "(none)", New: lineShown(l.Fields)})
	}
	return row
}

// shownValue is a value as the page shows it to a customer: a text
// without JSON's quotes and escapes, null and "" as "(empty)", anything
// else as the service's JSON writes it.
func shownValue(raw json.RawMessage) string {
	var text string
	switch {
	case string(raw) == "null" || len(raw) == 0:
		return "(empty)"
	case json.Unmarshal(raw, &text) != nil:
		return string(raw)
	case text == "":
		return "(empty)"
	}
	return text
}

// Clean reports whether apply would write every record as the plan says:
// no conflict, no missing key, no row error, no unresolved reference.
func (r *DiffReport) Clean() bool {
	return r.Total.Conflict+r.Total.Missing == 0 && len(r.Failures) == 0 && len(r.References) == 0
}

// Problems counts the row errors.
func (r *DiffReport) Problems() int {
	n := 0
	for _, g := range r.Failures {
		n += g.Count
	}
	return n
}

// FailureTable is the page's row errors, and where the rest of a group are.
func (r *DiffReport) FailureTable() FailureTable {
	return FailureTable{r.Failures, "migrate diff " + r.PlanPath, "lists every problem"}
}

// WriteDiffHTML renders the diff's page to w.
func WriteDiffHTML(w io.Writer, rep *DiffReport) error {
	return pages().ExecuteTemplate(w, "diff", rep)
}

// lineShown is a line a diff appends, as the page shows it: each field as
// FIELD: value, in field order.
func lineShown(fields map[string]json.RawMessage) string {
	names := slices.Sorted(maps.Keys(fields))
	parts := make([]string, len(names))
	for i, k := range names {
		parts[i] = k + ": " + shownValue(fields[k])
	}
	return strings.Join(parts, ", ")
}
