package cli

import (
	"bytes"
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
	var b bytes.Buffer
	sources := writeIntakePlan(&b, l, filepath.ToSlash(rel))
	if out == "" {
		_, err := a.stdout.Write(b.Bytes())
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
	if err := writeNew(out, b.Bytes()); err != nil {
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

// writeIntakePlan writes the plan of layout l, whose workbook is file
// (relative to the plan).
// It returns the plan's source of each sheet.
func writeIntakePlan(b *bytes.Buffer, l *intake.Layout, file string) map[string]string {
	step := strings.ToLower(l.Entity)
	fmt.Fprintf(b, "# A plan written by `migrate init` for the intake workbook %s (migrate\n# template): check it, then run migrate validate on it.\nversion: 1\nname: %s\n\nsources:\n", file, step)
	sources := map[string]string{} // sheet -> source name
	used := map[string]bool{}
	for _, sheet := range l.Sheets() {
		name := sourceName(sheet)
		for n := 2; used[name]; n++ {
			name = sourceName(sheet) + "_" + strconv.Itoa(n)
		}
		used[name] = true
		sources[sheet] = name
		fmt.Fprintf(b, "  %s:\n    file: %s\n    sheet: %s\n    header_row: %d\n", name, yamlQuote(file), yamlQuote(sheet), intake.HeaderRow)
	}
	top := l.Levels[0]
	fmt.Fprintf(b, "\nsteps:\n  - name: %s\n    entity: %s\n    source: %s\n", step, l.Entity, sources[top.Sheet])
	writeIntakeLevel(b, l, top, sources, "    ")
	for _, sheet := range l.Sheets() {
		if cols := l.Other[sheet]; len(cols) > 0 {
			fmt.Fprintf(b, "    # columns of sheet %s with no field of its levels: %s\n", sheet, strings.Join(quoteAll(cols), ", "))
		}
	}
	return sources
}

// writeIntakeLevel writes lv's fields and its sub-forms at indent.
func writeIntakeLevel(b *bytes.Buffer, l *intake.Layout, lv *intake.Level, sources map[string]string, indent string) {
	fmt.Fprintf(b, "%sfields:\n", indent)
	given := map[string]bool{}
	for _, c := range lv.Columns {
		p := c.Field
		if p == nil {
			continue
		}
		given[p.Name] = true
		if msg := intakeRefusal(p.Computed, p.ReadOnly); msg != "" {
			fmt.Fprintf(b, "%s  # %s %s; column %q is not loaded\n", indent, p.Name, msg, c.Name)
			continue
		}
		fmt.Fprintf(b, "%s  %s: %s\n", indent, p.Name, rowRef(c.Name))
	}
	for _, p := range lv.Type.Properties {
		if p.Mandatory && p.Writable() && !given[p.Name] {
			fmt.Fprintf(b, "%s  # TODO %s is mandatory (%s) and the workbook has no column %s%s: map it\n", indent, p.Name, p.Type, lv.Prefix, p.Name)
		}
	}
	children := l.Children(lv)
	if len(children) == 0 {
		return
	}
	fmt.Fprintf(b, "%ssubforms:\n", indent)
	for _, c := range children {
		fmt.Fprintf(b, "%s  - name: %s\n", indent, c.Name())
		inner := indent + "    "
		if c.Single() {
			// A row that leaves the sub-form's columns blank has none.
			var given []string
			for _, col := range c.Columns {
				if col.Field != nil && col.Field.Writable() {
					given = append(given, rowExpr(col.Name)+` != ""`)
				}
			}
			if len(given) > 0 {
				fmt.Fprintf(b, "%swhen: %s\n", inner, yamlQuote(strings.Join(given, " || ")))
			}
		} else {
			fmt.Fprintf(b, "%ssource: %s\n%slink:\n%s  parent: %s\n%s  child: %s\n", inner, sources[c.Sheet], inner, inner, rowRef(c.Link), inner, rowRef(c.Link))
		}
		writeIntakeLevel(b, l, c, sources, inner)
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
