package executor

import (
	"path/filepath"
	"reflect"
	"testing"

	"github.com/migrate-tool/migrate/plan"
)

// TestExpectedRecords (expectedRows): the progress totals known before a load, a CSV by
// its lines and a workbook by its dimension; a grouped step has none.
func TestExpectedRecords(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write(t, dir, "a.csv", "Code\nA\nB\nC\n")
	write(t, dir, "b.csv", "Code\nA\nB")                                     // no line end at the end
	book, err := filepath.Abs("../examples/plans/data/customer-phones.xlsx") // saved by LibreOffice: dimension A1:D3
	if err != nil {
		t.Fatal(err)
	}
	write(t, dir, "plan.yaml", `version: 1
sources:
  a: {file: a.csv}
  b: {file: b.csv}
  c: {file: '`+book+`'}
steps:
  - {name: plain, entity: CUSTOMERS, source: a, fields: {CUSTNAME: row.Code}}
  - {name: last, entity: CUSTOMERS, source: b, fields: {CUSTNAME: row.Code}}
  - {name: grouped, entity: CUSTOMERS, source: a, group_by: row.Code, fields: {CUSTNAME: row.Code}}
  - {name: book, entity: CUSTOMERS, source: c, fields: {CUSTNAME: row.Name}}
`)
	p, diags := plan.Load(filepath.Join(dir, "plan.yaml"))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	got := map[string]int{}
	for _, st := range p.Steps {
		if n, ok := expectedRows(p, st); ok {
			got[st.Name] = n
		}
	}
	want := map[string]int{"plain": 3, "last": 2, "book": 2} // a grouped step has no total
	if !reflect.DeepEqual(got, want) {
		t.Errorf("expectedRows = %v, want %v", got, want)
	}
}
