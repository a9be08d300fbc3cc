package plan

import (
	"strings"

	"github.com/expr-lang/expr/ast"

	"go.yaml.in/yaml/v3"
)

// runeLine is line li (0-based) of the file in characters, without its
// carriage return; nil past either end. Each line is converted once: a
// flow mapping writes many scalars on one line.
func (w *walker) runeLine(li int) []rune {
	if li < 0 || li >= len(w.lines) {
		return nil
	}
	if w.runes == nil {
		w.runes = make([][]rune, len(w.lines))
	}
	if w.runes[li] == nil {
		w.runes[li] = []rune(strings.TrimSuffix(w.lines[li], "\r"))
	}
	return w.runes[li]
}

// place is where one character of an expression is written in the plan
// file: 1-based line and column, columns counted in characters.
type place struct{ line, col int32 }

// placeRunes maps each character of a string scalar's value to where it is
// written, so a name inside an expression is reported where the user sees
// it: an escape (\" or a doubled single quote) takes several characters of
// the file, a quoted or plain scalar folds its line breaks into spaces, and
// the lines of a block scalar start at its indentation. line and col are where the value's
// first character is; indent is the column a block scalar's lines start at.
// Characters it cannot account for are placed best effort, never past the
// end of a line.
func (w *walker) placeRunes(value string, line, col int, style yaml.Style, indent int) []place {
	block := style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0
	double := style&yaml.DoubleQuotedStyle != 0
	single := style&yaml.SingleQuotedStyle != 0
	li, ci := line-1, col-1
	var cur []rune
	load := func() {
		cur = w.runeLine(li)
	}
	load()
	// nextLine moves to the next line's first character of the value: past
	// the indentation of a block scalar, past all leading blanks otherwise.
	nextLine := func() {
		li++
		ci = 0
		load()
		for ci < len(cur) && (cur[ci] == ' ' || !block && cur[ci] == '\t') && (!block || ci < indent-1) {
			ci++
		}
	}
	atEOL := func() bool {
		if block {
			return ci >= len(cur)
		}
		for _, r := range cur[min(ci, len(cur)):] {
			if r != ' ' && r != '\t' {
				return false
			}
		}
		return true
	}
	here := func() place {
		return place{line: int32(li + 1), col: int32(max(1, min(ci+1, len(cur))))}
	}
	out := make([]place, 0, len(value))
	for _, r := range value {
		if li >= len(w.lines) {
			// The value outruns the file, which a parsed scalar cannot do.
			out = append(out, place{line: int32(line), col: int32(col)})
			continue
		}
		if atEOL() {
			if r == ' ' || r == '\n' {
				// A line break kept as \n or folded into a space.
				out = append(out, here())
				nextLine()
				continue
			}
			// Blank lines folded away: the character is further down.
			for atEOL() && li < len(w.lines) {
				nextLine()
			}
		}
		if double && ci+1 >= len(cur) && ci < len(cur) && cur[ci] == '\\' {
			nextLine() // an escaped line break: the value goes on below
		}
		out = append(out, here())
		step := 1
		switch {
		case double && ci+1 < len(cur) && cur[ci] == '\\':
			switch cur[ci+1] {
			case 'x':
				step = 4
			case 'u':
				step = 6
			case 'U':
				step = 10
			default:
				step = 2
			}
		case single && ci+1 < len(cur) && cur[ci] == '\'' && cur[ci+1] == '\'':
			step = 2
		}
		ci = min(ci+step, len(cur))
	}
	return out
}

// PosAt returns the file position of the character at runeOff in the
// expression's text; an offset past the end is the last character.
func (x *Expr) PosAt(runeOff int) Pos {
	if n := len(x.places); n > 0 {
		pl := x.places[max(0, min(runeOff, n-1))]
		return Pos{File: x.Pos.File, Line: int(pl.line), Col: int(pl.col)}
	}
	line, col := x.lineCol(runeOff)
	return x.shift(line, col)
}

// PosOf returns the file position of a place in the expression's text,
// given as expr-lang's file.Error gives it (Line from 1, Column from 0), so
// a compiler's error points into the plan file, block scalars included.
func (x *Expr) PosOf(line, column int) Pos {
	off, l := 0, 1
	for _, r := range x.Src {
		if l >= line {
			break
		}
		off++
		if r == '\n' {
			l++
		}
	}
	return x.PosAt(off + column)
}

// lineCol converts a rune offset into the expression's source into a
// 0-based line and column.
func (x *Expr) lineCol(runeOff int) (line, col int) {
	i := 0
	for _, r := range x.Src {
		if i >= runeOff {
			break
		}
		if r == '\n' {
			line++
			col = 0
		} else {
			col++
		}
		i++
	}
	return line, col
}

// shift returns the file position of the expression's 0-based line and
// column when no character map was made (an Expr built by hand).
func (x *Expr) shift(line, col int) Pos {
	p := x.Pos
	if line <= 0 {
		p.Col += col
		return p
	}
	p.Line += line
	base := x.contCol
	if base == 0 {
		base = x.Pos.Col
	}
	p.Col = base + col
	return p
}

// NamePos is the position of the name a node of the expression stands for:
// where an identifier starts, the X of row.X, the first character inside
// the quotes of row["X"].
func (x *Expr) NamePos(n ast.Node) Pos {
	if x.quoted(n) {
		return x.PosAt(n.Location().From + 1)
	}
	return x.PosAt(n.Location().From)
}

// quoted reports whether n is written as a literal in quotes (the "X" of
// row["X"]) rather than as a name (the X of row.X).
func (x *Expr) quoted(n ast.Node) bool {
	if _, ok := n.(*ast.StringNode); !ok {
		return false
	}
	i := 0
	for _, r := range x.Src {
		if i == n.Location().From {
			return r == '"' || r == '\'' || r == '`'
		}
		i++
	}
	return false
}
