package verify

import (
	"context"
	"reflect"
	"testing"

	"github.com/migrate-tool/migrate/executor"
	"github.com/migrate-tool/migrate/executor/executortest"
	"github.com/migrate-tool/migrate/executor/fixture"
	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/sandbox"
)

// TestVerify loads the demo records, then checks what verify says of the
// company as the run left it, with a field the service hides, and after
// a user changed a field and deleted a line.
func TestVerify(t *testing.T) {
	t.Parallel()
	env := fixture.New(t, sandbox.Options{})
	o := executortest.Demo(t, env)
	verify := func(c executor.Client) *Result {
		t.Helper()
		return verifyRun(t, env, o, c)
	}

	res := verify(env.Client)
	if len(res.Findings) != 0 {
		t.Fatalf("clean load: %+v", res.Findings)
	}
	wantTotals := []ControlTotal{
		{What: "records", Source: "1", Target: "1"},
		{What: "lines EXTFILES_SUBFORM", Source: "1", Target: "1"},
		{What: "lines ORDERITEMS_SUBFORM", Source: "2", Target: "2"},
		{What: "sum ORDERITEMS_SUBFORM.PRICE", Source: "1.50", Target: "1.50"},
		{What: "sum ORDERITEMS_SUBFORM.TQUANT", Source: "5", Target: "5"},
	}
	orders := res.Steps[2]
	if orders.Name != "orders" || orders.Records != 1 || orders.Matched != 1 || !reflect.DeepEqual(orders.Totals, wantTotals) {
		t.Fatalf("orders: %+v", orders)
	}
	// The three steps' records read in one call each.
	if res.Calls != 3 {
		t.Errorf("calls: %d, want 3", res.Calls)
	}

	// Field-level permissions: PARTDES never comes back. Not a difference;
	// a part wrote nothing else but its key, so it is not verifiable.
	res = verify(fixture.Hiding{Batcher: env.Client, Field: "PARTDES"})
	if res.Differences() != 0 || len(res.Findings) != 4 || res.Steps[0].NotVerifiable != 2 {
		t.Fatalf("hidden field: %+v", res.Findings)
	}
	for i, fd := range res.Findings {
		want := NotReadable
		if i%2 == 1 {
			want = NotVerifiable
		}
		if fd.Problem != want || fd.Problem == NotReadable && fd.Field != "PARTDES" || fd.Step != "parts" {
			t.Errorf("hidden field: %+v", fd)
		}
	}

	// A user changes the order's details and deletes its second line.
	_, err := env.Client.Batch(context.Background(), []odata.BatchRequest{
		{ID: "1", Method: "PATCH", URL: "ORDERS('SO26000001')", Body: []byte(`{"DETAILS":"changed"}`), Headers: map[string]string{"content-type": "application/json"}},
		{ID: "2", Method: "DELETE", URL: "ORDERS('SO26000001')/ORDERITEMS_SUBFORM(2)"},
	}, executor.BatchOptions)
	if err != nil {
		t.Fatal(err)
	}
	res = verify(env.Client)
	want := []Finding{
		{Step: "orders", Record: "O1", Location: "orders.csv:2", URL: "ORDERS('SO26000001')", Field: "DETAILS", Problem: Differs, Sent: `"first"`, Found: `"changed"`},
		{Step: "orders", Record: "O1", Location: "orders.csv:2", URL: "ORDERS('SO26000001')/ORDERITEMS_SUBFORM(2)", Problem: Gone},
	}
	if !reflect.DeepEqual(res.Findings, want) {
		t.Fatalf("findings:\n got %+v\nwant %+v", res.Findings, want)
	}
	if s := res.Steps[2]; s.Differ != 1 || s.Totals[2].Target != "1" || s.Totals[4].Target != "2" {
		t.Fatalf("orders: %+v", s)
	}
}
