package report

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/xuri/excelize/v2"

	"github.com/migrate-tool/migrate/internal/atomicfile"
	"github.com/migrate-tool/migrate/internal/diag"
	"github.com/migrate-tool/migrate/internal/workbook"
	"github.com/migrate-tool/migrate/journal"
)

// reportColumns follow the source's own columns in a report.
var reportColumns = []string{"step", "location", "field", "message"}

// Report writes the failed rows of a journal as they were in the source —
// the original header and cells — followed by step, location, field and
// the server's message: ready to correct and load again with RetryFailed.
// out ends in .xlsx (one sheet per step) or .csv (the union of the steps'
// columns). The rows of waived records are listed too, their message
// saying so with the reason. It returns the number of rows written, and how many of
// them are waived records'.
func Report(journalPath, out string) (rows, waived int, err error) {
	st, err := journal.Load(journalPath)
	if err != nil {
		return 0, 0, err
	}
	var sheets []*table
	for _, name := range st.StepNames {
		ss := st.Steps[name]
		sh := &table{name: name}
		for _, id := range ss.IDs {
			rec := ss.Records[id]
			if rec.Status() != journal.Failed && rec.Status() != journal.Waived {
				continue
			}
			for _, line := range reportLines(rec) {
				if rec.Status() == journal.Waived {
					// Closed by the user: listed with the reason, not to correct.
					line.msg = "waived: " + rec.Reason + " (was: " + line.msg + ")"
					waived++
				}
				var cells []string
				if line.row != nil {
					if sh.header == nil {
						sh.header = line.row.Header
					}
					cells = alignRow(sh.header, line.row)
				}
				sh.rows = append(sh.rows, append(cells, name, line.loc, line.field, line.msg))
			}
		}
		if len(sh.rows) > 0 {
			sheets = append(sheets, sh)
		}
	}
	for _, sh := range sheets {
		rows += len(sh.rows)
	}
	return rows, waived, writeTables(out, sheets, reportColumns)
}

// table is one step's rows for a report file: each row the source cells
// in header's order, then the report's own columns.
type table struct {
	name   string
	header []string
	rows   [][]string
}

// writeTables writes out as .xlsx (one sheet per table, each with its
// source header and then extra) or .csv (the union of the tables' source
// columns, then extra), through a temporary file.
func writeTables(out string, sheets []*table, extra []string) error {
	switch strings.ToLower(filepath.Ext(out)) {
	case ".xlsx":
		f := excelize.NewFile()
		defer f.Close()
		g := workbook.NewGuard(f)
		first := true
		for _, sh := range sheets {
			name := workbook.SheetName(sh.name)
			if first {
				if err := f.SetSheetName("Sheet1", name); err != nil {
					return err
				}
				first = false
			} else if _, err := f.NewSheet(name); err != nil {
				return err
			}
			hdr := append(append([]string(nil), sh.header...), extra...)
			if err := g.SetRow(name, 1, hdr); err != nil {
				return err
			}
			for i, r := range sh.rows {
				// Rows without a source row still line up their own columns.
				if len(r) < len(hdr) {
					r = append(make([]string, len(hdr)-len(r)), r...)
				}
				if err := g.SetRow(name, i+2, r); err != nil {
					return err
				}
			}
		}
		if first {
			if err := g.SetRow("Sheet1", 1, extra); err != nil {
				return err
			}
		}
		return g.Save(out, false)
	case ".csv":
		var cols []string
		seen := map[string]bool{}
		for _, sh := range sheets {
			for _, c := range sh.header {
				if !seen[c] {
					seen[c] = true
					cols = append(cols, c)
				}
			}
		}
		fh, err := atomicfile.Create(out, 0o600)
		if err != nil {
			return err
		}
		defer fh.Abort()
		w := &workbook.SafeCSV{Writer: workbook.NewCSVWriter(fh)}
		w.Write(append(append([]string(nil), cols...), extra...))
		for _, sh := range sheets {
			for _, r := range sh.rows {
				cells := r[:len(r)-len(extra)]
				line := make([]string, len(cols))
				for i, h := range sh.header {
					if i < len(cells) {
						line[slices.Index(cols, h)] = cells[i]
					}
				}
				w.Write(append(line, r[len(r)-len(extra):]...))
			}
		}
		w.Flush()
		if err := w.Error(); err != nil {
			return err
		}
		return fh.Commit()
	default:
		return fmt.Errorf("%s: the report is written as .xlsx or .csv", out)
	}
}

// reportLine is one line of the report: a source row and its problems.
type reportLine struct {
	row             *journal.Row
	loc, field, msg string
}

// reportLines are a failed record's lines: its row with every problem, or
// for a group every row of it, each with the problems found in it (the
// others on the first), so that the whole group can be corrected and
// loaded again.
func reportLines(rec *journal.RecordState) []reportLine {
	if len(rec.Rows) == 0 {
		l := reportLine{row: rec.Row, loc: rec.Loc}
		msgs := make([]string, 0, len(rec.Errors))
		for i, e := range rec.Errors {
			if i == 0 && e.Cell != "" {
				l.loc = e.Cell
			}
			if l.field == "" {
				l.field = problemField(e)
			}
			msgs = append(msgs, e.Message)
		}
		l.msg = partlyMsg(rec, strings.Join(msgs, "; "))
		return []reportLine{l}
	}
	lines := make([]reportLine, len(rec.Rows))
	placed := make([]bool, len(rec.Errors))
	for i := range rec.Rows {
		r := &rec.Rows[i]
		l := reportLine{row: r, loc: r.Loc}
		var msgs []string
		for j, e := range rec.Errors {
			if placed[j] || rowOfCell(e.Cell) != r.Loc {
				continue
			}
			placed[j] = true
			if len(msgs) == 0 {
				l.loc = e.Cell
			}
			if l.field == "" {
				l.field = problemField(e)
			}
			msgs = append(msgs, e.Message)
		}
		l.msg = strings.Join(msgs, "; ")
		lines[i] = l
	}
	var rest []string
	for j, e := range rec.Errors {
		if !placed[j] {
			if lines[0].field == "" {
				lines[0].field = problemField(e)
			}
			rest = append(rest, e.Message)
		}
	}
	if len(rest) > 0 {
		lines[0].msg = strings.Join(append(rest, nonEmpty(lines[0].msg)...), "; ")
	}
	for i := range lines {
		if lines[i].msg != "" {
			lines[i].msg = partlyMsg(rec, lines[i].msg)
		}
	}
	first := ""
	for _, l := range lines {
		if l.msg != "" {
			first = l.loc + ": " + l.msg
			break
		}
	}
	for i := range lines {
		if lines[i].msg == "" {
			lines[i].msg = "same record (" + rec.ID + ") as " + first
		}
	}
	return lines
}

// problemField is the field a problem is about, with where the plan
// writes it: "PRICE (plan.yaml:31:9)".
func problemField(e journal.Problem) string {
	if e.Field != "" && e.Plan != "" {
		return e.Field + " (" + e.Plan + ")"
	}
	return e.Field
}

// partlyMsg says first that a record is partly loaded, and what exists.
func partlyMsg(rec *journal.RecordState, msg string) string {
	if rec.Partly == "" {
		return msg
	}
	return "partly loaded (" + rec.Partly + "): " + msg
}

func nonEmpty(s string) []string {
	if s == "" {
		return nil
	}
	return []string{s}
}

// rowOfCell is the row a problem's place is in: file.xlsx!Sheet!C17 is in
// file.xlsx!Sheet!17; a CSV place is its row already.
func rowOfCell(cell string) string {
	r := diag.ParseRange(cell) // the one grammar of places
	if r.Sheet == "" || r.Start.Line == 0 {
		return cell
	}
	return r.File + "!" + r.Sheet + "!" + strconv.Itoa(r.Start.Line)
}

func alignRow(header []string, r *journal.Row) []string {
	out := make([]string, len(header))
	for i, h := range r.Header {
		if j := slices.Index(header, h); j >= 0 && i < len(r.Cells) {
			out[j] = r.Cells[i]
		}
	}
	return out
}
