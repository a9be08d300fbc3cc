package executor

import (
	"context"
	"os"
	"sync/atomic"
	"testing"

	"github.com/migrate-tool/migrate/executor/fixture"
	"github.com/migrate-tool/migrate/journal"
	"github.com/migrate-tool/migrate/sandbox"
	"github.com/migrate-tool/migrate/transform"
)

// readCounter counts the steps whose records were read.
type readCounter struct {
	RecordSource
	steps atomic.Int64
}

func (c *readCounter) Records(ctx context.Context, step string, open transform.Opener, refs transform.Refs, fn func(transform.Result) error) error {
	c.steps.Add(1)
	return c.RecordSource.Records(ctx, step, open, refs, fn)
}

// TestResumeOfFinishedRun: a resume of a journal whose last run finished
// complete, with the same plan and sources, reads no source and sends
// nothing, with its index or without; with a plan that may give other
// records from the same files (env()) it reads them again, and still sends
// nothing.
func TestResumeOfFinishedRun(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		fields string
		harm   func(t *testing.T, journalPath string)
		reads  int64
	}{
		{"finished", "row.Name", nil, 0},
		// The journal's finished line says it without the index.
		{"index deleted", "row.Name", func(t *testing.T, j string) { must(t, os.Remove(journal.IndexPath(j))) }, 0},
		{"plan calls env()", `row.Name + env("NO_SUCH_VARIABLE_X")`, nil, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			env := newSandbox(t, sandbox.Options{})
			dir := t.TempDir()
			fixture.WriteFiles(t, dir, fixture.CustomersFiles("finished", c.fields, "K1,First", "K2,Second", "K3,Third"))
			o, sum := applyDir(t, env, dir)
			if !sum.Complete || stepOf(sum, "customers").Committed != 3 {
				t.Fatalf("first run: %+v", sum)
			}
			if c.harm != nil {
				c.harm(t, o.Journal)
			}
			rc := &readCounter{RecordSource: o.records}
			o.records = rc
			calls := env.client.Calls.Load()
			sum, err := runApply(context.Background(), o)
			if err != nil || !sum.Complete || stepOf(sum, "customers").Committed != 3 || sum.Subrequests != 0 {
				t.Fatalf("resume: %v %+v", err, sum)
			}
			if got := env.client.Calls.Load() - calls; got != 0 {
				t.Errorf("the resume made %d calls", got)
			}
			if got := rc.steps.Load(); got != c.reads {
				t.Errorf("the resume read %d steps' records, want %d", got, c.reads)
			}
			if n := len(env.entities("CUSTOMERS", "CUSTNAME")); n != 3 {
				t.Errorf("the sandbox holds %d customers", n)
			}
		})
	}
}

// TestResumeWithoutRowsInDoubt: the rows of a batch in doubt are gone
// from the source when apply resumes (families deleted from a template
// company read as a source; the crash campaign's changing
// source found it). The resume settles them from what the journal knows,
// or no apply would ever complete: committed when the server took them
// (undo deletes them), skipped when it did not (nothing to undo).
func TestResumeWithoutRowsInDoubt(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		fault  string
		want   journal.Status
		orders int
	}{
		{sandbox.FaultDropAfterCommit, journal.Committed, 5},
		{sandbox.FaultDropBeforeCommit, journal.Skipped, 4},
	} {
		t.Run(c.fault, func(t *testing.T) {
			t.Parallel()
			env := newSandbox(t, sandbox.Options{})
			o, orders := deepOrdersInDoubt(t, env, c.fault, "P1", "P2")                            // the first batch (O0-O2) is in doubt
			o.records = &fakeRecords{Results: map[string][]transform.Result{"orders": orders[1:]}} // O0 is gone
			o.complete(t, "apply")
			if n := len(env.sb.Snapshot()["ORDERS"]); n != c.orders {
				t.Fatalf("%d orders, want %d", n, c.orders)
			}
			js, err := journal.Load(o.Journal)
			if err != nil {
				t.Fatal(err)
			}
			if r := js.Record("orders", "O0"); r == nil || r.Status() != c.want {
				t.Fatalf("O0: %+v, want %s", r, c.want)
			}
			if _, err := UndoInTest(context.Background(), o.Journal, env.client, UndoInTestOptions{Yes: true, Target: o.Target}); err != nil {
				t.Fatal(err)
			}
			if n := len(env.sb.Snapshot()["ORDERS"]); n != 0 {
				t.Errorf("undo left %d orders", n)
			}
		})
	}
}
