package executor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/migrate-tool/migrate/compare"
	"github.com/migrate-tool/migrate/internal/diag"
	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/plan"
	"github.com/migrate-tool/migrate/source"
	"github.com/migrate-tool/migrate/transform"
)

// TestResult is the outcome of one plan test: it passed when
// Failures is empty.
type TestResult struct {
	Test     *plan.Test
	Failures []TestFailure
	// Notes say what may explain a failure: a lookup that could not be
	// built from the given rows.
	Notes []string
}

// Passed reports whether the test met every expectation.
func (r TestResult) Passed() bool { return len(r.Failures) == 0 }

// TestTally counts the tests of rs that passed and failed: the figures
// every view of migrate test shows and its exit code follows.
func TestTally(rs []TestResult) (passed, failed int) {
	for _, r := range rs {
		if r.Passed() {
			passed++
		} else {
			failed++
		}
	}
	return passed, failed
}

// TestFailure is one way a test's expectation was not met. For a field,
// Field, Expected and Got are set and Plan is where the plan writes the
// field; otherwise Message says what happened.
type TestFailure struct {
	Where    string   // "record 1", "record 1, ORDERITEMS_SUBFORM line 2"
	At       plan.Pos // the expectation in the test, else the test
	Field    string
	Expected string
	Got      string
	Plan     string // where the plan writes Field: plan.yaml:31:9 ("": nowhere)
	Message  string
}

// errNotGiven: a test gives no rows to a lookup that reads the target.
var errNotGiven = errors.New("not given")

// givenPrefix begins the file name of a test's given source in locations:
// given:orders:2 is the second row given to orders.
const givenPrefix = "given:"

// RunTests compiles the plan against the metadata and runs each test:
// the step's real program over the test's given rows, offline. The
// diagnostics are the plan's problems (s.Diagnostics, compiling, the
// metadata's checks and the tests' own); with an error among them no test
// is run.
func RunTests(ctx context.Context, s Setup, tests []*plan.Test) ([]TestResult, plan.Diagnostics) {
	tp, diags := compileTests(s)
	if tp == nil {
		return nil, diags
	}
	out := make([]TestResult, 0, len(tests))
	for _, t := range tests {
		out = append(out, tp.run(ctx, t))
	}
	return out, diags
}

// Expected is what a test's step builds from its given rows, written as
// a test expects it: records (fields in the plan's order, each sub-form's
// lines) and row errors (row, field, the whole message).
type Expected struct {
	Records []*plan.ExpectRecord
	Errors  []*plan.ExpectError
}

// BuildTest builds t's step from t's given rows, as RunTests does before
// it compares: migrate init writes a first test that expects what its rows
// give now, so it passes as written. The diagnostics are as RunTests's;
// with an error among them nothing is built.
func BuildTest(ctx context.Context, s Setup, t *plan.Test) (Expected, plan.Diagnostics, error) {
	tp, diags := compileTests(s)
	if tp == nil {
		return Expected{}, diags, nil
	}
	b, _, err := tp.build(ctx, t)
	var out Expected
	for _, r := range b.Records {
		out.Records = append(out.Records, expectForm(r.Fields, r.Order, r.Children))
	}
	for _, e := range b.Errors {
		out.Errors = append(out.Errors, &plan.ExpectError{Row: e.Loc.Line, Field: e.Field, Message: e.Message})
	}
	return out, diags, err
}

// expectForm is a record or line as a test expects it.
func expectForm(fields map[string]any, order []string, kids []*transform.Child) *plan.ExpectRecord {
	r := &plan.ExpectRecord{}
	for _, name := range order {
		if v, ok := fields[name]; ok {
			r.Fields = append(r.Fields, &plan.ExpectField{Name: name, Value: expectValue(v)})
		}
	}
	for _, k := range kids {
		i := slices.IndexFunc(r.Lines, func(l *plan.ExpectLines) bool { return l.Nav == k.Nav })
		if i < 0 {
			r.Lines = append(r.Lines, &plan.ExpectLines{Nav: k.Nav})
			i = len(r.Lines) - 1
		}
		r.Lines[i].Lines = append(r.Lines[i].Lines, expectForm(k.Fields, k.Order, k.Children))
	}
	return r
}

// expectValue is a built value as a test writes it: text, true/false, a
// number's text, or nil; a date and time as OData writes it.
func expectValue(v any) any {
	switch x := v.(type) {
	case nil, string, bool:
		return x
	case int64:
		return plan.Number(strconv.FormatInt(x, 10))
	case odata.Decimal:
		return plan.Number(x.String())
	case time.Time:
		return odata.FormatDateTime(x)
	}
	return fmt.Sprint(v)
}

// testBuilt is what a test's step built from its given rows.
type testBuilt struct {
	Records []*transform.Record
	Errors  []*transform.RowError
}

// testProgram is a plan compiled to run tests on.
type testProgram struct {
	prog *transform.Program
	md   *odata.Metadata
	plan *plan.Plan
	// columns are the columns the plan reads of each source: a given
	// source has them all, blank where the test gives none.
	columns map[string][]string
}

// compileTests compiles the plan and checks it against the metadata; nil
// when the diagnostics hold an error.
func compileTests(s Setup) (*testProgram, plan.Diagnostics) {
	p := s.Plan
	diags := append(plan.Diagnostics(nil), s.Diagnostics...)
	prog, tdiags := transform.Compile(p, s.Metadata, transform.Options{Getenv: s.Getenv, Memory: s.Memory})
	diags = append(diags, tdiags...)
	diags = append(diags, p.CheckMetadata(s.Metadata, s.Version)...)
	diags = dedupe(diags)
	if diags.HasErrors() || prog == nil {
		return nil, diags
	}
	columns := map[string][]string{}
	for src, uses := range p.Columns() {
		for _, u := range uses {
			if !slices.Contains(columns[src], u.Name) {
				columns[src] = append(columns[src], u.Name)
			}
		}
	}
	return &testProgram{prog: prog, md: s.Metadata, plan: p, columns: columns}, diags
}

func (tp *testProgram) run(ctx context.Context, t *plan.Test) TestResult {
	res := TestResult{Test: t}
	built, notes, err := tp.build(ctx, t)
	if err != nil {
		res.Failures = append(res.Failures, TestFailure{At: t.StepPos, Message: err.Error()})
		res.Notes = notes
		return res
	}
	records, rowErrs := built.Records, built.Errors
	md := tp.md
	step := tp.plan.Step(t.Step)
	var typ *odata.EntityType
	if set := md.EntitySet(step.Entity); set != nil {
		typ = set.Type
	}
	c := &checker{md: md, exact: t.Exact}
	if t.ExpectSet {
		if len(records) != len(t.Expect) {
			c.fail(TestFailure{At: t.Pos, Message: fmt.Sprintf("expected %s, got %d", diag.Count(len(t.Expect), "record", "records"), len(records))})
		}
		for i, want := range t.Expect {
			if i >= len(records) {
				break
			}
			got := records[i]
			c.form(fmt.Sprintf("record %d", i+1), typ, step.Fields, step.Subforms, want, got.Fields, got.Order, got.Children)
		}
	}
	c.errors(t.Errors, rowErrs)
	for i := range c.failures {
		if c.failures[i].At.Line == 0 {
			c.failures[i].At = t.Pos // a row error no expectation is about
		}
	}
	res.Failures = c.failures
	if len(res.Failures) > 0 {
		res.Notes = notes // what may explain them
	}
	return res
}

// build runs t's step over t's given rows. notes are the lookups that
// could not be built from them.
func (tp *testProgram) build(ctx context.Context, t *plan.Test) (testBuilt, []string, error) {
	prog, columns := tp.prog, tp.columns
	var notes []string
	given := map[string]*plan.Given{}
	for _, g := range t.Given {
		given[g.Source] = g
	}
	open := func(src *plan.Source) (source.Reader, error) {
		names := slices.Clone(columns[src.Name])
		g := given[src.Name]
		if g != nil {
			for _, r := range g.Rows {
				for _, c := range r.Cells {
					if !slices.Contains(names, c.Column) {
						names = append(names, c.Column)
					}
				}
			}
		}
		var rows [][]source.Cell
		if g != nil {
			for _, r := range g.Rows {
				row := make([]source.Cell, len(names))
				for i := range row {
					row[i] = ""
				}
				for _, c := range r.Cells {
					row[slices.Index(names, c.Column)] = c.Value
				}
				rows = append(rows, row)
			}
		}
		return source.NewMemory(givenPrefix+src.Name, names, rows), nil
	}
	// A lookup that reads the target reads the rows given by its name; one
	// not given fails the rows that use it, saying how to give it.
	offline := map[string]string{}
	prog.ReadTarget(func(_ context.Context, l *plan.Lookup, fn func(key, value any) error) error {
		g := given[l.Name]
		if g == nil {
			offline[l.Name] = fmt.Sprintf("lookup %s reads %s on the target, which is not available offline in a test: give its rows via given: {%s: [{%s: ..., %s: ...}]}", l.Name, l.Entity, l.Name, l.KeyField, l.ValueField)
			return errNotGiven
		}
		for _, r := range g.Rows {
			var k, v any
			for _, c := range r.Cells {
				switch c.Column {
				case l.KeyField:
					k = c.Value
				case l.ValueField:
					v = c.Value
				}
			}
			if err := fn(k, v); err != nil {
				return err
			}
		}
		return nil
	})
	if err := prog.BuildLookups(ctx, open); err != nil {
		for _, line := range strings.Split(err.Error(), "\n") {
			if !strings.HasSuffix(line, errNotGiven.Error()) {
				notes = append(notes, line)
			}
		}
	}
	var records []*transform.Record
	var rowErrs []*transform.RowError
	err := prog.Records(ctx, t.Step, open, standInRefs{}, func(r transform.Result) error {
		if r.Record != nil {
			records = append(records, r.Record)
		}
		for _, e := range r.Errors {
			for name, msg := range offline {
				if e.Message == fmt.Sprintf("lookup: unknown lookup %q", name) {
					e.Message = msg
				}
			}
			rowErrs = append(rowErrs, e)
		}
		return nil
	})
	return testBuilt{Records: records, Errors: rowErrs}, notes, err
}

// checker compares what a step built with what a test expects.
type checker struct {
	md       *odata.Metadata
	exact    bool
	failures []TestFailure
}

func (c *checker) fail(f TestFailure) { c.failures = append(c.failures, f) }

// form compares one record or line: the expected fields by the field's
// type (compare.Value, as verify compares), then each expected sub-form's
// lines in order.
func (c *checker) form(where string, typ *odata.EntityType, fields []*plan.Field, subs []*plan.Subform, want *plan.ExpectRecord, got map[string]any, order []string, kids []*transform.Child) {
	writes := func(name string) string {
		for _, f := range fields {
			if f.Name == name {
				return f.Pos.String()
			}
		}
		return ""
	}
	prop := func(name string) *odata.Property {
		if typ == nil {
			return nil
		}
		return typ.Property(name)
	}
	expected := map[string]bool{}
	for _, f := range want.Fields {
		expected[f.Name] = true
		g, present := got[f.Name]
		w := f.Value
		if n, ok := w.(plan.Number); ok {
			w = json.Number(n)
		}
		if present && (compare.Value(prop(f.Name), g, w) || sameDay(g, w)) || !present && w == nil {
			continue
		}
		gotText := show(g)
		switch {
		case present:
		case writes(f.Name) != "":
			gotText = "no value (the record leaves the field out: its value is blank)"
		default:
			gotText = "no value (the plan does not write the field)"
		}
		c.fail(TestFailure{Where: where, At: f.Pos, Field: f.Name, Expected: show(w), Got: gotText, Plan: writes(f.Name)})
	}
	if c.exact {
		for _, name := range order {
			if !expected[name] {
				c.fail(TestFailure{Where: where, At: want.Pos, Field: name, Expected: "no value (exact: true)", Got: show(got[name]), Plan: writes(name)})
			}
		}
	}
	for _, ls := range want.Lines {
		var sub *plan.Subform
		for _, s := range subs {
			if s.Name == ls.Nav {
				sub = s
			}
		}
		var lines []*transform.Child
		for _, k := range kids {
			if k.Nav == ls.Nav {
				lines = append(lines, k)
			}
		}
		if len(lines) != len(ls.Lines) {
			c.fail(TestFailure{Where: where, At: ls.Pos, Message: fmt.Sprintf("expected %s of %s, got %d", diag.Count(len(ls.Lines), "line", "lines"), ls.Nav, len(lines))})
		}
		var ltyp *odata.EntityType
		if typ != nil {
			if nav := typ.Navigation(ls.Nav); nav != nil {
				ltyp = c.md.Type(nav.Type)
			}
		}
		for i, wl := range ls.Lines {
			if i >= len(lines) || sub == nil {
				break
			}
			l := lines[i]
			c.form(fmt.Sprintf("%s, %s line %d", where, ls.Nav, i+1), ltyp, sub.Fields, sub.Subforms, wl, l.Fields, l.Order, l.Children)
		}
	}
}

// errors pairs each expected row error with one the step gave (its row,
// its field if named, its message holding the text if given); one left
// over on either side is a failure.
func (c *checker) errors(want []*plan.ExpectError, got []*transform.RowError) {
	used := make([]bool, len(got))
	for _, w := range want {
		found := false
		for i, g := range got {
			if used[i] || g.Loc.Line != w.Row || w.Field != "" && g.Field != w.Field || !strings.Contains(g.Message, w.Message) {
				continue
			}
			used[i], found = true, true
			break
		}
		if !found {
			what := fmt.Sprintf("a row error at row %d", w.Row)
			if w.Field != "" {
				what += " in " + w.Field
			}
			if w.Message != "" {
				what += fmt.Sprintf(" saying %q", w.Message)
			}
			c.fail(TestFailure{At: w.Pos, Message: "expected " + what + ", got none"})
		}
	}
	for i, g := range got {
		if !used[i] {
			msg := "unexpected row error at " + g.Loc.String()
			if g.Field != "" {
				msg += " in " + g.Field
			}
			c.fail(TestFailure{Message: msg + ": " + g.Message, Plan: g.Plan})
		}
	}
}

// sameDay: a test may expect a date as its day (CURDATE: 2026-11-03),
// which a date and time built in the plan's time zone is on.
func sameDay(got, want any) bool {
	t, ok := got.(time.Time)
	s, isText := want.(string)
	if !ok || !isText {
		return false
	}
	day, err := time.Parse(odata.DateLayout, s)
	return err == nil && t.Format(odata.DateLayout) == day.Format(odata.DateLayout)
}

// show writes a value as the test would write it: text quoted, numbers
// and booleans bare, a date as OData writes it.
func show(v any) string {
	switch x := v.(type) {
	case nil:
		return "blank"
	case string:
		if x == "" {
			return "blank"
		}
		return fmt.Sprintf("%q", x)
	case time.Time:
		return odata.FormatDateTime(x)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
