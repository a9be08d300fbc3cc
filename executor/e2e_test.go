package executor

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/migrate-tool/migrate/plan"
	"github.com/migrate-tool/migrate/sandbox"
)

func copyDir(t *testing.T, from string) string {
	t.Helper()
	dir := t.TempDir()
	entries, err := os.ReadDir(from)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(from, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// applyDir prepares dir/plan.yaml, as the command line does, and applies
// it from dir's sources.
func applyDir(t *testing.T, env *sandboxEnv, dir string) (testRun, *Summary) {
	t.Helper()
	p, ds := plan.Load(filepath.Join(dir, "plan.yaml"))
	run, ds := Prepare(context.Background(), Setup{Plan: p, Diagnostics: ds, Metadata: env.md, Version: env.ver})
	if len(ds) > 0 {
		t.Fatalf("prepare: %v", ds)
	}
	t.Cleanup(func() { run.Close() })
	o := env.opts(t, p, nil)
	o.Prepared = *run
	sum := o.apply(t)
	return o, sum
}

// TestEndToEndPlanTransformApply: plan → transform → apply, a failing
// order line, the report, the source corrected, and a retry that loads
// exactly the failed row.
func TestEndToEndPlanTransformApply(t *testing.T) {
	t.Parallel()
	env := newSandbox(t, sandbox.Options{})
	dir := copyDir(t, "testdata/e2e")
	o, sum := applyDir(t, env, dir)
	if got := stepOf(sum, "parts"); got.Committed != 2 || got.Skipped != 1 {
		t.Errorf("parts %+v", got)
	}
	if got := stepOf(sum, "orders"); got.Committed != 2 || got.Failed != 1 {
		t.Fatalf("orders %+v errors %+v", got, sum.Errors)
	}
	if len(sum.Errors) != 1 || sum.Errors[0].Location != "orders.csv:4" {
		t.Fatalf("errors %+v", sum.Errors)
	}
	orders := env.entities("ORDERS", "DETAILS")
	if len(lines(orders["A1"], "ORDERITEMS_SUBFORM")) != 2 || !strings.Contains(fmtAny(orders["A1"]["ORDERSTEXT_SUBFORM"]), "rush") {
		t.Errorf("A1: %v", orders["A1"])
	}
	// The journal keeps the failed row as the source gave it: what the
	// failed rows' file (package report) gives back to correct.
	if _, rows := failedRows(t, o.Journal, "orders", "A2"); len(rows) != 1 || strings.Join(rows[0].Cells, ",") != "A2,C2,P9,1," {
		t.Errorf("the failed rows kept: %+v", rows)
	}
	// The consultant corrects the part number and runs again.
	bad, _ := os.ReadFile(filepath.Join(dir, "orders.csv"))
	if err := os.WriteFile(filepath.Join(dir, "orders.csv"), []byte(strings.Replace(string(bad), "A2,C2,P9", "A2,C2,P2", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := runApply(context.Background(), o); err == nil {
		t.Fatal("a changed source must be noticed")
	} else if se, ok := err.(*StaleError); !ok || !strings.Contains(se.Error(), "source orders.csv changed") {
		t.Fatalf("stale: %v", err)
	}
	o.AllowPlanChange, o.RetryFailed = true, true
	sum = o.complete(t, "apply")
	if sum.Subrequests != 2 { // A2 exists since the first run: read back, only its failed line sent
		t.Errorf("retry sent %d sub-requests", sum.Subrequests)
	}
	orders = env.entities("ORDERS", "DETAILS")
	if len(orders) != 3 || len(lines(orders["A2"], "ORDERITEMS_SUBFORM")) != 1 {
		t.Fatalf("orders %v", orders)
	}
}
