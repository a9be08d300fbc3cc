package cli

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/migrate-tool/migrate/executor"
	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/plan"
)

// initTestRows is how many of the source's first rows the first test
// gives.
const initTestRows = 2

// writeInitTests writes the first test of the plan init wrote at
// planPath (so that a consultant starts from a passing test): its step given the source's first rows, expecting
// the records and row errors they give now, so it passes as written and
// fails once the plan builds something else. A plan that cannot be
// compiled yet (a mandatory field left as a TODO) gets the given rows
// alone. It refuses to overwrite a tests file.
func (a *app) writeInitTests(ctx context.Context, planPath string, src *plan.Source, md *odata.Metadata) (string, error) {
	return a.writeFirstTest(ctx, planPath, filepath.Base(src.File), md, func(p *plan.Plan) ([]*plan.Given, error) {
		header, rows, err := executor.FirstRows(src, initTestRows)
		if err != nil {
			return nil, err
		}
		return []*plan.Given{givenRows(p.Steps[0].Source, header, rows, nil)}, nil
	})
}

// givenRows is the rows of source as a test gives them: each row's cells
// that hold a value, by column; keep, when not nil, says which rows.
func givenRows(source string, header []string, rows [][]string, keep func(row []string) bool) *plan.Given {
	g := &plan.Given{Source: source}
	for _, r := range rows {
		if keep != nil && !keep(r) {
			continue
		}
		gr := &plan.GivenRow{}
		for i, v := range r {
			if v != "" && i < len(header) {
				gr.Cells = append(gr.Cells, plan.GivenCell{Column: header[i], Value: v})
			}
		}
		g.Rows = append(g.Rows, gr)
	}
	return g
}

// writeFirstTest writes the first test of the plan at planPath, its first
// step given the rows given says (of file), expecting what they give now.
func (a *app) writeFirstTest(ctx context.Context, planPath, file string, md *odata.Metadata, given func(p *plan.Plan) ([]*plan.Given, error)) (string, error) {
	path := plan.TestsFile(planPath)
	p, _ := plan.Load(planPath) // what this run wrote, read back
	if p.Hash == "" || len(p.Steps) == 0 {
		return "", withCode(ExitUsage, fmt.Errorf("%s cannot be read back", planPath))
	}
	step := p.Steps[0]
	givens, err := given(p)
	if err != nil {
		return "", withCode(ExitUsage, err)
	}
	t := &plan.Test{Name: "the first rows of " + file, Step: step.Name, Given: givens}
	want, diags, err := executor.BuildTest(ctx, executor.Setup{Plan: p, Metadata: md, Version: newest, Getenv: a.getenv}, t)
	if err != nil {
		return "", err
	}
	d := &plan.TestsDraft{
		Note: fmt.Sprintf("The first test of %s, written by `migrate init`: the records the first rows of\n%s give now. Make each expectation what the load must give, add tests, and run\nmigrate test %s",
			filepath.Base(planPath), file, filepath.Base(planPath)),
		Tests: []*plan.Test{t},
		Todo:  "expect: the plan has problems now (migrate validate); once it has none, write\nthe records these rows must give here.",
	}
	if !diags.HasErrors() {
		t.Expect, t.ExpectSet, t.Errors = want.Records, true, want.Errors
	}
	return path, writeNew(path, d.Marshal())
}
