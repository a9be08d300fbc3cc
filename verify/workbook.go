package verify

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/xuri/excelize/v2"

	"github.com/migrate-tool/migrate/executor"
	"github.com/migrate-tool/migrate/journal"
)

// WriteWorkbook writes what verify found as a workbook: a sheet of
// control totals (a total that differs on a yellow fill) and a sheet of
// findings, a row each.
func WriteWorkbook(res *Result, out string) error {
	if !strings.EqualFold(filepath.Ext(out), ".xlsx") {
		return fmt.Errorf("%s: verify writes its workbook as .xlsx", out)
	}
	g := executor.NewWorkbook()
	defer g.Close()
	f := g.File
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
	if len(res.Totals) > 0 {
		if err := writeTotalsSheet(g, res.Totals, differs); err != nil {
			return err
		}
	}
	return g.Save(out)
}

// writeTotalsSheet writes the plan's totals: on a sheet of their own, a
// total whose sides differ marked.
func writeTotalsSheet(g *executor.Workbook, rows []journal.TotalRow, differs int) error {
	const sheet = "plan totals"
	if _, err := g.NewSheet(sheet); err != nil {
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
			if err := g.SetCellStyle(sheet, fmt.Sprintf("F%d", i+2), fmt.Sprintf("H%d", i+2), differs); err != nil {
				return err
			}
		}
	}
	return nil
}
