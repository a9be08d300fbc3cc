package plan

import (
	"bytes"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// TestsDraft is a tests file for a person to finish (migrate init writes
// one beside its plan): Note above the tests, and in a test that expects
// nothing yet (ExpectSet false), Todo where its expect: goes.
type TestsDraft struct {
	Note  string
	Tests []*Test
	Todo  string
}

// Marshal writes d as the tests file's YAML: a test's given rows and its
// expected records and lines as flow mappings, text double-quoted, numbers
// and booleans bare, a blank value as ~.
func (d *TestsDraft) Marshal() []byte {
	var b bytes.Buffer
	writeNote(&b, "", d.Note)
	for _, t := range d.Tests {
		fmt.Fprintf(&b, "- name: %s\n  step: %s\n  given:\n", yamlText(t.Name), t.Step)
		for _, g := range t.Given {
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
		if !t.ExpectSet {
			writeNote(&b, "  ", d.Todo)
			continue
		}
		writeExpect(&b, t)
	}
	return b.Bytes()
}

// writeExpect writes t's expect: and errors:.
func writeExpect(b *bytes.Buffer, t *Test) {
	b.WriteString("  expect:\n")
	if len(t.Expect) == 0 {
		b.WriteString("    []\n")
	}
	for _, r := range t.Expect {
		fmt.Fprintf(b, "    - fields: {%s}\n", yamlFields(r.Fields))
		for _, ls := range r.Lines {
			fmt.Fprintf(b, "      %s:\n", yamlKey(ls.Nav))
			for _, l := range ls.Lines {
				fmt.Fprintf(b, "        - %s\n", yamlLine(l))
			}
		}
	}
	if len(t.Errors) > 0 {
		b.WriteString("  errors:\n")
	}
	for _, e := range t.Errors {
		field := ""
		if e.Field != "" {
			field = ", field: " + yamlKey(e.Field)
		}
		fmt.Fprintf(b, "    - {row: %d%s, message: %s}\n", e.Row, field, yamlText(e.Message))
	}
}

// yamlLine is a sub-form line as a flow mapping: its fields, then its own
// sub-forms' lines.
func yamlLine(l *ExpectRecord) string {
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

// yamlFields are expected fields as the inside of a flow mapping.
func yamlFields(fields []*ExpectField) string {
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
	case Number:
		return string(x)
	}
	return yamlText(fmt.Sprint(v))
}

// yamlText is text as a YAML double-quoted scalar, which Go's quoting
// writes (YAML's escapes include Go's).
func yamlText(s string) string { return strconv.Quote(s) }

var bareKey = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// yamlKey is a key bare where YAML reads it back as the same text, else
// quoted.
func yamlKey(s string) string {
	if bareKey.MatchString(s) && !slices.Contains([]string{"y", "Y", "n", "N", "yes", "no", "on", "off", "true", "false", "null"}, strings.ToLower(s)) {
		return s
	}
	return yamlText(s)
}
