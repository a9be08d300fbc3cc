package executor

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/migrate-tool/migrate/plan"
	"github.com/migrate-tool/migrate/sandbox"
	"github.com/migrate-tool/migrate/transform"
)

// Records named by their row (no id:) over a source that
// changed between a run and its --retry-failed.
func TestRefuseShiftedSource(t *testing.T) {
	t.Parallel()
	// byRow is a customer whose identity is its location c.csv:LINE.
	byRow := func(l int, code string) transform.Result {
		r := rec("c", "CUSTOMERS", "", l, map[string]any{"CUSTNAME": code, "CUSTDES": code})
		r.Record.ID = r.Record.Loc.String()
		r.Record.Row.Cells[0] = code
		return r
	}
	tests := []struct {
		name         string
		before, then []string // CUSTNAME per row from line 2; "BAD" is refused
		problems     []string // nil: the retry goes ahead
	}{
		{name: "a failed row corrected in place",
			before: []string{"A", "BAD", "C"}, then: []string{"A", "B", "C"}},
		{name: "a failed row identical to a committed one, left as it was",
			before: []string{"A", "A", "BAD"}, then: []string{"A", "A", "D"}},
		{name: "the failed row deleted",
			before: []string{"A", "BAD", "C"}, then: []string{"A", "C"},
			problems: []string{
				"step c, c.csv:3: the row now holds what was sent from c.csv:4",
				"step c, c.csv:4: the row the record was sent from is no longer there",
			}},
		{name: "a row inserted above committed ones",
			before: []string{"A", "BAD", "C"}, then: []string{"N", "A", "BAD", "C"},
			problems: []string{
				"step c, c.csv:2: the record sent from this row is committed, and the row now holds something else",
				"step c, c.csv:3: the row now holds what was sent from c.csv:2",
				"step c, c.csv:4: the record sent from this row is committed, and the row now holds something else",
				"step c, c.csv:5: the row now holds what was sent from c.csv:4",
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			env := newSandbox(t, sandbox.Options{RefuseKey: func(e, k string) string {
				if k == "BAD" {
					return "refused by the test"
				}
				return ""
			}})
			dir := t.TempDir()
			p := testPlan(step("c", "CUSTOMERS"))
			p.Dir, p.Steps[0].Source = dir, "c"
			p.Sources = []*plan.Source{{Name: "c", File: "c.csv"}}
			results := func(codes []string) *fakeRecords {
				var rs []transform.Result
				for i, c := range codes {
					rs = append(rs, byRow(i+2, c))
				}
				if err := os.WriteFile(filepath.Join(dir, "c.csv"), []byte(strings.Join(codes, "\n")), 0o644); err != nil {
					t.Fatal(err)
				}
				return &fakeRecords{Results: map[string][]transform.Result{"c": rs}}
			}
			o := env.opts(t, p, results(tt.before))
			o.apply(t)
			before := len(env.sb.Snapshot()["CUSTOMERS"])
			o.records, o.RetryFailed = results(tt.then), true
			_, err := runApply(context.Background(), o)
			var se *ShiftedError
			switch {
			case tt.problems == nil && err != nil:
				t.Fatalf("retry refused: %v", err)
			case tt.problems == nil:
				return
			case !errors.As(err, &se):
				t.Fatalf("retry: %v; want a ShiftedError", err)
			}
			if got, want := strings.Join(se.Problems, "\n"), strings.Join(tt.problems, "\n"); got != want {
				t.Errorf("problems:\n%s\nwant:\n%s", got, want)
			}
			if !strings.Contains(err.Error(), "id:") {
				t.Errorf("no id: suggestion: %v", err)
			}
			if n := len(env.sb.Snapshot()["CUSTOMERS"]); n != before {
				t.Errorf("the refused retry sent something: %d customers, then %d", before, n)
			}
		})
	}
}
