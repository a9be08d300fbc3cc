package transform

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/conf"
	"github.com/expr-lang/expr/file"
	"github.com/expr-lang/expr/parser"
	"github.com/expr-lang/expr/types"
	"github.com/expr-lang/expr/vm"

	"github.com/migrate-tool/migrate/internal/didyoumean"
	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/plan"
	"github.com/migrate-tool/migrate/source"
)

// Options are what Compile needs beyond the plan and the metadata.
type Options struct {
	// Now is the clock of now(); default time.Now.
	Now func() time.Time
	// Getenv reads env(NAME); default os.Getenv.
	Getenv func(string) string
	// AllowOutside lets file() read files outside the plan's folder.
	AllowOutside bool
	// MaxFileSize is the largest file file() reads; 0: DefaultMaxFileSize.
	MaxFileSize int64
	// Memory is what a run aims to stay under (`--memory`); 0:
	// DefaultMemory. A grouped step's rows and a linked source past a share
	// of it are kept in a temporary file (spill.go).
	Memory int64
}

// Program is a compiled plan: every expression compiled once, every field
// bound to its metadata property. It is safe for concurrent use by several
// Records calls once BuildLookups has returned.
type Program struct {
	plan       *plan.Plan
	md         *odata.Metadata
	opts       Options
	loc        *time.Location
	dir        string
	maxFile    int64
	defaultSep byte
	empty      Empty
	regexps    regexCache
	steps      map[string]*stepProg
	lookups    []*lookupProg
	lookupIdx  map[string]*lookupProg
	maps       map[string]*valueMap // the plan's value maps, by name
	// columns are the row.X references of all expressions, by source name,
	// checked against each source's real header when it is opened.
	columns map[string][]colRef // by columnsKey
	// wholeRow is set when some expression uses `row` other than as row.X
	// (row[name], parent.row, group): only then are rows built as maps.
	wholeRow bool
	tables   atomic.Pointer[map[string]*lookupTable]
	// target reads the lookups that read the target (ReadTarget).
	target TargetReader
}

// compiled is one expression of the plan.
type compiled struct {
	prog     *vm.Program // nil for a constant
	constVal any
	column   string     // the column when the expression is just row.X
	reads    []string   // the columns it reads as row.X, each once
	lookup   string     // the lookup when the expression is lookup("NAME", row.X)
	mapped   string     // the column when it is map("NAME", row.X): where a value the map lacks is
	mapName  string     // and NAME
	expr     *plan.Expr // where it is written, for messages
	pos      plan.Pos
}

type colRef struct {
	column string
	pos    plan.Pos
}

// form is what a step and a sub-form share: a row scope and fields.
type form struct {
	name   string // the step's name or the navigation property's
	entity *odata.EntityType
	source *plan.Source // whose rows `row` holds
	conv   converter
	when   *compiled
	fields []*field
	order  []string
	subs   []*subform
	depth  int
	// creates: the form's record is always created (a step that inserts,
	// a sub-form's line), so a mandatory field left out of it is missing.
	// An upsert may patch what exists, and an update does.
	creates bool
}

// field is the form's field of that name, or nil.
func (f *form) field(name string) *field {
	for _, fl := range f.fields {
		if fl.name == name {
			return fl
		}
	}
	return nil
}

// FieldColumn is the source column a field reads when its expression is
// just row.X, "" otherwise: where a problem with its value is located.
// navs names the sub-forms from the step down to the field's form.
func (p *Program) FieldColumn(step string, navs []string, name string) string {
	sp := p.steps[step]
	if sp == nil {
		return ""
	}
	f := &sp.form
	for _, nav := range navs {
		var next *form
		for _, sf := range f.subs {
			if sf.name == nav {
				next = &sf.form
				break
			}
		}
		if next == nil {
			return ""
		}
		f = next
	}
	if fl := f.field(name); fl != nil && fl.expr != nil {
		return fl.expr.column
	}
	return ""
}

type field struct {
	name string
	expr *compiled
	prop *odata.Property
	pos  plan.Pos
	// mandatory: the metadata marks the field Mandatory (from 25.1), and
	// the server does not number it: blank, the server refuses the record.
	mandatory bool
}

type subKind int

const (
	subOwn    subKind = iota // the parent's own row
	subGroup                 // one child per row of the parent's group
	subLinked                // rows of another source, by link
	subEach                  // one per element of a list (each: EXPR)
)

type subform struct {
	form
	kind       subKind
	single     bool
	text       bool // a text sub-form (docs/service.md, Text sub-forms): single, with a TEXT field
	replace    bool
	linkParent *compiled
	linkChild  *compiled
	linkID     int // index of its link table in a run
	each       *compiled
}

type stepProg struct {
	form
	step    *plan.Step
	id      *compiled
	groupBy *compiled
	key     []string
	links   int
}

type lookupProg struct {
	lookup *plan.Lookup
	source *plan.Source
	key    *compiled
	value  *compiled
}

// refFunc is ref(step, id) as the environment carries it: it depends on
// the Refs of each Records call, so it cannot be a shared expr.Function.
type refFunc = func(step string, id any) (any, error)

// Compile compiles every expression of p and binds every field to its
// property in md (md may be nil: values are then only checked as text). All
// problems are returned as diagnostics at their plan position; the Program
// is usable only when there are none.
func Compile(p *plan.Plan, md *odata.Metadata, opts Options) (*Program, plan.Diagnostics) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Getenv == nil {
		opts.Getenv = os.Getenv
	}
	prog := &Program{
		plan:       p,
		md:         md,
		opts:       opts,
		loc:        time.UTC,
		dir:        p.Dir,
		maxFile:    opts.MaxFileSize,
		defaultSep: '.',
		empty:      EmptyOmit,
		steps:      make(map[string]*stepProg),
		lookupIdx:  make(map[string]*lookupProg),
		columns:    make(map[string][]colRef),
		maps:       newValueMaps(p),
	}
	if prog.maxFile <= 0 {
		prog.maxFile = DefaultMaxFileSize
	}
	if prog.dir == "" {
		prog.dir = "."
	}
	c := &compiler{p: prog, sources: make(map[string]*plan.Source)}
	c.lib = append(prog.library(), prog.decimalOperators()...)
	c.lib = append(c.lib, prog.mapFunction())
	t := p.Target
	if t.Timezone != "" {
		loc, err := time.LoadLocation(t.Timezone)
		if err != nil {
			c.diag(t.Pos, "unknown timezone %q; use an IANA name such as Asia/Jerusalem or UTC", t.Timezone)
		} else {
			prog.loc = loc
		}
	}
	switch t.DecimalSeparator {
	case "", ".":
	case ",":
		prog.defaultSep = ','
	default:
		c.diag(t.Pos, "decimal_separator must be \".\" or \",\", not %q", t.DecimalSeparator)
	}
	switch t.Empty {
	case "", "omit":
	case "null", "keep":
		prog.empty = Empty(t.Empty)
	default:
		c.diag(t.Pos, "empty must be omit, null or keep, not %q", t.Empty)
	}
	for _, s := range p.Sources {
		c.sources[s.Name] = s
		if s.DecimalSeparator != "" && s.DecimalSeparator != "." && s.DecimalSeparator != "," {
			c.diag(s.Pos, "decimal_separator of source %s must be \".\" or \",\", not %q", s.Name, s.DecimalSeparator)
		}
	}
	for _, l := range p.Lookups {
		c.compileLookup(l)
	}
	for _, st := range p.Steps {
		c.compileStep(st)
	}
	sort.SliceStable(c.diags, func(i, j int) bool {
		a, b := c.diags[i].Pos, c.diags[j].Pos
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Col < b.Col
	})
	return prog, c.diags
}

type compiler struct {
	p       *Program
	owner   string // "step NAME" or "lookup NAME" being compiled
	lib     []expr.Option
	diags   plan.Diagnostics
	sources map[string]*plan.Source
	links   int
}

func (c *compiler) diag(pos plan.Pos, format string, args ...any) {
	c.diags = append(c.diags, plan.Diagnostic{Pos: pos, Message: fmt.Sprintf(format, args...)})
}

// scope describes what an expression may name.
type scope struct {
	rowSource   string   // source of `row`
	parentRows  []string // sources of parent.row, parent.parent.row, ...
	grouped     bool     // `group` exists
	depth       int      // 0: a step; >0: a sub-form
	lookupScope bool
}

// env describes the variables of the scope to expr-lang's checker.
func (s scope) env() types.Map {
	anyMap := types.TypeOf(map[string]any{})
	env := types.Map{
		"row": anyMap,
		"ref": types.TypeOf(refFunc(nil)),
	}
	if s.grouped {
		env["group"] = types.TypeOf([]any{})
	}
	if s.depth > 0 {
		parent := types.Map{"row": anyMap, "fields": anyMap}
		if s.depth > 1 {
			parent["parent"] = anyMap
		}
		env["parent"] = parent
	}
	return env
}

func (c *compiler) sourceSep(s *plan.Source) byte {
	if s != nil {
		switch s.DecimalSeparator {
		case ",":
			return ','
		case ".":
			return '.'
		}
	}
	return c.p.defaultSep
}

func (c *compiler) converter(s *plan.Source) converter {
	return converter{loc: c.p.loc, sep: c.sourceSep(s), empty: c.p.empty}
}

func (c *compiler) source(name string, pos plan.Pos) *plan.Source {
	// plan.Check reports an unknown source; the step then cannot run.
	return c.sources[name]
}

func (c *compiler) compileLookup(l *plan.Lookup) {
	if l.Entity != "" { // read from the target by BuildLookups
		lp := &lookupProg{lookup: l}
		c.p.lookups = append(c.p.lookups, lp)
		c.p.lookupIdx[l.Name] = lp
		return
	}
	lp := &lookupProg{lookup: l, source: c.source(l.Source, l.Pos)}
	c.owner = "lookup " + l.Name
	sc := scope{rowSource: l.Source, lookupScope: true}
	lp.key = c.compileExpr(&l.Key, sc)
	lp.value = c.compileExpr(&l.Value, sc)
	c.p.lookups = append(c.p.lookups, lp)
	c.p.lookupIdx[l.Name] = lp
}

// entityType finds a step's entity: an entity set, else a type name.
func (c *compiler) entityType(name string, pos plan.Pos) *odata.EntityType {
	md := c.p.md
	if md == nil {
		return nil
	}
	if set := md.EntitySet(name); set != nil && set.Type != nil {
		return set.Type
	}
	if t := md.Type(name); t != nil {
		return t
	}
	// plan.CheckMetadata reports an unknown entity; its fields are then
	// written unconverted.
	return nil
}

func (c *compiler) compileStep(st *plan.Step) {
	sp := &stepProg{step: st}
	c.owner = "step " + st.Name
	sp.name = st.Name
	sp.source = c.source(st.Source, st.Pos)
	sp.conv = c.converter(sp.source)
	sp.entity = c.entityType(st.Entity, st.Pos)
	if sp.entity != nil {
		sp.key = sp.entity.Key
	}
	grouped := st.GroupBy != nil
	sc := scope{rowSource: st.Source, grouped: grouped}
	// when and group_by see single rows before grouping.
	pre := scope{rowSource: st.Source}
	if st.When != nil {
		sp.when = c.compileExpr(st.When, pre)
	}
	if st.GroupBy != nil {
		sp.groupBy = c.compileExpr(st.GroupBy, pre)
	}
	if st.ID != nil {
		sp.id = c.compileExpr(st.ID, sc)
	}
	c.links = 0
	sp.creates = st.Mode == plan.ModeInsert || st.Mode == ""
	c.compileFields(&sp.form, st.Fields, sc, st.Entity)
	for _, sf := range st.Subforms {
		sp.subs = append(sp.subs, c.compileSubform(sf, &sp.form, sc))
	}
	sp.links = c.links
	c.p.steps[st.Name] = sp
}

// compileFields compiles a form's fields; entity is the name the server
// numbers a key under (a step's entity set, a sub-form's type).
func (c *compiler) compileFields(f *form, fields []*plan.Field, sc scope, entity string) {
	for _, pf := range fields {
		fl := &field{name: pf.Name, pos: pf.Pos}
		if f.entity != nil {
			// An unknown field is plan.CheckMetadata's to report. A computed
			// one is refused here too (same message), so that no program
			// can write it (docs/service.md, Keys: auto-unique keys are
			// read-only).
			fl.prop = f.entity.Property(pf.Name)
			if msg := odata.WriteRefusal(fl.prop); msg != "" {
				c.diag(pf.Pos, "%s.%s %s", f.entity.Name, pf.Name, msg)
			}
			fl.mandatory = fl.prop != nil && fl.prop.Mandatory && fl.prop.Writable() && !plan.ServerNumbered(entity, pf.Name)
		}
		fl.expr = c.compileExpr(&pf.Expr, sc)
		f.fields = append(f.fields, fl)
		f.order = append(f.order, pf.Name)
	}
}

func (c *compiler) compileSubform(sf *plan.Subform, parent *form, psc scope) *subform {
	s := &subform{replace: sf.Lines == plan.LinesReplace, single: false}
	s.name = sf.Name
	s.depth = parent.depth + 1
	if parent.entity != nil {
		// plan.CheckMetadata reports an unknown sub-form.
		if nav := parent.entity.Navigation(sf.Name); nav != nil {
			s.single = !nav.Collection
			s.entity = c.p.md.Type(nav.Type)
		}
	}
	sc := scope{
		grouped:    psc.grouped,
		depth:      psc.depth + 1,
		parentRows: append([]string{psc.rowSource}, psc.parentRows...),
	}
	switch {
	case sf.Each != nil:
		// Each element is the child's row: no source, no header to check
		// row.X against (plan.Check refuses each with a source).
		s.kind = subEach
		s.each = c.compileExpr(sf.Each, psc)
	case sf.Source == "":
		s.kind = subOwn
		s.source = parent.source
		sc.rowSource = psc.rowSource
	case sf.Source == "group":
		s.kind = subGroup
		s.source = parent.source
		sc.rowSource = psc.rowSource
	default:
		s.kind = subLinked
		s.source = c.source(sf.Source, sf.Pos)
		sc.rowSource = sf.Source
		if sf.Link != nil { // plan.Check reports a missing link
			s.linkParent = c.compileExpr(&sf.Link.Parent, psc)
			s.linkChild = c.compileExpr(&sf.Link.Child, scope{rowSource: sf.Source})
			s.linkID = c.links
			c.links++
		}
	}
	s.text = s.single && s.entity != nil && s.entity.Property("TEXT") != nil
	s.conv = c.converter(s.source)
	if sf.When != nil {
		s.when = c.compileExpr(sf.When, sc)
	}
	s.creates = true // lines are added, never patched
	typeName := sf.Name
	if s.entity != nil {
		typeName = s.entity.Name
	}
	c.compileFields(&s.form, sf.Fields, sc, typeName)
	for _, sub := range sf.Subforms {
		s.subs = append(s.subs, c.compileSubform(sub, &s.form, sc))
	}
	return s
}

// colPrefix names the variable that holds column X of the row: "row.X".
// No expression can name it itself (row.X parses as a member access).
const colPrefix = "row."

func colVar(column string) string { return colPrefix + column }

// constValue is a constant's value: numbers keep the text they were
// written with (source.Number), so 12.10 stays exact.
func constValue(e *plan.Expr) any {
	switch e.Const.(type) {
	case int64, float64, int:
		if e.ConstText != "" {
			if _, err := odata.ParseDecimal(e.ConstText, '.'); err == nil {
				return source.Number(strings.TrimPrefix(strings.TrimSpace(e.ConstText), "+"))
			}
		}
	}
	return e.Const
}

// analysis collects what the library checks beyond expr's own type checker.
type analysis struct {
	patch bool // rewrite row.X into the variable "row.X" (see colVar)
	// rowIdents counts `row`, patched the row.X rewritten; whole is set by
	// parent, group or $env. Together they say whether rows are needed as maps.
	rowIdents, patched int
	whole              bool
	last               ast.Node
	columns            []nodeRef // row.X
	parents            []nodeRef // parent.row.X (depth in level)
	lookups            []nodeRef // lookup("name", ...)
	regexps            []nodeRef // regex_*(s, "pattern")
	envs               []nodeRef // env("NAME")
}

type nodeRef struct {
	name  string
	fn    string
	level int
	node  ast.Node // the name in the expression
}

func (a *analysis) Visit(node *ast.Node) {
	if a.patch && patchMapCall(node) {
		a.last = *node
		return
	}
	a.last = *node
	switch n := (*node).(type) {
	case *ast.IdentifierNode:
		switch n.Value {
		case "row":
			a.rowIdents++
		case "parent", "group", "$env":
			a.whole = true
		}
	case *ast.MemberNode:
		prop, ok := n.Property.(*ast.StringNode)
		if !ok {
			return
		}
		if id, ok := n.Node.(*ast.IdentifierNode); ok && id.Value == "row" {
			a.columns = append(a.columns, nodeRef{name: prop.Value, node: prop})
			if a.patch && !n.Method {
				a.patched++
				ast.Patch(node, &ast.IdentifierNode{Value: colVar(prop.Value)})
				a.last = *node
			}
			return
		}
		// parent.row.X, parent.parent.row.X
		if m, ok := n.Node.(*ast.MemberNode); ok {
			if rp, ok := m.Property.(*ast.StringNode); ok && rp.Value == "row" {
				level := 0
				inner := m.Node
				for {
					if id, ok := inner.(*ast.IdentifierNode); ok && id.Value == "parent" {
						a.parents = append(a.parents, nodeRef{name: prop.Value, level: level, node: prop})
						return
					}
					im, ok := inner.(*ast.MemberNode)
					if !ok {
						return
					}
					if p, ok := im.Property.(*ast.StringNode); !ok || p.Value != "parent" {
						return
					}
					level++
					inner = im.Node
				}
			}
		}
	case *ast.CallNode:
		id, ok := n.Callee.(*ast.IdentifierNode)
		if !ok || len(n.Arguments) == 0 {
			return
		}
		switch id.Value {
		case "lookup":
			if s, ok := n.Arguments[0].(*ast.StringNode); ok {
				a.lookups = append(a.lookups, nodeRef{name: s.Value, node: n.Arguments[0]})
			}
		case "env":
			if s, ok := n.Arguments[0].(*ast.StringNode); ok {
				a.envs = append(a.envs, nodeRef{name: s.Value, node: n.Arguments[0]})
			}
		case "regex_match", "regex_replace":
			if len(n.Arguments) >= 2 {
				if s, ok := n.Arguments[1].(*ast.StringNode); ok {
					a.regexps = append(a.regexps, nodeRef{name: s.Value, fn: id.Value, node: n.Arguments[1]})
				}
			}
		}
	}
}

// compileExpr compiles one expression in its scope and checks its column,
// lookup, step and pattern names. It returns nil when it cannot be compiled.
func (c *compiler) compileExpr(e *plan.Expr, sc scope) *compiled {
	if e == nil {
		return nil
	}
	ce := &compiled{expr: e, pos: e.Pos}
	if e.IsConst {
		ce.constVal = constValue(e)
		return ce
	}
	if strings.TrimSpace(e.Src) == "" {
		c.diag(e.Pos, "empty expression; write {value: \"\"} for an empty constant")
		return nil
	}
	// First pass: which columns the expression reads as row.X. They become
	// variables of their own, loaded without reflection (expr-lang fetches a
	// map member through reflect, an allocation per access).
	env := sc.env()
	if tree, err := parser.Parse(e.Src); err == nil {
		pre := &analysis{}
		ast.Walk(&tree.Node, pre)
		for _, r := range pre.columns {
			env[colVar(r.name)] = types.Any
		}
	}
	a := &analysis{patch: true}
	opts := append([]expr.Option{expr.Env(env), expr.Patch(a)}, c.lib...)
	prog, err := expr.Compile(e.Src, opts...)
	if err != nil {
		var fe *file.Error
		if errors.As(err, &fe) {
			msg := exprMessage(fe.Message)
			if name, ok := strings.CutPrefix(msg, "unknown name "); ok {
				msg += didyoumean.Hint(name, append(c.functionNames(), mapKeys(env)...))
			}
			c.diag(e.PosOf(fe.Line, fe.Column), "%s", msg)
		} else {
			c.diag(e.Pos, "%v", err)
		}
		return nil
	}
	ce.prog = prog
	if a.whole || a.rowIdents > a.patched {
		c.p.wholeRow = true
	}
	if id, ok := a.last.(*ast.IdentifierNode); ok && strings.HasPrefix(id.Value, colPrefix) {
		ce.column = strings.TrimPrefix(id.Value, colPrefix)
	}
	if call, ok := a.last.(*ast.CallNode); ok && len(call.Arguments) == 2 {
		fn, _ := call.Callee.(*ast.IdentifierNode)
		name, _ := call.Arguments[0].(*ast.StringNode)
		arg, _ := call.Arguments[1].(*ast.IdentifierNode)
		if fn != nil && name != nil && arg != nil && strings.HasPrefix(arg.Value, colPrefix) {
			switch fn.Value {
			case "lookup":
				ce.lookup = name.Value
				ce.reads = []string{strings.TrimPrefix(arg.Value, colPrefix)}
			case mapFunc:
				ce.mapped, ce.mapName = strings.TrimPrefix(arg.Value, colPrefix), name.Value
			}
		}
	}
	for _, r := range a.columns {
		if !slices.Contains(ce.reads, r.name) {
			ce.reads = append(ce.reads, r.name)
		}
	}
	for _, r := range a.columns {
		c.fileColumn(sc.rowSource, r, e)
	}
	for _, r := range a.parents {
		if r.level < len(sc.parentRows) {
			c.fileColumn(sc.parentRows[r.level], r, e)
		}
	}
	// Unknown lookup and step names are plan.Check's to report; a lookup
	// inside a lookup would need an order between lookups, which there is not.
	for _, r := range a.lookups {
		if sc.lookupScope {
			c.diag(e.PosAt(r.node.Location().From), "lookup() cannot be used inside a lookup's key or value")
		}
	}
	for _, r := range a.regexps {
		if _, err := c.p.regexps.get(r.fn, r.name); err != nil {
			c.diag(e.PosAt(r.node.Location().From), "%v", err)
		}
	}
	for _, r := range a.envs {
		if err := envRefused(r.name); err != nil {
			c.diag(e.PosAt(r.node.Location().From), "%v", err)
		}
	}
	return ce
}

// fileColumn files a column an expression reads, to be checked against
// the source's header when it is opened (plan.CheckColumns checks it
// against the header validate saw).
func (c *compiler) fileColumn(src string, r nodeRef, e *plan.Expr) {
	if src == "" {
		return
	}
	key := columnsKey(c.owner, src)
	c.p.columns[key] = append(c.p.columns[key], colRef{column: r.name, pos: e.NamePos(r.node)})
}

// columnsKey files column references by the step (or lookup) whose
// expressions make them, so a mistake in one step does not stop another
// that reads the same source.
func columnsKey(owner, src string) string { return owner + "\x00" + src }

// checkHeader checks the row.X references of owner's expressions over
// source name against the header the source really has.
func (p *Program) checkHeader(owner, name string, h *source.Header) error {
	if h == nil {
		return nil
	}
	var errs []error
	seen := make(map[string]bool)
	for _, r := range p.columns[columnsKey(owner, name)] {
		if _, ok := h.Index(r.column); ok || seen[r.column] {
			continue
		}
		seen[r.column] = true
		errs = append(errs, plan.Diagnostic{Pos: r.pos, Message: plan.MissingColumn(name, r.column, h.Names)})
	}
	return errors.Join(errs...)
}

// functionNames lists the function library, for "did you mean upper?".
func (c *compiler) functionNames() []string {
	cfg := conf.CreateNew()
	for _, o := range c.lib {
		o(cfg)
	}
	return mapKeys(cfg.Functions)
}

func mapKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		if !strings.HasPrefix(k, colPrefix) && k != mapFunc {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// exprMessage tidies expr-lang's messages for people who write plans.
func exprMessage(m string) string {
	return strings.TrimSpace(m)
}
