package plan

import (
	"errors"
	"fmt"

	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/file"
	"github.com/expr-lang/expr/parser"
)

// nameUse is a name given as the first argument of ref() or lookup().
type nameUse struct {
	name string
	pos  Pos
}

// scan is what one expression reads and calls, found by walking its AST.
type scan struct {
	refs      []nameUse
	lookups   []nameUse
	callsFile bool
	group     *Pos // where the expression first reads `group`
	columns   []columnRef
}

// columnRef is row.X (depth 0), parent.row.X (depth 1), and so on.
type columnRef struct {
	name  string
	depth int
	pos   Pos
}

// exprScope says what `row` and `parent` mean where an expression stands.
type exprScope struct {
	// rows[0] is the source `row` reads, rows[1] the one `parent.row`
	// reads, ... ("" when unknown).
	rows []string
	what string // the expression's place, for messages
	// noRef is set where ref() makes no sense (a lookup's key or value).
	noRef bool
}

// scanExpr parses x and reports syntax errors, malformed ref()/lookup()
// calls and misplaced parent accesses into d.
func scanExpr(x *Expr, sc exprScope, d *diags) *scan {
	if x == nil || x.IsConst || x.Src == "" && x.Pos.Line == 0 {
		return nil // a constant, or a value that did not decode
	}
	tree, err := parser.Parse(x.Src)
	if err != nil {
		var fe *file.Error
		if errors.As(err, &fe) {
			msg := fe.Message
			if msg == "unexpected token EOF" || msg == "unexpected end of expression" {
				msg = "it ends too early"
			}
			d.errorf(x.PosOf(fe.Line, fe.Column), "%s is not a valid expression: %s", sc.what, msg)
		} else {
			d.errorf(x.Pos, "%s is not a valid expression: %v", sc.what, err)
		}
		return nil
	}
	v := &scanVisitor{x: x, sc: sc, d: d, out: &scan{}}
	ast.Walk(&tree.Node, v)
	if id, ok := tree.Node.(*ast.IdentifierNode); ok && !knownVariable(id.Value) {
		d.errorf(x.Pos, "%s reads the variable %s, which does not exist; for the text %s write {value: %s}",
			sc.what, id.Value, quote(id.Value), quote(id.Value))
	}
	return v.out
}

func knownVariable(name string) bool {
	switch name {
	case "row", "parent", "group", "fields", "nil", "true", "false":
		return true
	}
	return false
}

type scanVisitor struct {
	x   *Expr
	sc  exprScope
	d   *diags
	out *scan
}

func (v *scanVisitor) at(n ast.Node) Pos {
	return v.x.PosAt(n.Location().From)
}

func (v *scanVisitor) Visit(node *ast.Node) {
	switch n := (*node).(type) {
	case *ast.CallNode:
		id, ok := n.Callee.(*ast.IdentifierNode)
		if !ok {
			return
		}
		switch id.Value {
		case "ref", "lookup":
			if len(n.Arguments) < 2 {
				v.d.errorf(v.at(n), "%s: %s() takes the %s's name and a key: %s(\"name\", key)", v.sc.what, id.Value, kindOf(id.Value), id.Value)
				return
			}
			s, ok := n.Arguments[0].(*ast.StringNode)
			if !ok {
				v.d.errorf(v.at(n.Arguments[0]), "%s: the first argument of %s() must be a %s name in quotes, such as %s(\"%s\", ...)",
					v.sc.what, id.Value, kindOf(id.Value), id.Value, exampleName(id.Value))
				return
			}
			use := nameUse{name: s.Value, pos: v.at(s)}
			if id.Value == "ref" {
				if v.sc.noRef {
					v.d.errorf(use.pos, "%s: ref() cannot be used here; lookups are built before any step runs", v.sc.what)
					return
				}
				v.out.refs = append(v.out.refs, use)
			} else {
				v.out.lookups = append(v.out.lookups, use)
			}
		case "file":
			v.out.callsFile = true
		}
	case *ast.IdentifierNode:
		if n.Value == "group" && v.out.group == nil {
			p := v.at(n)
			v.out.group = &p
		}
	case *ast.MemberNode:
		prop, ok := n.Property.(*ast.StringNode)
		if !ok {
			return
		}
		depth, ok := rowDepth(n.Node)
		if !ok {
			return
		}
		if depth >= len(v.sc.rows) {
			v.d.errorf(v.at(n), "%s reads %s, but there is no parent row here; \"parent\" is only available inside a sub-form", v.sc.what, parentPath(depth))
			return
		}
		v.out.columns = append(v.out.columns, columnRef{name: prop.Value, depth: depth, pos: v.at(prop)})
	}
}

func kindOf(fn string) string {
	if fn == "ref" {
		return "step"
	}
	return "lookup"
}

func exampleName(fn string) string {
	if fn == "ref" {
		return "customers"
	}
	return "agent_code"
}

func parentPath(depth int) string {
	s := "row"
	for i := 0; i < depth; i++ {
		s = "parent." + s
	}
	return s
}

// rowDepth recognises row (0), parent.row (1), parent.parent.row (2)...
func rowDepth(n ast.Node) (int, bool) {
	if id, ok := n.(*ast.IdentifierNode); ok {
		return 0, id.Value == "row"
	}
	m, ok := n.(*ast.MemberNode)
	if !ok {
		return 0, false
	}
	if s, ok := m.Property.(*ast.StringNode); !ok || s.Value != "row" {
		return 0, false
	}
	hops := 0
	cur := m.Node
	for {
		switch c := cur.(type) {
		case *ast.IdentifierNode:
			if c.Value != "parent" {
				return 0, false
			}
			return hops + 1, true
		case *ast.MemberNode:
			s, ok := c.Property.(*ast.StringNode)
			if !ok || s.Value != "parent" {
				return 0, false
			}
			hops++
			cur = c.Node
			if hops > 64 {
				return 0, false
			}
		default:
			return 0, false
		}
	}
}

// describeExprPlace names an expression of a step or sub-form for messages.
func fieldWhat(field string, owner string) string {
	return fmt.Sprintf("field %s of %s", quote(field), owner)
}
