package plan

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/migrate-tool/migrate/internal/diag"
	"go.yaml.in/yaml/v3"
)

// measureText parses src as the decoder does and measures it.
func measureText(t *testing.T, src string) *text {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
		t.Fatalf("%q: %v", src, err)
	}
	return newText(&walker{lines: strings.Split(src, "\n")}, doc.Content[0])
}

func TestRangeEnds(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		src      string
		at       Pos // where the subject starts
		wantLine int
		wantCol  int
	}{
		{"plain", "a: hello world\n", Pos{Line: 1, Col: 4}, 1, 14},
		{"key", "a: hello world\n", Pos{Line: 1, Col: 1}, 1, 1},
		{"plain folded over lines", "a: upper(x) +\n  lower(y)\nb: 1\n", Pos{Line: 1, Col: 4}, 2, 10},
		{"double quoted", "a: \"x\\\"y\"\n", Pos{Line: 1, Col: 4}, 1, 9},
		{"double quoted over lines", "a: \"trim(row.Name) +\n  rwo.Phone\"\nb: 1\n", Pos{Line: 1, Col: 4}, 2, 12},
		{"double quoted, escaped line break", "a: \"one \\\n  two\"\n", Pos{Line: 1, Col: 4}, 2, 6},
		{"single quoted over lines", "a: 'it''s\n  long'\n", Pos{Line: 1, Col: 4}, 2, 7},
		{"quoted, then a comment", "a: \"x\" # note \"y\"\n", Pos{Line: 1, Col: 4}, 1, 6},
		{"literal block", "a: |\n  line one\n  line two\n\nb: x\n", Pos{Line: 1, Col: 4}, 3, 10},
		{"folded block, stripped", "s:\n  a: >-\n    trim(row.X)\n      + 1\n  b: x\n", Pos{Line: 2, Col: 6}, 4, 9},
		{"block in a list", "- |\n  one\n  two\n- x\n", Pos{Line: 1, Col: 3}, 3, 5},
		{"empty block", "s:\n  a: |\n  b: x\n", Pos{Line: 2, Col: 6}, 2, 6},
		{"flow mapping over lines", "a: {value: \"long\n   text\"}\nb: 1\n", Pos{Line: 1, Col: 4}, 2, 9},
		{"scalar inside a flow mapping", "a: {value: \"long\n   text\"}\nb: 1\n", Pos{Line: 1, Col: 12}, 2, 8},
		{"flow sequence over lines", "a: [x, 'y]',\n  z]  # [\n", Pos{Line: 1, Col: 4}, 2, 4},
		{"flow with an apostrophe in a plain scalar", "a: [it's, b]\n", Pos{Line: 1, Col: 4}, 1, 12},
		{"nested flow", "a: {b: [1, {c: 2}], d: 3}\n", Pos{Line: 1, Col: 4}, 1, 25},
		{"block sequence", "a:\n- x\n- yy\nb: 1\n", Pos{Line: 2, Col: 1}, 3, 4},
		{"block mapping is its first key", "a:\n  b: 1\n  c: two\n", Pos{Line: 2, Col: 3}, 2, 3},
		{"alias", "a: &x 1\nb: *x\n", Pos{Line: 2, Col: 4}, 2, 5},
		{"CRLF", "a: \"one\r\n  two\"\r\nb: 1\r\n", Pos{Line: 1, Col: 4}, 2, 6},
		{"name inside an expression", "a: upper(rwo.Name)\n", Pos{Line: 1, Col: 10}, 1, 12},
		{"Hebrew name", "a: row.שם + 1\n", Pos{Line: 1, Col: 8}, 1, 9},
		{"a point on punctuation", "a: upper(x)\n", Pos{Line: 1, Col: 9}, 1, 9},
		{"a point past the end of its line", "a: x\n", Pos{Line: 1, Col: 40}, 1, 40},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := measureText(t, tt.src).end(tt.at)
			if want := (diag.Pos{Line: tt.wantLine, Column: tt.wantCol}); got != want {
				t.Errorf("%q at %d:%d: end %d:%d, want %d:%d", tt.src, tt.at.Line, tt.at.Col, got.Line, got.Column, want.Line, want.Column)
			}
		})
	}
}

// No node's range ends past the end of its line or before it starts,
// whatever the style: an editor given the range highlights text that is
// there. (An empty value starts, and so ends, just after its colon, where
// YAML places it.)
func TestRangeEndsStayOnTheirLine(t *testing.T) {
	t.Parallel()
	for _, src := range []string{
		"a: {value: \"this is a very long constant\n        continued here\"}\n",
		"f: {A: upper(x) +\n     lower(y), B: [1,\n  2]}\n",
		"a: >\n  folded\n\n  text\n\n\nb: |+\n  kept\n\n",
		"a: \"\"\nb: ''\nc:\nd: ~\n",
		"- [a, b\n  , c]\n- {x: 'y''\n  z'}\n",
	} {
		tx := measureText(t, src)
		for start, end := range tx.ends {
			line := tx.line(end.Line)
			if end.Column > max(len(line), 1, start.Col) {
				t.Errorf("%q: the node at %d:%d ends at %d:%d, past the end of line %q", src, start.Line, start.Col, end.Line, end.Column, string(line))
			}
			if end.Line < start.Line || end.Line == start.Line && end.Column < start.Col {
				t.Errorf("%q: the node at %d:%d ends before it starts, at %d:%d", src, start.Line, start.Col, end.Line, end.Column)
			}
		}
	}
}

// A decoded plan's diagnostics carry the span of the node they are about.
func TestDiagnosticRange(t *testing.T) {
	t.Parallel()
	src := `version: 1
sources:
  customers: {file: customers.csv}
target:
  batch_size: "five
    thousand"
steps:
  - name: customers
    entity: CUSTOMERS
    source: customers
    fields: {CUSTNAME: row.Code}
`
	p, ds := Decode("p.yaml", []byte(src))
	if len(ds) != 1 {
		t.Fatalf("want one diagnostic, got %v", ds)
	}
	got := ds[0].Diag(p)
	want := diag.Diagnostic{Summary: `"batch_size" must be a whole number, not "five thousand"`,
		Subject: diag.Range{File: "p.yaml", Start: diag.Pos{Line: 5, Column: 15}, End: diag.Pos{Line: 6, Column: 13}}}
	if got != want {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
	if got.String() != ds[0].String() {
		t.Errorf("the model renders %q, the plan %q", got.String(), ds[0].String())
	}
	// Without the plan, a point.
	if r := ds[0].Diag(nil).Subject; r.End != r.Start {
		t.Errorf("without the plan the range is a point, got %+v", r)
	}
}

// FuzzRanges measures arbitrary YAML outside Decode's recover, so a panic
// is seen rather than turned into a syntax error: no node may end before
// it starts or past the end of its line.
func FuzzRanges(f *testing.F) {
	for _, pattern := range []string{"testdata/*.yaml", "testdata/good/*.yaml"} {
		files, _ := filepath.Glob(pattern)
		for _, path := range files {
			if data, err := os.ReadFile(path); err == nil && len(data) <= 1500 {
				f.Add(data)
			}
		}
	}
	f.Add([]byte("a: {value: \"long\n   text\"}\nb: [x, 'y''\n  z']\nc: |\n  one\n\n  two\nd: *x\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var doc yaml.Node
		if yaml.Unmarshal(data, &doc) != nil || len(doc.Content) == 0 {
			return
		}
		tx := newText(&walker{lines: strings.Split(string(data), "\n")}, doc.Content[0])
		for start, end := range tx.ends {
			if end.Line < start.Line || end.Line == start.Line && end.Column < start.Col {
				t.Fatalf("the node at %d:%d ends before it starts, at %d:%d", start.Line, start.Col, end.Line, end.Column)
			}
			if end.Column > max(len(tx.line(end.Line)), 1, start.Col) {
				t.Fatalf("the node at %d:%d ends at %d:%d, past the end of its line %q", start.Line, start.Col, end.Line, end.Column, string(tx.line(end.Line)))
			}
		}
	})
}
