package plan

import (
	"fmt"
	"path/filepath"

	"github.com/migrate-tool/migrate/internal/diag"

	"github.com/migrate-tool/migrate/odata"
)

// Pos is a place in the plan file.
type Pos struct {
	File      string
	Line, Col int
}

func (p Pos) String() string {
	if p.Line == 0 {
		return p.File
	}
	return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Col)
}

// Expr is an expression of the plan, or a constant written as {value: X}
// (or as a bare number or boolean).
type Expr struct {
	Src string // expr-lang source; empty for a constant
	// Const is the constant value when IsConst: string, int64, float64 or
	// bool as YAML gave it (numbers keep their text in ConstText).
	Const     any
	ConstText string
	IsConst   bool
	// Pos is where the expression's text starts: after the opening quote of
	// a quoted scalar, on the first content line of a block scalar; for a
	// constant, the value's position.
	Pos Pos

	// contCol is the column at which continuation lines of a multi-line
	// (block scalar) expression start; 0 means Pos.Col.
	contCol int
	// places holds where each character of Src is written in the file
	// (see placeRunes); nil for an Expr made by hand.
	places []place
}

// Plan is a decoded plan file.
type Plan struct {
	Path    string // the plan file as given
	Dir     string // its folder; relative paths are resolved against it
	Hash    string // sha256 of the file's bytes, hex
	Version int
	Name    string
	Target  Target
	// Connections are the services the plan reads besides its target
	// (a template company, another installation), in file order.
	Connections []*Connection
	Sources     []*Source // in file order
	Lookups     []*Lookup // in file order
	// Maps are the value maps read with map("name", value), in file order.
	Maps  []*ValueMap
	Steps []*Step // in file order
	// Tests are the plan's own tests (tests:), in file order; those of
	// the file beside it are LoadTests'.
	Tests []*Test
	// StepsPos is the position of the "steps" key (zero when absent).
	StepsPos Pos
	// Spans holds where each top-level key and its value stand.
	Spans Spans

	text *text // the file's lines and node ends, for diagnostics' ranges
}

// File is where a file the plan names is: an absolute path as it is, a
// relative one in the plan's folder.
func (p *Plan) File(name string) string {
	if filepath.IsAbs(name) {
		return name
	}
	return filepath.Join(p.Dir, name)
}

// DefaultMaxSameErrors is target.max_same_errors when the plan gives none.
const DefaultMaxSameErrors = 20

// Target holds the plan's connection defaults; flags and environment override them.
type Target struct {
	URL      string
	Dialect  string // target.dialect: "priority" (also when not given) or "odata"
	Language int    // 0: none
	Metadata string
	// SystemVersion is the server's version as the plan declares it, for
	// servers without a version function (before 22.0); zero: not declared.
	SystemVersion    odata.Version
	SystemVersionPos Pos
	Auth             string // basic | pat | oidc | client_credentials | ""
	// TokenURL and Scopes are the client credentials grant's token
	// endpoint and scopes (never its secret).
	TokenURL       string
	Scopes         []string
	BatchSize      int // 0: the server's limit
	Concurrency    int // 0: default
	CallsPerMinute int // 0: unlimited
	// TransactionsLeft is the API transactions the pool has left, when
	// HasTransactionsLeft: apply refuses a load that needs more.
	TransactionsLeft    int
	HasTransactionsLeft bool
	// Companies are the companies of the installation apply loads, one
	// load each (the last segment of URL replaced); none: URL's own.
	Companies []string
	// MaxSameErrors: a step stops after this many records in a row fail
	// with one screen error (0: DefaultMaxSameErrors).
	MaxSameErrors    int
	Timezone         string // default UTC
	DecimalSeparator string // "." (default) or ","
	Empty            string // omit (default) | null | keep
	Pos              Pos
	Spans            Spans // each key of target: and its value
}

// Connection is a service a plan reads besides its target: a template
// company, a test company. Its secrets come from MIGRATE_<NAME>_TOKEN,
// _USER and _PASSWORD (or migrate login --connection NAME), never from the
// plan.
type Connection struct {
	Name     string
	URL      string
	Auth     string   // basic | pat | oidc | client_credentials | ""
	TokenURL string   // the client credentials grant's, as target.token_url
	Scopes   []string // as target.scopes
	Dialect  string   // priority | odata | "": the target's
	Language int      // 0: none
	Pos      Pos      // of the connection's name
	Spans    Spans    // each key of the connection and its value

	// refused: its name or URL is wrong, or its variables are another's:
	// nothing may connect with it (ConnectionsRefused).
	refused bool
}

// ConnectionsRefused reports whether a connection of the plan has a name
// that is no identifier, variables another connection or the target reads
// too, or a URL that is no http(s) address. Nothing may connect then, not
// even to the target: the diagnostics say why, and the command stops
// before it reads or sends anything (connections t and T once read the
// same MIGRATE_T_* variables, and one token went to both servers).
func (p *Plan) ConnectionsRefused() bool {
	for _, c := range p.Connections {
		if c.refused {
			return true
		}
	}
	return false
}

// byName is the first of items whose name is name, or nil.
func byName[T any](items []*T, name string, nameOf func(*T) string) *T {
	for _, it := range items {
		if nameOf(it) == name {
			return it
		}
	}
	return nil
}

// Connection returns the plan's connection of that name, or nil.
func (p *Plan) Connection(name string) *Connection {
	return byName(p.Connections, name, func(c *Connection) string { return c.Name })
}

// Source is a named input: a file, or an entity of a connection.
type Source struct {
	Name             string
	File             string
	Delimiter        string
	Encoding         string
	DecimalSeparator string // "" inherits target.decimal_separator
	// LazyQuotes accepts a quote inside an unquoted CSV field, as Hebrew
	// exports write abbreviations (מק"ט, בע"מ). An extension of the format.
	LazyQuotes bool
	Sheet      string
	HeaderRow  int
	Pos        Pos   // of the source's name
	Spans      Spans // each key of the source and its value
	FilePos    Pos   // of the file's value

	// A source that reads an entity of a connection instead of
	// a file: File is then "".
	Connection    string
	Entity        string
	Select        []string // "" : every field
	Expand        []string // sub-forms, each a list in the row
	Filter        string   // a $filter, proven applied
	ConnectionPos Pos
	EntityPos     Pos
	FilterPos     Pos
}

// Lookup is an in-memory map from a source.
type Lookup struct {
	Name      string
	Source    string
	Key       Expr
	Value     Expr
	Missing   string // error (default) | empty | keep
	Pos       Pos    // of the lookup's name
	Spans     Spans  // each key of the lookup and its value
	SourcePos Pos    // of the source's value

	// A target lookup reads Entity on the target instead of a
	// source: KeyField's value → ValueField's, of the rows Filter (a
	// $filter, "" for all) gives. Key and Value are then unset.
	Entity     string
	KeyField   string
	ValueField string
	Filter     string
	EntityPos  Pos
	FilterPos  Pos
}

// ValueMap is a map of source values to target values, read with
// map("name", value): written in the plan (units: {"יח'": EA, kg: KG}).
// A value it lacks is a row error at its cell.
type ValueMap struct {
	Name    string
	Entries []MapEntry // in file order; none for a file map
	Pos     Pos        // of the map's name
	// File is the mapping file the map is read from (units: {file:
	// mapping.xlsx}), "" for a map written in the plan; FilePos is where
	// its name is written.
	File    string
	FilePos Pos
	// TargetEntity and TargetKey name the target's codes the map's values
	// become (target: {entity: FAMILY_LOG, key: FAMILYNAME}), for migrate
	// mapping's proposals; TargetPos is where target: is written.
	TargetEntity, TargetKey string
	TargetPos               Pos
}

// MapEntry is one source value of a map and the target value it becomes.
type MapEntry struct {
	Source, Target string
	Pos            Pos // of the source value (the key)
}

// Map returns the value map of that name, or nil.
func (p *Plan) Map(name string) *ValueMap {
	return byName(p.Maps, name, func(m *ValueMap) string { return m.Name })
}

func (p *Plan) mapNames() []string {
	out := make([]string, len(p.Maps))
	for i, m := range p.Maps {
		out[i] = m.Name
	}
	return out
}

// Mode is a step's write mode.
type Mode string

const (
	ModeInsert Mode = "insert"
	ModeUpsert Mode = "upsert"
	ModeUpdate Mode = "update"
)

// Step loads one entity from one source.
type Step struct {
	Name     string
	Entity   string
	Source   string
	After    []string
	AfterPos []Pos
	When     *Expr
	Mode     Mode
	ID       *Expr
	GroupBy  *Expr
	// DeepInsert sends a created record's sub-form lines inside its POST
	// (docs/service.md, Deep insert). True unless the plan says deep_insert:
	// false (the fewest calls by default).
	DeepInsert bool
	Fields     []*Field
	Subforms   []*Subform
	// Refs are the steps named by ref() calls in any expression of the step
	// (each once, in order of appearance). Check fills it.
	Refs  []string
	Pos   Pos   // of the step's mapping (its first key)
	Spans Spans // each key of the step and its value

	NamePos   Pos
	EntityPos Pos
	SourcePos Pos
	ModePos   Pos // zero when mode was not written (Mode is then insert)

	// Match names the written fields that identify a document whose key
	// the server assigns: reconciliation looks an in-doubt create up by
	// them alone. Empty: by every field the record wrote.
	Match    []string
	MatchPos []Pos

	// Exists are the step's reference checks: values that must exist on the
	// target.
	Exists []*Exists

	// Totals are the customer's control totals of the step (totals:), in
	// the plan's order.
	Totals []*Total
}

// Exists is one reference check, exists: {FIELD: ENTITY}: every value the
// field is given must be a key of ENTITY on the target, or be created by
// an earlier step of the plan.
type Exists struct {
	Field     string
	Entity    string
	Pos       Pos // of the field's key
	EntityPos Pos // of the entity's name
}

// Field maps one target field to an expression.
type Field struct {
	Name string
	Expr Expr
	Pos  Pos // of the field's key
}

// Link joins a sub-form's source to its parent's rows.
type Link struct {
	Parent Expr
	Child  Expr
	Pos    Pos
	Spans  Spans // parent: and child: and their values
}

// Lines says what happens to a parent's existing lines.
type Lines string

const (
	LinesAppend  Lines = "append"
	LinesReplace Lines = "replace"
)

// Subform feeds a navigation property of its parent.
type Subform struct {
	Name   string
	Source string // "", a source name, or "group"
	Link   *Link
	// Each, when set, gives a list (an expanded sub-form of the row,
	// split(row.Tags, ";")): one child per element, the element as row.
	Each     *Expr
	When     *Expr
	Lines    Lines // append when not written
	Fields   []*Field
	Subforms []*Subform
	Pos      Pos   // of the sub-form's mapping (its first key)
	Spans    Spans // each key of the sub-form and its value

	NamePos   Pos
	SourcePos Pos // zero when source was not written
	LinesPos  Pos // zero when lines was not written

	linkWritten bool // a link key was written (even if it did not decode)

	Exists []*Exists // reference checks: values that must exist on the target
}

// Severity says whether a Diagnostic stops the plan (Error, the zero value)
// or only deserves a look (Warning): diag's, the one every problem has.
type Severity = diag.Severity

const (
	SeverityError   = diag.Error
	SeverityWarning = diag.Warning
)

// Diagnostic is one problem with a plan.
type Diagnostic struct {
	Pos      Pos
	Message  string
	Severity Severity // SeverityError unless set
}

// String is the diagnostic as diag renders every problem:
// "plan.yaml:12:5: warning: message".
func (d Diagnostic) String() string { return d.Diag(nil).String() }
func (d Diagnostic) Error() string  { return d.String() }

// Location is the position as docs/cli.md's JSON output writes it
// ("plan.yaml:12:7").
func (d Diagnostic) Location() string { return d.Pos.String() }

// Diagnostics collects problems instead of stopping at the first.
type Diagnostics []Diagnostic

// ColumnUse is one place where an expression reads a source column
// (row.X, row["X"], parent.row.X).
type ColumnUse struct {
	Name string
	Pos  Pos
}

// Span is where a key and its value stand in the plan file.
type Span struct {
	Key, Value Pos
}

// Spans maps each key written in a block to its Span, so a caller can
// point at any key or value (target.metadata, a source's file, ...).
type Spans map[string]Span

// Key returns the position of key, or fallback when it was not written.
func (s Spans) Key(key string, fallback Pos) Pos {
	if sp, ok := s[key]; ok {
		return sp.Key
	}
	return fallback
}

// Value returns the position of key's value, or fallback when the key was
// not written.
func (s Spans) Value(key string, fallback Pos) Pos {
	if sp, ok := s[key]; ok {
		return sp.Value
	}
	return fallback
}
