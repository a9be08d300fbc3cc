package executor

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/sandbox"
	"github.com/migrate-tool/migrate/transform"
)

// TestDiffMatchReadsBatched: reads go many to a call, for diff too: the
// match: lookups of 150 server-numbered orders go up to 100 to a call, not
// one call each, also where a call takes 1,000 writes (before 21.0), and
// still find the order the company already holds.
func TestDiffMatchReadsBatched(t *testing.T) {
	t.Parallel()
	for _, v := range []string{"25.1", "20.0"} {
		t.Run(v, func(t *testing.T) {
			t.Parallel()
			diffMatchReadsBatched(t, v)
		})
	}
}

func diffMatchReadsBatched(t *testing.T, version string) {
	const n = 150
	env := newSandbox(t, sandbox.Options{SystemVersion: version})
	var orders []transform.Result
	for i := range n {
		orders = append(orders, orderWithLines(fmt.Sprintf("O%03d", i), i+2, "C1", "P1"))
	}
	p, f := ordersPlan(orders...)
	p.Steps[2].Match = []string{"CUSTNAME", "DETAILS"}
	o := loadPartsAndCustomers(t, env, p, f)
	// The company already holds O007's order.
	if _, err := env.client.Batch(context.Background(), []odata.BatchRequest{{ID: "1", Method: "POST", URL: "ORDERS",
		Body: mustJSON(t, map[string]any{"CUSTNAME": "C1", "DETAILS": "O007"}), Headers: map[string]string{"content-type": "application/json"}}}, BatchOptions); err != nil {
		t.Fatal(err)
	}
	log := &callLog{Client: env.client}
	o.Client = log
	res, err := runDiff(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	filtered, gets := 0, 0
	for _, call := range log.calls {
		if strings.Contains(strings.Join(call, " "), "%24filter=CUSTNAME") {
			filtered++
			gets += len(call)
		}
		if len(call) > 100 {
			t.Errorf("a call of %d GETs, want at most 100", len(call))
		}
	}
	if filtered > 2 || gets != n {
		t.Errorf("%d match lookups in %d calls, want %d in at most 2", gets, filtered, n)
	}
	conflicts := map[string]DiffAction{}
	for _, r := range res.Records {
		if r.Step == "orders" && r.Action != DiffCreate {
			conflicts[r.Location] = r.Action
		}
	}
	if len(conflicts) != 1 || conflicts["orders.csv:9"] != DiffConflict {
		t.Errorf("conflicts %v, want orders.csv:9 (O007) alone", conflicts)
	}
}

// Field-level permissions, for diff: a match: field the target does not
// return on read (field-level permissions) is never matched on; diff says so,
// naming the field, rather than report "create" for an order the company
// holds as if it had looked.
func TestDiffMatchFieldNotRead(t *testing.T) {
	t.Parallel()
	env := newSandbox(t, sandbox.Options{HiddenFields: []string{"ORDERS.DETAILS"}, Quirks: map[string]bool{sandbox.QuirkIgnoredFilters: true}})
	p, f := ordersPlan(orderWithLines("O1", 2, "C1", "P1"))
	p.Steps[2].Match = []string{"CUSTNAME", "DETAILS"}
	o := loadPartsAndCustomers(t, env, p, f)
	if _, err := env.client.Batch(context.Background(), []odata.BatchRequest{{ID: "1", Method: "POST", URL: "ORDERS",
		Body: mustJSON(t, map[string]any{"CUSTNAME": "C1", "DETAILS": "O1"}), Headers: map[string]string{"content-type": "application/json"}}}, BatchOptions); err != nil {
		t.Fatal(err)
	}
	w := &warnings{}
	o.Hook = w
	res, err := runDiff(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	// The diff's own: in its result, which every view renders, not a line
	// on the way.
	var all []string
	for _, d := range res.Summary.Warnings {
		all = append(all, d.Message())
	}
	if !strings.Contains(strings.Join(all, "\n"), "step orders: cannot tell whether its documents exist: ORDERS does not return DETAILS on read (a field-level permission)") || len(w.msgs) > 0 {
		t.Errorf("the diff's warnings:\n%s\nsaid on the way: %q", strings.Join(all, "\n"), w.msgs)
	}
}
