package diag

import (
	"strconv"
	"strings"
)

// Severity says whether a problem stops the run (Error, the zero value)
// or only deserves a look (Warning).
type Severity uint8

const (
	Error Severity = iota
	Warning
)

func (s Severity) String() string {
	if s == Warning {
		return "warning"
	}
	return "error"
}

// Pos is a place in a file: Line and Column from 1, the column counted in
// characters. A zero Line is the file as a whole; a zero Column, the
// whole line (a CSV row) or the whole row (a workbook's).
type Pos struct {
	Line, Column int
}

// Range is what a problem is about: a span of the plan file, or a source
// row or cell. End is the last character of the span (inclusive), never
// past the end of its line; a point has End equal to Start.
type Range struct {
	File string
	// Sheet is a workbook's sheet: Start is then a row (Column 0) or a
	// cell (Column 3 is C).
	Sheet      string
	Start, End Pos
}

// IsZero reports whether the range names no file.
func (r Range) IsZero() bool { return r == Range{} }

// String is the place as editors and CI parse it: plan.yaml:12:5,
// parts.csv:42, orders.xlsx!Lines!D17, orders.xlsx!Lines!17, plan.yaml.
func (r Range) String() string {
	s := r.File
	if r.Sheet != "" {
		s += "!" + r.Sheet
		switch {
		case r.Start.Line > 0 && r.Start.Column > 0:
			s += "!" + columnName(r.Start.Column) + strconv.Itoa(r.Start.Line)
		case r.Start.Line > 0:
			s += "!" + strconv.Itoa(r.Start.Line)
		}
		return s
	}
	if r.Start.Line > 0 {
		s += ":" + strconv.Itoa(r.Start.Line)
		if r.Start.Column > 0 {
			s += ":" + strconv.Itoa(r.Start.Column)
		}
	}
	return s
}

// Point is the range of one place: start and end the same.
func Point(file string, line, column int) Range {
	p := Pos{Line: line, Column: column}
	return Range{File: file, Start: p, End: p}
}

// ParseRange reads a place as String writes it back into a range (a point).
// A text it cannot read exactly (a file name that itself ends like a
// place) is the range of that whole text as a file, so that String gives
// back the same text whatever it was: the journal keeps places as text.
func ParseRange(s string) Range {
	if s == "" {
		return Range{}
	}
	r := parseRange(s)
	if r.String() != s {
		return Range{File: s}
	}
	return r
}

func parseRange(s string) Range {
	if i := strings.Index(s, "!"); i >= 0 {
		r := Range{File: s[:i], Sheet: s[i+1:]}
		if j := strings.LastIndex(r.Sheet, "!"); j >= 0 {
			if col, line, ok := cellRef(r.Sheet[j+1:]); ok {
				r.Sheet = r.Sheet[:j]
				r.Start = Pos{Line: line, Column: col}
			}
		}
		r.End = r.Start
		return r
	}
	r := Range{File: s}
	var nums []int
	for len(nums) < 2 {
		j := strings.LastIndex(r.File, ":")
		n, err := strconv.Atoi(r.File[j+1:])
		if j < 0 || err != nil || n <= 0 {
			break
		}
		nums = append(nums, n)
		r.File = r.File[:j]
	}
	switch len(nums) {
	case 1:
		r.Start = Pos{Line: nums[0]}
	case 2:
		r.Start = Pos{Line: nums[1], Column: nums[0]}
	}
	r.End = r.Start
	return r
}

// cellRef reads "C17" as column 3 (from 1) and row 17, or "17" as a row.
func cellRef(ref string) (col, row int, ok bool) {
	i := 0
	for i < len(ref) && ref[i] >= 'A' && ref[i] <= 'Z' {
		col = col*26 + int(ref[i]-'A'+1)
		i++
	}
	row, err := strconv.Atoi(ref[i:])
	if err != nil || row <= 0 || i > 3 {
		return 0, 0, false
	}
	return col, row, true
}

// columnName is a workbook's column letters: 1 → A, 27 → AA.
func columnName(col int) string {
	var b [8]byte
	i := len(b)
	for n := col; n > 0; n = (n - 1) / 26 {
		i--
		b[i] = byte('A' + (n-1)%26)
	}
	return string(b[i:])
}

// Diagnostic is one problem.
type Diagnostic struct {
	Severity Severity
	// Summary says what is wrong, in one line.
	Summary string
	// Detail says what to do, or more about it; "" when the summary says
	// it all.
	Detail string
	// Subject is what the problem is about: the plan's YAML node, or the
	// source cell or row.
	Subject Range

	// A problem with a row of data says which step read it, the record
	// (when known), the target field and the value it is about.
	Step, Record, Field, Value string
	// Context is where the plan writes that field (or the when, id,
	// group_by or link expression); zero for a plan problem and for a
	// problem of the source itself.
	Context Range
}

// New makes a diagnostic of a message written as "what is wrong; what to
// do" (the form every message of the tool takes): the text before the
// first "; " outside quotes is the summary, the rest the detail.
func New(sev Severity, subject Range, message string) Diagnostic {
	summary, detail := split(message)
	return Diagnostic{Severity: sev, Summary: summary, Detail: detail, Subject: subject}
}

// split cuts a message at its first "; " outside double quotes.
func split(msg string) (summary, detail string) {
	quoted := false
	for i := 0; i < len(msg); i++ {
		switch msg[i] {
		case '\\':
			if quoted {
				i++
			}
		case '"':
			quoted = !quoted
		case ';':
			if !quoted && i+1 < len(msg) && msg[i+1] == ' ' {
				return msg[:i], msg[i+2:]
			}
		}
	}
	return msg, ""
}

// Message is the summary and the detail as one sentence.
func (d Diagnostic) Message() string {
	if d.Detail == "" {
		return d.Summary
	}
	return d.Summary + "; " + d.Detail
}

// String is the diagnostic as a line of text: "plan.yaml:12:5: warning:
// message" for the plan, "orders.xlsx!Lines!D17 (plan.yaml:31:9 PRICE):
// message" for a row, "warning: message" for one about no place. It is
// for a terminal: what came from a server or a data file is made
// Printable.
func (d Diagnostic) String() string {
	s := d.Subject.String() + Note(d.Context, d.Field)
	if s != "" {
		s += ": "
	}
	if d.Severity == Warning {
		s += "warning: "
	}
	return Printable(s + d.Message())
}

// Note is what follows a row problem's cell: " (plan.yaml:31:9 PRICE)",
// " (plan.yaml:12:11)" without a field, ": PRICE" without a plan place.
func Note(plan Range, field string) string {
	switch {
	case !plan.IsZero() && field != "":
		return " (" + plan.String() + " " + field + ")"
	case !plan.IsZero():
		return " (" + plan.String() + ")"
	case field != "":
		return ": " + field
	}
	return ""
}
