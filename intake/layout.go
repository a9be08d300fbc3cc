package intake

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/migrate-tool/migrate/internal/didyoumean"
	"github.com/migrate-tool/migrate/internal/workbook"
	"github.com/migrate-tool/migrate/odata"
)

// HeaderRow is the row of a level's sheet that holds its column names, the
// names a plan reads; the row above holds the labels a person reads (the
// fields' descriptions, mandatory ones marked), and the rows below the
// data.
const HeaderRow = 2

// LinkColumn names the column that joins a sub-form's rows to its
// parent's when the parent has no single key field a customer can give.
const LinkColumn = "LINK"

// Layout is what an intake workbook holds: its entity and a level per
// sub-form asked for, each after its parent.
type Layout struct {
	Entity string
	Levels []*Level
	// Other are, by sheet, the columns Read found that are neither a
	// field of a level on the sheet nor a link.
	Other map[string][]string
}

// Level is the entity or one of its sub-forms. A collection (the entity,
// or a sub-form with lines) has a sheet of its own; a single-object
// sub-form (a text, a ship-to address) has its columns on its parent's
// sheet, named Prefix+FIELD.
type Level struct {
	// Path is the entity, then the sub-forms down to this one.
	Path []string
	// Type is the level's form; nil when Read found a level the metadata
	// lacks (Read says so).
	Type   *odata.EntityType
	Parent *Level
	// Sheet is the sheet that holds the level's columns.
	Sheet string
	// Prefix begins the names of a single-object sub-form's columns.
	Prefix string
	// Link is the column of a collection sub-form's sheet that joins each
	// row to the parent's row with the same value in its column of that
	// name; "" for the entity and single-object sub-forms.
	Link    string
	Columns []*Column
}

// Name is the level's entity set or sub-form.
func (l *Level) Name() string { return l.Path[len(l.Path)-1] }

// Single reports whether the level is a single-object sub-form.
func (l *Level) Single() bool { return l.Prefix != "" }

// Column is a column of a level's sheet.
type Column struct {
	// Name is the column's name in the header row.
	Name string
	// Field is the field the column loads; nil for a link column that no
	// field of the level has the name of.
	Field *odata.Property
	// Refers is the entity set whose keys the column's values are (a
	// customer's number on an order, a part on a line): its value list.
	Refers string
	// Joins lists the sheets whose rows this column's values join to the
	// row, for its note.
	Joins []string
}

// New lays out the intake workbook of entity and the sub-forms expand
// names (NAV, or NAV/NAV for a single-object sub-form of a line: a text
// of an order's line). A sub-form's parents are laid out too.
func New(md *odata.Metadata, entity string, expand []string) (*Layout, error) {
	set := md.EntitySet(entity)
	if set == nil || set.Type == nil {
		return nil, errors.New(md.NoEntity(entity))
	}
	top := &Level{Path: []string{entity}, Type: set.Type, Sheet: workbook.SheetName(entity)}
	l := &Layout{Entity: entity, Levels: []*Level{top}}
	for _, e := range expand {
		parent := top
		for i, nav := range strings.Split(e, "/") {
			path := append(slices.Clone(parent.Path), nav)
			if lv := l.level(path); lv != nil {
				parent = lv
				continue
			}
			np := parent.Type.Navigation(nav)
			if np == nil {
				names := make([]string, len(parent.Type.Navigations))
				for j, n := range parent.Type.Navigations {
					names[j] = n.Name
				}
				msg := fmt.Sprintf("--expand %s: %s has no sub-form %q", e, strings.Join(parent.Path, "/"), nav)
				msg += didyoumean.Hint(nav, names)
				return nil, fmt.Errorf("%s", msg)
			}
			t := md.Type(np.Type)
			if t == nil {
				return nil, fmt.Errorf("--expand %s: the metadata has no type %s for sub-form %s", e, np.Type, nav)
			}
			lv := &Level{Path: path, Type: t, Parent: parent}
			switch {
			case !np.Collection:
				lv.Sheet, lv.Prefix = parent.Sheet, nav+"."
			case i > 0:
				return nil, fmt.Errorf("--expand %s: %s has lines of its own, under a sub-form's line: a template gives sheets to the entity's own sub-forms, and to a line's single-object sub-forms (a line's text) as its columns", e, nav)
			default:
				lv.Sheet = l.uniqueSheet(nav)
			}
			l.Levels = append(l.Levels, lv)
			parent = lv
		}
	}
	for _, lv := range l.Levels {
		l.columns(md, lv)
	}
	return l, nil
}

// level is the level of path, nil when there is none.
func (l *Layout) level(path []string) *Level {
	for _, lv := range l.Levels {
		if slices.Equal(lv.Path, path) {
			return lv
		}
	}
	return nil
}

// Sheets are the sheets of the levels, in order, each once.
func (l *Layout) Sheets() []string {
	var out []string
	for _, lv := range l.Levels {
		if !slices.Contains(out, lv.Sheet) {
			out = append(out, lv.Sheet)
		}
	}
	return out
}

// SheetColumns are the columns of sheet: its own level's, then its
// single-object sub-forms'.
func (l *Layout) SheetColumns(sheet string) []*Column {
	var out []*Column
	for _, lv := range l.Levels {
		if lv.Sheet == sheet {
			out = append(out, lv.Columns...)
		}
	}
	return out
}

// Children are the levels whose parent is lv.
func (l *Layout) Children(lv *Level) []*Level {
	var out []*Level
	for _, c := range l.Levels {
		if c.Parent == lv {
			out = append(out, c)
		}
	}
	return out
}

func (l *Layout) uniqueSheet(name string) string {
	s := workbook.SheetName(name)
	for n := 2; slices.Contains(l.Sheets(), s); n++ {
		suffix := fmt.Sprint("~", n)
		s = workbook.SheetName(name)
		if r := []rune(s); len(r)+len(suffix) > 31 {
			s = string(r[:31-len(suffix)])
		}
		s += suffix
	}
	return s
}

// columns lays out lv's columns: for a collection sub-form the link
// column first, then a column per writable field. A text sub-form takes
// its TEXT alone: APPEND and SIGNATURE say how to write it, which is the
// plan's business, not the customer's.
func (l *Layout) columns(md *odata.Metadata, lv *Level) {
	if lv.Parent != nil && !lv.Single() {
		link := joinKey(lv.Parent)
		lv.Link = link
		lv.Columns = append(lv.Columns, &Column{Name: link, Field: lv.Type.Property(link)})
		pc := findColumn(l.SheetColumns(lv.Parent.Sheet), link)
		if pc == nil {
			// The parent has no field to join by: a column of its own.
			pc = &Column{Name: link}
			lv.Parent.Columns = append([]*Column{pc}, lv.Parent.Columns...)
		}
		pc.Joins = append(pc.Joins, lv.Sheet)
	}
	text := lv.Single() && lv.Type.Property("TEXT") != nil && lv.Type.Property("APPEND") != nil
	for _, p := range lv.Type.Properties {
		if !p.Writable() || text && p.Name != "TEXT" || findColumn(lv.Columns, p.Name) != nil {
			continue
		}
		if lv.Single() && lv.Type.IsKey(p.Name) && lv.Parent.Type.IsKey(p.Name) {
			continue // the parent's own key (a ship-to address's customer): the server has it from the parent
		}
		lv.Columns = append(lv.Columns, &Column{Name: lv.Prefix + p.Name, Field: p, Refers: refers(md, l.Entity, lv.Type, p)})
	}
}

// joinKey is the column that joins a sub-form's rows to parent's rows:
// the parent's key, when it is one field a customer gives, else LINK.
func joinKey(parent *Level) string {
	if len(parent.Type.Key) == 1 {
		if p := parent.Type.Property(parent.Type.Key[0]); p != nil && p.Writable() {
			return p.Name
		}
	}
	return LinkColumn
}

func findColumn(cols []*Column, name string) *Column {
	for _, c := range cols {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// refers is the entity set whose single text key is named as field p of
// type t (CUSTNAME on an order is a CUSTOMERS key): the values the target
// holds for it are its value list. The entity a template is for, and a
// form's own key, refer to nothing.
func refers(md *odata.Metadata, entity string, t *odata.EntityType, p *odata.Property) string {
	if p.Type != odata.EdmString || t.IsKey(p.Name) && len(t.Key) == 1 {
		return ""
	}
	for _, s := range md.Sets {
		if s.Name == entity || s.Type == nil || s.Type == t || len(s.Type.Key) != 1 || s.Type.Key[0] != p.Name {
			continue
		}
		if k := s.Type.Property(p.Name); k != nil && k.Type == odata.EdmString {
			return s.Name
		}
	}
	return ""
}

// Refers are the entity sets the layout's value lists are read from, each
// once, in order.
func (l *Layout) Refers() []string {
	var out []string
	for _, lv := range l.Levels {
		for _, c := range lv.Columns {
			if c.Refers != "" && !slices.Contains(out, c.Refers) {
				out = append(out, c.Refers)
			}
		}
	}
	return out
}
