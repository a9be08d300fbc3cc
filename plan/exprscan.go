package plan

import (
	"errors"
	"fmt"
	"slices"

	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/builtin"
	"github.com/expr-lang/expr/file"
	"github.com/expr-lang/expr/parser"
	"github.com/migrate-tool/migrate/internal/didyoumean"
)

// nameUse is a name given as the first argument of ref(), lookup() or map().
type nameUse struct {
	name string
	pos  Pos
}

// scan is what one expression reads and calls, found by walking its AST.
type scan struct {
	refs      []nameUse
	lookups   []nameUse
	maps      []nameUse // map("name", value): a value map
	callsFile bool
	group     *Pos // where the expression first reads `group`
	columns   []columnRef

	// Names are judged once the walk is done: expr-lang's walk visits a
	// node's children before the node, so an identifier is seen before the
	// call or member access that gives it its meaning.
	idents  []*ast.IdentifierNode
	callees map[*ast.IdentifierNode]bool
	members map[*ast.IdentifierNode]*ast.MemberNode // rwo in rwo.Name
	lets    map[string]bool                         // let x = ...; x
	// pointed are the columns read as #.X or .X inside a predicate whose
	// builtin (map, filter, ...) is not walked yet.
	pointed []columnRef
}

// columnRef is a column an expression reads from the rows of source src:
// row.X, parent.row.X, or a row of group.
type columnRef struct {
	name string
	src  string
	pos  Pos
}

// exprScope says what `row` and `parent` mean where an expression stands.
type exprScope struct {
	// rows[0] is the source `row` reads, rows[1] the one `parent.row`
	// reads, ... ("" when unknown).
	rows []string
	// group is the source of the rows of `group` ("" without group_by).
	group string
	what  string // the expression's place, for messages
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
	v := &scanVisitor{x: x, sc: sc, d: d, out: &scan{
		callees: map[*ast.IdentifierNode]bool{},
		members: map[*ast.IdentifierNode]*ast.MemberNode{},
		lets:    map[string]bool{},
	}}
	ast.Walk(&tree.Node, v)
	if id, ok := tree.Node.(*ast.IdentifierNode); ok && !knownVariable(id.Value) {
		d.errorf(x.Pos, "%s reads the variable %s, which does not exist; for the text %s write {value: %s}",
			sc.what, id.Value, quote(id.Value), quote(id.Value))
		return v.out
	}
	v.checkNames()
	return v.out
}

// checkNames reports every identifier that is neither a variable of the
// expression's scope nor a function, each at its place with the nearest
// name that is.
func (v *scanVisitor) checkNames() {
	for _, id := range v.out.idents {
		name := id.Value
		if v.out.callees[id] {
			if slices.Contains(Functions, name) || slices.Contains(builtin.Names, name) {
				continue
			}
			v.d.errorf(v.at(id), "%s: unknown function %s%s", v.sc.what, name, codeSuggestion(name, Functions, ""))
			continue
		}
		if knownVariable(name) || v.out.lets[name] || name == "$env" {
			continue
		}
		vars := []string{"row"}
		if len(v.sc.rows) > 1 {
			vars = append(vars, "parent")
		}
		if v.sc.group != "" {
			vars = append(vars, "group")
		}
		rest := ""
		if m := v.out.members[id]; m != nil {
			rest = v.memberText(m)
		}
		if s := codeSuggestion(name, vars, rest); s != "" {
			v.d.errorf(v.at(id), "%s: unknown name %s%s", v.sc.what, name, s)
			continue
		}
		v.d.errorf(v.at(id), "%s: unknown name %s; a column is read as row.%s, and text is written in quotes", v.sc.what, name, name)
	}
}

// codeSuggestion is "; did you mean row.Name?": the nearest of names to
// name, followed by rest, written as in an expression (unquoted).
func codeSuggestion(name string, names []string, rest string) string {
	if best := didyoumean.Closest(name, names); best != "" {
		return "; did you mean " + best + rest + "?"
	}
	return ""
}

// memberText writes the access m makes on its object: .Name or ["Part No"].
func (v *scanVisitor) memberText(m *ast.MemberNode) string {
	s, ok := m.Property.(*ast.StringNode)
	if !ok {
		return ""
	}
	if v.x.quoted(s) {
		return "[" + fmt.Sprintf("%q", s.Value) + "]"
	}
	return "." + s.Value
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
		v.out.callees[id] = true
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
			use := nameUse{name: s.Value, pos: v.x.NamePos(s)}
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
		v.out.idents = append(v.out.idents, n)
		if n.Value == "group" && v.out.group == nil {
			p := v.at(n)
			v.out.group = &p
		}
	case *ast.VariableDeclaratorNode:
		v.out.lets[n.Name] = true
	case *ast.BuiltinNode:
		if name, ok := ValueMapCall(n); ok {
			v.out.maps = append(v.out.maps, nameUse{name: name.Value, pos: v.x.NamePos(name)})
			v.out.pointed = nil
			return
		}
		// The columns read as #.X in this builtin's predicate are the
		// columns of its collection's rows when that is group.
		hasPredicate := false
		for _, a := range n.Arguments {
			_, ok := a.(*ast.PredicateNode)
			hasPredicate = hasPredicate || ok
		}
		if !hasPredicate {
			return
		}
		if len(n.Arguments) > 0 && isGroupRows(n.Arguments[0]) && v.sc.group != "" {
			for _, c := range v.out.pointed {
				c.src = v.sc.group
				v.out.columns = append(v.out.columns, c)
			}
		}
		v.out.pointed = nil
	case *ast.MemberNode:
		if id, ok := n.Node.(*ast.IdentifierNode); ok {
			v.out.members[id] = n
		}
		prop, ok := n.Property.(*ast.StringNode)
		if !ok {
			return
		}
		if p, ok := n.Node.(*ast.PointerNode); ok && p.Name == "" {
			v.out.pointed = append(v.out.pointed, columnRef{name: prop.Value, pos: v.x.NamePos(prop)})
			return
		}
		if isParent(n.Node) && prop.Value != "row" && prop.Value != "fields" && prop.Value != "parent" {
			p := parentText(n.Node)
			hint := ""
			if best := didyoumean.Closest(prop.Value, []string{"row", "fields"}); best != "" {
				hint = "; did you mean " + p + "." + best + "?"
			}
			v.d.errorf(v.x.NamePos(prop), "%s: unknown name %s.%s%s", v.sc.what, p, prop.Value, hint)
			return
		}
		if isGroupRow(n.Node) {
			if v.sc.group != "" {
				v.out.columns = append(v.out.columns, columnRef{name: prop.Value, src: v.sc.group, pos: v.x.NamePos(prop)})
			}
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
		v.out.columns = append(v.out.columns, columnRef{name: prop.Value, src: v.sc.rows[depth], pos: v.x.NamePos(prop)})
	}
}

// ValueMapCall recognises map("name", value), a value map's call: the
// parser reads it as expr-lang's builtin map(collection, predicate), whose
// collection is never a quoted text, so a quoted first argument tells the
// two apart (map(group, #.Qty) stays the builtin). It returns the name.
func ValueMapCall(n *ast.BuiltinNode) (*ast.StringNode, bool) {
	if n.Name != "map" || len(n.Arguments) != 2 {
		return nil, false
	}
	s, ok := n.Arguments[0].(*ast.StringNode)
	return s, ok
}

// isParent recognises parent, parent.parent, ...
func isParent(n ast.Node) bool {
	switch n := n.(type) {
	case *ast.IdentifierNode:
		return n.Value == "parent"
	case *ast.MemberNode:
		s, ok := n.Property.(*ast.StringNode)
		return ok && s.Value == "parent" && isParent(n.Node)
	}
	return false
}

// parentText writes a chain isParent recognised: parent.parent.
func parentText(n ast.Node) string {
	if m, ok := n.(*ast.MemberNode); ok {
		return parentText(m.Node) + ".parent"
	}
	return "parent"
}

// isGroupRows recognises the rows of the group: group, a slice of it, and
// what filter or sortBy keep of it.
func isGroupRows(n ast.Node) bool {
	switch n := n.(type) {
	case *ast.IdentifierNode:
		return n.Value == "group"
	case *ast.SliceNode:
		return isGroupRows(n.Node)
	case *ast.BuiltinNode:
		switch n.Name {
		case "filter", "sortBy", "reverse", "take":
			return len(n.Arguments) > 0 && isGroupRows(n.Arguments[0])
		}
	}
	return false
}

// isGroupRow recognises one row of the group: group[0], first(group),
// find(group, ...), ...
func isGroupRow(n ast.Node) bool {
	switch n := n.(type) {
	case *ast.MemberNode:
		_, named := n.Property.(*ast.StringNode)
		return !named && isGroupRows(n.Node)
	case *ast.BuiltinNode:
		switch n.Name {
		case "first", "last", "find", "findLast":
			return len(n.Arguments) > 0 && isGroupRows(n.Arguments[0])
		}
	}
	return false
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

// fieldWhat names an expression of a step or sub-form for messages.
func fieldWhat(field string, owner string) string {
	return fmt.Sprintf("field %s of %s", quote(field), owner)
}
