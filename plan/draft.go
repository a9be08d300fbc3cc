package plan

import (
	"bytes"
	"fmt"
	"strings"
)

// Draft is a plan for a person to finish (migrate init writes one): the
// keys of a plan that a first mapping fills in, in the order they are
// written, with notes (YAML comments) where the person has to look.
// Marshal writes it; Load reads it back as any plan.
type Draft struct {
	// Note is the comment above the plan, one line a line of text.
	Note    string
	Name    string
	Dialect string // target.dialect; "" writes no target
	Sources []*Source
	Steps   []*DraftStep
}

// DraftStep is a step, or a sub-form of one (Name its navigation, Entity
// ""), as a Draft writes it.
type DraftStep struct {
	Name, Entity, Source string
	When                 string // the expression of when:; "" none
	Link                 *DraftLink
	Fields               []DraftField
	Subforms             []*DraftStep
	// Notes are comments after the step's fields and sub-forms.
	Notes []string
}

// DraftLink is a sub-form's link: by the expressions of parent: and child:.
type DraftLink struct{ Parent, Child string }

// DraftField is a field and its expression, or with Expr "" a note alone
// (a comment among the fields: a column not loaded, a field to map).
type DraftField struct {
	Name, Expr string
	Note       string
}

// Marshal writes d as YAML: the plan format's keys, two spaces a level, a
// blank line between the plan's sections.
func (d *Draft) Marshal() []byte {
	var b bytes.Buffer
	writeNote(&b, "", d.Note)
	fmt.Fprintf(&b, "version: 1\nname: %s\n\n", scalar(d.Name))
	if d.Dialect != "" {
		fmt.Fprintf(&b, "target:\n  dialect: %s\n\n", scalar(d.Dialect))
	}
	b.WriteString("sources:\n")
	for _, s := range d.Sources {
		fmt.Fprintf(&b, "  %s:\n    file: %s\n", scalar(s.Name), scalar(s.File))
		if s.Delimiter != "" && s.Delimiter != "," {
			fmt.Fprintf(&b, "    delimiter: %s\n", scalar(s.Delimiter))
		}
		if s.Encoding != "" {
			fmt.Fprintf(&b, "    encoding: %s\n", scalar(s.Encoding))
		}
		if s.Sheet != "" {
			fmt.Fprintf(&b, "    sheet: %s\n", scalar(s.Sheet))
		}
		if s.HeaderRow > 1 {
			fmt.Fprintf(&b, "    header_row: %d\n", s.HeaderRow)
		}
		if s.LazyQuotes {
			b.WriteString("    lazy_quotes: true\n")
		}
	}
	b.WriteString("\nsteps:\n")
	for _, st := range d.Steps {
		st.write(&b, "  ")
	}
	return b.Bytes()
}

// write writes st as an item of a list whose dash is at indent.
func (st *DraftStep) write(b *bytes.Buffer, indent string) {
	in := indent + "  " // the step's keys
	fmt.Fprintf(b, "%s- name: %s\n", indent, scalar(st.Name))
	if st.Entity != "" {
		fmt.Fprintf(b, "%sentity: %s\n", in, scalar(st.Entity))
	}
	if st.Source != "" {
		fmt.Fprintf(b, "%ssource: %s\n", in, scalar(st.Source))
	}
	if st.When != "" {
		fmt.Fprintf(b, "%swhen: %s\n", in, scalar(st.When))
	}
	if l := st.Link; l != nil {
		fmt.Fprintf(b, "%slink:\n%s  parent: %s\n%s  child: %s\n", in, in, scalar(l.Parent), in, scalar(l.Child))
	}
	fmt.Fprintf(b, "%sfields:\n", in)
	for _, f := range st.Fields {
		if f.Expr == "" {
			writeNote(b, in+"  ", f.Note)
			continue
		}
		fmt.Fprintf(b, "%s  %s: %s\n", in, scalar(f.Name), scalar(f.Expr))
	}
	if len(st.Subforms) > 0 {
		fmt.Fprintf(b, "%ssubforms:\n", in)
		for _, c := range st.Subforms {
			c.write(b, in+"  ")
		}
	}
	for _, n := range st.Notes {
		writeNote(b, in, n)
	}
}

// writeNote writes text as comment lines at indent.
func writeNote(b *bytes.Buffer, indent, text string) {
	if text == "" {
		return
	}
	for line := range strings.SplitSeq(text, "\n") {
		fmt.Fprintf(b, "%s# %s\n", indent, line)
	}
}

// scalar is s as a YAML scalar that reads back as s: bare where it can be,
// else single-quoted.
func scalar(s string) string {
	if s == "" || strings.ContainsAny(s, ":#'\"[]{},&*!|>%@`\t") || strings.TrimSpace(s) != s {
		return "'" + strings.ReplaceAll(s, "'", "''") + "'"
	}
	return s
}
