package report

import (
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/xuri/excelize/v2"

	"github.com/migrate-tool/migrate/executor"
	"github.com/migrate-tool/migrate/internal/workbook"
	"github.com/migrate-tool/migrate/journal"
	"github.com/migrate-tool/migrate/verify"
)

// WriteDiff writes a diff as a workbook: a sheet per step, a row per
// record (location, key, action, then one column per field any update of
// the step changes), each changed cell holding "old → new" on a yellow
// fill. The file is written to a temporary one and renamed.
func WriteDiff(res *executor.DiffResult, out string) error {
	if !strings.EqualFold(filepath.Ext(out), ".xlsx") {
		return fmt.Errorf("%s: the diff is written as .xlsx", out)
	}
	f := excelize.NewFile()
	defer f.Close()
	g := workbook.NewGuard(f)
	changed, err := f.NewStyle(&excelize.Style{Fill: excelize.Fill{Type: "pattern", Pattern: 1, Color: []string{"FFEB84"}}})
	if err != nil {
		return err
	}
	for i, st := range res.Steps {
		name := workbook.SheetName(st.Name)
		if i == 0 {
			err = f.SetSheetName("Sheet1", name)
		} else {
			_, err = f.NewSheet(name)
		}
		if err != nil {
			return err
		}
		var recs []executor.DiffRecord
		seen := map[string]bool{}
		var fields []string
		for _, r := range res.Records {
			if r.Step != st.Name {
				continue
			}
			recs = append(recs, r)
			for k := range r.Fields {
				if !seen[k] {
					seen[k] = true
					fields = append(fields, k)
				}
			}
		}
		sort.Strings(fields)
		header := append([]string{"location", "key", "action"}, fields...)
		withLines := slices.ContainsFunc(recs, func(r executor.DiffRecord) bool { return len(r.Lines) > 0 })
		if withLines {
			header = append(header, "lines added")
		}
		if err := g.SetRow(name, 1, header); err != nil {
			return err
		}
		for j, r := range recs {
			row := []string{r.Location, r.Key, string(r.Action)}
			if len(r.Matches) > 0 {
				row[1] = strings.Join(r.Matches, " ")
			}
			for _, k := range fields {
				c, ok := r.Fields[k]
				if !ok {
					row = append(row, "")
					continue
				}
				row = append(row, string(c.Old)+" → "+string(c.New))
			}
			if withLines {
				added := make([]string, len(r.Lines))
				for i, l := range r.Lines {
					added[i] = l.Nav + " (" + l.Location + "): " + lineShown(l.Fields)
				}
				row = append(row, strings.Join(added, "\n"))
			}
			if err := g.SetRow(name, j+2, row); err != nil {
				return err
			}
			for col, k := range fields {
				if _, ok := r.Fields[k]; !ok {
					continue
				}
				cell, err := excelize.CoordinatesToCellName(4+col, j+2)
				if err != nil {
					return err
				}
				if err := f.SetCellStyle(name, cell, cell, changed); err != nil {
					return err
				}
			}
		}
	}
	if err := writeDiffNotes(f, g, res); err != nil {
		return err
	}
	return g.Save(out, false)
}

// diffNotesSheet is the diff workbook's sheet of notes (a step's sheet
// of that name takes "diff notes (2)").
const diffNotesSheet = "diff notes"

// writeDiffNotes adds a sheet of what the diff's text and page say beside
// its counts, a line each, when there is any: that apply would not start
// (Refused), what the counts hold only as far as (Caveat), the journal it
// would resume (Resumes), the delta (Headline), the warnings.
func writeDiffNotes(f *excelize.File, g *workbook.Guard, res *executor.DiffResult) error {
	sum := res.Summary
	if sum == nil {
		return nil
	}
	var notes []string
	if sum.Refused != "" {
		notes = append(notes, "apply would not start: "+sum.Refused+"; nothing would be written. The sheets are what it would do were it started as things stand.")
	}
	if c := sum.Caveat(); c != "" {
		notes = append(notes, "This holds "+c+".")
	}
	if r := sum.Resumes(); r != "" {
		notes = append(notes, r)
	}
	if sum.Delta != nil {
		notes = append(notes, sum.Delta.Headline())
	}
	for _, w := range sum.Warnings {
		notes = append(notes, w.String())
	}
	if len(notes) == 0 {
		return nil
	}
	name := diffNotesSheet
	for n := 2; slices.Contains(f.GetSheetList(), name); n++ {
		name = fmt.Sprintf("%s (%d)", diffNotesSheet, n)
	}
	if _, err := f.NewSheet(name); err != nil {
		return err
	}
	if err := g.SetRow(name, 1, []string{"note"}); err != nil {
		return err
	}
	for i, n := range notes {
		if err := g.SetRow(name, i+2, []string{n}); err != nil {
			return err
		}
	}
	return nil
}

// WriteVerify writes what verify found as a workbook: a sheet of control
// totals (a total that differs on a yellow fill) and a sheet of findings,
// a row each.
func WriteVerify(res *verify.Result, out string) error {
	if !strings.EqualFold(filepath.Ext(out), ".xlsx") {
		return fmt.Errorf("%s: verify writes its workbook as .xlsx", out)
	}
	f := excelize.NewFile()
	defer f.Close()
	g := workbook.NewGuard(f)
	differs, err := f.NewStyle(&excelize.Style{Fill: excelize.Fill{Type: "pattern", Pattern: 1, Color: []string{"FFEB84"}}})
	if err != nil {
		return err
	}
	if err := f.SetSheetName("Sheet1", "totals"); err != nil {
		return err
	}
	if err := g.SetRow("totals", 1, []string{"step", "entity", "control total", "sent", "target"}); err != nil {
		return err
	}
	row := 2
	for _, st := range res.Steps {
		for _, t := range st.Totals {
			if err := g.SetRow("totals", row, []string{st.Name, st.Entity, t.What, t.Source, t.Target}); err != nil {
				return err
			}
			if t.Source != t.Target {
				if err := f.SetCellStyle("totals", fmt.Sprintf("D%d", row), fmt.Sprintf("E%d", row), differs); err != nil {
					return err
				}
			}
			row++
		}
	}
	for i, n := range res.NotVerifiedNotes() {
		if err := g.SetRow("totals", row+1+i, []string{n}); err != nil {
			return err
		}
	}
	if _, err := f.NewSheet("findings"); err != nil {
		return err
	}
	if err := g.SetRow("findings", 1, []string{"step", "record", "location", "url", "field", "problem", "sent", "found", "detail"}); err != nil {
		return err
	}
	for i, fd := range res.Findings {
		if err := g.SetRow("findings", i+2, []string{fd.Step, fd.Record, fd.Location, fd.URL, fd.Field, fd.Problem, fd.Sent, fd.Found, fd.Detail}); err != nil {
			return err
		}
	}
	if len(res.Totals) > 0 || len(res.NotRun) > 0 {
		if err := writeTotalsSheet(f, g, res.Recorded(), differs); err != nil {
			return err
		}
	}
	return g.Save(out, false)
}

// writeTotalsSheet writes the plan's totals: on a sheet of their own, a
// total whose sides differ marked, and what they say beside their rows
// under them (verify.TotalsNotes).
func writeTotalsSheet(f *excelize.File, g *workbook.Guard, tot journal.Totals, differs int) error {
	rows := tot.Rows
	const sheet = "plan totals"
	if _, err := f.NewSheet(sheet); err != nil {
		return err
	}
	if err := g.SetRow(sheet, 1, []string{"step", "total", "expression", "by", "group", "source", "sent", "target"}); err != nil {
		return err
	}
	for i, t := range rows {
		if err := g.SetRow(sheet, i+2, []string{t.Step, t.Name, t.Expr, t.By, t.Group, t.Source, t.Sent, t.Target}); err != nil {
			return err
		}
		if t.Differs() {
			if err := f.SetCellStyle(sheet, fmt.Sprintf("F%d", i+2), fmt.Sprintf("H%d", i+2), differs); err != nil {
				return err
			}
		}
	}
	for i, n := range verify.TotalsNotes(tot) {
		if err := g.SetRow(sheet, len(rows)+3+i, []string{n}); err != nil {
			return err
		}
	}
	return nil
}
