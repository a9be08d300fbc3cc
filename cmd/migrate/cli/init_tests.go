package cli

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

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
	p, _ := plan.Load(planPath)
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
	var b bytes.Buffer
	fmt.Fprintf(&b, "# The first test of %s, written by `migrate init`: the records the first rows of\n# %s give now. Make each expectation what the load must give, add tests, and run\n# migrate test %s\n",
		filepath.Base(planPath), file, filepath.Base(planPath))
	fmt.Fprintf(&b, "- name: %s\n  step: %s\n  given:\n", yamlText(t.Name), step.Name)
	for _, g := range givens {
		if len(g.Rows) == 0 {
			fmt.Fprintf(&b, "    %s: []\n", yamlKey(g.Source))
			continue
		}
		fmt.Fprintf(&b, "    %s:\n", yamlKey(g.Source))
		for _, r := range g.Rows {
			cells := make([]string, len(r.Cells))
			for i, c := range r.Cells {
				cells[i] = yamlKey(c.Column) + ": " + yamlText(c.Value)
			}
			fmt.Fprintf(&b, "      - {%s}\n", strings.Join(cells, ", "))
		}
	}
	if diags.HasErrors() {
		b.WriteString("  # expect: the plan has problems now (migrate validate); once it has none, write\n  # the records these rows must give here.\n")
	} else {
		writeInitExpect(&b, want)
	}
	return path, writeNew(path, b.Bytes())
}

func writeInitExpect(b *bytes.Buffer, want executor.Expected) {
	b.WriteString("  expect:\n")
	if len(want.Records) == 0 {
		b.WriteString("    []\n")
	}
	for _, r := range want.Records {
		fmt.Fprintf(b, "    - fields: {%s}\n", yamlFields(r.Fields))
		for _, ls := range r.Lines {
			fmt.Fprintf(b, "      %s:\n", yamlKey(ls.Nav))
			for _, l := range ls.Lines {
				fmt.Fprintf(b, "        - %s\n", yamlLine(l))
			}
		}
	}
	if len(want.Errors) > 0 {
		b.WriteString("  errors:\n")
	}
	for _, e := range want.Errors {
		field := ""
		if e.Field != "" {
			field = ", field: " + yamlKey(e.Field)
		}
		fmt.Fprintf(b, "    - {row: %d%s, message: %s}\n", e.Row, field, yamlText(e.Message))
	}
}

// yamlLine is a sub-form line as a flow mapping: its fields, then its own
// sub-forms' lines.
func yamlLine(l *plan.ExpectRecord) string {
	parts := []string{}
	if f := yamlFields(l.Fields); f != "" {
		parts = append(parts, f)
	}
	for _, ls := range l.Lines {
		lines := make([]string, len(ls.Lines))
		for i, k := range ls.Lines {
			lines[i] = yamlLine(k)
		}
		parts = append(parts, yamlKey(ls.Nav)+": ["+strings.Join(lines, ", ")+"]")
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

func yamlFields(fields []*plan.ExpectField) string {
	parts := make([]string, len(fields))
	for i, f := range fields {
		parts[i] = yamlKey(f.Name) + ": " + yamlValue(f.Value)
	}
	return strings.Join(parts, ", ")
}

// yamlValue writes an expected value: text quoted, numbers and booleans
// bare, none as ~.
func yamlValue(v any) string {
	switch x := v.(type) {
	case nil:
		return "~"
	case string:
		return yamlText(x)
	case bool:
		return strconv.FormatBool(x)
	case plan.Number:
		return string(x)
	}
	return yamlText(fmt.Sprint(v))
}

// yamlText is text as a YAML double-quoted scalar, which Go's quoting
// writes (YAML's escapes include Go's).
func yamlText(s string) string { return strconv.Quote(s) }

var bareKey = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func yamlKey(s string) string {
	if bareKey.MatchString(s) && !slices.Contains([]string{"y", "Y", "n", "N", "yes", "no", "on", "off", "true", "false", "null"}, strings.ToLower(s)) {
		return s
	}
	return yamlText(s)
}
