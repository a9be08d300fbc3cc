package intake

import (
	"archive/zip"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/source"
)

// Is reports whether the workbook at path is an intake workbook: one with
// a LayoutSheet. It reads the workbook's list of sheets, not its cells.
func Is(path string) (bool, error) {
	if !source.IsWorkbook(path) {
		return false, nil
	}
	z, err := zip.OpenReader(path)
	if err != nil {
		return false, fmt.Errorf("%s: not a readable .xlsx workbook (%w): save it again from the spreadsheet program as .xlsx", path, err)
	}
	defer z.Close()
	for _, f := range z.File {
		if f.Name != "xl/workbook.xml" {
			continue
		}
		rc, err := f.Open()
		if err != nil {
			return false, fmt.Errorf("%s: %w", path, err)
		}
		defer rc.Close()
		var wb struct {
			Sheets []struct {
				Name string `xml:"name,attr"`
			} `xml:"sheets>sheet"`
		}
		if err := xml.NewDecoder(rc).Decode(&wb); err != nil {
			return false, fmt.Errorf("%s: xl/workbook.xml: %w", path, err)
		}
		for _, s := range wb.Sheets {
			if s.Name == LayoutSheet {
				return true, nil
			}
		}
	}
	return false, nil
}

// Read reads the layout of the intake workbook at path (named name in
// messages) from its LayoutSheet, and each sheet's columns from its
// header row as the workbook holds them now: a column added by hand is in
// Other, a column removed is no longer laid out. Each level is checked
// against md: a problem names its cell.
func Read(path, name string, md *odata.Metadata) (*Layout, error) {
	r, err := source.Open(source.Options{Name: name, Path: path, Sheet: LayoutSheet})
	if err != nil {
		return nil, err
	}
	defer r.Close()
	h := r.Header()
	for _, c := range layoutHeader {
		if _, ok := h.Index(c); !ok {
			return nil, fmt.Errorf("%s!%s: no column %q: the sheet that says what the workbook is for is not as migrate template wrote it; write the template again", name, LayoutSheet, c)
		}
	}
	l := &Layout{Other: map[string][]string{}}
	for {
		row, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		text := func(col string) string { s, _ := row.Get(col).(string); return strings.TrimSpace(s) }
		if text("level") == "" {
			continue // a row a person left blank
		}
		lv := &Level{Path: strings.Split(text("level"), "/"), Sheet: text("sheet"), Prefix: text("columns"), Link: text("link")}
		at := row.CellRef("level")
		if len(l.Levels) == 0 {
			if len(lv.Path) != 1 || lv.Path[0] == "" {
				return nil, fmt.Errorf("%s: the first level is the entity, one name; it is %q", at, text("level"))
			}
			set := md.EntitySet(lv.Path[0])
			if set == nil || set.Type == nil {
				return nil, fmt.Errorf("%s: the workbook is for %s, which the metadata has no entity set of", at, lv.Path[0])
			}
			l.Entity, lv.Type = lv.Path[0], set.Type
		} else {
			lv.Parent = l.level(lv.Path[:len(lv.Path)-1])
			if lv.Parent == nil || lv.Path[0] != l.Entity {
				return nil, fmt.Errorf("%s: level %s comes before its parent's", at, text("level"))
			}
			np := lv.Parent.Type.Navigation(lv.Name())
			if np == nil || md.Type(np.Type) == nil {
				return nil, fmt.Errorf("%s: %s has no sub-form %s in the metadata", at, strings.Join(lv.Parent.Path, "/"), lv.Name())
			}
			lv.Type = md.Type(np.Type)
			if np.Collection == lv.Single() {
				return nil, fmt.Errorf("%s: %s is laid out as a %s, which the metadata does not say it is", at, text("level"), kind(lv.Single()))
			}
		}
		if lv.Sheet == "" {
			return nil, fmt.Errorf("%s: level %s names no sheet", row.CellRef("sheet"), text("level"))
		}
		l.Levels = append(l.Levels, lv)
	}
	if len(l.Levels) == 0 {
		return nil, fmt.Errorf("%s!%s: no level: write the template again", name, LayoutSheet)
	}
	for _, sheet := range l.Sheets() {
		if err := l.readColumns(path, name, sheet); err != nil {
			return nil, err
		}
	}
	return l, nil
}

func kind(single bool) string {
	if single {
		return "single-object sub-form (columns on its parent's sheet)"
	}
	return "sub-form with lines (a sheet of its own)"
}

// readColumns lays out the columns sheet's header holds: a field of a
// level on it (by its prefix), a level's link, or another.
func (l *Layout) readColumns(path, name, sheet string) error {
	r, err := source.Open(source.Options{Name: name, Path: path, Sheet: sheet, HeaderRow: HeaderRow})
	if err != nil {
		return err
	}
	names := r.Header().Names
	r.Close()
	var levels []*Level
	for _, lv := range l.Levels {
		if lv.Sheet == sheet {
			levels = append(levels, lv)
		}
	}
	for _, n := range names {
		var col *Column
		for _, lv := range levels {
			if lv.Link == n {
				col = &Column{Name: n, Field: lv.Type.Property(n)}
			} else if f, ok := strings.CutPrefix(n, lv.Prefix); ok && lv.Type.Property(f) != nil && (lv.Prefix != "" || !strings.Contains(f, ".")) {
				col = &Column{Name: n, Field: lv.Type.Property(f)}
			} else {
				continue
			}
			lv.Columns = append(lv.Columns, col)
			break
		}
		if col == nil && !l.joins(sheet, n) {
			l.Other[sheet] = append(l.Other[sheet], n)
		}
	}
	for _, lv := range levels {
		if lv.Link != "" && findColumn(lv.Columns, lv.Link) == nil {
			return fmt.Errorf("%s!%s: no column %s in row %d, which joins the sheet's rows to their %s: put it back", name, sheet, lv.Link, HeaderRow, lv.Parent.Sheet)
		}
	}
	for _, lv := range l.Levels {
		if lv.Parent != nil && lv.Parent.Sheet == sheet && lv.Link != "" && !slices.Contains(names, lv.Link) {
			return fmt.Errorf("%s!%s: no column %s in row %d, which the rows of sheet %s give to join their %s row: put it back", name, sheet, lv.Link, HeaderRow, lv.Sheet, sheet)
		}
	}
	return nil
}

// joins reports whether column n of sheet is what a sub-form's rows join
// to: a parent's key column that no field has the name of (LINK).
func (l *Layout) joins(sheet, n string) bool {
	return slices.ContainsFunc(l.Levels, func(lv *Level) bool {
		return lv.Parent != nil && lv.Parent.Sheet == sheet && lv.Link == n
	})
}
