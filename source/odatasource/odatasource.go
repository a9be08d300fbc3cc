package odatasource

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/migrate-tool/migrate/internal/didyoumean"
	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/read"
	"github.com/migrate-tool/migrate/source"
)

// Options opens one OData source.
type Options struct {
	Client     *odata.Client
	Metadata   *odata.Metadata // the connection's own metadata
	Connection string          // its name, for locations ("template")
	Entity     string          // the entity set
	Select     []string        // the columns; empty: every field of the entity
	Expand     []string        // sub-forms read with each row, as lists
	Filter     string          // a $filter, "" for every row
	// PageSize is the rows asked for a page; 0: read.DefaultPageSize.
	PageSize int
	// PageBytes keeps a page's answer near that many bytes (read.Query);
	// 0: no bound but PageSize.
	PageBytes int
}

// Reader streams the rows of one entity; see the package comment.
type Reader struct {
	ctx    context.Context
	opts   Options
	typ    *odata.EntityType
	header *source.Header
	pager  *read.Pager
	page   []map[string]any
	next   int
	err    error
}

// Problem is one thing wrong with a source against the metadata: Key is
// the plan key it is about (entity, select, expand or filter).
type Problem struct {
	Key, Message string
}

// Check says what is wrong with a source against its connection's
// metadata: the entity, the selected fields, the expanded sub-forms and
// the filter. validate and Open both use it.
func Check(md *odata.Metadata, entity string, sel, expand []string, filter string) []Problem {
	es := md.EntitySet(entity)
	if es == nil || es.Type == nil {
		return []Problem{{"entity", fmt.Sprintf("unknown entity %q%s", entity, didyoumean.Hint(entity, md.SetNames()))}}
	}
	t := es.Type
	var out []Problem
	for _, f := range sel {
		if t.Property(f) == nil {
			out = append(out, Problem{"select", fmt.Sprintf("unknown field %q in %s%s", f, entity, didyoumean.Hint(f, t.PropertyNames()))})
		}
	}
	for _, n := range expand {
		if t.Navigation(n) == nil {
			out = append(out, Problem{"expand", fmt.Sprintf("%s has no sub-form %q%s", entity, n, didyoumean.Hint(n, t.NavigationNames()))})
		}
	}
	if filter != "" {
		if _, err := odata.ParseFilter(t, filter); err != nil {
			out = append(out, Problem{"filter", err.Error()})
		}
	}
	return out
}

// Columns are the columns of a source over t: sel (every field of t
// without it), then the expanded sub-forms.
func Columns(t *odata.EntityType, sel, expand []string) []string {
	names := slices.Clone(sel)
	if len(names) == 0 {
		names = t.PropertyNames()
	}
	return append(names, expand...)
}

// Open checks opts and reads the first page, so that a connection that
// fails, or a filter the server refuses, is found before the first row is
// asked for.
func Open(ctx context.Context, opts Options) (*Reader, error) {
	where := opts.Connection + ":" + opts.Entity
	if probs := Check(opts.Metadata, opts.Entity, opts.Select, opts.Expand, opts.Filter); len(probs) > 0 {
		msgs := make([]string, len(probs))
		for i, p := range probs {
			msgs[i] = p.Message
		}
		return nil, &source.Error{File: where, Err: errors.New(strings.Join(msgs, "; "))}
	}
	t := opts.Metadata.EntitySet(opts.Entity).Type
	r := &Reader{ctx: ctx, opts: opts, typ: t}
	r.header = source.NewHeader(Columns(t, opts.Select, opts.Expand))
	pager, err := read.Pages(opts.Client, read.Query{Set: opts.Entity, Type: t, Select: opts.Select, Expand: opts.Expand, Filter: opts.Filter, PageSize: opts.PageSize, PageBytes: opts.PageBytes})
	if err != nil {
		return nil, &source.Error{File: where, Err: err}
	}
	r.pager = pager
	if err := r.fill(); err != nil {
		return nil, err
	}
	return r, nil
}

func (r *Reader) fill() error {
	page, err := r.pager.Next(r.ctx)
	if err != nil {
		return &source.Error{File: r.opts.Connection + ":" + r.opts.Entity, Err: err}
	}
	r.page, r.next = page, 0
	return nil
}

// Header is the selected fields, then the expanded sub-forms.
func (r *Reader) Header() *source.Header { return r.header }

// Next gives the next row; io.EOF after the last.
func (r *Reader) Next() (source.Row, error) {
	if r.err != nil {
		return source.Row{}, r.err
	}
	if r.next >= len(r.page) {
		if r.page == nil {
			return source.Row{}, io.EOF
		}
		if err := r.fill(); err != nil {
			r.err = err
			return source.Row{}, err
		}
		if r.page == nil {
			return source.Row{}, io.EOF
		}
	}
	ent := r.page[r.next]
	r.page[r.next] = nil // the page's rows go as they are read
	r.next++
	return RowOf(r.opts.Metadata, r.typ, r.opts.Connection, r.opts.Entity, r.header, ent), nil
}

// RowOf is ent, an entity of the set entity (type t) that the service
// answered, as a Reader with header gives it: at CONNECTION:ENTITY(key),
// its cells as the package comment says. For a caller that read the
// entities another way (by key).
func RowOf(md *odata.Metadata, t *odata.EntityType, connection, entity string, header *source.Header, ent map[string]any) source.Row {
	row := source.Row{Loc: source.Location{File: location(t, connection, entity, ent)}, Header: header}
	row.Cells = make([]source.Cell, len(header.Names))
	for i, n := range header.Names {
		row.Cells[i] = cell(md, t, n, ent[n])
	}
	return row
}

// location is CONNECTION:ENTITY(key): where the row is, in the service.
func location(t *odata.EntityType, connection, entity string, ent map[string]any) string {
	key, err := read.KeyOf(t, ent)
	if err != nil {
		key = "(?)"
	}
	return connection + ":" + entity + key
}

// Count asks the service how many entities of the set entity the filter
// gives (SET/$count): a source's progress total, known before its first
// page. Only a service of the odata dialect is asked, whose $count the
// standard defines; the ERP's is not to be trusted (docs/servers.md,
// Reading). ok is false when the service is not asked or does not answer a
// count; the rows read are what they are, whatever it said.
func Count(ctx context.Context, c *odata.Client, entity, filter string) (n int, ok bool) {
	if c == nil || !c.Dialect().Standard() {
		return 0, false
	}
	var count json.Number
	if err := c.Get(ctx, odata.EscapePath(entity)+"/$count", odata.Query{Filter: filter}, &count); err != nil {
		return 0, false
	}
	v, err := count.Int64()
	if err != nil || v < 0 {
		return 0, false
	}
	return int(v), true
}

// Close ends the reading; the client is the caller's.
func (r *Reader) Close() error {
	r.page = nil
	return nil
}

// cell is a value of the service's JSON as a source gives it.
func cell(md *odata.Metadata, t *odata.EntityType, name string, v any) source.Cell {
	switch x := v.(type) {
	case nil:
		return ""
	case json.Number:
		return source.Number(x)
	case string:
		if t == nil {
			return x
		}
		if p := t.Property(name); p != nil && p.Type == odata.EdmDateTimeOffset {
			if tm, err := odata.ParseDateTime(x); err == nil {
				return tm
			}
		}
		return x
	case []any:
		if t == nil {
			return x
		}
		var lt *odata.EntityType
		if nav := t.Navigation(name); nav != nil {
			lt = md.Type(nav.Type)
		}
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = line(md, lt, e)
		}
		return out
	case map[string]any: // a single sub-form (a text)
		if t == nil {
			return x
		}
		var lt *odata.EntityType
		if nav := t.Navigation(name); nav != nil {
			lt = md.Type(nav.Type)
		}
		return line(md, lt, x)
	}
	return v
}

// line is one line of an expanded sub-form.
func line(md *odata.Metadata, t *odata.EntityType, v any) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	out := make(map[string]any, len(m))
	for k, e := range m {
		out[k] = cell(md, t, k, e)
	}
	return out
}
