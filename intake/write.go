package intake

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/xuri/excelize/v2"

	"github.com/migrate-tool/migrate/internal/atomicfile"
	"github.com/migrate-tool/migrate/odata"
)

// LayoutSheet is the hidden sheet that says what the workbook is for, one
// row a level, so that migrate init needs no --entity: a spreadsheet
// program keeps a hidden sheet and its cells when it saves the workbook.
const LayoutSheet = "_migrate"

// listsSheet is the hidden sheet that holds the value lists, a column an
// entity set: a list longer than a data validation's formula may hold is
// given as a range.
const listsSheet = "_lists"

// layoutHeader are the columns of LayoutSheet.
var layoutHeader = []string{"level", "sheet", "columns", "link"}

// lastRow is the last row of a sheet, where a column's formats and lists end.
const lastRow = 1048576

// Write writes the intake workbook of l to out, which must not exist: a
// workbook a customer filled in is not written over. codes are the value
// lists read from the target, by entity set (Layout.Refers); a column
// whose list is empty gets none.
func Write(out string, l *Layout, codes map[string][]string) error {
	if _, err := os.Lstat(out); err == nil {
		return fmt.Errorf("%s exists: an intake workbook is not written over (it may hold what a customer filled in); give another --out or move it away", out)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	f := excelize.NewFile()
	defer f.Close()
	st, err := newStyles(f)
	if err != nil {
		return err
	}
	lists := map[string]string{} // entity set -> range on listsSheet
	for i, set := range l.Refers() {
		if len(codes[set]) == 0 {
			continue
		}
		if len(lists) == 0 {
			if _, err := f.NewSheet(listsSheet); err != nil {
				return err
			}
		}
		col, _ := excelize.ColumnNumberToName(i + 1)
		for r, c := range codes[set] {
			if err := f.SetCellStr(listsSheet, fmt.Sprintf("%s%d", col, r+1), c); err != nil {
				return err
			}
		}
		lists[set] = fmt.Sprintf("'%s'!$%s$1:$%s$%d", listsSheet, col, col, len(codes[set]))
	}
	for i, sheet := range l.Sheets() {
		if i == 0 {
			err = f.SetSheetName("Sheet1", sheet)
		} else {
			_, err = f.NewSheet(sheet)
		}
		if err != nil {
			return err
		}
		if err := writeSheet(f, st, l, sheet, lists); err != nil {
			return err
		}
	}
	if _, err := f.NewSheet(LayoutSheet); err != nil {
		return err
	}
	rows := [][]string{layoutHeader}
	for _, lv := range l.Levels {
		rows = append(rows, []string{strings.Join(lv.Path, "/"), lv.Sheet, lv.Prefix, lv.Link})
	}
	for r, row := range rows {
		for c, v := range row {
			cell, _ := excelize.CoordinatesToCellName(c+1, r+1)
			if err := f.SetCellStr(LayoutSheet, cell, v); err != nil {
				return err
			}
		}
	}
	for _, s := range []string{LayoutSheet, listsSheet} {
		if idx, _ := f.GetSheetIndex(s); idx >= 0 {
			if err := f.SetSheetVisible(s, false); err != nil {
				return err
			}
		}
	}
	f.SetActiveSheet(0)
	return atomicfile.Write(out, 0o644, func(w io.Writer) error {
		_, err := f.WriteTo(w)
		return err
	})
}

// styles are the cell styles of a sheet: the labels (mandatory ones
// filled), the names, and the data columns by type.
type styles struct {
	label, mandatory, name, text, date int
}

func newStyles(f *excelize.File) (styles, error) {
	var st styles
	var errs []error
	add := func(s *excelize.Style) int {
		id, err := f.NewStyle(s)
		errs = append(errs, err)
		return id
	}
	wrap := &excelize.Alignment{WrapText: true, Vertical: "top"}
	st.label = add(&excelize.Style{Font: &excelize.Font{Bold: true}, Alignment: wrap,
		Fill: excelize.Fill{Type: "pattern", Pattern: 1, Color: []string{"D9E1F2"}}})
	st.mandatory = add(&excelize.Style{Font: &excelize.Font{Bold: true, Color: "9C0006"}, Alignment: wrap,
		Fill: excelize.Fill{Type: "pattern", Pattern: 1, Color: []string{"FFD966"}}})
	st.name = add(&excelize.Style{Font: &excelize.Font{Italic: true, Color: "595959"},
		Fill: excelize.Fill{Type: "pattern", Pattern: 1, Color: []string{"EDEDED"}}})
	st.text = add(&excelize.Style{NumFmt: 49}) // "@": what is typed stays text (a phone's leading zero)
	dateFmt := "yyyy-mm-dd"
	st.date = add(&excelize.Style{CustomNumFmt: &dateFmt})
	return st, errors.Join(errs...)
}

// writeSheet writes the two header rows of sheet, each column's note,
// format and list, and freezes the header.
func writeSheet(f *excelize.File, st styles, l *Layout, sheet string, lists map[string]string) error {
	var err error
	for i, c := range l.SheetColumns(sheet) {
		col, _ := excelize.ColumnNumberToName(i + 1)
		// The column's format first: styling a column restyles the cells
		// it holds, and the header's own styles come after.
		if c.Field == nil || c.Field.Type == odata.EdmString {
			err = f.SetColStyle(sheet, col, st.text)
		} else if c.Field != nil && c.Field.Type == odata.EdmDateTimeOffset {
			err = f.SetColStyle(sheet, col, st.date)
		}
		if err != nil {
			return err
		}
		label, mandatory := columnLabel(l, c)
		style := st.label
		if mandatory {
			label += " *"
			style = st.mandatory
		}
		if err := f.SetCellStr(sheet, col+"1", label); err != nil {
			return err
		}
		if err := f.SetCellStyle(sheet, col+"1", col+"1", style); err != nil {
			return err
		}
		name := fmt.Sprintf("%s%d", col, HeaderRow)
		if err := f.SetCellStr(sheet, name, c.Name); err != nil {
			return err
		}
		if err := f.SetCellStyle(sheet, name, name, st.name); err != nil {
			return err
		}
		if err := f.AddComment(sheet, excelize.Comment{Cell: name, Author: "migrate", Text: Note(l, c), Width: 320, Height: 120}); err != nil {
			return err
		}
		width := float64(max(len([]rune(label)), len(c.Name))) + 4
		if err := f.SetColWidth(sheet, col, col, min(max(width, 12), 40)); err != nil {
			return err
		}
		data := fmt.Sprintf("%s%d:%s%d", col, HeaderRow+1, col, lastRow)
		if rng, ok := lists[c.Refers]; ok && c.Refers != "" {
			dv := excelize.NewDataValidation(true)
			dv.SetSqref(data)
			dv.SetSqrefDropList(rng)
			// A warning, not a stop: a value the target lacks may be one
			// the plan creates first (a new customer of an order).
			dv.SetError(excelize.DataValidationErrorStyleWarning, c.Name, fmt.Sprintf("not one of the %s on the target", c.Refers))
			if err := f.AddDataValidation(sheet, dv); err != nil {
				return err
			}
		}
	}
	return f.SetPanes(sheet, &excelize.Panes{Freeze: true, YSplit: HeaderRow, TopLeftCell: fmt.Sprintf("A%d", HeaderRow+1), ActivePane: "bottomLeft"})
}

// columnLabel is the text a person reads above c's name: its field's
// description, and whether a value is needed.
func columnLabel(l *Layout, c *Column) (string, bool) {
	lv := l.levelOf(c)
	if c.Field == nil || lv != nil && lv.Link == c.Name {
		parent := l.Levels[0]
		if lv != nil && lv.Parent != nil {
			parent = lv.Parent
		}
		if p := parent.Type.Property(c.Name); p != nil && p.Description != "" {
			return p.Description, true
		}
		return c.Name, true
	}
	label := c.Field.Description
	if label == "" {
		label = c.Field.Name
	}
	if lv != nil && lv.Single() {
		label = lv.Name() + ": " + label
	}
	return label, c.Field.Mandatory || len(c.Joins) > 0
}

// levelOf is the level c is a column of.
func (l *Layout) levelOf(c *Column) *Level {
	for _, lv := range l.Levels {
		for _, x := range lv.Columns {
			if x == c {
				return lv
			}
		}
	}
	return nil
}

// Note is the note of c's header: its field, description, type and
// length, whether it is mandatory, where its values come from and what it
// joins.
func Note(l *Layout, c *Column) string {
	var b strings.Builder
	lv := l.levelOf(c)
	_, mandatory := columnLabel(l, c)
	if lv != nil && lv.Link == c.Name {
		fmt.Fprintf(&b, "The %s row this row belongs to: its %s.\n", lv.Parent.Sheet, c.Name)
	} else if c.Field == nil {
		fmt.Fprintf(&b, "%s: a name of your choice for the row, which the rows of other sheets give to belong to it.\n", c.Name)
	}
	if p := c.Field; p != nil && (lv == nil || lv.Link != c.Name) {
		fmt.Fprintf(&b, "%s", p.Name)
		if p.Description != "" {
			fmt.Fprintf(&b, ": %s", p.Description)
		}
		if lv != nil && lv.Single() {
			fmt.Fprintf(&b, " (%s)", lv.Name())
		}
		fmt.Fprintf(&b, "\n%s.\n", typeText(p))
	}
	if mandatory {
		b.WriteString("Mandatory: every row needs a value.\n")
	}
	if c.Refers != "" {
		fmt.Fprintf(&b, "A %s key: pick one from the list, or one the load creates first.\n", c.Refers)
	}
	for _, s := range c.Joins {
		fmt.Fprintf(&b, "Joins the rows of sheet %s that give the same value: one value a row.\n", s)
	}
	if len(c.Joins) > 0 && c.Field != nil {
		// A key of the entity's own that joins: the value is loaded too
		// (an order given "1" is the document 1, not one the server numbers).
		fmt.Fprintf(&b, "Loaded as the record's %s, the key it is known by: not only to join.\n", c.Field.Name)
	}
	return strings.TrimSpace(b.String())
}

// typeText says what a field holds, in the words of a person who fills it.
func typeText(p *odata.Property) string {
	switch p.Type {
	case odata.EdmString:
		if p.MaxLength > 0 {
			return fmt.Sprintf("Text, at most %d characters", p.MaxLength)
		}
		return "Text"
	case odata.EdmInt64:
		return "A whole number"
	case odata.EdmDecimal:
		if p.HasScale {
			return fmt.Sprintf("A number, at most %d decimals", p.Scale)
		}
		return "A number"
	case odata.EdmDateTimeOffset:
		return "A date (a date cell, or YYYY-MM-DD)"
	case odata.EdmBoolean:
		return "Yes or no (Y/N, true/false, 1/0)"
	}
	return string(p.Type)
}
