package transform

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"slices"
	"strings"

	"github.com/expr-lang/expr/file"
	"github.com/expr-lang/expr/vm"
	"github.com/migrate-tool/migrate/plan"
	"github.com/migrate-tool/migrate/source"
)

// Opener opens a source of the plan for reading.
type Opener func(src *plan.Source) (source.Reader, error)

// Refs answers ref(step, id): the target key of the record that step
// created or found for that identity.
type Refs interface {
	Ref(step, id string) (any, bool)
}

// Placeholders is implemented by the Refs of a dry run, where the records
// referred to are not created: a text its Ref answers stands in for a key
// and, written straight to a field, is checked against neither the field's
// type nor its MaxLength ("{orders:L-77}" is no order number, and would
// fail every row that apply loads fine).
type Placeholders interface {
	Placeholders() bool
}

// Result is what Records gives for each row (or group of rows): a record,
// a skipped row, or the errors that rejected it.
type Result struct {
	Record  *Record
	Skipped bool
	Errors  []*RowError
	Loc     source.Location
	// ID is the record's identity, also for a rejected row when the id
	// expression or the key fields could be worked out ("" otherwise).
	ID string
	// Rows are the source rows of a rejected row or group, as they were,
	// for the report: the row, or every row of the group.
	Rows []source.Row
}

// Records streams the rows of step's source and calls fn once per row (or
// per group with group_by): with a Record, with Skipped (when was false or
// skip() was called), or with the Errors that rejected it; a record with an
// error in any child is rejected whole. An error returned by fn stops the
// run and is returned.
//
// With group_by, when is evaluated for each row before grouping (and
// group_by too); the fields see the group's first row as row and all its
// rows as group. skip() in a sub-form skips that child only.
//
// Memory: without group_by one row at a time is held; with group_by every
// row of the step's source is kept until the end (groups need not be
// consecutive), and a linked sub-form's source is kept in an index built
// the first time it is needed; past their share of Options.Memory both are
// kept in a temporary file (spill.go).
func (p *Program) Records(ctx context.Context, step string, open Opener, refs Refs, fn func(Result) error) error {
	st := p.steps[step]
	if st == nil {
		return fmt.Errorf("transform: no step %q in the plan", step)
	}
	if st.source == nil {
		return fmt.Errorf("step %s: its source is not defined in the plan", step)
	}
	if !st.compiledOK() {
		return fmt.Errorf("step %s: its expressions did not compile (see the plan's diagnostics)", step)
	}
	rd, err := open(st.source)
	if err != nil {
		return fmt.Errorf("step %s: %w", step, err)
	}
	defer rd.Close()
	if err := p.checkHeader("step "+step, st.source.Name, rd.Header()); err != nil {
		return fmt.Errorf("step %s: %w", step, err)
	}
	r := &run{p: p, st: st, ctx: ctx, open: open, refs: refs, links: make([]*linkIndex, st.links)}
	defer func() {
		for _, idx := range r.links {
			idx.close()
		}
		r.seenKeys.close()
		r.seenIDs.close()
	}()
	r.refFn = r.ref
	if st.groupBy != nil {
		return r.grouped(rd, fn)
	}
	return r.stream(rd, fn)
}

// compiledOK reports whether every expression of the step compiled.
func (s *stepProg) compiledOK() bool {
	if (s.step.When != nil && s.when == nil) || (s.step.ID != nil && s.id == nil) || (s.step.GroupBy != nil && s.groupBy == nil) {
		return false
	}
	return s.form.compiledOK()
}

func (f *form) compiledOK() bool {
	for _, fl := range f.fields {
		if fl.expr == nil {
			return false
		}
	}
	for _, s := range f.subs {
		if s.kind == subLinked && (s.linkParent == nil || s.linkChild == nil) || s.kind == subEach && s.each == nil {
			return false
		}
		if !s.form.compiledOK() {
			return false
		}
	}
	return true
}

// run is the state of one Records call; nothing in it is shared, so calls
// may run concurrently.
type run struct {
	p       *Program
	st      *stepProg
	ctx     context.Context
	open    Opener
	refs    Refs
	refFn   refFunc
	machine vm.VM
	levels  []*level
	links   []*linkIndex
	pending []Result // results found on the way (a linked source's bad rows)
	fatal   error    // stops the run: a linked source that cannot be read
	// column variable names by header (see colVar)
	keyCache   map[*source.Header][]string
	keysHeader *source.Header
	// eachHeaders are the headers of each's elements, by their names, so
	// that elements of one shape share one (and its column variables).
	eachHeaders map[string]*source.Header
	keys        []string
	group       []any      // the current group's rows, as `group`
	groupRs     []groupRow // the same with their source rows
	seenKeys    *seenKeys  // the step's entity keys so far (see duplicate)
	seenIDs     *seenKeys  // and its ids
	// placeholders are the texts ref() gave for the record being built,
	// when the Refs are a dry run's (see Placeholders).
	placeholders map[string]bool
}

// level holds the maps reused at one depth of sub-forms.
type level struct {
	env    map[string]any
	row    rowSlot
	parent map[string]any
}

type rowSlot struct {
	m    map[string]any
	h    *source.Header
	keys []string // colVar of each column of h
}

func (r *run) level(d int) *level {
	for len(r.levels) <= d {
		r.levels = append(r.levels, &level{
			env:    map[string]any{"ref": r.refFn},
			row:    rowSlot{m: make(map[string]any)},
			parent: make(map[string]any, 3),
		})
	}
	return r.levels[d]
}

// fillRow puts a row's cells into m by column name. A cell the row lacks
// is "", as the readers give it (see source.Cell).
func fillRow(m map[string]any, row source.Row) {
	if row.Header == nil {
		clear(m)
		return
	}
	for i, n := range row.Header.Names {
		m[n] = cellAt(row, i)
	}
}

// cellAt is the row's cell i, "" past the end of a short row.
func cellAt(row source.Row, i int) any {
	if i < len(row.Cells) {
		return row.Cells[i]
	}
	return ""
}

func (s *rowSlot) fill(row source.Row, whole bool) map[string]any {
	if s.h != row.Header {
		clear(s.m)
		s.h = row.Header
		s.keys = colVars(row.Header)
	}
	if whole {
		fillRow(s.m, row)
	}
	return s.m
}

func colVars(h *source.Header) []string {
	if h == nil {
		return nil
	}
	keys := make([]string, len(h.Names))
	for i, n := range h.Names {
		keys[i] = colVar(n)
	}
	return keys
}

// setRow is setRow with the run's cache of column variable names.
func (r *run) setRow(env map[string]any, m any, row source.Row) {
	if row.Header != r.keysHeader {
		r.keysHeader = row.Header
		r.keys = r.keyCache[row.Header]
		if r.keys == nil {
			if r.keyCache == nil {
				r.keyCache = make(map[*source.Header][]string)
			}
			r.keys = colVars(row.Header)
			r.keyCache[row.Header] = r.keys
		}
	}
	setRow(env, m, row, r.keys)
}

// setRow makes row the `row` of env, with each column also as its own
// variable (see colVar). keys are colVars(row.Header).
func setRow(env map[string]any, m any, row source.Row, keys []string) {
	env["row"] = m
	for i, k := range keys {
		env[k] = cellAt(row, i)
	}
}

func rowMap(row source.Row) map[string]any {
	m := make(map[string]any, len(row.Cells))
	fillRow(m, row)
	return m
}

// own copies a row so that it may be kept: a reader may reuse its cells.
func own(row source.Row) source.Row {
	row.Cells = append([]source.Cell(nil), row.Cells...)
	return row
}

func evalExpr(machine *vm.VM, c *compiled, env map[string]any) (any, error) {
	if c.prog == nil {
		return c.constVal, nil
	}
	return machine.Run(c.prog, env)
}

// evalMessage is the text of an evaluation error for a row error: fail()'s
// message as given, anything else as expr-lang says it. The place is the
// row error's plan position, never pasted into its text.
func evalMessage(err error) string {
	var fe *failError
	if errors.As(err, &fe) {
		return fe.msg
	}
	var xe *file.Error
	if errors.As(err, &xe) {
		if xe.Prev != nil {
			return xe.Prev.Error()
		}
		return xe.Message
	}
	return err.Error()
}

// evalPlace is where in the plan an evaluation error happened, for an
// error that has no plan position of its own (a lookup's key or value):
// " (plan.yaml:12:9)", "" for fail()'s message.
func evalPlace(err error, c *compiled) string {
	var fe *failError
	if errors.As(err, &fe) {
		return ""
	}
	var xe *file.Error
	if errors.As(err, &xe) {
		return fmt.Sprintf(" (%s)", c.expr.PosOf(xe.Line, xe.Column))
	}
	return fmt.Sprintf(" (%s)", c.pos)
}

// stream makes one record per row.
func (r *run) stream(rd source.Reader, fn func(Result) error) error {
	lv := r.level(0)
	var readErr error
	bad := func(res *Result) error { return r.emit(fn, res) }
	for row := range r.rows(rd, "step "+r.st.name, bad, &readErr) {
		m := lv.row.fill(row, r.p.wholeRow)
		res := r.filter(m, row)
		if res != nil && !res.Skipped {
			res.Rows = []source.Row{own(row)}
		}
		if res == nil {
			res = r.build(m, row)
		}
		if err := r.emit(fn, res); err != nil {
			return err
		}
	}
	return readErr
}

// rows yields rd's rows to its end, seeing every 256 rows whether the run
// was cancelled. A row that does not read but is a record of its own (a
// source.Error that is RowOnly) goes to bad as its Result instead. Any
// other error of reading, as "what: error", the cancellation, or an error
// bad returns ends the rows and is left in *errp.
func (r *run) rows(rd source.Reader, what string, bad func(*Result) error, errp *error) iter.Seq[source.Row] {
	return func(yield func(source.Row) bool) {
		for n := 0; ; n++ {
			if n%256 == 0 {
				if err := r.ctx.Err(); err != nil {
					*errp = err
					return
				}
			}
			row, err := rd.Next()
			if err == io.EOF {
				return
			}
			if err != nil {
				if res := r.rowOnly(row, err); res != nil {
					if err := bad(res); err != nil {
						*errp = err
						return
					}
					continue
				}
				*errp = fmt.Errorf("%s: %w", what, err)
				return
			}
			if !yield(row) {
				return
			}
		}
	}
}

// emit gives fn the results found on the way, then res.
func (r *run) emit(fn func(Result) error, res *Result) error {
	if r.fatal != nil {
		return r.fatal
	}
	for len(r.pending) > 0 {
		p := r.pending[0]
		r.pending = r.pending[1:]
		if err := fn(p); err != nil {
			return err
		}
	}
	return fn(*res)
}

// filter evaluates the step's when for one row: a Result when the row is
// skipped or rejected, nil when it goes on.
func (r *run) filter(m map[string]any, row source.Row) *Result {
	if r.st.when == nil {
		return nil
	}
	env := r.level(0).env
	r.setRow(env, m, row)
	v, err := evalExpr(&r.machine, r.st.when, env)
	if err != nil {
		if errors.Is(err, errSkip) {
			return &Result{Skipped: true, Loc: row.Loc}
		}
		return &Result{Loc: row.Loc, Errors: []*RowError{r.exprError(row, r.st.when, "when: "+evalMessage(err))}}
	}
	b, ok := v.(bool)
	if !ok {
		return &Result{Loc: row.Loc, Errors: []*RowError{r.exprError(row, r.st.when, "when must be true or false, got "+describe(v))}}
	}
	if !b {
		return &Result{Skipped: true, Loc: row.Loc}
	}
	return nil
}

type groupRow struct {
	row source.Row
	m   map[string]any
}

// group is one group's rows: in memory, or once the step's rows passed
// their share of the memory budget, a chain in the run's row store.
type group struct {
	rows  []groupRow
	chain chain
}

// grouped collects every row of the source into groups by group_by (in the
// order each group first appears) and makes one record per group. Rows are
// kept in memory up to a share of the memory budget; past it every row
// goes to a temporary file (rowStore) and each group is read back from it
// when its turn comes, so the results are the same whatever the budget.
// Rows of a group that stand together (sorted input) are read back in one
// read (rowStore.stretch).
func (r *run) grouped(rd source.Reader, fn func(Result) error) error {
	early := 0 // results given while the rows are read: skipped and rejected rows
	give := fn
	fn = func(res Result) error {
		early++
		return give(res)
	}
	var (
		groups  []*group
		byKey   = make(map[string]*group)
		last    *group
		lastKey string
		held    int64     // estimated bytes of the rows held in memory
		store   *rowStore // once they passed the budget
	)
	defer func() { store.close() }()
	limit := r.p.memory() / spillShare
	env := r.level(0).env
	var readErr error
	bad := func(res *Result) error { return fn(*res) }
	for row := range r.rows(rd, "step "+r.st.name, bad, &readErr) {
		var m map[string]any
		if store == nil {
			row = own(row)
			m = rowMap(row)
		} else {
			m = r.level(0).row.fill(row, true)
		}
		if res := r.filter(m, row); res != nil {
			if !res.Skipped {
				res.Rows = []source.Row{own(row)}
			}
			if err := fn(*res); err != nil {
				return err
			}
			continue
		}
		r.setRow(env, m, row)
		v, err := evalExpr(&r.machine, r.st.groupBy, env)
		var key string
		if err == nil {
			var ok bool
			if key, ok = asText(v); !ok {
				err = fmt.Errorf("group_by gives %s, not a value", describe(v))
			} else if strings.TrimSpace(key) == "" {
				err = errors.New("group_by is empty for this row")
			}
		} else if errors.Is(err, errSkip) {
			if err := fn(Result{Skipped: true, Loc: row.Loc}); err != nil {
				return err
			}
			continue
		} else {
			err = errors.New("group_by: " + evalMessage(err))
		}
		if err != nil {
			if err := fn(Result{Loc: row.Loc, Errors: []*RowError{r.exprError(row, r.st.groupBy, err.Error())}, Rows: []source.Row{own(row)}}); err != nil {
				return err
			}
			continue
		}
		g := last
		if g == nil || key != lastKey { // consecutive rows of one group skip the map
			g = byKey[key]
			if g == nil {
				g = &group{chain: newChain()}
				byKey[key] = g
				groups = append(groups, g)
			}
			last, lastKey = g, key
		}
		if store != nil {
			if err := store.add(&g.chain, row); err != nil {
				return fmt.Errorf("step %s: %w", r.st.name, err)
			}
			continue
		}
		g.rows = append(g.rows, groupRow{row: row, m: m})
		if held += rowBytes(row, true); held > limit {
			// Past the budget: every row held so far goes to disk, group by
			// group in order, and every later row straight after it.
			if store, err = newRowStore(row.Header); err != nil {
				return fmt.Errorf("step %s: %w", r.st.name, err)
			}
			for _, g := range groups {
				for _, gr := range g.rows {
					if err := store.add(&g.chain, gr.row); err != nil {
						return fmt.Errorf("step %s: %w", r.st.name, err)
					}
				}
				g.rows = nil
			}
			held = 0
		}
	}
	if readErr != nil {
		return readErr
	}
	byKey, last = nil, nil // only the groups' order is needed from here on
	fn = give
	if tell, ok := r.ctx.Value(totalKey{}).(func(int)); ok {
		tell(early + len(groups))
	}
	for i, g := range groups {
		if i%256 == 0 {
			if err := r.ctx.Err(); err != nil {
				return err
			}
		}
		if store != nil {
			rows, err := store.rows(g.chain)
			if err != nil {
				return fmt.Errorf("step %s: %w", r.st.name, err)
			}
			g.rows = make([]groupRow, len(rows))
			for j, row := range rows {
				g.rows[j] = groupRow{row: row, m: rowMap(row)}
			}
		}
		r.groupRs = g.rows
		r.group = make([]any, len(g.rows))
		for j, gr := range g.rows {
			r.group[j] = gr.m
		}
		first := g.rows[0]
		res := r.build(first.m, first.row)
		groups[i] = nil // let the group go once it is built
		if err := r.emit(fn, res); err != nil {
			return err
		}
	}
	return nil
}

// totalKey is the context key of WithTotal's function.
type totalKey struct{}

// WithTotal returns a context under which Records tells tell how many
// results a grouped step gives in all, once its rows are read and grouped
// (before the groups' records are built): the skipped and rejected rows
// already given, and a record per group. A step without group_by does not
// call it: its rows are counted before it is read (source.CountRows).
func WithTotal(ctx context.Context, tell func(results int)) context.Context {
	return context.WithValue(ctx, totalKey{}, tell)
}

// build makes the record of one row (the first row of a group).
func (r *run) build(m map[string]any, row source.Row) *Result {
	st := r.st
	lv := r.level(0)
	env := lv.env
	r.setRow(env, m, row)
	if st.groupBy != nil {
		env["group"] = r.group
	}
	if st.groupBy == nil {
		row = own(row)
	}
	res := &Result{Loc: row.Loc}
	clear(r.placeholders)
	fields, order, skipped, errs := r.fields(&st.form, env, row)
	if skipped {
		res.Skipped = true
		return res
	}
	rec := &Record{Step: st.name, Entity: st.step.Entity, Loc: row.Loc, Row: row, Fields: fields, Order: order}
	if st.groupBy != nil {
		rec.Rows = make([]source.Row, len(r.groupRs))
		for i, gr := range r.groupRs {
			rec.Rows[i] = gr.row
		}
	}
	// The identity is worked out even for a rejected row, so the journal
	// files its failure under the id the corrected row will have.
	id, err := r.recordID(env, rec)
	if err != nil && len(errs) == 0 {
		errs = append(errs, r.exprError(row, st.id, err.Error()))
	}
	rec.ID = id
	res.ID = id
	if dup := r.duplicate(rec, row, st.id != nil && err == nil); dup != nil {
		// The identity belongs to the earlier row: this row's failure is
		// filed under its own place, never under the record that exists.
		errs = append([]*RowError{dup}, errs...)
		res.ID = ""
	}
	for _, sub := range st.subs {
		kids, kerrs := r.children(sub, 1, m, row, fields)
		rec.Children = append(rec.Children, kids...)
		errs = append(errs, kerrs...)
	}
	if len(errs) > 0 {
		res.Errors = errs
		res.Rows = rec.SourceRows()
		return res
	}
	res.Record = rec
	return res
}

// fields evaluates and converts the fields of a form in env.
func (r *run) fields(f *form, env map[string]any, row source.Row) (map[string]any, []string, bool, []*RowError) {
	out := make(map[string]any, len(f.fields))
	// Records share the form's order slice unless a field is left out.
	order, omitted := f.order, false
	var errs []*RowError
	for i, fl := range f.fields {
		v, err := evalExpr(&r.machine, fl.expr, env)
		if err != nil {
			if errors.Is(err, errSkip) {
				return nil, nil, true, nil
			}
			errs = append(errs, r.rowError(row, fl.expr.cell(), fl, evalMessage(err)))
			continue
		}
		var cv any
		var omit bool
		if s, ok := v.(string); ok && r.placeholders[s] {
			cv = s
		} else {
			cv, omit, err = f.conv.convert(v, fl.prop)
		}
		if err == nil && fl.mandatory && (omit && f.creates || !omit && (cv == nil || cv == "")) {
			// The server refuses a mandatory field sent blank, or left out
			// of a record it creates: said here, at its cell, so that the
			// dry run foretells it and apply does not send it.
			err = fmt.Errorf("%s is mandatory and the value is blank: the server would refuse the record", fl.name)
		}
		if err != nil {
			e := r.rowError(row, fl.expr.column, fl, err.Error())
			e.Value = valueText(v)
			errs = append(errs, e)
			continue
		}
		if omit {
			if !omitted {
				order = append(make([]string, 0, len(f.order)), f.order[:i]...)
				omitted = true
			}
			continue
		}
		if omitted {
			order = append(order, fl.name)
		}
		out[fl.name] = cv
	}
	return out, order, false, errs
}

// recordID is the record's identity: the id expression, else the entity's
// key values, else the source location.
func (r *run) recordID(env map[string]any, rec *Record) (string, error) {
	st := r.st
	if st.id != nil {
		v, err := evalExpr(&r.machine, st.id, env)
		if err != nil {
			return "", errors.New("id: " + evalMessage(err))
		}
		s, ok := asText(v)
		if !ok || s == "" {
			return "", fmt.Errorf("id is %s; it must give a value", describe(v))
		}
		return s, nil
	}
	if len(st.key) > 0 {
		parts := make([]string, 0, len(st.key))
		for _, k := range st.key {
			v, ok := rec.Fields[k]
			s, textOK := asText(v)
			if !ok || v == nil || !textOK {
				parts = nil
				break
			}
			if len(st.key) > 1 {
				s = k + "=" + s
			}
			parts = append(parts, s)
		}
		if parts != nil {
			return strings.Join(parts, "|"), nil
		}
	}
	return locString(rec.Loc), nil
}

// children builds the children of one sub-form for a parent.
func (r *run) children(sub *subform, depth int, pm any, prow source.Row, pfields map[string]any) ([]*Child, []*RowError) {
	lv := r.level(depth)
	lv.parent["row"] = pm
	lv.parent["fields"] = pfields
	if depth > 1 {
		lv.parent["parent"] = r.level(depth - 1).parent
	} else {
		delete(lv.parent, "parent")
	}
	env := lv.env
	env["parent"] = lv.parent
	if r.st.groupBy != nil {
		env["group"] = r.group
	}
	var kids []*Child
	var errs []*RowError
	one := func(m any, row source.Row) {
		if sub.kind == subEach {
			// An element lacks the columns another had: none of theirs
			// may stay behind as its own.
			for k := range env {
				if strings.HasPrefix(k, colPrefix) {
					delete(env, k)
				}
			}
		}
		r.setRow(env, m, row)
		env["parent"] = lv.parent
		if sub.when != nil {
			v, err := evalExpr(&r.machine, sub.when, env)
			if err != nil {
				if !errors.Is(err, errSkip) {
					errs = append(errs, r.exprError(row, sub.when, sub.name+": when: "+evalMessage(err)))
				}
				return
			}
			b, ok := v.(bool)
			if !ok {
				errs = append(errs, r.exprError(row, sub.when, fmt.Sprintf("%s: when must be true or false, got %s", sub.name, describe(v))))
				return
			}
			if !b {
				return
			}
		}
		fields, order, skipped, ferrs := r.fields(&sub.form, env, row)
		if skipped {
			return
		}
		errs = append(errs, ferrs...)
		if sub.text && len(ferrs) == 0 {
			if e := r.emptyText(sub, fields, row); e != nil {
				errs = append(errs, e)
			}
		}
		ch := &Child{Nav: sub.name, Single: sub.single, Replace: sub.replace, Loc: row.Loc, Row: row, Fields: fields, Order: order}
		for _, s := range sub.subs {
			gk, gerrs := r.children(s, depth+1, m, row, fields)
			ch.Children = append(ch.Children, gk...)
			errs = append(errs, gerrs...)
			// the grandchildren reused this level's maps only below it
			r.setRow(env, m, row)
			env["parent"] = lv.parent
		}
		kids = append(kids, ch)
	}
	switch sub.kind {
	case subOwn:
		one(pm, prow)
	case subGroup:
		for _, gr := range r.groupRs {
			one(gr.m, gr.row)
		}
	case subLinked:
		idx, err := r.linkIndex(sub)
		if err != nil {
			// The linked source cannot be read: no record of the step can be
			// complete, so the run stops (see emit).
			if r.fatal == nil {
				r.fatal = fmt.Errorf("step %s: %w", r.st.name, err)
			}
			return nil, []*RowError{r.rowError(prow, "", nil, err.Error())}
		}
		// link.parent is evaluated in the parent's scope.
		penv := r.level(depth - 1).env
		v, err := evalExpr(&r.machine, sub.linkParent, penv)
		if err != nil {
			return nil, []*RowError{r.exprError(prow, sub.linkParent, sub.name+": link parent: "+evalMessage(err))}
		}
		key, ok := asText(v)
		if !ok {
			return nil, []*RowError{r.exprError(prow, sub.linkParent, fmt.Sprintf("%s: link parent is %s, not a value", sub.name, describe(v)))}
		}
		rows, err := idx.get(key)
		if err != nil {
			if r.fatal == nil {
				r.fatal = fmt.Errorf("step %s: %s: %w", r.st.name, sub.name, err)
			}
			return nil, []*RowError{r.rowError(prow, "", nil, err.Error())}
		}
		for _, row := range rows {
			one(lv.row.fill(row, r.p.wholeRow), row)
		}
	case subEach:
		// each is evaluated in the parent's scope, as a link's parent is.
		penv := r.level(depth - 1).env
		v, err := evalExpr(&r.machine, sub.each, penv)
		if err != nil {
			if errors.Is(err, errSkip) {
				return nil, nil
			}
			return nil, []*RowError{r.exprError(prow, sub.each, sub.name+": each: "+evalMessage(err))}
		}
		list, ok := asList(v)
		if !ok {
			return nil, []*RowError{r.exprError(prow, sub.each, fmt.Sprintf("%s: each must give a list, got %s", sub.name, describe(v)))}
		}
		for _, el := range list {
			one(r.element(prow, el))
		}
	}
	if errs != nil {
		kids = nil
	}
	return kids, errs
}

// asList reads what each gave: a list, or nothing for a blank cell.
func asList(v any) ([]any, bool) {
	switch x := v.(type) {
	case []any:
		return x, true
	case []string:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = e
		}
		return out, true
	case []map[string]any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = e
		}
		return out, true
	case nil:
		return nil, true
	case string:
		return nil, x == ""
	}
	return nil, false
}

// element is one element of each's list as the child's row: a mapping's
// fields as its columns (in name order), anything else as row itself. It
// stands where the parent row stands.
func (r *run) element(prow source.Row, el any) (any, source.Row) {
	row := source.Row{Loc: prow.Loc}
	m, ok := el.(map[string]any)
	if !ok {
		return el, row
	}
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	slices.Sort(names)
	key := strings.Join(names, "\x00")
	h := r.eachHeaders[key]
	if h == nil {
		if r.eachHeaders == nil {
			r.eachHeaders = make(map[string]*source.Header)
		}
		h = source.NewHeader(names)
		r.eachHeaders[key] = h
	}
	row.Header = h
	row.Cells = make([]source.Cell, len(names))
	for i, n := range names {
		row.Cells[i] = m[n]
	}
	return m, row
}

// emptyText is the row error of a text sub-form whose TEXT came out empty
// (docs/service.md, Text sub-forms: APPEND and SIGNATURE only say what to do
// with the text), or nil.
func (r *run) emptyText(sub *subform, fields map[string]any, row source.Row) *RowError {
	if s, ok := fields["TEXT"].(string); ok && s != "" {
		return nil
	}
	fl := sub.field("TEXT")
	column := ""
	if fl != nil {
		column = fl.expr.column
	}
	return r.rowError(row, column, fl, fmt.Sprintf("TEXT of %s is empty; a text sub-form is written only with its text: give the sub-form a when (such as when: row.Note != \"\") to leave it out of rows without one", sub.name))
}

// linkIndex is a linked source read once per run: link.child value → its
// rows in source order. Rows are held in memory up to a share of the
// memory budget; past it they all go to a temporary file, and the index
// keeps where each value's last row is (rowStore).
type linkIndex struct {
	rows   map[string][]source.Row
	held   int64 // estimated bytes of rows
	limit  int64
	store  *rowStore
	chains map[string]chain
}

func (x *linkIndex) add(key string, row source.Row) error {
	if x.store != nil {
		c, ok := x.chains[key]
		if !ok {
			c = newChain()
		}
		err := x.store.add(&c, row)
		x.chains[key] = c
		return err
	}
	x.rows[key] = append(x.rows[key], own(row))
	if x.held += rowBytes(row, false) + int64(len(key)); x.held <= x.limit {
		return nil
	}
	store, err := newRowStore(row.Header)
	if err != nil {
		return err
	}
	x.store, x.chains = store, make(map[string]chain, len(x.rows))
	for k, rows := range x.rows {
		c := newChain()
		for _, row := range rows {
			if err := store.add(&c, row); err != nil {
				return err
			}
		}
		x.chains[k] = c
	}
	x.rows = nil
	return nil
}

// get returns the rows whose link.child value is key, in source order.
func (x *linkIndex) get(key string) ([]source.Row, error) {
	if x.store == nil {
		return x.rows[key], nil
	}
	c, ok := x.chains[key]
	if !ok {
		return nil, nil
	}
	return x.store.rows(c)
}

func (x *linkIndex) close() {
	if x != nil {
		x.store.close()
	}
}

func (r *run) linkIndex(sub *subform) (*linkIndex, error) {
	if idx := r.links[sub.linkID]; idx != nil {
		return idx, nil
	}
	idx := &linkIndex{rows: make(map[string][]source.Row), limit: r.p.memory() / spillShare}
	built := false
	defer func() {
		if !built {
			idx.close()
		}
	}()
	rd, err := r.open(sub.source)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", sub.name, err)
	}
	defer rd.Close()
	if err := r.p.checkHeader("step "+r.st.name, sub.source.Name, rd.Header()); err != nil {
		return nil, fmt.Errorf("%s: %w", sub.name, err)
	}
	m := make(map[string]any)
	env := map[string]any{"row": m, "ref": r.refFn}
	var readErr error
	pend := func(res *Result) error {
		r.pending = append(r.pending, *res)
		return nil
	}
	for row := range r.rows(rd, sub.name, pend, &readErr) {
		if r.p.wholeRow {
			fillRow(m, row)
		}
		r.setRow(env, m, row)
		v, err := evalExpr(&r.machine, sub.linkChild, env)
		msg := ""
		if err != nil {
			msg = sub.name + ": link child: " + evalMessage(err)
		} else if key, ok := asText(v); !ok {
			msg = fmt.Sprintf("%s: link child is %s, not a value", sub.name, describe(v))
		} else {
			if err := idx.add(key, row); err != nil {
				return nil, fmt.Errorf("%s: %w", sub.name, err)
			}
			continue
		}
		// Reported once, as rows of their own: every parent would repeat them.
		r.pending = append(r.pending, Result{Loc: row.Loc, Errors: []*RowError{r.exprError(row, sub.linkChild, msg)}})
	}
	if readErr != nil {
		return nil, readErr
	}
	built = true
	r.links[sub.linkID] = idx
	return idx, nil
}

// ref implements ref(step, id) for this run.
func (r *run) ref(step string, id any) (any, error) {
	s, ok := asText(id)
	if !ok {
		return nil, argError("ref", 2, "an identity (text or number)", id)
	}
	if r.refs != nil {
		if v, ok := r.refs.Ref(step, s); ok {
			if p, isDry := r.refs.(Placeholders); isDry && p.Placeholders() {
				if t, ok := v.(string); ok {
					if r.placeholders == nil {
						r.placeholders = make(map[string]bool)
					}
					r.placeholders[t] = true
				}
			}
			return v, nil
		}
	}
	return nil, &failError{fmt.Sprintf("ref(%q,%q): no record with that id was loaded", step, s)}
}

// cell is the column whose cell an error of the expression is reported
// at: the column it is, or the one it maps (map("units", row.Unit)).
func (c *compiled) cell() string {
	if c.column != "" {
		return c.column
	}
	return c.mapped
}

// rowOnly turns a reader's error that concerns one row (a formula's error
// value, a value under no header, an over-long row) into that row's error,
// so the step goes on and every such row is reported in one run. Other
// errors stop the step: it returns nil for them.
func (r *run) rowOnly(row source.Row, err error) *Result {
	var se *source.Error
	if !errors.As(err, &se) || !se.RowOnly {
		return nil
	}
	e := r.rowError(row, "", nil, se.Err.Error())
	if w := se.Where(); w != "" {
		e.Cell = w
	}
	loc := row.Loc
	if loc.File == "" {
		loc = source.Location{File: se.File, Sheet: se.Sheet, Line: se.Line}
		e.Loc = loc
	}
	res := &Result{Loc: loc, Errors: []*RowError{e}}
	if row.Header != nil {
		res.Rows = []source.Row{own(row)}
	}
	return res
}

// rowError makes a RowError for row, naming column's cell when known.
func (r *run) rowError(row source.Row, column string, fl *field, msg string) *RowError {
	e := &RowError{Step: r.st.name, Loc: row.Loc, Cell: cellString(row, column), Column: column, Message: msg}
	if fl != nil {
		e.Field = fl.name
		e.Plan = fl.pos.String()
	}
	return e
}

// exprError is a row error about one of the step's own expressions (when,
// id, group_by, link), placed at that expression in the plan.
func (r *run) exprError(row source.Row, c *compiled, msg string) *RowError {
	e := r.rowError(row, "", nil, msg)
	if c != nil {
		e.Plan = c.pos.String()
	}
	return e
}

// locString is a row's place: parts.csv:42, or customers.xlsx!Customers!17.
func locString(l source.Location) string { return l.String() }

// cellString is a cell's place: customers.xlsx!Customers!C17 for a
// workbook, parts.csv:42 for a CSV file (whose column the RowError names).
func cellString(row source.Row, column string) string {
	if column == "" {
		return row.Loc.String()
	}
	return row.CellRef(column)
}
