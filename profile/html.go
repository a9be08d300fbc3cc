package profile

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"strings"

	"github.com/migrate-tool/migrate/internal/atomicfile"
	"github.com/migrate-tool/migrate/internal/diag"
	"github.com/migrate-tool/migrate/report"
)

//go:embed profile.html.tmpl
var pageTemplate string

// page is html/template's: every value from a file or a server is escaped
// where it is written (text, attribute), nothing is trusted.
var page = template.Must(template.New("profile").Parse(pageTemplate))

// PageInfo is the page's heading.
type PageInfo struct {
	Title    string // the plan or file profiled
	Target   string // the target read, "" for none
	Metadata string // where the field lengths came from, "" for none
	// Unchecked is what the profile of a plan did not look at for want
	// of a target or of metadata (Unchecked), none when it looked at all.
	Unchecked   []string
	ToolVersion string
}

// Unchecked says what a plan's profile leaves unchecked without a target
// (target false) or without metadata (metadata false), a sentence each:
// its count of what would make a load fail holds only as far as it looked.
func Unchecked(target, metadata bool) []string {
	var out []string
	if !target {
		out = append(out, "no target was read: a value the load needs the target to hold was not looked up there (one the sources lack counts as failing, though the target may hold it, and one no step loads is not checked); --target or --sandbox reads it")
	}
	if !metadata {
		out = append(out, "no metadata: the fields' lengths, types and keys were not checked (--metadata, target.metadata or --target)")
	}
	return out
}

type pageData struct {
	PageInfo
	Host, Company string // the target without its scheme: the page holds no URL
	Blocking      int
	Style         template.HTML
	Sources       []pageSource
	Findings      int
	Rows          int
	Cells         int
}

type pageSource struct {
	Source
	Columns []pageColumn
}

type pageColumn struct {
	Column
	Items []Item
}

// Item is one finding of a column as a line a person reads, with its cells.
type Item struct {
	What  string
	Class string // "bad" or "warn": how the page marks it
	Cells []string
	More  int
}

// Items are a column's findings, in the order the human output and the
// page show them.
func (c *Column) Items() []Item {
	var out []Item
	add := func(class, what string, f Finding) {
		if f.Count > 0 {
			out = append(out, Item{What: what, Class: class, Cells: f.Cells, More: f.More()})
		}
	}
	add("bad", fmt.Sprintf("longer than MaxLength %d (%s)", c.MaxAllowed, diag.Count(c.TooLong.Count, "value", "values")), c.TooLong)
	for _, u := range c.Fields {
		if u.Mandatory {
			when := ""
			if u.When != "" {
				when = fmt.Sprintf(", unless when: %s skips the row", u.When)
			}
			add("bad", fmt.Sprintf("blank, where %s is mandatory: the server refuses the record (%s%s)", u.Label(), diag.Count(c.BlankMandatory.Count, "row", "rows"), when), c.BlankMandatory)
			break
		}
	}
	add("bad", fmt.Sprintf("text in a number column (%s)", diag.Count(c.TextInNumbers.Count, "value", "values")), c.TextInNumbers)
	add("warn", fmt.Sprintf("numbers stored as text (%s)", diag.Count(c.NumbersAsText.Count, "value", "values")), c.NumbersAsText)
	add("warn", fmt.Sprintf("leading or trailing spaces (%s)", diag.Count(c.Spaces.Count, "value", "values")), c.Spaces)
	if len(c.DateLayouts) > 1 {
		for _, l := range c.DateLayouts {
			add("warn", fmt.Sprintf("date layout %s (%s)", l.Layout, diag.Count(l.Count, "value", "values")), l.Finding)
		}
	}
	unless := ""
	for _, u := range c.Fields {
		if u.Key && u.When != "" {
			unless = fmt.Sprintf(" (unless step %s's when: %s skips some)", u.Step, u.When)
			break
		}
	}
	for _, g := range c.Duplicates {
		add("bad", fmt.Sprintf("key %q given %s%s", g.Value, times(g.Count), unless), g.Finding)
	}
	for _, g := range c.CaseDuplicates {
		if c.CaseCollides() {
			add("bad", fmt.Sprintf("keys that differ only in case, one key once the plan's expression folds case: %s%s", quoteAll(g.Values), unless), g.Finding)
		} else {
			add("warn", fmt.Sprintf("keys that differ only in case, two records as the plan writes them (the same one twice?): %s%s", quoteAll(g.Values), unless), g.Finding)
		}
	}
	for _, m := range c.Missing {
		what := fmt.Sprintf("%q not in %s (%s), %s", m.Value, m.In, m.Why, times(m.Count))
		if m.Near != "" {
			what += "; differs only in case or spaces from " + m.Near
		}
		add("bad", what, m.Finding)
	}
	return out
}

func times(n int) string {
	switch n {
	case 1:
		return "once"
	case 2:
		return "twice"
	}
	return fmt.Sprintf("%d times", n)
}

// Blocking counts the findings of a column that would make a load fail:
// values too long, blanks of a mandatory field, text in a number column,
// keys twice (in another case too, where an expression makes them one:
// CaseCollides), references missing. Spaces, date layouts, numbers stored
// as text and keys in two cases written as they are are for a person to
// judge.
func (c *Column) Blocking() int {
	n := len(c.Duplicates) + len(c.Missing)
	if c.CaseCollides() {
		n += len(c.CaseDuplicates)
	}
	for _, f := range []Finding{c.TooLong, c.BlankMandatory, c.TextInNumbers} {
		if f.Count > 0 {
			n++
		}
	}
	return n
}

// Blocking counts the findings that would make a load fail.
func (r *Result) Blocking() int {
	n := 0
	for _, s := range r.Sources {
		for i := range s.Columns {
			n += s.Columns[i].Blocking()
		}
	}
	return n
}

// Findings counts the findings of a column.
func (c *Column) Findings() int { return len(c.Items()) }

func quoteAll(vs []string) string {
	q := make([]string, len(vs))
	for i, v := range vs {
		q[i] = fmt.Sprintf("%q", v)
	}
	return strings.Join(q, ", ")
}

// WriteHTML writes the profile as one self-contained page, styled as the
// run report.
func WriteHTML(w io.Writer, r *Result, info PageInfo) error {
	ri := report.ReportInfo{Target: info.Target}
	d := pageData{PageInfo: info, Host: ri.Host(), Company: ri.Company(), Blocking: r.Blocking(), Style: report.PageStyle(), Cells: r.Cells}
	for _, s := range r.Sources {
		ps := pageSource{Source: s}
		d.Rows += s.Rows
		for _, c := range s.Columns {
			pc := pageColumn{Column: c, Items: c.Items()}
			d.Findings += len(pc.Items)
			ps.Columns = append(ps.Columns, pc)
		}
		d.Sources = append(d.Sources, ps)
	}
	return page.Execute(w, d)
}

// WriteHTMLFile writes the page to path, replacing it whole (it holds the
// customer's values: mode 0600, as the run report).
func WriteHTMLFile(path string, r *Result, info PageInfo) error {
	return atomicfile.Write(path, 0o600, func(w io.Writer) error { return WriteHTML(w, r, info) })
}
