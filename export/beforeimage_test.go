package export

import (
	"context"
	"fmt"
	"io"
	"testing"

	"github.com/migrate-tool/migrate/executor/executortest"
	"github.com/migrate-tool/migrate/executor/fixture"
	"github.com/migrate-tool/migrate/sandbox"
)

// customersFiles are a plan that loads the customers of codes, and its
// source.
func customersFiles(codes ...string) map[string]string {
	var rows []string
	for _, c := range codes {
		rows = append(rows, fmt.Sprintf("%s,Customer %s", c, c))
	}
	return fixture.CustomersFiles("customers", "row.Name", rows...)
}

// The before-image of export --plan reads its keys as diff does: 2,000
// customers are 50 GETs of 40 keys, one $batch call; keys the target does
// not hold are left out, and the rows come in the keys' order.
func TestKeyedExportReadsInOneCall(t *testing.T) {
	t.Parallel()
	tg := executortest.NewTarget(t, sandbox.Options{})
	var codes []string
	for i := 0; i < 2000; i++ {
		codes = append(codes, fmt.Sprintf("C%05d", i))
	}
	if _, sum := tg.Load(t, customersFiles(codes...)); !sum.Complete {
		t.Fatalf("seed: %+v", sum)
	}
	var keys []string
	for i := 1999; i >= 0; i-- {
		keys = append(keys, codes[i])
	}
	run := tg.Prepare(t, customersFiles(append(keys, "GONE")...))
	es, left, err := BeforeImage(context.Background(), run.Prepared, tg.Client)
	if err != nil || len(es) != 1 || len(left) != 0 {
		t.Fatalf("before-image: %d exports, %v left out, %v", len(es), left, err)
	}
	rows, ok := es[0].Rows.(*keyedExport)
	if !ok {
		t.Fatalf("the before-image reads by %T, not by key", es[0].Rows)
	}
	var got []string
	for {
		row, err := rows.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, row.Get("CUSTNAME").(string))
	}
	if len(got) != 2000 || got[0] != "C01999" || got[1999] != "C00000" {
		t.Errorf("%d rows, from %s to %s", len(got), got[0], got[len(got)-1])
	}
	if rows.rd.Calls != 1 {
		t.Errorf("%d calls, want 1: 2,001 keys fit one window of 100 GETs of 40 keys", rows.rd.Calls)
	}
}
