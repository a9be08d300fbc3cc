package executor

import (
	"context"
	"testing"

	"github.com/migrate-tool/migrate/sandbox"
	"github.com/migrate-tool/migrate/transform"
)

// TestOddKeysRoundTrip: keys with a quote, a space and an ampersand are
// written, read back (upsert-free resume) and deleted by undo.
func TestOddKeysRoundTrip(t *testing.T) {
	t.Parallel()
	env := newSandbox(t, sandbox.Options{})
	before := len(env.sb.Snapshot()["CUSTOMERS"])
	p := testPlan(step("customers", "CUSTOMERS"))
	f := &fakeRecords{results: map[string][]transform.Result{"customers": {
		rec("customers", "CUSTOMERS", "a", 2, map[string]any{"CUSTNAME": "O'Neil & Co", "CUSTDES": "x"},
			line("GENCUSTNOTES_SUBFORM", 2, map[string]any{"SUBJECT": "hello"})),
	}}}
	o := env.opts(t, p, f)
	o.BatchSize = 1 // the note follows in its own batch, addressed by the key
	sum, err := Apply(context.Background(), o)
	if err != nil || !sum.Complete {
		t.Fatalf("%v %+v", err, sum)
	}
	c := env.entities("CUSTOMERS", "CUSTNAME")["O'Neil & Co"]
	if len(lines(c, "GENCUSTNOTES_SUBFORM")) != 1 {
		t.Fatalf("customer %v", c)
	}
	us, err := Undo(context.Background(), o.Journal, env.client, UndoOptions{Yes: true})
	if err != nil || us.Done != 1 || len(env.sb.Snapshot()["CUSTOMERS"]) != before {
		t.Fatalf("undo %v %+v", err, us)
	}
}
