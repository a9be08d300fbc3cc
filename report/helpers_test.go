package report

import (
	"bytes"
	"testing"

	"github.com/xuri/excelize/v2"

	"github.com/migrate-tool/migrate/executor/executortest"
)

// runReport is the run report of the journal at path; an error fails the
// test.
func runReport(t testing.TB, path string) *RunReport {
	t.Helper()
	rep, err := RunReportOf(path)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// heldTransactions are the API transactions the sandbox of tg holds as
// the service meters them: each part, customer and order, and each line.
func heldTransactions(tg *executortest.Target) int {
	held := 0
	for _, set := range []string{"LOGPART", "CUSTOMERS", "ORDERS"} {
		for _, ent := range tg.Sandbox.Snapshot()[set] {
			held += 1 + len(executortest.Lines(ent, "ORDERITEMS_SUBFORM"))
		}
	}
	return held
}

// pageOf is the HTML page of rep; an error fails the test.
func pageOf(t testing.TB, rep *RunReport) []byte {
	t.Helper()
	var page bytes.Buffer
	if err := WriteHTML(&page, rep); err != nil {
		t.Fatal(err)
	}
	return page.Bytes()
}

// openBook opens the workbook at path, closed when the test ends; an
// error fails the test.
func openBook(t testing.TB, path string) *excelize.File {
	t.Helper()
	f, err := excelize.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}
