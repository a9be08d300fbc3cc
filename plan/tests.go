package plan

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/migrate-tool/migrate/internal/didyoumean"
	"go.yaml.in/yaml/v3"
)

// Test is a plan test: rows given to a step's sources, and the
// records or row errors the step must build from them. `migrate test`
// runs it offline with the step's real program.
type Test struct {
	Name  string
	Step  string
	Given []*Given // in file order
	// Expect are the records the step must build, in order; ExpectSet
	// says the key was written (an empty list expects no record).
	Expect    []*ExpectRecord
	ExpectSet bool
	Errors    []*ExpectError
	// Exact compares every field built, not only those Expect names.
	Exact   bool
	Pos     Pos // of the test's mapping
	StepPos Pos // of the step's name
}

// Given is the rows of one source (or of a lookup that reads the target,
// by the lookup's name) in a test.
type Given struct {
	Source string
	Pos    Pos
	Rows   []*GivenRow
}

// GivenRow is one row of a given source: its cells by column, in the
// order written.
type GivenRow struct {
	Pos   Pos
	Cells []GivenCell
}

// GivenCell is one column's value in a given row, as a text cell.
type GivenCell struct {
	Column, Value string
}

// ExpectRecord is a record (or a sub-form line) a test expects: some of
// its fields and, per sub-form, its lines.
type ExpectRecord struct {
	Pos    Pos
	Fields []*ExpectField
	Lines  []*ExpectLines
}

// ExpectField is one expected field value: nil (blank), a string, a bool
// or a number's text (Number).
type ExpectField struct {
	Name  string
	Value any
	Pos   Pos // of the value
}

// Number is a number an expectation writes bare, kept as its text so no
// digit is lost before the field's type compares it.
type Number string

// ExpectLines are the lines of one sub-form a record is expected to have.
type ExpectLines struct {
	Nav   string
	Pos   Pos
	Lines []*ExpectRecord
}

// ExpectError is a row error a test expects.
type ExpectError struct {
	Row     int    // 1-based among the given rows of the step's source
	Field   string // "": any
	Message string // a substring; "": any
	Pos     Pos
}

// Keys of a test and of an expected error, from the format table.
var (
	testKeys      = keyNames("test")
	testErrorKeys = keyNames("test_error")
)

// maxExpectDepth bounds the nesting of expected sub-form lines, as
// sub-forms nest in a plan.
const maxExpectDepth = 10

// TestsFile is the file of tests beside a plan: orders.yaml's is
// orders_test.yaml.
func TestsFile(planPath string) string {
	ext := filepath.Ext(planPath)
	return strings.TrimSuffix(planPath, ext) + "_test" + ext
}

// LoadTests reads the tests of the file beside the plan (TestsFile), a
// list of tests as `tests:` holds them. No such file is no tests.
func LoadTests(planPath string) ([]*Test, Diagnostics) {
	path := TestsFile(planPath)
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, Diagnostics{{Pos: Pos{File: path}, Message: "the tests file cannot be read: " + err.Error()}}
	}
	return DecodeTests(path, data)
}

// DecodeTests decodes a file of tests: one YAML list of tests.
func DecodeTests(name string, data []byte) (ts []*Test, ds Diagnostics) {
	w := &walker{file: name, lines: strings.Split(string(data), "\n")}
	defer func() {
		if r := recover(); r != nil {
			ts, ds = nil, Diagnostics{{Pos: Pos{File: name, Line: 1, Col: 1}, Message: "the YAML parser failed on this file; check its syntax"}}
		}
	}()
	root, ok := w.parse(data)
	if ok && root != nil {
		ts = w.decodeTests(root, "the tests file")
	}
	if w.overflow {
		ts = nil
	}
	return ts, w.sorted()
}

func (w *walker) decodeTests(n *yaml.Node, what string) []*Test {
	items, _ := w.sequence(w.resolve(n), what)
	var out []*Test
	for i, it := range items {
		if t := w.decodeTest(it, i+1); t != nil {
			out = append(out, t)
		}
	}
	return out
}

func (w *walker) decodeTest(n *yaml.Node, index int) *Test {
	what := fmt.Sprintf("test %d", index)
	f, ok := w.mapping(n, what, testKeys)
	if !ok {
		return nil
	}
	if e, ok := f.get("name"); ok && e.val.Kind == yaml.ScalarNode && !isNull(e.val) {
		what = fmt.Sprintf("test %q", e.val.Value)
	}
	w.require(f, what, requiredKeys("test")...)
	t := &Test{Pos: f.pos}
	for _, e := range f.entries {
		switch e.key {
		case "name":
			t.Name, _ = w.text(e)
		case "step":
			if s, ok := w.text(e); ok {
				t.Step, t.StepPos = s, w.pos(e.val)
			}
		case "exact":
			t.Exact, _ = w.boolean(e)
		case "given":
			t.Given = w.decodeGiven(e, what)
		case "expect":
			t.ExpectSet = true
			items, _ := w.sequence(e.val, fmt.Sprintf("\"expect\" of %s", what))
			for i, it := range items {
				if r := w.expectRecord(it, fmt.Sprintf("record %d expected by %s", i+1, what)); r != nil {
					t.Expect = append(t.Expect, r)
				}
			}
		case "errors":
			items, _ := w.sequence(e.val, fmt.Sprintf("\"errors\" of %s", what))
			for i, it := range items {
				if x := w.expectError(it, fmt.Sprintf("error %d expected by %s", i+1, what)); x != nil {
					t.Errors = append(t.Errors, x)
				}
			}
		}
	}
	return t
}

func (w *walker) decodeGiven(e entry, what string) []*Given {
	var out []*Given
	for _, se := range w.optEntries(e, fmt.Sprintf("\"given\" of %s", what)) {
		g := &Given{Source: se.key, Pos: se.kpos}
		rows, _ := w.sequence(se.val, fmt.Sprintf("the rows given to %s", quote(se.key)))
		for i, rn := range rows {
			rw := fmt.Sprintf("row %d given to %s", i+1, quote(se.key))
			rf, ok := w.mapping(rn, rw, nil)
			if !ok {
				continue
			}
			row := &GivenRow{Pos: rf.pos}
			for _, ce := range rf.entries {
				v, ok := w.cellText(ce, rw)
				if ok {
					row.Cells = append(row.Cells, GivenCell{Column: ce.key, Value: v})
				}
			}
			g.Rows = append(g.Rows, row)
		}
		out = append(out, g)
	}
	return out
}

// cellText reads a given cell as the text a CSV file would hold: a
// number or boolean as written, empty as "".
func (w *walker) cellText(e entry, what string) (string, bool) {
	n := e.val
	if n.Kind != yaml.ScalarNode {
		w.errorf(w.pos(n), "column %q of %s must be a value (text, a number or true/false), not %s", e.key, what, describe(n))
		return "", false
	}
	if isNull(n) {
		return "", true
	}
	return n.Value, true
}

// expectRecord reads a record or line a test expects. A record holds
// fields: and sub-forms; a line (depth > 0) holds its fields directly and
// its sub-forms as lists.
func (w *walker) expectRecord(n *yaml.Node, what string) *ExpectRecord {
	return w.expectForm(n, what, 0)
}

func (w *walker) expectForm(n *yaml.Node, what string, depth int) *ExpectRecord {
	if depth > maxExpectDepth {
		w.errorf(w.pos(n), "%s nests sub-forms more than %d deep", what, maxExpectDepth)
		return nil
	}
	f, ok := w.mapping(n, what, nil)
	if !ok {
		return nil
	}
	r := &ExpectRecord{Pos: f.pos}
	for _, e := range f.entries {
		switch {
		case depth == 0 && e.key == "fields":
			ff, ok := w.mapping(e.val, "\"fields\" of "+what, nil)
			if !ok {
				continue
			}
			for _, fe := range ff.entries {
				if x := w.expectField(fe, what); x != nil {
					r.Fields = append(r.Fields, x)
				}
			}
		case e.val.Kind == yaml.SequenceNode || isNull(e.val) && depth == 0:
			ls := &ExpectLines{Nav: e.key, Pos: e.kpos}
			items, _ := w.sequence(e.val, what)
			for i, it := range items {
				if l := w.expectForm(it, fmt.Sprintf("line %d of %s in %s", i+1, e.key, what), depth+1); l != nil {
					ls.Lines = append(ls.Lines, l)
				}
			}
			r.Lines = append(r.Lines, ls)
		case depth == 0:
			w.errorf(e.kpos, "%q in %s must be a sub-form's list of lines; a record's fields go under \"fields\"", e.key, what)
		default:
			if x := w.expectField(e, what); x != nil {
				r.Fields = append(r.Fields, x)
			}
		}
	}
	return r
}

func (w *walker) expectField(e entry, what string) *ExpectField {
	n := e.val
	x := &ExpectField{Name: e.key, Pos: w.pos(n)}
	if n.Kind != yaml.ScalarNode {
		w.errorf(w.pos(n), "field %q of %s must be a value (text, a number or true/false), not %s", e.key, what, describe(n))
		return nil
	}
	switch n.ShortTag() {
	case "!!null":
	case "!!bool":
		x.Value = strings.EqualFold(n.Value, "true")
	case "!!int", "!!float":
		x.Value = Number(strings.ReplaceAll(n.Value, "_", ""))
	default:
		x.Value = n.Value
	}
	return x
}

func (w *walker) expectError(n *yaml.Node, what string) *ExpectError {
	f, ok := w.mapping(n, what, testErrorKeys)
	if !ok {
		return nil
	}
	w.require(f, what, requiredKeys("test_error")...)
	x := &ExpectError{Pos: f.pos}
	for _, e := range f.entries {
		switch e.key {
		case "row":
			x.Row, _ = w.bounds(e, "test_error", "\"row\" counts the given rows from 1, not %d")
		case "field":
			x.Field, _ = w.text(e)
		case "message":
			x.Message, _ = w.text(e)
		}
	}
	return x
}

// CheckTests checks tests against the plan: each names a step of it, is
// named once, and gives rows to the plan's sources (or lookups that read
// the target), and its expected sub-forms are the step's.
func (p *Plan) CheckTests(ts []*Test) Diagnostics {
	d := &diags{}
	steps := make([]string, 0, len(p.Steps))
	for _, s := range p.Steps {
		steps = append(steps, s.Name)
	}
	var givable []string
	for _, s := range p.Sources {
		givable = append(givable, s.Name)
	}
	for _, l := range p.Lookups {
		if l.Entity != "" {
			givable = append(givable, l.Name)
		}
	}
	first := map[string]Pos{}
	for _, t := range ts {
		if at, dup := first[t.Name]; dup && t.Name != "" {
			d.errorf(t.Pos, "test name %s is used twice (first at %s); test names must be unique", quote(t.Name), at)
		} else {
			first[t.Name] = t.Pos
		}
		step := p.Step(t.Step)
		if step == nil {
			if t.Step != "" {
				d.errorf(t.StepPos, "test %s names step %s, which the plan does not have%s", quote(t.Name), quote(t.Step), didyoumean.Hint(t.Step, steps))
			}
			continue
		}
		for _, g := range t.Given {
			if !slices.Contains(givable, g.Source) {
				d.errorf(g.Pos, "test %s gives rows to %s, which is no source of the plan (nor a lookup that reads the target)%s", quote(t.Name), quote(g.Source), didyoumean.Hint(g.Source, givable))
			}
		}
		for _, r := range t.Expect {
			checkExpectLines(d, t, r, step.Subforms)
		}
	}
	return d.sorted()
}

func checkExpectLines(d *diags, t *Test, r *ExpectRecord, subs []*Subform) {
	var names []string
	for _, s := range subs {
		names = append(names, s.Name)
	}
	for _, ls := range r.Lines {
		i := slices.IndexFunc(subs, func(s *Subform) bool { return s.Name == ls.Nav })
		if i < 0 {
			d.errorf(ls.Pos, "test %s expects lines of %s, which is no sub-form of its step%s", quote(t.Name), quote(ls.Nav), didyoumean.Hint(ls.Nav, names))
			continue
		}
		for _, l := range ls.Lines {
			checkExpectLines(d, t, l, subs[i].Subforms)
		}
	}
}
