package plan

import (
	"fmt"
	"sort"
	"strings"
)

// Sort orders the diagnostics by file, line and column (then message), so
// output is stable whatever order the checks ran in.
func (ds Diagnostics) Sort() {
	sort.SliceStable(ds, func(i, j int) bool {
		a, b := ds[i].Pos, ds[j].Pos
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		if a.Col != b.Col {
			return a.Col < b.Col
		}
		return ds[i].Message < ds[j].Message
	})
}

// HasErrors reports whether any diagnostic is an error (not a warning).
func (ds Diagnostics) HasErrors() bool {
	for _, d := range ds {
		if d.Severity == SeverityError {
			return true
		}
	}
	return false
}

// Errors returns only the errors.
func (ds Diagnostics) Errors() Diagnostics { return ds.of(SeverityError) }

// Warnings returns only the warnings.
func (ds Diagnostics) Warnings() Diagnostics { return ds.of(SeverityWarning) }

// of returns the diagnostics of one severity.
func (ds Diagnostics) of(sev Severity) Diagnostics {
	var out Diagnostics
	for _, d := range ds {
		if d.Severity == sev {
			out = append(out, d)
		}
	}
	return out
}

// Error joins the diagnostics, one per line.
func (ds Diagnostics) Error() string {
	var b strings.Builder
	for i, d := range ds {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(d.String())
	}
	return b.String()
}

// Err returns the diagnostics as an error when at least one is an error,
// else nil (warnings alone are not a failure).
func (ds Diagnostics) Err() error {
	if !ds.HasErrors() {
		return nil
	}
	return ds
}

// diags is the collector the decoder and the checks append to.
type diags struct {
	list Diagnostics
}

func (d *diags) errorf(pos Pos, format string, args ...any) {
	d.list = append(d.list, Diagnostic{Pos: pos, Message: fmt.Sprintf(format, args...)})
}

func (d *diags) warnf(pos Pos, format string, args ...any) {
	d.list = append(d.list, Diagnostic{Pos: pos, Message: fmt.Sprintf(format, args...), Severity: SeverityWarning})
}

// sorted returns the collected diagnostics sorted and without exact
// duplicates (an alias expanded twice would otherwise report twice).
func (d *diags) sorted() Diagnostics {
	out := d.list
	out.Sort()
	dedup := out[:0]
	for i, x := range out {
		if i > 0 && x == out[i-1] {
			continue
		}
		dedup = append(dedup, x)
	}
	if len(dedup) == 0 {
		return nil
	}
	return dedup
}
