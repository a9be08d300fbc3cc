package executor

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/migrate-tool/migrate/sandbox"
	"github.com/migrate-tool/migrate/transform"
)

// customers builds n customer records C001... of step "customers".
func customers(n int) []transform.Result {
	out := make([]transform.Result, n)
	for i := range out {
		id := fmt.Sprintf("C%03d", i+1)
		out[i] = rec("customers", "CUSTOMERS", id, i+2, map[string]any{"CUSTNAME": id, "CUSTDES": "Customer " + id})
	}
	return out
}

// A user without permission on CUSTOMERS gets a 400 screen error per
// record (quirk permission-400): the step stops after max_same_errors of
// them with ErrInterrupted, nothing is filed as failed, and once the
// permission is granted a second apply loads every record.
func TestBreakerStopsOnRepeatedScreenError(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		quirk     bool
		max       int
		batchSize int
	}{
		{"400 default 20, batches of 7", true, 0, 7},
		{"400 max 5, one batch", true, 5, 100},
		{"403 of the spec, max 3", false, 3, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			opts := sandbox.Options{Unpermitted: []string{"CUSTOMERS"}}
			if tt.quirk {
				opts.Quirks = map[string]bool{sandbox.QuirkPermission400: true}
			}
			env := newSandbox(t, opts)
			p := testPlan(step("customers", "CUSTOMERS"))
			p.Target.MaxSameErrors = tt.max
			want := tt.max
			if want == 0 {
				want = 20
			}
			recs := &fakeRecords{Results: map[string][]transform.Result{"customers": customers(60)}}
			o := env.opts(t, p, recs)
			o.BatchSize, o.Concurrency = tt.batchSize, 1
			sum, err := runApply(context.Background(), o)
			var se *SameErrorsError
			if !errors.As(err, &se) || !errors.Is(err, ErrInterrupted) {
				t.Fatalf("err = %v, want a SameErrorsError wrapping ErrInterrupted", err)
			}
			if se.Count != want || se.Entity != "CUSTOMERS" || !strings.Contains(se.Message, "CUSTOMERS") {
				t.Errorf("stop = %+v", se)
			}
			if msg := err.Error(); !strings.Contains(msg, fmt.Sprintf("the same error %d times in CUSTOMERS", want)) || !strings.Contains(msg, "check the API user's permissions") {
				t.Errorf("message %q", msg)
			}
			if c := sum.Steps[0]; c.Failed != 0 || c.Committed != 0 || c.Pending < want || len(sum.Errors) != 0 {
				t.Errorf("step %+v, errors %v: want every record sent pending, none failed", c, sum.Errors)
			}
			if n := len(env.sb.Snapshot()["CUSTOMERS"]); n != 0 {
				t.Fatalf("%d customers stored", n)
			}

			env.sb.SetUnpermitted() // the administrator grants the permission
			sum, err = runApply(context.Background(), o)
			if err != nil {
				t.Fatalf("second apply: %v", err)
			}
			if c := sum.Steps[0]; c.Committed != 60 || c.Failed != 0 || !sum.Complete {
				t.Errorf("second apply: %+v", c)
			}
			if n := len(env.entities("CUSTOMERS", "CUSTNAME")); n != 60 {
				t.Errorf("%d customers stored, want 60", n)
			}
		})
	}
}

// The same screen error broken by a success never stops a step: those are
// data problems, filed as failed.
func TestBreakerResetsOnSuccess(t *testing.T) {
	t.Parallel()
	env := newSandbox(t, sandbox.Options{})
	p := testPlan(step("customers", "CUSTOMERS"))
	p.Target.MaxSameErrors = 2
	results := customers(12)
	for i := 0; i < 12; i += 2 {
		results[i].Record.Fields["AGENTCODE"] = "TOOLONGCODE" // one and the same screen error
	}
	o := env.opts(t, p, &fakeRecords{Results: map[string][]transform.Result{"customers": results}})
	o.BatchSize, o.Concurrency = 5, 1
	sum, err := runApply(context.Background(), o)
	if err != nil {
		t.Fatalf("apply: %v", err)
	}
	if c := sum.Steps[0]; c.Failed != 6 || c.Committed != 6 {
		t.Errorf("step %+v", c)
	}
	if n := len(env.entities("CUSTOMERS", "CUSTNAME")); n != 6 {
		t.Errorf("%d customers stored, want 6", n)
	}
}
