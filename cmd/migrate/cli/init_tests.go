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
	"time"

	"github.com/migrate-tool/migrate/executor"
	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/plan"
	"github.com/migrate-tool/migrate/transform"
)

// initTestRows is how many of the source's first rows the first test
// gives.
const initTestRows = 2

// writeInitTests writes the first test of the plan init wrote at
// planPath (issue 27): its step given the source's first rows, expecting
// the records and row errors they give now, so it passes as written and
// fails once the plan builds something else. A plan that cannot be
// compiled yet (a mandatory field left as a TODO) gets the given rows
// alone. It refuses to overwrite a tests file.
func (a *app) writeInitTests(ctx context.Context, planPath string, src *plan.Source, md *odata.Metadata) (string, error) {
	path := plan.TestsFile(planPath)
	p, _ := plan.Load(planPath)
	if p.Hash == "" || len(p.Steps) == 0 {
		return "", withCode(ExitUsage, fmt.Errorf("%s cannot be read back", planPath))
	}
	step := p.Steps[0]
	header, rows, err := executor.FirstRows(src, initTestRows)
	if err != nil {
		return "", withCode(ExitUsage, err)
	}
	g := &plan.Given{Source: step.Source}
	for _, r := range rows {
		gr := &plan.GivenRow{}
		for i, v := range r {
			if v != "" && i < len(header) {
				gr.Cells = append(gr.Cells, plan.GivenCell{Column: header[i], Value: v})
			}
		}
		g.Rows = append(g.Rows, gr)
	}
	t := &plan.Test{Name: "the first rows of " + filepath.Base(src.File), Step: step.Name, Given: []*plan.Given{g}}
	built, diags, err := executor.BuildTest(ctx, executor.Setup{Plan: p, Metadata: md, Version: newest, Getenv: a.getenv}, t)
	if err != nil {
		return "", err
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "# The first test of %s, written by `migrate init`: the records the first rows of\n# %s give now. Make each expectation what the load must give, add tests, and run\n# migrate test %s\n",
		filepath.Base(planPath), filepath.Base(src.File), filepath.Base(planPath))
	fmt.Fprintf(&b, "- name: %s\n  step: %s\n  given:\n    %s:\n", yamlText(t.Name), step.Name, yamlKey(g.Source))
	for _, r := range g.Rows {
		cells := make([]string, len(r.Cells))
		for i, c := range r.Cells {
			cells[i] = yamlKey(c.Column) + ": " + yamlText(c.Value)
		}
		fmt.Fprintf(&b, "      - {%s}\n", strings.Join(cells, ", "))
	}
	if diags.HasErrors() {
		b.WriteString("  # expect: the plan has problems now (migrate validate); once it has none, write\n  # the records these rows must give here.\n")
	} else {
		writeInitExpect(&b, built)
	}
	return path, writeNew(path, b.Bytes())
}

func writeInitExpect(b *bytes.Buffer, built executor.TestBuilt) {
	b.WriteString("  expect:\n")
	if len(built.Records) == 0 {
		b.WriteString("    []\n")
	}
	for _, r := range built.Records {
		fmt.Fprintf(b, "    - fields: {%s}\n", yamlFields(r.Fields, r.Order))
		for _, nav := range navsOf(r.Children) {
			fmt.Fprintf(b, "      %s:\n", yamlKey(nav))
			for _, c := range r.Children {
				if c.Nav == nav {
					fmt.Fprintf(b, "        - %s\n", yamlLine(c))
				}
			}
		}
	}
	if len(built.Errors) > 0 {
		b.WriteString("  errors:\n")
	}
	for _, e := range built.Errors {
		field := ""
		if e.Field != "" {
			field = ", field: " + yamlKey(e.Field)
		}
		fmt.Fprintf(b, "    - {row: %d%s, message: %s}\n", e.Loc.Line, field, yamlText(e.Message))
	}
}

// yamlLine is a sub-form line as a flow mapping: its fields, then its own
// sub-forms' lines.
func yamlLine(c *transform.Child) string {
	parts := []string{}
	if f := yamlFields(c.Fields, c.Order); f != "" {
		parts = append(parts, f)
	}
	for _, nav := range navsOf(c.Children) {
		var lines []string
		for _, k := range c.Children {
			if k.Nav == nav {
				lines = append(lines, yamlLine(k))
			}
		}
		parts = append(parts, yamlKey(nav)+": ["+strings.Join(lines, ", ")+"]")
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// navsOf lists the sub-forms of children, in order of appearance.
func navsOf(children []*transform.Child) []string {
	var out []string
	for _, c := range children {
		if !slices.Contains(out, c.Nav) {
			out = append(out, c.Nav)
		}
	}
	return out
}

func yamlFields(fields map[string]any, order []string) string {
	parts := make([]string, 0, len(order))
	for _, name := range order {
		if v, ok := fields[name]; ok {
			parts = append(parts, yamlKey(name)+": "+yamlValue(v))
		}
	}
	return strings.Join(parts, ", ")
}

// yamlValue writes a field's value as a test expects it: text quoted,
// numbers and booleans bare, a date and time as OData writes it, quoted.
func yamlValue(v any) string {
	switch x := v.(type) {
	case nil:
		return "~"
	case string:
		return yamlText(x)
	case bool:
		return strconv.FormatBool(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case odata.Decimal:
		return x.String()
	case time.Time:
		return yamlText(odata.FormatDateTime(x))
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
