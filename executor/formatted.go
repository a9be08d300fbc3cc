package executor

import (
	"fmt"

	"github.com/migrate-tool/migrate/internal/diag"
	"github.com/migrate-tool/migrate/odata"
)

// formattedWarnings say where a text field gets a workbook number's stored
// digits while the sheet shows the number otherwise (source.Formatted: a
// code kept as 1234567 under "#,##0" reads "1,234,567" to the customer):
// one warning per column and field the plan writes from it as it is. The
// workbooks are those the run read through p's files.
func (p *Prepared) formattedWarnings() []diag.Diagnostic {
	if p == nil || p.program == nil || p.Plan == nil {
		return nil
	}
	cols := p.files.Formatted()
	if len(cols) == 0 {
		return nil
	}
	files := map[string]string{} // source name → its file as the plan wrote it
	sheets := map[string]string{}
	for _, s := range p.Plan.Sources {
		files[s.Name], sheets[s.Name] = s.File, s.Sheet
	}
	var out []diag.Diagnostic
	for _, u := range p.program.Uses() {
		if !u.Direct || u.Prop == nil || u.Prop.Type != odata.EdmString {
			continue
		}
		for _, c := range cols {
			if c.File != files[u.Source] || c.Column != u.Column || sheets[u.Source] != "" && sheets[u.Source] != c.Sheet {
				continue
			}
			at := diag.Point(c.File, c.Row, c.Col)
			at.Sheet = c.Sheet
			more := ""
			if c.Cells > 1 {
				more = fmt.Sprintf(" (and %d more cells of column %s)", c.Cells-1, c.Column)
			}
			d := diag.New(diag.Warning, at, fmt.Sprintf(
				"the sheet shows this number with the format %q, but text field %s gets its stored digits %s%s; to load what the sheet shows, format the column as Text in the workbook and type the values again, or write the text in the plan (a number field is not affected)",
				c.Format, u.Field, c.Value, more))
			d.Step, d.Field, d.Value = u.Step, u.Field, string(c.Value)
			d.Context = diag.ParseRange(u.Pos.String())
			out = append(out, d)
		}
	}
	return out
}
