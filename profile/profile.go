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
	"github.com/migrate-tool/migrate/source"
)

// Defaults of Options.
const (
	DefaultCells       = 5       // cells named per finding, then "and K more"
	DefaultMaxDistinct = 100_000 // distinct values counted exactly per column
	DefaultTop         = 5       // most frequent values shown per column
	maxErrors          = 20      // row errors of a source kept
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
	// When is the step's when: of a key, "" for none: rows it skips give
	// no record, so their keys are no duplicates.
	When string
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
	Numeric        bool // a number column: its field is numeric, or 9 in 10 of its values are numbers
	NumbersAsText  Finding
	TextInNumbers  Finding
	DateLayouts    []Layout
	Spaces         Finding
	Key            bool
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

// Run profiles every input, then checks the references.
func Run(ctx context.Context, opts Options) (*Result, error) {
	if opts.Cells <= 0 {
		opts.Cells = DefaultCells
	}
	if opts.MaxDistinct <= 0 {
		opts.MaxDistinct = DefaultMaxDistinct
	}
	res := &Result{Cells: opts.Cells, MaxDistinct: opts.MaxDistinct}
	// The columns other columns refer to keep a set of their values; the
	// referring ones keep their distinct values with their cells.
	referred := map[[2]string]*valueSet{}
	referring := map[[2]string]*refValues{}
	for _, r := range opts.Refs {
		referring[[2]string{r.Source, r.Column}] = nil
		if r.ToEntity == "" {
			referred[[2]string{r.ToSource, r.ToColumn}] = nil
		}
	}
	for _, in := range opts.Sources {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if in.Skipped != "" {
			res.Sources = append(res.Sources, Source{Name: in.Name, File: in.File, Skipped: in.Skipped})
			continue
		}
		s, err := profileSource(ctx, in, opts, referred, referring)
		if err != nil {
			return nil, err
		}
		res.Sources = append(res.Sources, *s)
	}
	entities := map[string]*valueSet{}
	for _, r := range opts.Refs {
		if r.ToEntity == "" || opts.Target == nil {
			continue
		}
		if _, ok := entities[r.ToEntity]; ok {
			continue
		}
		set := newValueSet()
		if err := opts.Target(ctx, r.ToEntity, func(k string) { set.add(k, "") }); err != nil {
			return nil, &TargetError{Entity: r.ToEntity, Err: err}
		}
		entities[r.ToEntity] = set
		res.TargetRead = true
	}
	for _, r := range opts.Refs {
		vals := referring[[2]string{r.Source, r.Column}]
		col := res.column(r.Source, r.Column)
		if vals == nil || col == nil {
			continue
		}
		var set *valueSet
		in := ""
		var also []*valueSet
		if r.ToEntity != "" {
			set, in = entities[r.ToEntity], r.ToEntity+" on the target"
			for _, k := range r.AlsoIn {
				if s := referred[k]; s != nil {
					also = append(also, s)
					in += ", nor in " + res.columnName(k[0], k[1])
				}
			}
		} else {
			set = referred[[2]string{r.ToSource, r.ToColumn}]
			in = res.columnName(r.ToSource, r.ToColumn)
		}
		if set == nil {
			continue // not read: no target, or the source was skipped
		}
		for _, v := range vals.order {
			acc := vals.byValue[v]
			if set.has(v) || slices.ContainsFunc(also, func(s *valueSet) bool { return s.has(v) }) {
				continue
			}
			m := Missing{Value: v, In: in, Why: r.Why, Near: set.near(v), Finding: acc.finding()}
			col.Missing = append(col.Missing, m)
		}
		col.MissingApprox = col.MissingApprox || vals.capped
	}
	return res, nil
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

func (r *Result) file(name string) string {
	if s := r.source(name); s != nil && s.File != s.Name {
		return s.File
	}
	return ""
}

// columnName names a source's column for a person: parts (parts.csv)
// column Part No.
func (r *Result) columnName(src, col string) string {
	if f := r.file(src); f != "" {
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
// hashes, and the case- and space-folded hashes with the cell of one.
type valueSet struct {
	exact  map[uint64]struct{}
	folded map[uint64]string
}

func newValueSet() *valueSet {
	return &valueSet{exact: map[uint64]struct{}{}, folded: map[uint64]string{}}
}

func (s *valueSet) add(v, cell string) {
	s.exact[hash64(v)] = struct{}{}
	f := hash64(fold(strings.TrimSpace(v)))
	if _, ok := s.folded[f]; !ok {
		s.folded[f] = cell
	}
}

func (s *valueSet) has(v string) bool { _, ok := s.exact[hash64(v)]; return ok }

// near is the cell of a value that differs from v only in case or spaces
// ("" for a target's key, or none).
func (s *valueSet) near(v string) string {
	cell, ok := s.folded[hash64(fold(strings.TrimSpace(v)))]
	if !ok {
		return ""
	}
	if cell == "" {
		return "the target"
	}
	return cell
}

// refValues are the distinct values of a referring column with their
// cells, up to a cap.
type refValues struct {
	byValue map[string]*cells
	order   []string
	capped  bool
}

// text is a cell as a person reads it, as the run's reports show it.
func text(c source.Cell) string { return executor.CellText(c) }

// profileSource reads one source to its end.
func profileSource(ctx context.Context, in Input, opts Options, referred map[[2]string]*valueSet, referring map[[2]string]*refValues) (*Source, error) {
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
			}
		}
		a.col.MaxAllowed = maxAllowed(a.col.Fields)
		if a.col.Key {
			a.keys = map[uint64]int{}
			a.folded = map[uint64]foldFirst{}
			a.dups = map[uint64]*groupAcc{}
			a.caseDups = map[uint64]*groupAcc{}
		}
		k := [2]string{in.Name, name}
		if _, ok := referred[k]; ok {
			a.referred = newValueSet()
			referred[k] = a.referred
		}
		if _, ok := referring[k]; ok {
			a.referring = &refValues{byValue: map[string]*cells{}}
			referring[k] = a.referring
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

// foldFirst is the first row of a case-folded key: its exact hash, its
// line, its value.
type foldFirst struct {
	exact uint64
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
	keys      map[uint64]int // key hash → first line
	folded    map[uint64]foldFirst
	dups      map[uint64]*groupAcc
	caseDups  map[uint64]*groupAcc
	groups    int
	workbook  bool // its cells come from a sheet: text and numbers are told apart
	referred  *valueSet
	referring *refValues
}

func newColAcc(name string, opts Options) *colAcc {
	return &colAcc{col: Column{Name: name}, n: opts.Cells, max: opts.MaxDistinct, counts: map[string]int{}, shapes: map[dateShape]*shapeAcc{}}
}

func (a *colAcc) add(c source.Cell, row source.Row, col int, dec byte) {
	a.col.Rows++
	v := text(c)
	if v == "" {
		a.col.Blank++
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
		a.key(v, h, row.Loc.Line, cell, row)
	}
	if a.referred != nil {
		a.referred.add(v, cell)
	}
	if a.referring != nil {
		acc := a.referring.byValue[v]
		if acc == nil {
			if len(a.referring.order) >= a.max {
				a.referring.capped = true
				return
			}
			acc = &cells{}
			a.referring.byValue[v] = acc
			a.referring.order = append(a.referring.order, v)
		}
		acc.add(a.n, cell)
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
func (a *colAcc) key(v string, h uint64, line int, cell string, row source.Row) {
	fh := hash64(fold(v))
	if first, ok := a.keys[h]; ok {
		g := a.dups[h]
		if g == nil {
			g = &groupAcc{value: v, order: a.groups}
			a.groups++
			g.cells.add(a.n, cellAt(row, cell, first))
			a.dups[h] = g
		}
		g.cells.add(a.n, cell)
		return
	}
	a.keys[h] = line
	ff, ok := a.folded[fh]
	if !ok {
		a.folded[fh] = foldFirst{exact: h, line: line, value: v}
		return
	}
	g := a.caseDups[fh]
	if g == nil {
		g = &groupAcc{value: ff.value, values: []string{ff.value}, order: a.groups}
		a.groups++
		g.cells.add(a.n, cellAt(row, cell, ff.line))
		a.caseDups[fh] = g
	}
	g.values = append(g.values, v)
	g.cells.add(a.n, cell)
}

// cellAt is the cell of the same column on an earlier line of the source.
func cellAt(row source.Row, cell string, line int) string {
	loc := row.Loc
	if loc.Sheet == "" {
		loc.Line = line
		return loc.String()
	}
	// file!Sheet!C17: the same column letters, the other row.
	i := strings.LastIndexByte(cell, '!')
	letters := strings.TrimRight(cell[i+1:], "0123456789")
	return cell[:i+1] + letters + fmt.Sprint(line)
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
		switch u.Type {
		case "Edm.Decimal", "Edm.Double", "Edm.Int16", "Edm.Int32", "Edm.Int64", "Edm.Byte", "Edm.Single":
			numericField = numericField || u.Direct
		case "Edm.String":
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
