package report

import (
	"testing"

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
