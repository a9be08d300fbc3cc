package read

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/migrate-tool/migrate/odata"
)

// DefaultPageSize is the rows a page asks for: the cap of a response on a
// default installation (MAXAPILINES, docs/servers.md). A server may answer
// fewer; that is no end.
const DefaultPageSize = odata.MaxPageSize

// Error is a read that cannot go on without losing or repeating rows: the
// server answered a page that contradicts the query (rows already read,
// rows outside the filter, a row without its key, a next link that loops
// or leads elsewhere). It is the server's doing, never the data's.
type Error struct {
	Set string // the entity set read; the message names it where it matters
	Err error
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// Query is what a Pager reads: the entity set, its type (its key orders
// the pages), and the options the caller wants. Order and paging are the
// Pager's: the set is read in the order of its key.
type Query struct {
	Set    string
	Type   *odata.EntityType
	Select []string // the fields; empty: every field (the key is always read)
	Expand []string
	Filter string // a $filter, "" for every row
	// Max caps the rows read (0: all).
	Max int
	// PageSize is the rows asked for a page (0: DefaultPageSize).
	PageSize int
	// PageBytes, when set, keeps a page's answer near that many bytes: the
	// rows asked for follow the size of the rows read so far (a page of
	// 100 KB rows is a few rows, not 2,000), and a first page whose rows'
	// size the metadata cannot bound asks for firstPage rows only.
	PageBytes int
}

// firstPage is the rows the first page of a read with PageBytes asks for
// when the metadata does not bound a row's size.
const firstPage = 50

// Pager reads a collection a page at a time, one page held at a time, so
// that a copy of any size needs the memory of one page. See Pages.
type Pager struct {
	c      *odata.Client
	q      Query
	filter odata.Filter
	// sent is q.Filter as the service's dialect writes its literals
	// (odata.FilterFor): what goes in $filter.
	sent   string
	keyset bool // pages follow the last key read; else $skip
	size   int  // rows the next page asks for
	max    int  // rows a page asks for at most

	seen   int
	last   map[string]any // the last row read (its key fields)
	skip   int
	link   string // the server's next link, "" when it gave none
	linked bool   // the server pages by next link: a page without one is the last
	links  map[string]bool
	prev   map[string]bool // the keys of the page before
	done   bool
}

// Pages starts reading q.Set. How it pages, in this order:
//
//   - by the server's @odata.nextLink, once the server gives one (a
//     standard OData service's server-driven paging); a page without one is
//     then the last;
//   - else by key: $orderby the key, and each page after the first asks
//     for the rows whose key comes after the last row read
//     ($filter=KEY gt 'last', a composite key as (K1 gt a) or (K1 eq a and
//     K2 gt b)). A row deleted or added while the set is read moves no
//     other row from its page, so none is lost or read twice;
//   - by $skip where the key cannot be compared (a date in the key).
//
// A page shorter than asked is not the end: servers cap an answer below
// $top (MAXAPILINES lowered). The end is an empty page, or the last
// page of a next-link chain. A page that repeats a row already read (a
// server that ignores $skip or $filter), a row outside the filter, a row
// without its key, or a next link seen before stop the read with an
// *Error: they would lose, repeat, or loop for ever.
func Pages(c *odata.Client, q Query) (*Pager, error) {
	if q.Type == nil || len(q.Type.Key) == 0 {
		return nil, &Error{Set: q.Set, Err: errors.New("the entity has no key to order its pages by")}
	}
	p := &Pager{c: c, q: q, size: q.PageSize, keyset: true, links: map[string]bool{}}
	if p.size <= 0 {
		p.size = DefaultPageSize
	}
	if q.Filter != "" {
		f, err := odata.ParseFilter(q.Type, q.Filter)
		if err != nil {
			return nil, &Error{Set: q.Set, Err: err}
		}
		p.filter = f
		p.sent = q.Filter
		if c != nil {
			if p.sent, err = odata.FilterFor(c.Dialect(), q.Type, q.Filter); err != nil {
				return nil, &Error{Set: q.Set, Err: err}
			}
		}
	}
	for _, k := range q.Type.Key {
		if pr := q.Type.Property(k); pr == nil || pr.Type == odata.EdmDateTimeOffset {
			p.keyset = false // a date compares by day in a filter: not a key's order
		}
	}
	p.max = p.size
	if q.PageBytes > 0 {
		if row := rowBound(q); row > 0 {
			p.size = max(1, min(p.size, q.PageBytes/row))
		} else {
			p.size = min(p.size, firstPage)
		}
	}
	return p, nil
}

// rowBound is the most bytes a row of q can take in an answer, from the
// metadata's MaxLength of each field read; 0 when a field or a sub-form
// has no bound.
func rowBound(q Query) int {
	if len(q.Expand) > 0 {
		return 0
	}
	names := q.Select
	if len(names) == 0 {
		names = q.Type.PropertyNames()
	}
	n := 2 // {}
	for _, f := range names {
		pr := q.Type.Property(f)
		if pr == nil {
			return 0
		}
		v := 40 // a number, a date, a boolean, with room to spare
		if pr.Type == odata.EdmString {
			if pr.MaxLength <= 0 {
				return 0
			}
			v = 6*pr.MaxLength + 2 // every character escaped at worst
		}
		n += len(f) + 4 + v
	}
	return n
}

// resize sets the rows the next page asks for from the bytes a page of
// rows took: near PageBytes, never past the page size asked for.
func (p *Pager) resize(bytes, rows int) {
	if p.q.PageBytes <= 0 || rows == 0 {
		return
	}
	per := max(1, bytes/rows)
	p.size = max(1, min(p.max, p.q.PageBytes/per))
}

// page is one answer of the service to a collection read.
type page struct {
	Value []map[string]any `json:"value"`
	Next  string           `json:"@odata.nextLink"`
}

// Next reads the next page: nil, nil after the last.
func (p *Pager) Next(ctx context.Context) ([]map[string]any, error) {
	if p.done {
		return nil, nil
	}
	var got page
	path, q, err := p.request()
	if err != nil {
		return nil, err
	}
	n, err := p.c.GetSized(ctx, path, q, &got)
	if p.seen == 0 && p.link == "" && odata.IsNotFound(err) {
		// A collection does not go missing: a cold form answers 404 to its
		// first GET, and 200 to the second (docs/servers.md).
		n, err = p.c.GetSized(ctx, path, q, &got)
	}
	if err != nil {
		return nil, err
	}
	p.resize(n, len(got.Value))
	rows := got.Value
	if p.q.Max > 0 && len(rows) > p.q.Max-p.seen {
		rows = rows[:p.q.Max-p.seen]
	}
	if err := p.check(rows); err != nil {
		p.done = true
		return nil, &Error{Set: p.q.Set, Err: err}
	}
	p.seen += len(rows)
	p.skip += len(rows)
	if len(rows) > 0 {
		p.last = rows[len(rows)-1]
	}
	switch {
	case got.Next != "":
		if p.links[got.Next] {
			p.done = true
			return nil, &Error{Set: p.q.Set, Err: fmt.Errorf("the server gave the next link %q a second time: following it would read the same rows for ever", got.Next)}
		}
		p.links[got.Next] = true
		p.link, p.linked = got.Next, true
	case p.linked:
		p.done = true // the last page of the server's chain
	}
	if len(rows) == 0 || p.q.Max > 0 && p.seen >= p.q.Max {
		p.done = true
	}
	if len(rows) == 0 {
		return nil, nil
	}
	return rows, nil
}

// request is the path and options of the next page.
func (p *Pager) request() (string, odata.Query, error) {
	if p.link != "" {
		path, err := p.c.LinkPath(p.link)
		if err != nil {
			return "", odata.Query{}, &Error{Set: p.q.Set, Err: err}
		}
		return path, odata.Query{}, nil
	}
	size := p.size
	if p.q.Max > 0 && p.q.Max-p.seen < size {
		size = p.q.Max - p.seen
	}
	q := odata.Query{Select: p.selected(), Expand: p.q.Expand, Filter: p.sent, OrderBy: strings.Join(p.q.Type.Key, ","), Top: size}
	if p.last != nil {
		if p.keyset {
			after, err := After(p.q.Type, p.last)
			if err != nil {
				return "", odata.Query{}, &Error{Set: p.q.Set, Err: err}
			}
			q.Filter = odata.And(p.sent, after)
		} else {
			q.Skip = p.skip
		}
	}
	return p.q.Set, q, nil
}

// selected is the fields asked for: the caller's, with the key (which
// orders the pages and names each row) and the filter's fields (which
// prove the filter applied); nil for every field.
func (p *Pager) selected() []string {
	if len(p.q.Select) == 0 {
		return nil
	}
	sel := append([]string(nil), p.q.Select...)
	add := func(f string) {
		for _, s := range sel {
			if s == f {
				return
			}
		}
		sel = append(sel, f)
	}
	for _, k := range p.q.Type.Key {
		add(k)
	}
	if p.filter != nil {
		for _, f := range odata.FilterFields(p.filter) {
			add(f)
		}
	}
	return sel
}

// check refuses a page that would make the read lose or repeat rows.
func (p *Pager) check(rows []map[string]any) error {
	keys := make(map[string]bool, len(rows))
	for _, r := range rows {
		k, err := KeyOf(p.q.Type, r)
		if err != nil {
			return err
		}
		if keys[k] || p.prev[k] {
			return fmt.Errorf("the server answered the row %s%s again: it did not apply $skip, $filter or its next link, and reading on would repeat rows or never end; nothing from this page was used", p.q.Set, k)
		}
		keys[k] = true
		if p.filter != nil && !p.filter.Match(r) {
			return fmt.Errorf("the server did not apply the filter %q: it answered %s%s with %s; check the filter's fields on the server (a filter it cannot apply, or on a field the API user may not read, is ignored without a word)",
				p.q.Filter, p.q.Set, k, fieldsText(r, odata.FilterFields(p.filter)))
		}
	}
	p.prev = keys
	return nil
}

// KeyOf is the key of a row as the one key grammar writes it ("('SO1')",
// "(ORDNAME='SO1',KLINE=2)"), its values read as the metadata types them
// (an Int64 the server gives as a string is the number). A row without a
// key field is an error: a field-level permission can hide it.
func KeyOf(t *odata.EntityType, row map[string]any) (string, error) {
	vals, err := keyValues(t, row)
	if err != nil {
		return "", err
	}
	return odata.FormatKey(t.Key, vals)
}

func keyValues(t *odata.EntityType, row map[string]any) ([]any, error) {
	vals := make([]any, len(t.Key))
	for i, k := range t.Key {
		v, ok := row[k]
		if !ok || v == nil {
			return nil, fmt.Errorf("a row of %s came without its key field %s (a field the API user may not read?): its rows cannot be told apart", t.Name, k)
		}
		if pr := t.Property(k); pr != nil {
			dv, err := odata.DecodeValue(pr.Type, v)
			if err != nil {
				return nil, fmt.Errorf("a row of %s has the key %s %v: %v", t.Name, k, v, err)
			}
			v = dv
		}
		vals[i] = v
	}
	return vals, nil
}

// After is the $filter condition of the rows whose key comes after row's
// in the key's order: K gt a for one key field; (K1 gt a) or (K1 eq a and
// K2 gt b) for two, and so on.
func After(t *odata.EntityType, row map[string]any) (string, error) {
	vals, err := keyValues(t, row)
	if err != nil {
		return "", err
	}
	alts := make([]string, len(t.Key))
	for i := range t.Key {
		conds := make([]string, 0, i+1)
		for j := 0; j < i; j++ {
			conds = append(conds, odata.Eq(t.Key[j], vals[j]))
		}
		alts[i] = odata.And(append(conds, odata.Gt(t.Key[i], vals[i]))...)
	}
	return odata.Or(alts...), nil
}

func fieldsText(row map[string]any, fields []string) string {
	parts := make([]string, len(fields))
	for i, f := range fields {
		b, _ := json.Marshal(row[f])
		parts[i] = f + " " + string(b)
	}
	return strings.Join(parts, ", ")
}

// Each reads q to its end, a page at a time (see Pages), handing fn every
// row; an error of fn stops the read and is returned.
func Each(ctx context.Context, c *odata.Client, q Query, fn func(row map[string]any) error) error {
	pages, err := Pages(c, q)
	if err != nil {
		return err
	}
	for {
		rows, err := pages.Next(ctx)
		if err != nil || rows == nil {
			return err
		}
		for _, row := range rows {
			if err := fn(row); err != nil {
				return err
			}
		}
	}
}
