package transform

import (
	"fmt"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/ast"
	"github.com/migrate-tool/migrate/internal/didyoumean"
	"github.com/migrate-tool/migrate/plan"
)

// valueMap is a value map of the plan (maps: units: {kg: KG}) ready to
// read: source value → target value.
type valueMap struct {
	name   string
	values map[string]string
	keys   []string // the source values in plan order, for suggestions
	// file is the mapping file of a file map ("" for a map in the plan);
	// pending are its rows not confirmed, or confirmed without a target.
	file    string
	pending map[string]MapRow
}

func newValueMaps(p *plan.Plan) map[string]*valueMap {
	out := make(map[string]*valueMap, len(p.Maps))
	for _, m := range p.Maps {
		vm := &valueMap{name: m.Name, values: make(map[string]string, len(m.Entries)), file: m.File, pending: map[string]MapRow{}}
		for _, e := range m.Entries {
			vm.values[e.Source] = e.Target
			vm.keys = append(vm.keys, e.Source)
		}
		out[m.Name] = vm
	}
	return out
}

// mapFunc is the function map("name", value) becomes once compiled. The
// parser reads map("name", value) as expr-lang's builtin map(collection,
// predicate) (plan.ValueMapCall tells them apart); the name has a space,
// so no expression can call it by itself and the builtin stays as it is.
const mapFunc = "value map"

// mapFunction is map("name", value) as the compiler calls it.
func (p *Program) mapFunction() expr.Option {
	return expr.Function(mapFunc, p.fnMap, new(func(any, any) any))
}

// fnMap implements map(name, value): the target value of value's text.
// An empty value stays empty unless the map gives "" a value; a value the
// map lacks is the row's error, with the nearest value it has.
func (p *Program) fnMap(params ...any) (any, error) {
	if err := arity("map", params, 2, 2); err != nil {
		return nil, err
	}
	name, _ := params[0].(string)
	m := p.maps[name]
	if m == nil {
		return nil, fmt.Errorf("map: unknown map %q", name)
	}
	key, ok := asText(params[1])
	if !ok {
		return nil, argError("map", 2, "a value (text or number)", params[1])
	}
	if v, ok := m.values[key]; ok {
		return v, nil
	}
	if key == "" {
		return nil, nil
	}
	if m.file != "" {
		return nil, &failError{m.refusal(key)}
	}
	msg := fmt.Sprintf("map %s has no value %s", quote(name), quote(key))
	if best := m.nearest(key); best != "" {
		return nil, &failError{fmt.Sprintf("%s; did you mean %s?", msg, quote(best))}
	}
	return nil, &failError{msg + "; add it to the map"}
}

// refusal says why a file map does not give key a value: the row of its
// mapping file is not confirmed or has no target, or there is none.
func (m *valueMap) refusal(key string) string {
	r, ok := m.pending[key]
	switch {
	case !ok:
		return fmt.Sprintf("map %s: %s is not in %s; run migrate mapping to add it", quote(m.name), quote(key), m.file)
	case r.Target == "":
		return fmt.Sprintf("map %s: %s has no target in %s (%s)", quote(m.name), quote(key), m.file, r.Loc)
	}
	return fmt.Sprintf("map %s: %s → %s is not confirmed in %s (%s)", quote(m.name), quote(key), quote(r.Target), m.file, r.Loc)
}

// MapKey is a cell's value as map() looks it up: its text; ok is false for
// a value that is not text or a number (a date, a list).
func MapKey(v any) (string, bool) { return asText(v) }

// MapRefusal says why the file map name does not give key a target: ""
// when it does, or when the map is written in the plan (a value it lacks
// is the row's error).
func (p *Program) MapRefusal(name, key string) string {
	m := p.maps[name]
	if m == nil || m.file == "" {
		return ""
	}
	if _, ok := m.values[key]; ok || key == "" {
		return ""
	}
	return m.refusal(key)
}

// nearest is the map's value nearest to key: the same but for case, or
// the closest by edit distance; "" when none is near.
func (m *valueMap) nearest(key string) string { return didyoumean.Nearest(key, m.keys) }

// patchMapCall rewrites map("name", value), which the parser gives as the
// builtin map with a predicate, into a call of mapFunc. It reports whether
// node was one.
func patchMapCall(node *ast.Node) bool {
	b, ok := (*node).(*ast.BuiltinNode)
	if !ok {
		return false
	}
	name, ok := plan.ValueMapCall(b)
	if !ok {
		return false
	}
	value := b.Arguments[1]
	if pr, ok := value.(*ast.PredicateNode); ok {
		value = pr.Node
	}
	ast.Patch(node, &ast.CallNode{Callee: &ast.IdentifierNode{Value: mapFunc}, Arguments: []ast.Node{name, value}})
	return true
}
