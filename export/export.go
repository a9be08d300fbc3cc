package export

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/migrate-tool/migrate/executor"
	"github.com/migrate-tool/migrate/internal/atomicfile"
	"github.com/migrate-tool/migrate/internal/workbook"
	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/read"
	"github.com/migrate-tool/migrate/source"
	"github.com/migrate-tool/migrate/source/odatasource"
	"github.com/xuri/excelize/v2"
)

// Sheet is one level of an export: the entity's rows, or the lines
// of one of its sub-forms.
type Sheet struct {
	Name    string   // the entity set, or the navigation property
	Columns []string // the fields written, in order
}

// Export is what an export writes: the rows of an entity as a
// reader of the service gives them (odatasource), a sheet for the entity
// and one per expanded sub-form. A sub-form's sheet starts with the
// entity's key columns, so a plan reads it back as a linked source:
// link: {parent: row.FAMILYNAME, child: row.FAMILYNAME}.
type Export struct {
	Rows   source.Reader
	Entity Sheet
	Key    []string // the entity's key fields
	Subs   []Sheet  // the expanded sub-forms, each a column of Rows
	// Row, when set, is called after each row is written (a progress bar).
	Row func(n int)
}

// Write writes es to out, one after the other: .xlsx (a sheet per
// level, streamed, so memory does not grow with the rows; a name that
// comes twice gets a suffix), or .csv (the first level in out, each other
// in OUT.NAME.csv beside it). Files are written to temporary ones and
// renamed. It returns each level written, an export's entity first.
func Write(out string, es ...Export) ([]Written, error) {
	var names []string
	var headers [][]string
	for _, e := range es {
		names = append(names, e.Entity.Name)
		for _, s := range e.Subs {
			names = append(names, s.Name)
		}
		headers = append(headers, e.headers()...)
	}
	var w exportWriter
	var err error
	var to []string // where each level goes
	switch strings.ToLower(filepath.Ext(out)) {
	case ".xlsx":
		sheets := uniqueNames(names, workbook.SheetName)
		w, err = newXLSXExport(sheets, headers, out)
		for _, s := range sheets {
			if len(sheets) == 1 {
				to = append(to, out)
			} else {
				to = append(to, out+" (sheet "+s+")")
			}
		}
	case ".csv":
		files := uniqueNames(names, func(s string) string { return s })
		for i := range files {
			to = append(to, csvPath(out, files, i))
		}
		w, err = newCSVExport(to, headers)
	default:
		return nil, fmt.Errorf("%s: an export is written as .xlsx or .csv", out)
	}
	if err != nil {
		return nil, err
	}
	var written []Written
	base := 0
	for _, e := range es {
		counts, err := writeRows(e, w, base)
		written = append(written, Written{Name: e.Entity.Name, Rows: counts[0], To: to[base]})
		for s, sub := range e.Subs {
			written = append(written, Written{Name: sub.Name + " of " + e.Entity.Name, Rows: counts[s+1], To: to[base+s+1]})
		}
		if err != nil {
			w.abort()
			return written, err
		}
		base += 1 + len(e.Subs)
	}
	return written, w.commit()
}

// Written is one level an export wrote: an entity's rows, or the lines
// of one of its sub-forms, and where they went.
type Written struct {
	Name string // the entity set; a sub-form as SUBFORM of ENTITY
	Rows int
	To   string // the file; in a workbook of several sheets, FILE (sheet NAME)
}

// uniqueNames makes each name (as clean makes it) unique: a second
// CUSTOMERS is CUSTOMERS_2.
func uniqueNames(names []string, clean func(string) string) []string {
	out := make([]string, len(names))
	seen := map[string]bool{}
	for i, n := range names {
		c := clean(n)
		for k := 2; seen[c]; k++ {
			c = clean(n + "_" + strconv.Itoa(k))
		}
		seen[c] = true
		out[i] = c
	}
	return out
}

// exportWriter writes the rows of each level; sheet 0 is the entity's.
type exportWriter interface {
	row(sheet int, cells []any) error
	commit() error
	abort()
}

// writeRows writes e's rows: its entity to sheet base, its sub-forms to
// the sheets after it. It returns the rows written to each.
func writeRows(e Export, w exportWriter, base int) ([]int, error) {
	counts := make([]int, 1+len(e.Subs))
	h := e.Rows.Header()
	keyAt := make([]int, len(e.Key))
	for i, k := range e.Key {
		j, ok := h.Index(k)
		if !ok {
			return counts, fmt.Errorf("the export reads no key field %s of %s", k, e.Entity.Name)
		}
		keyAt[i] = j
	}
	main := make([]any, len(e.Entity.Columns))
	for n := 0; ; n++ {
		row, err := e.Rows.Next()
		if err == io.EOF {
			return counts, nil
		}
		if err != nil {
			return counts, err
		}
		for i, c := range e.Entity.Columns {
			main[i] = row.Get(c)
		}
		if err := w.row(base, main); err != nil {
			return counts, err
		}
		counts[0]++
		for s, sub := range e.Subs {
			var lines []any
			switch v := row.Get(sub.Name).(type) {
			case []any:
				lines = v
			case map[string]any: // a single-object sub-form (a text)
				lines = []any{v}
			}
			for _, l := range lines {
				m, _ := l.(map[string]any)
				cells := make([]any, 0, len(keyAt)+len(sub.Columns))
				for _, j := range keyAt {
					cells = append(cells, row.Cells[j])
				}
				for _, c := range sub.Columns {
					cells = append(cells, m[c])
				}
				if err := w.row(base+s+1, cells); err != nil {
					return counts, err
				}
				counts[s+1]++
			}
		}
		if e.Row != nil {
			e.Row(n + 1)
		}
	}
}

// headers are the header rows of each level: a sub-form's starts with the
// entity's key, a key name its lines also have prefixed with the entity.
func (e Export) headers() [][]string {
	out := [][]string{e.Entity.Columns}
	for _, s := range e.Subs {
		h := make([]string, 0, len(e.Key)+len(s.Columns))
		for _, k := range e.Key {
			if slices.Contains(s.Columns, k) {
				k = e.Entity.Name + "_" + k
			}
			h = append(h, k)
		}
		out = append(out, append(h, s.Columns...))
	}
	return out
}

type xlsxExport struct {
	f     *excelize.File
	g     *workbook.Guard
	names []string
	sw    []*excelize.StreamWriter
	next  []int // the next row of each sheet
	out   string
}

func newXLSXExport(names []string, headers [][]string, out string) (*xlsxExport, error) {
	x := &xlsxExport{f: excelize.NewFile(), out: out, names: names}
	x.g = workbook.NewGuard(x.f)
	for i, h := range headers {
		name := names[i]
		var err error
		if i == 0 {
			err = x.f.SetSheetName("Sheet1", name)
		} else {
			_, err = x.f.NewSheet(name)
		}
		if err != nil {
			x.f.Close()
			return nil, err
		}
		sw, err := x.f.NewStreamWriter(name)
		if err != nil {
			x.f.Close()
			return nil, err
		}
		x.sw = append(x.sw, sw)
		x.next = append(x.next, 1)
		hdr := make([]any, len(h))
		for j, c := range h {
			hdr[j] = c
		}
		if err := x.row(i, hdr); err != nil {
			x.f.Close()
			return nil, err
		}
	}
	return x, nil
}

func (x *xlsxExport) row(sheet int, cells []any) error {
	vals := make([]any, len(cells))
	for i, c := range cells {
		vals[i] = xlsxValue(c)
		// A streamed cell is marked as it is written: it cannot be later.
		if s, ok := vals[i].(string); ok {
			if held, changed := x.g.Value(x.names[sheet], i+1, x.next[sheet], s); changed {
				style, err := x.g.Mark()
				if err != nil {
					return err
				}
				vals[i] = excelize.Cell{StyleID: style, Value: held}
			}
		}
	}
	cell, err := excelize.CoordinatesToCellName(1, x.next[sheet])
	if err != nil {
		return err
	}
	x.next[sheet]++
	return x.sw[sheet].SetRow(cell, vals)
}

// xlsxValue is a cell as a workbook stores it so that the source reader
// gives the value back: numbers as numbers while a float holds their
// digits exactly (15 significant), longer ones as text; dates as dates;
// a blank as no cell at all.
func xlsxValue(c any) any {
	switch v := c.(type) {
	case nil:
		return nil
	case string:
		if v == "" {
			return nil
		}
		return v
	case source.Number:
		digits := strings.TrimLeft(strings.NewReplacer("-", "", ".", "").Replace(string(v)), "0")
		if len(digits) <= 15 {
			if f, err := strconv.ParseFloat(string(v), 64); err == nil {
				return f
			}
		}
		return string(v)
	case time.Time:
		return v.UTC()
	}
	return c
}

func (x *xlsxExport) commit() error {
	defer x.f.Close()
	for _, sw := range x.sw {
		if err := sw.Flush(); err != nil {
			return err
		}
	}
	return x.g.Save(x.out, true)
}

func (x *xlsxExport) abort() { x.f.Close() }

// csvExport writes each level to a file of its own. Cells are written as
// the service holds them, so that a plan reads back the same values.
type csvExport struct {
	files []*atomicfile.File
	w     []*csv.Writer
}

// newCSVExport writes each level i, headers[i] first, to paths[i].
func newCSVExport(paths []string, headers [][]string) (*csvExport, error) {
	c := &csvExport{}
	for i, h := range headers {
		f, err := atomicfile.Create(paths[i], 0o600)
		if err != nil {
			c.abort()
			return nil, err
		}
		c.files = append(c.files, f)
		c.w = append(c.w, workbook.NewCSVWriter(f))
		if err := c.w[i].Write(h); err != nil {
			c.abort()
			return nil, err
		}
	}
	return c, nil
}

// csvPath is the file of level i of a CSV export to out: out for the
// first, OUT.NAME.csv beside it for each other.
func csvPath(out string, names []string, i int) string {
	if i == 0 {
		return out
	}
	return strings.TrimSuffix(out, filepath.Ext(out)) + "." + names[i] + filepath.Ext(out)
}

func (c *csvExport) row(sheet int, cells []any) error {
	rec := make([]string, len(cells))
	for i, v := range cells {
		rec[i] = csvText(v)
	}
	return c.w[sheet].Write(rec)
}

// csvText is a cell as the journal writes it, but a time with its offset
// (as the service's JSON does), so that it reads back the same instant
// whatever the plan's timezone.
func csvText(v any) string {
	if t, ok := v.(time.Time); ok {
		return odata.FormatDateTime(t)
	}
	return executor.CellText(v)
}

func (c *csvExport) commit() error {
	var errs []error
	for _, w := range c.w {
		w.Flush()
		errs = append(errs, w.Error())
	}
	if err := errors.Join(errs...); err != nil {
		c.abort()
		return err
	}
	for _, f := range c.files {
		if err := f.Commit(); err != nil {
			c.abort()
			return err
		}
	}
	return nil
}

func (c *csvExport) abort() {
	for _, f := range c.files {
		f.Abort()
	}
}

// keyedExport gives the entities of keys, in their order, as an OData
// source gives rows: read a window at a time by key (Reader.ReadKeys: up to
// 100 GETs of or-chained keys in one $batch call), so that memory is one
// window whatever the number of keys. Keys the target does not hold are
// left out.
type keyedExport struct {
	ctx    context.Context
	rd     *read.Keys
	md     *odata.Metadata
	header *source.Header
	keys   []string
	window int
	buf    []source.Row
}

func (k *keyedExport) Header() *source.Header { return k.header }

func (k *keyedExport) Next() (source.Row, error) {
	for len(k.buf) == 0 {
		if len(k.keys) == 0 {
			return source.Row{}, io.EOF
		}
		n := min(k.window, len(k.keys))
		win := k.keys[:n]
		k.keys = k.keys[n:]
		found, err := k.rd.ReadKeys(k.ctx, win)
		if err != nil {
			return source.Row{}, &source.Error{File: "target:" + k.rd.Set, Err: err}
		}
		for _, key := range win {
			f := found[key]
			switch f.Status {
			case http.StatusOK:
			case http.StatusNotFound:
				continue
			default:
				return source.Row{}, &source.Error{File: "target:" + odata.KeySegment(k.rd.Set, key), Err: odata.ParseError(f.Status, nil, f.Body)}
			}
			ent, err := odata.DecodeEntity(f.Body)
			if err != nil {
				return source.Row{}, &source.Error{File: "target:" + odata.KeySegment(k.rd.Set, key), Err: err}
			}
			k.buf = append(k.buf, odatasource.RowOf(k.md, k.rd.Type, "target", k.rd.Set, k.header, ent))
		}
	}
	row := k.buf[0]
	k.buf = k.buf[1:]
	return row, nil
}

func (k *keyedExport) Close() error { k.buf, k.keys = nil, nil; return nil }
