package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/migrate-tool/migrate/executor"
	"github.com/migrate-tool/migrate/intake"
	"github.com/migrate-tool/migrate/plan"
)

// initIntake writes the plan that loads an intake workbook (migrate
// template): a source a sheet, one step for its entity, a sub-form a
// level, joined by the columns the workbook says.
// An --entity, needed by no intake workbook, must be the workbook's own.
func (a *app) initIntake(ctx context.Context, cf connFlags, mdFile, src, entity, out string) error {
	md, err := a.metadataOf(ctx, cf, mdFile)
	if err != nil {
		return err
	}
	l, err := intake.Read(src, src, md)
	if err != nil {
		return withCode(ExitUsage, err)
	}
	if entity != "" && entity != l.Entity {
		return usageErr("%s is the intake workbook of %s, not %s: drop --entity (the workbook says its entity)", src, l.Entity, entity)
	}
	planDir := "."
	if out != "" {
		planDir = filepath.Dir(out)
	}
	rel, err := filepath.Rel(planDir, src)
	if err != nil {
		rel = src
	}
	d, sources := intakeDraft(l, filepath.ToSlash(rel))
	text := d.Marshal()
	if out == "" {
		_, err := a.stdout.Write(text)
		return err
	}
	// Its first test goes beside it, as for any source: refused before
	// anything is written when that file exists.
	if _, err := os.Lstat(plan.TestsFile(out)); err == nil {
		return usageErr("%s exists; init writes the plan's first test there", plan.TestsFile(out))
	}
	top := l.Levels[0]
	header, rows, err := executor.FirstRows(&plan.Source{File: src, Sheet: top.Sheet, HeaderRow: intake.HeaderRow}, initTestRows)
	if err != nil {
		return withCode(ExitUsage, err)
	}
	if err := writeNew(out, text); err != nil {
		return err
	}
	if len(rows) == 0 {
		fmt.Fprintf(a.stderr, "wrote %s, which loads the %s of %s (no rows yet, so no first test); next: migrate validate %s\n", out, l.Entity, src, out)
		return nil
	}
	tests, err := a.writeFirstTest(ctx, out, filepath.Base(src), md, func(*plan.Plan) ([]*plan.Given, error) {
		return intakeGivens(l, src, sources, header, rows)
	})
	if err != nil {
		fmt.Fprintf(a.stderr, "wrote %s; next: migrate validate %s\n", out, out)
		return err
	}
	fmt.Fprintf(a.stderr, "wrote %s, which loads the %s of %s, and its first test, %s; next: migrate validate %s, then migrate test %s\n", out, l.Entity, src, tests, out, out)
	return nil
}

// intakeScanRows is how many rows of a sub-form's sheet init reads for the
// lines of the first test's records.
const intakeScanRows = 1000

// intakeGivens are the rows the first test of an intake plan gives: the
// entity's first rows, and the rows of each sub-form's sheet that join
// them (among its first intakeScanRows).
func intakeGivens(l *intake.Layout, src string, sources map[string]string, header []string, rows [][]string) ([]*plan.Given, error) {
	top := l.Levels[0]
	givens := []*plan.Given{givenRows(sources[top.Sheet], header, rows, nil)}
	for _, lv := range l.Levels[1:] {
		if lv.Single() {
			continue
		}
		keys := map[string]bool{}
		if i := slices.Index(header, lv.Link); i >= 0 {
			for _, r := range rows {
				if i < len(r) && r[i] != "" {
					keys[r[i]] = true
				}
			}
		}
		h, rs, err := executor.FirstRows(&plan.Source{File: src, Sheet: lv.Sheet, HeaderRow: intake.HeaderRow}, intakeScanRows)
		if err != nil {
			return nil, err
		}
		i := slices.Index(h, lv.Link)
		givens = append(givens, givenRows(sources[lv.Sheet], h, rs, func(r []string) bool {
			return i >= 0 && i < len(r) && keys[r[i]]
		}))
	}
	return givens, nil
}

// intakeDraft is the plan of layout l, whose workbook is file (relative to
// the plan), and the plan's source of each sheet.
func intakeDraft(l *intake.Layout, file string) (*plan.Draft, map[string]string) {
	step := strings.ToLower(l.Entity)
	d := &plan.Draft{Note: "A plan written by `migrate init` for the intake workbook " + file + " (migrate\ntemplate): check it, then run migrate validate on it.", Name: step}
	sources := map[string]string{} // sheet -> source name
	used := map[string]bool{}
	for _, sheet := range l.Sheets() {
		name := sourceName(sheet)
		for n := 2; used[name]; n++ {
			name = sourceName(sheet) + "_" + strconv.Itoa(n)
		}
		used[name] = true
		sources[sheet] = name
		d.Sources = append(d.Sources, &plan.Source{Name: name, File: file, Sheet: sheet, HeaderRow: intake.HeaderRow})
	}
	top := l.Levels[0]
	st := &plan.DraftStep{Name: step, Entity: l.Entity, Source: sources[top.Sheet]}
	intakeLevel(st, l, top, sources)
	for _, sheet := range l.Sheets() {
		if cols := l.Other[sheet]; len(cols) > 0 {
			st.Notes = append(st.Notes, fmt.Sprintf("columns of sheet %s with no field of its levels: %s", sheet, strings.Join(quoteAll(cols), ", ")))
		}
	}
	d.Steps = []*plan.DraftStep{st}
	return d, sources
}

// intakeLevel gives st lv's fields and its sub-forms.
func intakeLevel(st *plan.DraftStep, l *intake.Layout, lv *intake.Level, sources map[string]string) {
	note := func(format string, args ...any) {
		st.Fields = append(st.Fields, plan.DraftField{Note: fmt.Sprintf(format, args...)})
	}
	given := map[string]bool{}
	for _, c := range lv.Columns {
		p := c.Field
		if p == nil {
			continue
		}
		given[p.Name] = true
		if msg := intakeRefusal(p.Computed, p.ReadOnly); msg != "" {
			note("%s %s; column %q is not loaded", p.Name, msg, c.Name)
			continue
		}
		st.Fields = append(st.Fields, plan.DraftField{Name: p.Name, Expr: rowExpr(c.Name)})
	}
	for _, p := range lv.Type.Properties {
		if p.Mandatory && p.Writable() && !given[p.Name] {
			note("TODO %s is mandatory (%s) and the workbook has no column %s%s: map it", p.Name, p.Type, lv.Prefix, p.Name)
		}
	}
	for _, c := range l.Children(lv) {
		sub := &plan.DraftStep{Name: c.Name()}
		if c.Single() {
			// A row that leaves the sub-form's columns blank has none.
			var given []string
			for _, col := range c.Columns {
				if col.Field != nil && col.Field.Writable() {
					given = append(given, rowExpr(col.Name)+` != ""`)
				}
			}
			sub.When = strings.Join(given, " || ")
		} else {
			sub.Source = sources[c.Sheet]
			sub.Link = &plan.DraftLink{Parent: rowExpr(c.Link), Child: rowExpr(c.Link)}
		}
		intakeLevel(sub, l, c, sources)
		st.Subforms = append(st.Subforms, sub)
	}
}

// intakeRefusal says why a column of a field is not loaded, "" when it is.
func intakeRefusal(computed, readOnly bool) string {
	switch {
	case computed:
		return "is assigned by the server (read-only)"
	case readOnly:
		return "is read-only through the API (Core.Permissions Read)"
	}
	return ""
}

// sourceName is a sheet's name as a plan's source name.
func sourceName(sheet string) string {
	return strings.ToLower(strings.Map(func(r rune) rune {
		if r < 0x80 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_') {
			return r
		}
		return '_'
	}, sheet))
}
