package cli

import (
	"github.com/migrate-tool/migrate/executor"
	"github.com/migrate-tool/migrate/internal/diag"
	"github.com/migrate-tool/migrate/plan"
)

// The one place a diagnostic becomes JSON; its text is diag's String.

// rangeJSON is what a problem is about, as editors and CI take it: lines
// and columns from 1, columns in characters, end inclusive. A CSV row has
// column 0; a workbook's cell names its sheet.
type rangeJSON struct {
	File  string  `json:"file"`
	Sheet string  `json:"sheet,omitempty"`
	Start posJSON `json:"start"`
	End   posJSON `json:"end"`
}

type posJSON struct {
	Line   int `json:"line"`
	Column int `json:"column"`
}

// rangeOf is nil for a place that is a whole file (or none).
func rangeOf(r diag.Range) *rangeJSON {
	if r.Start.Line == 0 {
		return nil
	}
	return &rangeJSON{File: r.File, Sheet: r.Sheet,
		Start: posJSON{Line: r.Start.Line, Column: r.Start.Column},
		End:   posJSON{Line: r.End.Line, Column: r.End.Column}}
}

type problemJSON struct {
	Location string     `json:"location"`
	Message  string     `json:"message"`
	Severity string     `json:"severity,omitempty"`
	Summary  string     `json:"summary"`
	Detail   string     `json:"detail,omitempty"`
	Range    *rangeJSON `json:"range,omitempty"`
}

// problemsJSON are the plan's problems; p (nil when it could not be read)
// gives each its range's end.
func problemsJSON(p *plan.Plan, ds plan.Diagnostics) []problemJSON {
	out := make([]problemJSON, 0, len(ds))
	for _, pd := range ds {
		d := pd.Diag(p)
		pj := problemJSON{Location: d.Subject.String(), Message: d.Message(), Summary: d.Summary, Detail: d.Detail, Range: rangeOf(d.Subject)}
		if d.Severity == diag.Warning {
			pj.Severity = "warning"
		}
		out = append(out, pj)
	}
	return out
}

type errorJSON struct {
	Step     string `json:"step"`
	Location string `json:"location"`
	Field    string `json:"field,omitempty"`
	Value    string `json:"value,omitempty"`
	// PlanLocation is where the plan writes the field: plan.yaml:31:9.
	PlanLocation string `json:"plan_location,omitempty"`
	Message      string `json:"message"`
	Severity     string `json:"severity,omitempty"` // "warning" for a warning; an error has none
	Partly       string `json:"partly_loaded,omitempty"`
	// Status is the HTTP status of the server's refusal (409: a key the
	// company holds already); left out for a row error.
	Status    int        `json:"status,omitempty"`
	Summary   string     `json:"summary"`
	Detail    string     `json:"detail,omitempty"`
	Range     *rangeJSON `json:"range,omitempty"`
	PlanRange *rangeJSON `json:"plan_range,omitempty"`

	d diag.Diagnostic `json:"-"` // what the human view prints
}

// errorOf is one row problem of a run.
func errorOf(e executor.RecordError) errorJSON {
	j := rowProblemJSON(e.Diagnostic())
	j.Partly, j.Status = e.Partly, e.Status
	return j
}

// rowProblemJSON is a problem with the data a run read: a row error, or a
// warning (Severity "warning").
func rowProblemJSON(d diag.Diagnostic) errorJSON {
	j := errorJSON{Step: d.Step, Location: d.Subject.String(), Field: d.Field, Value: d.Value, PlanLocation: d.Context.String(),
		Message: d.Message(), Summary: d.Summary, Detail: d.Detail, Range: rangeOf(d.Subject), PlanRange: rangeOf(d.Context), d: d}
	if d.Severity == diag.Warning {
		j.Severity = "warning"
	}
	return j
}

// warningsOf are a run's warnings about the data it read.
func warningsOf(ds []diag.Diagnostic) []errorJSON {
	var out []errorJSON
	for _, d := range ds {
		out = append(out, rowProblemJSON(d))
	}
	return out
}

// errorsOf are a run's row problems, in their order.
func errorsOf(es []executor.RecordError) []errorJSON {
	out := make([]errorJSON, 0, len(es))
	for _, e := range es {
		out = append(out, errorOf(e))
	}
	return out
}
