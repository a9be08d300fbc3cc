package report

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/migrate-tool/migrate/executor"
	"github.com/migrate-tool/migrate/internal/workbook"
)

// ordersFiles are a plan that loads parts P1 to Pn, customer C1 and the
// orders of rows (OrderNo,Customer,Part,Qty: a row a line; customer
// "skip" skips the row), the server numbering each order (DETAILS holds
// its number in the rows), and its sources.
func ordersFiles(parts int, deep bool, rows ...string) map[string]string {
	var ps strings.Builder
	ps.WriteString("Part,Description\n")
	for i := 1; i <= parts; i++ {
		fmt.Fprintf(&ps, "P%d,part P%d\n", i, i)
	}
	return map[string]string{"plan.yaml": fmt.Sprintf(`version: 1
name: orders
sources:
  parts: {file: parts.csv}
  customers: {file: customers.csv}
  order_rows: {file: orders.csv}
steps:
  - name: parts
    entity: LOGPART
    source: parts
    fields: {PARTNAME: row.Part, PARTDES: row.Description}
  - name: customers
    entity: CUSTOMERS
    source: customers
    fields: {CUSTNAME: row.Code, CUSTDES: row.Name}
  - name: orders
    entity: ORDERS
    source: order_rows
    when: row.Customer != "skip"
    group_by: row.OrderNo
    id: row.OrderNo
    deep_insert: %v
    after: [parts, customers]
    fields: {CUSTNAME: row.Customer, DETAILS: row.OrderNo}
    subforms:
      - name: ORDERITEMS_SUBFORM
        source: group
        fields: {PARTNAME: row.Part, TQUANT: row.Qty}
`, deep),
		"parts.csv": ps.String(), "customers.csv": "Code,Name\nC1,Acme\n",
		"orders.csv": "OrderNo,Customer,Part,Qty\n" + strings.Join(rows, "\n") + "\n"}
}

func stepOf(s *executor.Summary, name string) executor.StepSummary {
	for _, x := range s.Steps {
		if x.Name == name {
			return x
		}
	}
	return executor.StepSummary{}
}

// readCSV reads a CSV we wrote: it starts with a UTF-8 BOM, for Excel
// to read Hebrew.
func readCSV(t *testing.T, path string) [][]string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(data, []byte(workbook.BOM)) {
		t.Errorf("%s does not start with a UTF-8 BOM", path)
	}
	rows, err := csv.NewReader(bytes.NewReader(bytes.TrimPrefix(data, []byte(workbook.BOM)))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return rows
}
