package executor

import (
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/xuri/excelize/v2"
)

// WriteDiff writes a diff as a workbook: a sheet per step, a row per
// record (location, key, action, then one column per field any update of
// the step changes), each changed cell holding "old → new" on a yellow
// fill. The file is written to a temporary one and renamed.
func WriteDiff(res *DiffResult, out string) error {
	if !strings.EqualFold(filepath.Ext(out), ".xlsx") {
		return fmt.Errorf("%s: the diff is written as .xlsx", out)
	}
	f := excelize.NewFile()
	defer f.Close()
	g := newCellGuard(f)
	changed, err := f.NewStyle(&excelize.Style{Fill: excelize.Fill{Type: "pattern", Pattern: 1, Color: []string{"FFEB84"}}})
	if err != nil {
		return err
	}
	for i, st := range res.Steps {
		name := sheetName(st.Name)
		if i == 0 {
			err = f.SetSheetName("Sheet1", name)
		} else {
			_, err = f.NewSheet(name)
		}
		if err != nil {
			return err
		}
		var recs []DiffRecord
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
		withLines := slices.ContainsFunc(recs, func(r DiffRecord) bool { return len(r.Lines) > 0 })
		if withLines {
			header = append(header, "lines added")
		}
		if err := g.setRow(name, 1, header); err != nil {
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
			if err := g.setRow(name, j+2, row); err != nil {
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
	return g.save(out, false)
}
