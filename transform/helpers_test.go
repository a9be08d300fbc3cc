package transform

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/plan"
	"github.com/migrate-tool/migrate/source"
)

// memReader is an in-memory source.Reader. It reuses one cell buffer, as a
// streaming reader may, so tests catch rows kept without copying.
type memReader struct {
	file, sheet string
	h           *source.Header
	rows        [][]source.Cell
	i           int
	buf         []source.Cell
	closed      bool
}

func newMem(file string, names []string, rows ...[]source.Cell) *memReader {
	return &memReader{file: file, h: source.NewHeader(names), rows: rows}
}

func (m *memReader) Header() *source.Header { return m.h }
func (m *memReader) Close() error           { m.closed = true; return nil }
func (m *memReader) Next() (source.Row, error) {
	if m.i >= len(m.rows) {
		return source.Row{}, io.EOF
	}
	m.buf = append(m.buf[:0], m.rows[m.i]...)
	m.i++
	return source.Row{Loc: source.Location{File: m.file, Sheet: m.sheet, Line: m.i + 1}, Header: m.h, Cells: m.buf}, nil
}

// cells turns strings into CSV cells.
func cells(s ...string) []source.Cell {
	c := make([]source.Cell, len(s))
	for i, v := range s {
		c[i] = v
	}
	return c
}

// memSources opens fresh readers of fixed tables by source name and counts opens.
type memSources struct {
	make  map[string]func() *memReader
	opens map[string]int
}

func (m *memSources) open(src *plan.Source) (source.Reader, error) {
	if m.opens == nil {
		m.opens = map[string]int{}
	}
	m.opens[src.Name]++
	f, ok := m.make[src.Name]
	if !ok {
		return nil, io.ErrUnexpectedEOF
	}
	return f(), nil
}

func x(src string) plan.Expr {
	return plan.Expr{Src: src, Pos: plan.Pos{File: "plan.yaml", Line: 10, Col: 5}}
}
func xp(src string) *plan.Expr {
	e := x(src)
	return &e
}
func cst(v any) plan.Expr {
	return plan.Expr{Const: v, IsConst: true, Pos: plan.Pos{File: "plan.yaml", Line: 10, Col: 5}}
}

func fields(kv ...string) []*plan.Field {
	var fs []*plan.Field
	for i := 0; i+1 < len(kv); i += 2 {
		fs = append(fs, &plan.Field{Name: kv[i], Expr: x(kv[i+1]), Pos: plan.Pos{File: "plan.yaml", Line: 9, Col: 7}})
	}
	return fs
}

// demoMetadata is a small schema in the spirit of docs/service.md, Metadata.
func demoMetadata() *odata.Metadata {
	str := func(n string, l int) *odata.Property {
		return &odata.Property{Name: n, Type: odata.EdmString, MaxLength: l}
	}
	customers := &odata.EntityType{Name: "CUSTOMERS", Key: []string{"CUSTNAME"},
		Properties: []*odata.Property{str("CUSTNAME", 16), str("CUSTDES", 48), str("AGENTCODE", 8),
			{Name: "CREDIT", Type: odata.EdmDecimal}, {Name: "CUST", Type: odata.EdmInt64, Computed: true},
			{Name: "SINCE", Type: odata.EdmDateTimeOffset}, {Name: "ACTIVE", Type: odata.EdmBoolean}},
		Navigations: []*odata.NavigationProperty{
			{Name: "GENCUSTNOTES_SUBFORM", Type: "GENCUSTNOTES", Collection: true},
			{Name: "SHIPTO2_SUBFORM", Type: "SHIPTO2"},
		}}
	notes := &odata.EntityType{Name: "GENCUSTNOTES", Key: []string{"LINE"}, Properties: []*odata.Property{str("NOTE", 20), {Name: "LINE", Type: odata.EdmInt64}}}
	shipto := &odata.EntityType{Name: "SHIPTO2", Properties: []*odata.Property{str("ADDRESS", 40)}}
	orders := &odata.EntityType{Name: "ORDERS", Key: []string{"ORDNAME"},
		Properties:  []*odata.Property{str("ORDNAME", 16), str("CUSTNAME", 16), {Name: "CURDATE", Type: odata.EdmDateTimeOffset}},
		Navigations: []*odata.NavigationProperty{{Name: "ORDERITEMS_SUBFORM", Type: "ORDERITEMS", Collection: true}, {Name: "ORDERSTEXT_SUBFORM", Type: "ORDERSTEXT"}}}
	items := &odata.EntityType{Name: "ORDERITEMS", Key: []string{"KLINE"},
		Properties:  []*odata.Property{str("PARTNAME", 16), {Name: "TQUANT", Type: odata.EdmDecimal}, {Name: "PRICE", Type: odata.EdmDecimal}, {Name: "KLINE", Type: odata.EdmInt64}},
		Navigations: []*odata.NavigationProperty{{Name: "ORDERITEMSTEXT_SUBFORM", Type: "ORDERITEMSTEXT"}}}
	itemText := &odata.EntityType{Name: "ORDERITEMSTEXT", Properties: []*odata.Property{str("TEXT", 68)}}
	ordText := &odata.EntityType{Name: "ORDERSTEXT", Properties: []*odata.Property{str("TEXT", 68), {Name: "APPEND", Type: odata.EdmBoolean}}}
	invoices := &odata.EntityType{Name: "AINVOICES", Key: []string{"IVNUM", "IVTYPE"},
		Properties: []*odata.Property{str("IVNUM", 16), str("IVTYPE", 1), str("CUSTNAME", 16)}}
	md := &odata.Metadata{Namespace: "Service.OData", Container: "DefaultContainer",
		Types: []*odata.EntityType{customers, notes, shipto, orders, items, itemText, ordText, invoices}}
	for _, t := range []*odata.EntityType{customers, orders, invoices} {
		md.Sets = append(md.Sets, &odata.EntitySet{Name: t.Name, Type: t})
	}
	md.Reindex()
	return md
}

var fixedNow = time.Date(2025, 3, 4, 10, 30, 0, 0, time.UTC)

func testOptions() Options {
	return Options{
		Now: func() time.Time { return fixedNow },
		Getenv: func(k string) string {
			return map[string]string{"WAREHOUSE": "Main", "MIGRATE_TOKEN": "tok-secret", "MIGRATE_PASSWORD": "pw-secret", "MIGRATE_TEMPLATE_TOKEN": "t2",
				"MIGRATE_TARGET": "https://api:pw-secret@erp.example.com/odata/Priority/tabula.ini/demo", "GITHUB_TOKEN": "ghp-secret"}[k]
		},
	}
}

// mustCompile compiles p and fails the test on any diagnostic.
func mustCompile(t testing.TB, p *plan.Plan, md *odata.Metadata, opts Options) *Program {
	t.Helper()
	prog, diags := Compile(p, md, opts)
	if len(diags) > 0 {
		t.Fatalf("Compile: %v", diags)
	}
	return prog
}

// collect runs Records and returns every result.
func collect(t testing.TB, prog *Program, step string, ms *memSources, refs Refs) []Result {
	t.Helper()
	var out []Result
	err := prog.Records(context.Background(), step, ms.open, refs, func(r Result) error {
		out = append(out, r)
		return nil
	})
	if err != nil {
		t.Fatalf("Records: %v", err)
	}
	return out
}
