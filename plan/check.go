package plan

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/migrate-tool/migrate/internal/didyoumean"
)

// Check runs the static checks that need no metadata and no source file:
// step names are unique; sources, lookups, after: and ref() targets exist;
// steps form no cycle; sub-form sources, links and group_by agree; every
// expression parses. It fills Step.Refs. Decode and Load run it already.
// Unused sources and lookups are warnings.
func (p *Plan) Check() Diagnostics {
	d := &diags{list: p.check()}
	return d.sorted()
}

// Columns returns, per source name, every column an expression reads
// (row.X, row["X"]; parent.row.X counts for the parent's source), in plan
// order, so a caller that opened the sources can check that each exists.
// Uses whose source is unknown are left out (Check reports those).
func (p *Plan) Columns() map[string][]ColumnUse {
	return p.analyze().columns
}

// CheckColumns checks every column an expression reads (see Columns)
// against the header of its source: headers maps a source name to its
// column names. A source missing from headers (it could not be read) is not
// checked; its problem is reported where it is opened.
func (p *Plan) CheckColumns(headers map[string][]string) Diagnostics {
	d := &diags{}
	for src, uses := range p.Columns() {
		names, ok := headers[src]
		if !ok {
			continue
		}
		for _, u := range uses {
			if !slices.Contains(names, u.Name) {
				d.errorf(u.Pos, "%s", MissingColumn(src, u.Name, names))
			}
		}
	}
	return d.sorted()
}

// MissingColumn is the message for a column that the header of source src
// lacks, with the nearest column it has.
func MissingColumn(src, column string, header []string) string {
	return fmt.Sprintf("source %s has no column %s%s", src, quote(column), didyoumean.Hint(column, header))
}

// analysis is what walking every expression of the plan finds.
type analysis struct {
	diags
	refs        map[*Step][]nameUse
	columns     map[string][]ColumnUse
	usedSources map[string]bool
	usedLookups map[string]bool
	usedMaps    map[string]bool
	parseFailed bool // an expression did not parse
}

func (p *Plan) sourceByName(name string) *Source {
	return byName(p.Sources, name, func(s *Source) string { return s.Name })
}

func (p *Plan) lookupByName(name string) *Lookup {
	return byName(p.Lookups, name, func(l *Lookup) string { return l.Name })
}

// Step returns the first step of that name, or nil.
func (p *Plan) Step(name string) *Step {
	return byName(p.Steps, name, func(s *Step) string { return s.Name })
}

// Source returns the source of that name, or nil.
func (p *Plan) Source(name string) *Source { return p.sourceByName(name) }

// Lookup returns the lookup of that name, or nil.
func (p *Plan) Lookup(name string) *Lookup { return p.lookupByName(name) }

func (p *Plan) sourceNames() []string {
	out := make([]string, len(p.Sources))
	for i, s := range p.Sources {
		out[i] = s.Name
	}
	return out
}

func (p *Plan) connectionNames() []string {
	out := make([]string, len(p.Connections))
	for i, c := range p.Connections {
		out[i] = c.Name
	}
	return out
}

func (p *Plan) stepNames() []string {
	out := make([]string, len(p.Steps))
	for i, s := range p.Steps {
		out[i] = s.Name
	}
	return out
}

func (p *Plan) lookupNames() []string {
	out := make([]string, len(p.Lookups))
	for i, l := range p.Lookups {
		out[i] = l.Name
	}
	return out
}

// analyze walks every expression with what `row` and `parent` mean there.
func (p *Plan) analyze() *analysis {
	a := &analysis{
		refs:        map[*Step][]nameUse{},
		columns:     map[string][]ColumnUse{},
		usedSources: map[string]bool{},
		usedLookups: map[string]bool{},
		usedMaps:    map[string]bool{},
	}
	record := func(x *Expr, sc exprScope, step *Step) {
		s := scanExpr(x, sc, &a.diags)
		if s == nil {
			if !x.IsConst && x.Src != "" {
				a.parseFailed = true
			}
			return
		}
		if step != nil {
			a.refs[step] = append(a.refs[step], s.refs...)
			if s.group != nil && step.GroupBy == nil {
				a.errorf(*s.group, "%s reads \"group\", which exists only on a step with group_by", sc.what)
			}
		} else if s.group != nil {
			a.errorf(*s.group, "%s reads \"group\", which exists only on a step with group_by", sc.what)
		}
		for _, l := range s.lookups {
			a.usedLookups[l.name] = true
			if p.lookupByName(l.name) == nil {
				a.errorf(l.pos, "%s: unknown lookup %s%s", sc.what, quote(l.name), didyoumean.Hint(l.name, p.lookupNames()))
			}
		}
		for _, m := range s.maps {
			a.usedMaps[m.name] = true
			if p.Map(m.name) == nil {
				a.errorf(m.pos, "%s: unknown map %s%s", sc.what, quote(m.name), didyoumean.Hint(m.name, p.mapNames()))
			}
		}
		for _, c := range s.columns {
			if c.src == "" || p.sourceByName(c.src) == nil {
				continue
			}
			a.columns[c.src] = append(a.columns[c.src], ColumnUse{Name: c.name, Pos: c.pos})
		}
	}
	for _, l := range p.Lookups {
		if l.Entity != "" {
			continue // reads the target: no expression, no source
		}
		a.usedSources[l.Source] = true
		what := fmt.Sprintf("lookup %s", quote(l.Name))
		sc := exprScope{rows: []string{l.Source}, noRef: true}
		sc.what = fmt.Sprintf("\"key\" of %s", what)
		record(&l.Key, sc, nil)
		sc.what = fmt.Sprintf("\"value\" of %s", what)
		record(&l.Value, sc, nil)
	}
	for i, s := range p.Steps {
		a.usedSources[s.Source] = true
		what := stepLabel(s, i)
		rows := []string{s.Source}
		group := ""
		if s.GroupBy != nil {
			group = s.Source // group holds rows of the step's own source
		}
		for _, e := range []struct {
			key string
			x   *Expr
		}{{"when", s.When}, {"id", s.ID}, {"group_by", s.GroupBy}} {
			if e.x != nil {
				record(e.x, exprScope{rows: rows, group: group, what: fmt.Sprintf("%q of %s", e.key, what)}, s)
			}
		}
		for _, f := range s.Fields {
			record(&f.Expr, exprScope{rows: rows, group: group, what: fieldWhat(f.Name, what)}, s)
		}
		var walk func(subs []*Subform, rows []string, owner string)
		walk = func(subs []*Subform, rows []string, owner string) {
			for j, sf := range subs {
				swhat := subformLabel(sf, j, owner)
				var childRow string
				switch {
				case sf.Each != nil:
					// each element is the row: no source's header to check
					// its names against.
					record(sf.Each, exprScope{rows: rows, group: group, what: fmt.Sprintf("\"each\" of %s", swhat)}, s)
				case sf.Source == "":
					childRow = rows[0]
				case sf.Source == "group":
					childRow = s.Source
				default:
					childRow = sf.Source
					a.usedSources[sf.Source] = true
				}
				child := append([]string{childRow}, rows...)
				if sf.Link != nil {
					record(&sf.Link.Parent, exprScope{rows: rows, group: group, what: fmt.Sprintf("\"parent\" of the link of %s", swhat)}, s)
					record(&sf.Link.Child, exprScope{rows: child, group: group, what: fmt.Sprintf("\"child\" of the link of %s", swhat)}, s)
				}
				if sf.When != nil {
					record(sf.When, exprScope{rows: child, group: group, what: fmt.Sprintf("\"when\" of %s", swhat)}, s)
				}
				for _, f := range sf.Fields {
					record(&f.Expr, exprScope{rows: child, group: group, what: fieldWhat(f.Name, swhat)}, s)
				}
				walk(sf.Subforms, child, swhat)
			}
		}
		walk(s.Subforms, rows, what)
	}
	return a
}

func stepLabel(s *Step, i int) string {
	if s.Name != "" {
		return fmt.Sprintf("step %s", quote(s.Name))
	}
	return fmt.Sprintf("step %d", i+1)
}

func subformLabel(sf *Subform, i int, owner string) string {
	if sf.Name != "" {
		return fmt.Sprintf("sub-form %s of %s", quote(sf.Name), owner)
	}
	return fmt.Sprintf("sub-form %d of %s", i+1, owner)
}

// check returns the unsorted static diagnostics and fills Step.Refs.
func (p *Plan) check() Diagnostics {
	a := p.analyze()
	d := &a.diags

	// Step names are unique.
	first := map[string]*Step{}
	for _, s := range p.Steps {
		if s.Name == "" {
			continue
		}
		if f, dup := first[s.Name]; dup {
			d.errorf(posOr(s.NamePos, s.Pos), "step name %s is used twice (first on line %d); step names must be unique", quote(s.Name), posOr(f.NamePos, f.Pos).Line)
			continue
		}
		first[s.Name] = s
	}

	// Refs: fill Step.Refs and check their targets.
	for i, s := range p.Steps {
		s.Refs = nil
		seen := map[string]bool{}
		for _, r := range a.refs[s] {
			if _, ok := first[r.name]; !ok {
				d.errorf(r.pos, "%s: ref() names unknown step %s%s", stepLabel(s, i), quote(r.name), didyoumean.Hint(r.name, p.stepNames()))
				continue
			}
			if !seen[r.name] {
				seen[r.name] = true
				s.Refs = append(s.Refs, r.name)
			}
		}
	}

	// Sources and after: of steps.
	for i, s := range p.Steps {
		what := stepLabel(s, i)
		switch {
		case s.Source == "group":
			d.errorf(posOr(s.SourcePos, s.Pos), "%s: \"source: group\" is for sub-forms; a step reads a source named under \"sources\"", what)
		case s.Source != "" && p.sourceByName(s.Source) == nil:
			d.errorf(posOr(s.SourcePos, s.Pos), "unknown source %s in %s%s", quote(s.Source), what, didyoumean.Hint(s.Source, p.sourceNames()))
		}
		for j, name := range s.After {
			pos := s.Pos
			if j < len(s.AfterPos) {
				pos = s.AfterPos[j]
			}
			if _, ok := first[name]; !ok {
				d.errorf(pos, "%s is after unknown step %s%s", what, quote(name), didyoumean.Hint(name, p.stepNames()))
			}
		}
		p.checkSubforms(d, s, s.Subforms, what, 0)
	}

	// Sources read known connections.
	for _, s := range p.Sources {
		if s.Connection != "" && p.Connection(s.Connection) == nil {
			d.errorf(posOr(s.ConnectionPos, s.Pos), "unknown connection %s in source %s%s", quote(s.Connection), quote(s.Name), didyoumean.Hint(s.Connection, p.connectionNames()))
		}
	}

	// Lookups read known sources.
	for _, l := range p.Lookups {
		if l.Source != "" && p.sourceByName(l.Source) == nil {
			d.errorf(posOr(l.SourcePos, l.Pos), "unknown source %s in lookup %s%s", quote(l.Source), quote(l.Name), didyoumean.Hint(l.Source, p.sourceNames()))
		}
	}

	// No cycles.
	for _, cyc := range p.cycles(a) {
		s := p.Step(cyc[0])
		d.errorf(posOr(s.NamePos, s.Pos), "steps form a cycle: %s; remove an \"after\" or a ref() so one can run first", strings.Join(cyc, " → "))
	}

	// Unused sources and lookups deserve a look, once every step names its
	// source and every expression parsed (else the uses are not all known).
	complete := !a.parseFailed
	for _, s := range p.Steps {
		complete = complete && s.Source != ""
	}
	for _, s := range p.Sources {
		if complete && !a.usedSources[s.Name] {
			d.warnf(s.Pos, "source %s is not read by any step or lookup", quote(s.Name))
		}
	}
	for _, l := range p.Lookups {
		if !a.parseFailed && !a.usedLookups[l.Name] {
			d.warnf(l.Pos, "lookup %s is not used by any expression", quote(l.Name))
		}
	}
	d.list = append(d.list, p.CheckTests(p.Tests)...)
	for _, m := range p.Maps {
		if !a.parseFailed && !a.usedMaps[m.Name] {
			d.warnf(m.Pos, "map %s is not used by any expression", quote(m.Name))
		}
	}
	return d.list
}

func posOr(p, fallback Pos) Pos {
	if p.Line == 0 {
		return fallback
	}
	return p
}

// checkSubforms checks the sources and links of sub-forms (docs/plan-format.md,
// Sub-forms).
func (p *Plan) checkSubforms(d *diags, step *Step, subs []*Subform, owner string, depth int) {
	seen := map[string]*Subform{}
	for j, sf := range subs {
		what := subformLabel(sf, j, owner)
		if sf.Name != "" {
			if f, dup := seen[sf.Name]; dup {
				d.errorf(posOr(sf.NamePos, sf.Pos), "sub-form %s appears twice in %s (first on line %d); put its fields in one entry", quote(sf.Name), owner, posOr(f.NamePos, f.Pos).Line)
			} else {
				seen[sf.Name] = sf
			}
		}
		spos := posOr(sf.SourcePos, sf.Pos)
		if sf.Each != nil {
			if sf.Source != "" {
				d.errorf(spos, "%s takes its rows from each, and no source; remove one of them", what)
			}
			if sf.Link != nil {
				d.errorf(sf.Link.Pos, "%s takes its rows from each, which are the parent's own: it takes no link; remove it", what)
			}
			p.checkSubforms(d, step, sf.Subforms, what, depth+1)
			continue
		}
		switch sf.Source {
		case "":
			if sf.Link != nil {
				d.errorf(sf.Link.Pos, "%s has a link but no source; a link joins the rows of another source (add \"source: NAME\" or remove the link)", what)
			}
		case "group":
			switch {
			case depth > 0:
				d.errorf(spos, "%s: \"source: group\" is only for a sub-form directly under a step with group_by", what)
			case step.GroupBy == nil:
				d.errorf(spos, "%s: \"source: group\" needs group_by on %s", what, owner)
			}
			if sf.Link != nil {
				d.errorf(sf.Link.Pos, "%s is fed by the group and takes no link; remove it", what)
			}
		default:
			if p.sourceByName(sf.Source) == nil {
				cands := append(p.sourceNames(), "group")
				d.errorf(spos, "unknown source %s in %s%s", quote(sf.Source), what, didyoumean.Hint(sf.Source, cands))
			}
			if sf.Link == nil && !sf.linkWritten {
				d.errorf(sf.Pos, "%s reads source %s and needs a link to its parent: link: {parent: row.KEY, child: row.PARENT_KEY}", what, quote(sf.Source))
			}
		}
		p.checkSubforms(d, step, sf.Subforms, what, depth+1)
	}
}

// cycles returns each cycle of the step graph once, rotated to start at
// its earliest step in file order, in file order of those starts.
func (p *Plan) cycles(a *analysis) [][]string {
	g := p.graph(a)
	index := map[string]int{}
	for i, s := range p.Steps {
		if _, ok := index[s.Name]; !ok {
			index[s.Name] = i
		}
	}
	// Tarjan's strongly connected components.
	var (
		stack   []string
		onStack = map[string]bool{}
		idx     = map[string]int{}
		low     = map[string]int{}
		counter int
		sccs    [][]string
	)
	var strong func(v string)
	strong = func(v string) {
		idx[v], low[v] = counter, counter
		counter++
		stack = append(stack, v)
		onStack[v] = true
		for _, w := range g[v] {
			if _, ok := idx[w]; !ok {
				strong(w)
				low[v] = min(low[v], low[w])
			} else if onStack[w] {
				low[v] = min(low[v], idx[w])
			}
		}
		if low[v] == idx[v] {
			var comp []string
			for {
				w := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				onStack[w] = false
				comp = append(comp, w)
				if w == v {
					break
				}
			}
			sccs = append(sccs, comp)
		}
	}
	for _, s := range p.Steps {
		if _, ok := idx[s.Name]; !ok && s.Name != "" {
			strong(s.Name)
		}
	}
	var out [][]string
	for _, comp := range sccs {
		in := map[string]bool{}
		for _, c := range comp {
			in[c] = true
		}
		if len(comp) == 1 && !slices.Contains(g[comp[0]], comp[0]) {
			continue
		}
		sort.Slice(comp, func(i, j int) bool { return index[comp[i]] < index[comp[j]] })
		start := comp[0]
		out = append(out, cyclePath(g, in, start))
	}
	sort.Slice(out, func(i, j int) bool { return index[out[i][0]] < index[out[j][0]] })
	return out
}

// cyclePath finds a shortest path from start back to start inside one
// component (breadth first, edges in plan order).
func cyclePath(g map[string][]string, in map[string]bool, start string) []string {
	prev := map[string]string{}
	queue := []string{start}
	visited := map[string]bool{}
	for len(queue) > 0 {
		v := queue[0]
		queue = queue[1:]
		for _, w := range g[v] {
			if !in[w] {
				continue
			}
			if w == start {
				path := []string{start}
				for x := v; x != start; x = prev[x] {
					path = append(path, x)
				}
				// path is start, v, ..., reversed after the first.
				rev := []string{start}
				for i := len(path) - 1; i >= 1; i-- {
					rev = append(rev, path[i])
				}
				return append(rev, start)
			}
			if !visited[w] {
				visited[w] = true
				prev[w] = v
				queue = append(queue, w)
			}
		}
	}
	return []string{start, start}
}

// graph maps each step to the steps it must run after (after: and ref()),
// known names only, each once, in plan order.
func (p *Plan) graph(a *analysis) map[string][]string {
	known := map[string]bool{}
	for _, s := range p.Steps {
		known[s.Name] = true
	}
	g := map[string][]string{}
	done := map[string]bool{}
	for _, s := range p.Steps {
		if done[s.Name] {
			continue // a duplicate name: Check reports it
		}
		done[s.Name] = true
		var deps []string
		add := func(n string) {
			if known[n] && !slices.Contains(deps, n) {
				deps = append(deps, n)
			}
		}
		for _, n := range s.After {
			add(n)
		}
		for _, r := range a.refs[s] {
			add(r.name)
		}
		g[s.Name] = deps
	}
	return g
}
