package plan

import (
	"strings"
	"unicode"

	"github.com/migrate-tool/migrate/internal/diag"
	"go.yaml.in/yaml/v3"
)

// text is what the plan's ranges are measured on: its lines, and where
// each YAML node that starts at a place ends.
type text struct {
	lines [][]rune
	ends  map[Pos]diag.Pos
	w     *walker // places the characters of plain scalars
}

// Diag is the diagnostic in the model every command renders. in is the
// plan the position is in, whose text gives the range its end: the span
// of the YAML node that starts there, else the name at that place inside
// an expression; nil (or another file) gives a point.
func (d Diagnostic) Diag(in *Plan) diag.Diagnostic {
	r := diag.Range{File: d.Pos.File}
	if d.Pos.Line > 0 {
		r.Start = diag.Pos{Line: d.Pos.Line, Column: max(d.Pos.Col, 1)}
		r.End = r.Start
		if in != nil && in.text != nil && d.Pos.File == in.Path {
			r.End = in.text.end(d.Pos)
		}
	}
	return diag.New(d.Severity, r, d.Message)
}

// newText measures the plan's text, as w read it, and the nodes of its
// document; the lines w converted to characters are not converted again.
func newText(w *walker, root *yaml.Node) *text {
	t := &text{lines: make([][]rune, len(w.lines)), ends: map[Pos]diag.Pos{}, w: w}
	for i := range w.lines {
		t.lines[i] = w.runeLine(i)
	}
	if root != nil {
		t.measure(root, 0, -1)
	}
	return t
}

// end is where the subject that starts at p ends: a node's last
// character, the end of the name written at p, or p itself.
func (t *text) end(p Pos) diag.Pos {
	if e, ok := t.ends[Pos{Line: p.Line, Col: p.Col}]; ok {
		return e
	}
	start := diag.Pos{Line: p.Line, Column: max(p.Col, 1)}
	line := t.line(p.Line)
	i := start.Column - 1
	if i >= len(line) || !isNameRune(line[i]) {
		return t.clamp(start, start)
	}
	for i+1 < len(line) && isNameRune(line[i+1]) {
		i++
	}
	return diag.Pos{Line: p.Line, Column: i + 1}
}

func isNameRune(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }

func (t *text) line(n int) []rune {
	if n < 1 || n > len(t.lines) {
		return nil
	}
	return t.lines[n-1]
}

// clamp keeps an end on a line of the file, within that line, and not
// before start.
func (t *text) clamp(start, end diag.Pos) diag.Pos {
	end.Line = min(end.Line, len(t.lines))
	if end.Line < start.Line || end.Line == start.Line && end.Column < start.Column {
		end = start
	}
	end.Column = max(1, min(end.Column, len(t.line(end.Line))))
	if end.Line == start.Line && end.Column < start.Column {
		end.Column = start.Column
	}
	return end
}

// maxDepth bounds the nesting measure follows: a node nested deeper (a
// hostile document) ends where it starts.
const maxDepth = 1000

// measure records where n and each node inside it end, and returns n's
// end. A node that starts where its first child does (a block mapping
// and its first key) leaves the place to the child, the smaller subject.
// indent is the indentation of the block n is in (-1 at the top): the
// lines of a block scalar are indented more.
func (t *text) measure(n *yaml.Node, depth, indent int) diag.Pos {
	start := diag.Pos{Line: n.Line, Column: n.Column}
	if depth > maxDepth {
		return start
	}
	var end diag.Pos
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			t.measure(c, depth+1, -1)
		}
		return start
	case yaml.MappingNode, yaml.SequenceNode:
		end = start
		for _, c := range n.Content {
			if e := t.measure(c, depth+1, n.Column-1); after(e, end) {
				end = e
			}
		}
		if n.Style&yaml.FlowStyle != 0 {
			end = t.closing(start, end)
		}
	case yaml.AliasNode:
		end = diag.Pos{Line: n.Line, Column: n.Column + len([]rune(n.Value))}
	case yaml.ScalarNode:
		end = t.scalarEnd(n, start, indent)
	}
	end = t.clamp(start, end)
	if _, child := t.ends[Pos{Line: n.Line, Col: n.Column}]; !child {
		t.ends[Pos{Line: n.Line, Col: n.Column}] = end
	}
	return end
}

func after(a, b diag.Pos) bool {
	return a.Line > b.Line || a.Line == b.Line && a.Column > b.Column
}

// scalarEnd is the last character of a scalar as written: the closing
// quote of a quoted one, the last character of the last line of a block
// scalar, the last character of a plain one (which may fold lines).
func (t *text) scalarEnd(n *yaml.Node, start diag.Pos, indent int) diag.Pos {
	switch {
	case n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0:
		return t.closingQuote(start, n.Style&yaml.DoubleQuotedStyle != 0)
	case n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0:
		return t.blockEnd(start, indent)
	case n.Value == "":
		return start
	}
	places := t.w.placeRunes(n.Value, n.Line, n.Column, n.Style, 0)
	if len(places) == 0 {
		return start
	}
	last := places[len(places)-1]
	return diag.Pos{Line: int(last.line), Column: int(last.col)}
}

// closingQuote finds the quote that ends a quoted scalar opened at or
// after start (a tag or anchor may come first): a double-quoted scalar
// escapes with a backslash, a single-quoted one doubles its quote.
func (t *text) closingQuote(start diag.Pos, double bool) diag.Pos {
	q := '\''
	if double {
		q = '"'
	}
	line, i := start.Line, start.Column-1
	for l := t.line(line); i < len(l) && l[i] != q; i++ {
	}
	i++ // past the opening quote
	for ; line <= len(t.lines); line, i = line+1, 0 {
		l := t.line(line)
		for ; i < len(l); i++ {
			switch {
			case double && l[i] == '\\':
				i++
			case l[i] == q && !double && i+1 < len(l) && l[i+1] == q:
				i++
			case l[i] == q:
				return diag.Pos{Line: line, Column: i + 1}
			}
		}
	}
	return start
}

// blockEnd is the last character of a literal or folded block scalar
// whose indicator (| or >) is at start: its lines are those below that
// are blank or indented as its first line is, which is more than the
// block it is in (indent); an empty block scalar ends at its indicator.
func (t *text) blockEnd(start diag.Pos, indent int) diag.Pos {
	end := start
	first := -1
	for line := start.Line + 1; line <= len(t.lines); line++ {
		l := t.line(line)
		n := 0
		for n < len(l) && l[n] == ' ' {
			n++
		}
		if n == len(l) {
			continue // blank: it belongs to whatever follows it
		}
		if first < 0 {
			first = n
		}
		if n <= indent || n < first {
			break
		}
		end = diag.Pos{Line: line, Column: len(l)}
	}
	return end
}

// closing finds the bracket that closes a flow mapping or sequence
// opened at start, searching after from (its last child's end); quoted
// text and comments are skipped.
func (t *text) closing(start, from diag.Pos) diag.Pos {
	line, i := start.Line, start.Column-1
	depth := 0
	for ; line <= len(t.lines); line, i = line+1, 0 {
		l := t.line(line)
		for ; i < len(l); i++ {
			switch c := l[i]; c {
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return diag.Pos{Line: line, Column: i + 1}
				}
			case '"', '\'':
				if !opensQuote(l, i) {
					continue // an apostrophe inside a plain scalar
				}
				q := t.closingQuote(diag.Pos{Line: line, Column: i + 1}, c == '"')
				if q.Line > line || q.Line == line && q.Column > i+1 {
					line, i, l = q.Line, q.Column-1, t.line(q.Line)
				}
			case '#':
				if i == 0 || l[i-1] == ' ' || l[i-1] == '\t' {
					i = len(l)
				}
			}
		}
	}
	return from
}

// opensQuote reports whether the quote at l[i] starts a quoted scalar in
// a flow collection: first on its line or after a bracket, comma or colon.
func opensQuote(l []rune, i int) bool {
	for i--; i >= 0 && (l[i] == ' ' || l[i] == '\t'); i-- {
	}
	return i < 0 || strings.ContainsRune("{[,:", l[i])
}
