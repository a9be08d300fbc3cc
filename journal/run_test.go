package journal

import (
	"fmt"
	"path/filepath"
	"testing"
)

// Run and done entries: the last run's limit and steps, the steps read to
// the end, and a record that failed during a trial, as a replay (and the
// journal's own state while it is written) sees them.
func TestReplayRuns(t *testing.T) {
	t.Parallel()
	fail := func(id string) Entry {
		return Entry{Kind: KindRecord, Record: &RecordEntry{Step: "orders", ID: id, Status: Failed, Errors: []Problem{{Message: "no such part"}}}}
	}
	tests := []struct {
		name       string
		entries    []Entry
		limit      int
		unfinished string
		trialFail  map[string]bool
	}{
		{"no runs recorded (an older journal)", []Entry{fail("O1")}, 0, "[]", map[string]bool{"O1": false}},
		{"a trial", []Entry{{Kind: KindRun, Run: &Run{Limit: 10}}, fail("O1")}, 10, "[customers orders]", map[string]bool{"O1": true}},
		{"a trial, then a full run that failed another", []Entry{
			{Kind: KindRun, Run: &Run{Limit: 10}}, fail("O1"),
			{Kind: KindRun, Run: &Run{}}, {Kind: KindDone, Done: "customers"}, fail("O2"), {Kind: KindDone, Done: "orders"},
		}, 0, "[]", map[string]bool{"O1": true, "O2": false}},
		{"some steps", []Entry{{Kind: KindRun, Run: &Run{Steps: []string{"customers"}}}, {Kind: KindDone, Done: "customers"}}, 0, "[orders]", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "run.journal")
			j, err := Create(path, testHeader())
			must(t, err)
			must(t, j.Append(tt.entries...))
			live := snapshot(t, j)
			must(t, j.Close())
			st, err := Load(path)
			must(t, err)
			for _, s := range []*State{live, st, st.Clone()} {
				if s.LastRun.Limit != tt.limit || fmt.Sprint(s.Unfinished()) != tt.unfinished {
					t.Errorf("last run %+v, unfinished %v; want limit %d, unfinished %s", s.LastRun, s.Unfinished(), tt.limit, tt.unfinished)
				}
				for id, want := range tt.trialFail {
					if got := s.Record("orders", id).FailedInTrial; got != want {
						t.Errorf("%s failed in a trial: %v, want %v", id, got, want)
					}
				}
			}
		})
	}
}
