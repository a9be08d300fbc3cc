package executor

import (
	"context"
	"testing"

	"github.com/migrate-tool/migrate/sandbox"
	"github.com/migrate-tool/migrate/transform"
)

// TestOddKeysRoundTrip: keys with a quote, a space, an ampersand, a
// percent sign, a plus, a slash, a hash, a question mark and Hebrew are
// written, their notes added by key in batches of their own, read back
// (upsert-free resume) and deleted by undo.
func TestOddKeysRoundTrip(t *testing.T) {
	t.Parallel()
	env := newSandbox(t, sandbox.Options{})
	before := len(env.sb.Snapshot()["CUSTOMERS"])
	keys := []string{"O'Neil & Co", "50% + x/y#z?", "לקוח 1", "a''b,c=d"}
	var recs []transform.Result
	for i, k := range keys {
		recs = append(recs, rec("customers", "CUSTOMERS", string(rune('a'+i)), i+2, map[string]any{"CUSTNAME": k, "CUSTDES": "x"},
			line("GENCUSTNOTES_SUBFORM", i+2, map[string]any{"SUBJECT": "hello " + k})))
	}
	p := testPlan(step("customers", "CUSTOMERS"))
	f := &fakeRecords{results: map[string][]transform.Result{"customers": recs}}
	o := env.opts(t, p, f)
	o.BatchSize = 1 // each note follows in its own batch, addressed by the key
	sum, err := runApply(context.Background(), o)
	if err != nil || !sum.Complete {
		t.Fatalf("%v %+v", err, sum)
	}
	held := env.entities("CUSTOMERS", "CUSTNAME")
	for _, k := range keys {
		notes := lines(held[k], "GENCUSTNOTES_SUBFORM")
		if len(notes) != 1 || notes[0]["SUBJECT"] != "hello "+k {
			t.Errorf("customer %q holds %v", k, held[k])
		}
	}
	us, err := Undo(context.Background(), o.Journal, env.client, UndoOptions{Yes: true})
	if err != nil || us.Done != len(keys) || len(env.sb.Snapshot()["CUSTOMERS"]) != before {
		t.Fatalf("undo %v %+v", err, us)
	}
}
