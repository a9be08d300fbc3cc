package profile

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/migrate-tool/migrate/executor"
	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/source"
)

// Defaults of Options.
const (
	DefaultCells       = 5      // cells named per finding, then "and K more"
	DefaultMaxDistinct = 20_000 // distinct values counted exactly per column: 20 columns of long texts stay under 50 MB
	DefaultTop         = 5      // most frequent values shown per column
	maxErrors          = 20     // row errors of a source kept
)

// Options are what to profile and how much to keep.
type Options struct {
	Sources []Input
	// Refs are the references between columns (and to the target) to check.
	Refs []Ref
	// Target reads the key values of an entity set on the target, calling
	// each for every one; nil: there is no target, and references to it
	// are not checked.
	Target func(ctx context.Context, entity string, each func(key string)) error
	// Cells is how many cells a finding names (0: DefaultCells).
	Cells int
	// MaxDistinct caps the distinct values counted exactly per column
	// (0: DefaultMaxDistinct); past it the count is estimated.
	MaxDistinct int
}

// Input is one source to profile.
type Input struct {
	Name string // the plan's source name, or the file given
	File string // as the plan wrote it
	Open func() (source.Reader, error)
	// Decimal is the separator of decimals in its text cells: '.' or ','.
	Decimal byte
	// Uses are what the plan does with its columns.
	Uses []Use
	// Skipped, when set, says why the source is not read (a connection's
	// entity, checked offline).
	Skipped string
}

// Use is a field the plan writes from a column (or an identity it takes
// from it).
type Use struct {
	Column string
	Step   string
	Form   string // the entity set, or the sub-form
	Field  string // "id" or "group_by" for an identity
	// Type and MaxLength are the field's metadata ("" and 0 when unknown).
	Type      string
	MaxLength int
	// Direct: the field's expression is the column itself; otherwise Expr
	// computes the field from it.
	Direct bool
	Expr   string
	Plan   string // where the plan writes it: plan.yaml:LINE:COLUMN
	Key    bool   // the value names a record: duplicates matter
	// Group: the value names a group of rows (group_by): it repeats by
	// design, but two spellings that differ only in case are two groups.
	Group bool
	// Mandatory: the field is written from the column itself, and a blank
	// value of a mandatory field is a row error (transform.Use.Mandatory).
	Mandatory bool
	// When is the step's when: of a key or a mandatory field, "" for
	// none: rows it skips give no record, so their keys are no duplicates
	// and their blanks refuse nothing.
	When string
}

// Label is how the views name the use: FORM.FIELD, or --key for a
// column named unique on the command line.
func (u Use) Label() string {
	if u.Form == "" {
		return u.Field
	}
	return u.Form + "." + u.Field
}

// Computed: a field of the plan's is computed from the column (Expr),
// so the column's values are not the field's.
func (u Use) Computed() bool { return u.Form != "" && !u.Direct }

// CaseCollides says whether the column's keys that differ only in case
// are one key to the load: a key or group computed from the column by an
// expression, which may fold case (upper(row.Code)), where the dry run's
// row error says a record's key comes twice. Written as it is, P-1 and
// p-1 are two keys and load as two records: a finding for a person to
// judge (the same one twice?), not a failure.
func (c *Column) CaseCollides() bool {
	for _, u := range c.Fields {
		if (u.Key || u.Group) && u.Computed() {
			return true
		}
	}
	return false
}

// Ref says the values of one column must be found in another source's
// column, or among an entity's keys on the target.
type Ref struct {
	Source, Column     string
	ToSource, ToColumn string // another source's column; "" with ToEntity
	ToEntity           string // an entity set on the target
	// AlsoIn are the columns, with ToEntity, whose values the plan creates
	// before (exists: counts a value an earlier step writes as found).
	AlsoIn [][2]string
	Why    string // the plan's reason: "exists: PARTNAME: LOGPART (plan.yaml:40:9)"
	// Offline: checked only where no target is read (an exists:'s look
	// at the sources that create its entity); with a target, the check of
	// the entity there, which reads them too (AlsoIn), stands for it, and
	// a value the company holds is no finding.
	Offline bool
}

// Result is what Run found.
type Result struct {
	Sources []Source
	// TargetRead says a target was read for the references to it.
	TargetRead  bool
	Cells       int
	MaxDistinct int
}

// Source is one source's profile.
type Source struct {
	Name, File string
	Rows       int
	Columns    []Column
	Errors     []string // rows the reader could read only in part
	Skipped    string
}

// Column is one column's profile.
type Column struct {
	Name           string
	Rows, Blank    int
	Distinct       int
	Approximate    bool // Distinct estimated and Top counted among the first values only
	Top            []Count
	MinLength      int
	MaxLength      int
	Shortest       *Sample
	Longest        *Sample
	Kinds          Kinds
	Fields         []Use
	MaxAllowed     int // the smallest MaxLength of a field written from it directly
	TooLong        Finding
	BlankMandatory Finding // blank cells of a column that feeds a mandatory field (Use.Mandatory)
	Numeric        bool    // a number column: its field is numeric, or 9 in 10 of its values are numbers
	NumbersAsText  Finding
	TextInNumbers  Finding
	DateLayouts    []Layout
	Spaces         Finding
	Key            bool
	Group          bool // names groups: only its case duplicates are findings
	Duplicates     []Group
	CaseDuplicates []Group
	Missing        []Missing
	MissingApprox  bool // more distinct values than MaxDistinct: the later ones were not checked
}

// Kinds counts the cells by what the file stored: text, numbers, dates,
// booleans (a CSV stores only text).
type Kinds struct{ Text, Number, Date, Bool int }

// Count is a value and how many rows give it.
type Count struct {
	Value string
	Count int
}

// Sample is a value and the cell it is in.
type Sample struct{ Value, Cell string }

// Finding is how many cells something was found in, and the first of them.
type Finding struct {
	Count int
	Cells []string
}

// More is how many cells the finding does not name.
func (f Finding) More() int { return f.Count - len(f.Cells) }

// Layout is a date layout a column holds, with its cells.
type Layout struct {
	Layout string
	Finding
}

// Group is a key given by more than one row: the value, as the first row
// gives it, and its cells, the first row's first.
type Group struct {
	Value string
	Finding
	// Values are the spellings of a case duplicate, in order of first
	// appearance.
	Values []string
}

// Missing is a value a column refers to that the referred source (or the
// target) lacks.
type Missing struct {
	Value string
	In    string // "parts (parts.csv) column Part No", "LOGPART on the target"
	Why   string
	// Near is the cell of a value that differs only in case or spaces,
	// where the referred source has one.
	Near string
	Finding
}

// Run profiles every input, each read once (the ones referred to first),
// checking the references as the rows go by.
func Run(ctx context.Context, opts Options) (*Result, error) {
	if opts.Cells <= 0 {
		opts.Cells = DefaultCells
	}
	if opts.MaxDistinct <= 0 {
		opts.MaxDistinct = DefaultMaxDistinct
	}
	res := &Result{Cells: opts.Cells, MaxDistinct: opts.MaxDistinct}
	// The company's keys first, so that the references to them are checked
	// as the rows go by.
	entities := map[string]*valueSet{}
	for _, r := range opts.Refs {
		if r.ToEntity == "" || opts.Target == nil || entities[r.ToEntity] != nil {
			continue
		}
		set := newValueSet()
		if err := opts.Target(ctx, r.ToEntity, func(k string) { set.add(k, nil, 0) }); err != nil {
			return nil, &TargetError{Entity: r.ToEntity, Err: err}
		}
		entities[r.ToEntity] = set
		res.TargetRead = true
	}
	// Every column referred to keeps a set of its values.
	readable := map[string]string{} // source → file, of the sources read
	for _, in := range opts.Sources {
		if in.Skipped == "" {
			readable[in.Name] = in.File
		}
	}
	referred := map[[2]string]*valueSet{}
	var checks []*refCheck
	for _, r := range opts.Refs {
		if r.Offline && opts.Target != nil {
			continue
		}
		c := &refCheck{ref: r, values: map[string]*cells{}}
		if r.ToEntity != "" {
			c.set, c.in = entities[r.ToEntity], r.ToEntity+" on the target"
			for _, k := range r.AlsoIn {
				if _, ok := readable[k[0]]; ok {
					c.also = append(c.also, referredSet(referred, k))
					c.in += ", nor in " + columnName(readable, k[0], k[1])
				}
			}
		} else if _, ok := readable[r.ToSource]; ok {
			c.set, c.in = referredSet(referred, [2]string{r.ToSource, r.ToColumn}), columnName(readable, r.ToSource, r.ToColumn)
		}
		if c.set != nil { // else not to be had: no target, or the source is not read
			checks = append(checks, c)
		}
	}
	// The sources referred to are read first where they can be, so that a
	// referring column keeps only the values missing, not all it has.
	sources := make([]Source, len(opts.Sources))
	done := map[string]bool{}
	for _, i := range readOrder(opts.Sources, checks) {
		in := opts.Sources[i]
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if in.Skipped != "" {
			sources[i] = Source{Name: in.Name, File: in.File, Skipped: in.Skipped}
			continue
		}
		var mine []*refCheck
		for _, c := range checks {
			if c.ref.Source == in.Name {
				c.deferred = !c.ready(done)
				mine = append(mine, c)
			}
		}
		s, err := profileSource(ctx, in, opts, referred, mine)
		if err != nil {
			return nil, err
		}
		sources[i] = *s
		done[in.Name] = true
	}
	res.Sources = sources
	for _, c := range checks {
		col := res.column(c.ref.Source, c.ref.Column)
		if col == nil {
			continue
		}
		for _, v := range c.order {
			if c.deferred && c.found(v) {
				continue
			}
			col.Missing = append(col.Missing, Missing{Value: v, In: c.in, Why: c.ref.Why, Near: c.near(v), Finding: c.values[v].finding()})
		}
		col.MissingApprox = col.MissingApprox || c.capped
	}
	return res, nil
}

// refCheck is one reference being checked while its column is read.
type refCheck struct {
	ref  Ref
	set  *valueSet   // where the values must be
	also []*valueSet // or here (exists: what earlier steps create)
	in   string      // the sets named for a person
	// values are the values missing with their cells, in order of first
	// appearance, up to MaxDistinct; deferred, all the column's values
	// (its sets were not complete when it was read: a cycle of sources).
	values   map[string]*cells
	order    []string
	capped   bool
	deferred bool
}

func (c *refCheck) ready(done map[string]bool) bool {
	if c.ref.ToEntity == "" {
		return done[c.ref.ToSource]
	}
	for _, k := range c.ref.AlsoIn {
		if !done[k[0]] {
			return false
		}
	}
	return true
}

func (c *refCheck) found(v string) bool {
	return c.set.has(v) || slices.ContainsFunc(c.also, func(s *valueSet) bool { return s.has(v) })
}

// near is the cell of a value of its sets (the target's, then the
// sources' it also reads) that differs from v only in case or spaces; ""
// for none.
func (c *refCheck) near(v string) string {
	if n := c.set.near(v); n != "" {
		return n
	}
	for _, s := range c.also {
		if n := s.near(v); n != "" {
			return n
		}
	}
	return ""
}

// see files one value of the referring column.
func (c *refCheck) see(v, cell string, n, max int) {
	if !c.deferred && c.found(v) {
		return
	}
	acc := c.values[v]
	if acc == nil {
		if len(c.order) >= max {
			c.capped = true
			return
		}
		acc = &cells{}
		c.values[v] = acc
		c.order = append(c.order, v)
	}
	acc.add(n, cell)
}

func referredSet(m map[[2]string]*valueSet, k [2]string) *valueSet {
	if m[k] == nil {
		m[k] = newValueSet()
	}
	return m[k]
}

// readOrder is the order to read the sources in: each after the sources
// its references need, where there is such an order; else as given.
func readOrder(sources []Input, checks []*refCheck) []int {
	var order []int
	emitted := make([]bool, len(sources))
	read := map[string]bool{}
	needs := func(name string) bool {
		for _, c := range checks {
			if c.ref.Source != name {
				continue
			}
			for _, k := range append([][2]string{{c.ref.ToSource, c.ref.ToColumn}}, c.ref.AlsoIn...) {
				if k[0] != "" && k[0] != name && !read[k[0]] && slices.ContainsFunc(sources, func(in Input) bool { return in.Name == k[0] }) {
					return true
				}
			}
		}
		return false
	}
	for len(order) < len(sources) {
		next := -1
		for i, in := range sources {
			if !emitted[i] && !needs(in.Name) {
				next = i
				break
			}
		}
		if next < 0 { // a cycle: the first left, its checks deferred
			next = slices.Index(emitted, false)
		}
		emitted[next] = true
		read[sources[next].Name] = true
		order = append(order, next)
	}
	return order
}

// TargetError is a failed read of the target's keys.
type TargetError struct {
	Entity string
	Err    error
}

func (e *TargetError) Error() string {
	return fmt.Sprintf("reading the keys of %s on the target: %v", e.Entity, e.Err)
}
func (e *TargetError) Unwrap() error { return e.Err }

func (r *Result) source(name string) *Source {
	for i := range r.Sources {
		if r.Sources[i].Name == name {
			return &r.Sources[i]
		}
	}
	return nil
}

// columnName names a source's column for a person: parts (parts.csv)
// column Part No.
func columnName(files map[string]string, src, col string) string {
	if f := files[src]; f != "" && f != src {
		return src + " (" + f + ") column " + col
	}
	return src + " column " + col
}

func (r *Result) column(src, name string) *Column {
	s := r.source(src)
	if s == nil {
		return nil
	}
	for i := range s.Columns {
		if s.Columns[i].Name == name {
			return &s.Columns[i]
		}
	}
	return nil
}

// cells collects the first n cells of a finding and counts the rest.
type cells struct {
	count int
	first []string
}

func (c *cells) add(n int, cell string) {
	c.count++
	if len(c.first) < n {
		c.first = append(c.first, cell)
	}
}

func (c *cells) finding() Finding {
	return Finding{Count: c.count, Cells: slices.Clone(c.first)}
}

// valueSet is the values of a referred column (or a target's keys): their
// hashes, and the case- and space-folded hashes with the line of one, so
// a million values cost some 40 MB, not their text.
type valueSet struct {
	exact  map[uint64]struct{}
	folded map[uint64]int
	loc    source.Location // the column's file and sheet: a line's cell
	col    int
}

func newValueSet() *valueSet {
	return &valueSet{exact: map[uint64]struct{}{}, folded: map[uint64]int{}}
}

// add files a value of the column at row (a target's key: no row).
func (s *valueSet) add(v string, row *source.Row, col int) {
	s.exact[hash64(v)] = struct{}{}
	f := hash64(fold(strings.TrimSpace(v)))
	if _, ok := s.folded[f]; ok {
		return
	}
	s.folded[f] = 0
	if row != nil {
		s.folded[f] = row.Loc.Line
		s.loc, s.col = row.Loc, col
	}
}

func (s *valueSet) has(v string) bool { _, ok := s.exact[hash64(v)]; return ok }

// near is the cell of a value that differs from v only in case or spaces
// ("the target" for a target's key; "" for none).
func (s *valueSet) near(v string) string {
	line, ok := s.folded[hash64(fold(strings.TrimSpace(v)))]
	switch {
	case !ok:
		return ""
	case line == 0:
		return "the target"
	}
	loc := s.loc
	loc.Line = line
	return loc.Cell(s.col)
}

// text is a cell as a person reads it, as the run's reports show it.
func text(c source.Cell) string { return executor.CellText(c) }

// profileSource reads one source to its end.
func profileSource(ctx context.Context, in Input, opts Options, referred map[[2]string]*valueSet, checks []*refCheck) (*Source, error) {
	r, err := in.Open()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	h := r.Header()
	out := &Source{Name: in.Name, File: in.File}
	accs := make([]*colAcc, len(h.Names))
	for i, name := range h.Names {
		a := newColAcc(name, opts)
		for _, u := range in.Uses {
			if u.Column == name {
				a.col.Fields = append(a.col.Fields, u)
				a.col.Key = a.col.Key || u.Key
				a.mandatory = a.mandatory || u.Mandatory
				a.numeric = a.numeric || u.Direct && odata.EdmType(u.Type).Numeric()
				a.col.Group = a.col.Group || u.Group
			}
		}
		a.col.Group = a.col.Group && !a.col.Key
		a.col.MaxAllowed = maxAllowed(a.col.Fields)
		if a.col.Key || a.col.Group {
			a.keys = map[uint64]int{}
			a.folded = map[uint64]foldFirst{}
			a.dups = map[uint64]*groupAcc{}
			a.caseDups = map[uint64]*groupAcc{}
		}
		k := [2]string{in.Name, name}
		a.referred = referred[k]
		for _, c := range checks {
			if c.ref.Column == name {
				a.checks = append(a.checks, c)
			}
		}
		accs[i] = a
	}
	for {
		row, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			var se *source.Error
			if !errors.As(err, &se) || !se.RowOnly {
				return nil, err
			}
			if len(out.Errors) < maxErrors {
				out.Errors = append(out.Errors, err.Error())
			}
			if row.Cells == nil {
				continue
			}
		}
		out.Rows++
		if out.Rows%4096 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		for i, a := range accs {
			var c source.Cell = ""
			if i < len(row.Cells) {
				c = row.Cells[i]
			}
			a.add(c, row, h.Column(i), in.Decimal)
		}
	}
	for _, a := range accs {
		out.Columns = append(out.Columns, a.result())
	}
	return out, nil
}

// foldFirst is the first row of a case-folded key: its line and value.
type foldFirst struct {
	line  int
	value string
}

// groupAcc gathers the rows of one duplicated key.
type groupAcc struct {
	value  string
	values []string
	cells  cells
	order  int
}

// colAcc is one column while its source is read.
type colAcc struct {
	col       Column
	n         int // cells per finding
	max       int
	counts    map[string]int
	est       hll
	numbers   int // number cells and texts that read as numbers
	texts     cells
	nonNum    cells
	shapes    map[dateShape]*shapeAcc
	dateCells cells
	spaces    cells
	tooLong   cells
	mandatory bool // it feeds a mandatory field: a blank is a finding
	numeric   bool // it feeds a numeric field directly: a date cell is no number
	blanks    cells
	keys      map[uint64]int // key hash → first line
	folded    map[uint64]foldFirst
	dups      map[uint64]*groupAcc
	caseDups  map[uint64]*groupAcc
	groups    int
	workbook  bool // its cells come from a sheet: text and numbers are told apart
	referred  *valueSet
	checks    []*refCheck // the references this column makes
}

func newColAcc(name string, opts Options) *colAcc {
	return &colAcc{col: Column{Name: name}, n: opts.Cells, max: opts.MaxDistinct, counts: map[string]int{}, shapes: map[dateShape]*shapeAcc{}}
}

func (a *colAcc) add(c source.Cell, row source.Row, col int, dec byte) {
	a.col.Rows++
	v := text(c)
	if v == "" {
		a.col.Blank++
		if a.mandatory {
			a.blanks.add(a.n, row.Loc.Cell(col))
		}
		return
	}
	cell := row.Loc.Cell(col)
	a.workbook = a.workbook || row.Loc.Sheet != ""
	switch c.(type) {
	case source.Number:
		a.col.Kinds.Number++
		a.numbers++
	case time.Time:
		a.col.Kinds.Date++
		a.dateCells.add(a.n, cell)
		if a.numeric {
			a.nonNum.add(a.n, cell) // the field refuses it: "date … is not a decimal"
		}
	case bool:
		a.col.Kinds.Bool++
		a.nonNum.add(a.n, cell)
	default:
		a.col.Kinds.Text++
		if isNumber(strings.TrimSpace(v), dec) {
			a.numbers++
			a.texts.add(a.n, cell)
		} else {
			a.nonNum.add(a.n, cell)
		}
		if sh, x, y, ok := parseDate(strings.TrimSpace(v)); ok {
			s := a.shapes[sh]
			if s == nil {
				s = &shapeAcc{shape: sh}
				a.shapes[sh] = s
			}
			s.count++
			s.cells.add(a.n, cell)
			s.firstOver12 = s.firstOver12 || x > 12
			s.secondOver12 = s.secondOver12 || y > 12
		}
		if t := strings.TrimFunc(v, unicode.IsSpace); t != v {
			a.spaces.add(a.n, cell)
		}
	}
	h := hash64(v)
	a.est.add(h)
	if n, ok := a.counts[v]; ok || len(a.counts) < a.max {
		a.counts[v] = n + 1
	} else {
		a.col.Approximate = true
	}
	l := utf8.RuneCountInString(v)
	if a.col.Shortest == nil || l < a.col.MinLength {
		a.col.MinLength, a.col.Shortest = l, &Sample{Value: v, Cell: cell}
	}
	if a.col.Longest == nil || l > a.col.MaxLength {
		a.col.MaxLength, a.col.Longest = l, &Sample{Value: v, Cell: cell}
	}
	if max := a.col.MaxAllowed; max > 0 && l > max {
		a.tooLong.add(a.n, cell)
	}
	if a.keys != nil {
		a.key(v, h, cell, row, col)
	}
	if a.referred != nil {
		a.referred.add(v, &row, col)
	}
	for _, c := range a.checks {
		c.see(v, cell, a.n, a.max)
	}
}

// maxAllowed is the smallest MaxLength of the text fields a column is
// written to directly (0: none known).
func maxAllowed(uses []Use) int {
	m := 0
	for _, u := range uses {
		if u.Direct && u.MaxLength > 0 && (m == 0 || u.MaxLength < m) {
			m = u.MaxLength
		}
	}
	return m
}

// key files one value of a key column: a repeat of an earlier row's is a
// duplicate; one that differs from an earlier row's only in case, a case
// duplicate.
func (a *colAcc) key(v string, h uint64, cell string, row source.Row, col int) {
	line := row.Loc.Line
	fh := hash64(fold(v))
	if first, ok := a.keys[h]; ok {
		if a.col.Group {
			return // a group's rows
		}
		g := a.dups[h]
		if g == nil {
			g = &groupAcc{value: v, order: a.groups}
			a.groups++
			g.cells.add(a.n, cellAt(row, col, first))
			a.dups[h] = g
		}
		g.cells.add(a.n, cell)
		return
	}
	a.keys[h] = line
	ff, ok := a.folded[fh]
	if !ok {
		a.folded[fh] = foldFirst{line: line, value: v}
		return
	}
	g := a.caseDups[fh]
	if g == nil {
		g = &groupAcc{value: ff.value, values: []string{ff.value}, order: a.groups}
		a.groups++
		g.cells.add(a.n, cellAt(row, col, ff.line))
		a.caseDups[fh] = g
	}
	g.values = append(g.values, v)
	g.cells.add(a.n, cell)
}

// cellAt is the cell of column col on an earlier line of the row's source.
func cellAt(row source.Row, col, line int) string {
	loc := row.Loc
	loc.Line = line
	return loc.Cell(col)
}

func (a *colAcc) result() Column {
	c := a.col
	c.Distinct = len(a.counts)
	if c.Approximate {
		c.Distinct = a.est.estimate()
	}
	for v, n := range a.counts {
		c.Top = append(c.Top, Count{Value: v, Count: n})
	}
	sort.Slice(c.Top, func(i, j int) bool {
		if c.Top[i].Count != c.Top[j].Count {
			return c.Top[i].Count > c.Top[j].Count
		}
		return c.Top[i].Value < c.Top[j].Value
	})
	if len(c.Top) > DefaultTop {
		c.Top = c.Top[:DefaultTop]
	}
	c.Top = slices.Clip(c.Top)
	a.counts = nil
	if c.Shortest == nil {
		c.MinLength = 0
	}
	// A number column: a numeric field, or 9 in 10 of the values numbers
	// (never a text field: a part number 00123 is text on purpose).
	filled := c.Rows - c.Blank
	numericField, textField := false, false
	for _, u := range c.Fields {
		switch t := odata.EdmType(u.Type); {
		case t.Numeric():
			numericField = numericField || u.Direct
		case t == odata.EdmString:
			textField = textField || u.Direct
		}
	}
	c.Numeric = numericField || !textField && filled > 0 && a.numbers*10 >= filled*9
	if c.Numeric {
		if a.workbook {
			// A CSV holds only text; a sheet's text cells that read as
			// numbers were typed as text (Excel's green corner).
			c.NumbersAsText = a.texts.finding()
		}
		c.TextInNumbers = a.nonNum.finding()
	}
	if a.dateCells.count > 0 {
		c.DateLayouts = append(c.DateLayouts, Layout{Layout: "date cell", Finding: a.dateCells.finding()})
	}
	var shapes []*shapeAcc
	for _, s := range a.shapes {
		shapes = append(shapes, s)
	}
	sort.Slice(shapes, func(i, j int) bool {
		if shapes[i].count != shapes[j].count {
			return shapes[i].count > shapes[j].count
		}
		return shapes[i].name() < shapes[j].name()
	})
	for _, s := range shapes {
		c.DateLayouts = append(c.DateLayouts, Layout{Layout: s.name(), Finding: s.cells.finding()})
	}
	c.Spaces = a.spaces.finding()
	c.TooLong = a.tooLong.finding()
	c.BlankMandatory = a.blanks.finding()
	c.Duplicates = groups(a.dups)
	c.CaseDuplicates = groups(a.caseDups)
	return c
}

func groups(m map[uint64]*groupAcc) []Group {
	accs := make([]*groupAcc, 0, len(m))
	for _, g := range m {
		accs = append(accs, g)
	}
	sort.Slice(accs, func(i, j int) bool { return accs[i].order < accs[j].order })
	var out []Group
	for _, g := range accs {
		out = append(out, Group{Value: g.value, Values: g.values, Finding: g.cells.finding()})
	}
	return out
}

// isNumber says whether s is a number as a plan's text cell writes one:
// an optional sign, digits, and at most one decimal separator dec
// followed by digits. A thousands separator makes it text: number()
// refuses it.
func isNumber(s string, dec byte) bool {
	if dec == 0 {
		dec = '.'
	}
	if s != "" && (s[0] == '-' || s[0] == '+') {
		s = s[1:]
	}
	digits, sep := 0, false
	for i := 0; i < len(s); i++ {
		switch {
		case digit(s[i]):
			digits++
		case s[i] == dec && !sep && digits > 0 && i+1 < len(s):
			sep = true
		default:
			return false
		}
	}
	return digits > 0
}
