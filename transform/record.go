package transform

import (
	"github.com/migrate-tool/migrate/internal/diag"
	"github.com/migrate-tool/migrate/source"
)

// Record is one entity to write, built from one row (or one group of rows).
//
// Field values are converted to their Edm type: string (Edm.String), int64
// (Edm.Int64), odata.Decimal (Edm.Decimal), time.Time with the plan's offset
// (Edm.DateTimeOffset), bool (Edm.Boolean), or nil (an explicit null).
type Record struct {
	Step   string
	Entity string
	// ID is the record's identity in the journal: the id: expression, else
	// the entity key values, else the source location.
	ID  string
	Loc source.Location
	Row source.Row // the source row as it was, for reports
	// Rows, with group_by, are every row of the group in source order (Row
	// is the first): a report of a failed group gives them all back.
	Rows   []source.Row
	Fields map[string]any
	// Order is the field names in plan order, for stable bodies and reports.
	Order    []string
	Children []*Child
}

// Child is one sub-form entry: a line of a collection sub-form, or the
// object of a single-object sub-form (a text, a ship-to address).
type Child struct {
	Nav    string // navigation property name
	Single bool   // single-object sub-form
	// Replace is lines: replace on the sub-form (delete existing lines first).
	Replace  bool
	Loc      source.Location
	Row      source.Row
	Fields   map[string]any
	Order    []string
	Children []*Child
}

// RowError is a problem with one row: it never stops the run; it is
// collected with its location.
type RowError struct {
	Step   string
	Loc    source.Location
	Cell   string // file!Sheet!C17 or file.csv:42, the most precise place known
	Column string // the source column, when the value came straight from one
	Field  string // target field, if the error is about one
	Value  string // the offending value as text
	// Plan is where the plan writes the field (or the when, id, group_by or
	// link expression) the error is about: plan.yaml:31:9; "" for a problem
	// of the source itself.
	Plan    string
	Message string
}

// Error reads orders.xlsx!Lines!D17 (plan.yaml:31:9 PRICE): message.
func (e *RowError) Error() string { return e.Diagnostic().String() }

// Diagnostic is the error in the model every command renders: the cell
// its subject, the plan's place of the field its context.
func (e *RowError) Diagnostic() diag.Diagnostic {
	d := diag.New(diag.Error, diag.ParseRange(e.Cell), e.Message)
	d.Step, d.Field, d.Value = e.Step, e.Field, e.Value
	d.Context = diag.ParseRange(e.Plan)
	return d
}

// SourceRows are the record's source rows: every row of its group, or its
// one row.
func (r *Record) SourceRows() []source.Row {
	if r.Rows != nil {
		return r.Rows
	}
	return []source.Row{r.Row}
}
