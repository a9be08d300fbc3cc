package journal

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"testing"
)

// TestConflictsStand: the conflicts a delta left unsent stand until the
// next delta of their step says what it left, whatever runs between (an
// apply without --delta); a delta of other steps leaves them; undo of the
// record takes its conflicts with it.
func TestConflictsStand(t *testing.T) {
	t.Parallel()
	c1 := Conflict{ID: "C1", Key: "'C1'", Field: "PHONE", Ours: json.RawMessage(`"1"`), Theirs: json.RawMessage(`"9"`), Now: json.RawMessage(`"2"`)}
	c2 := Conflict{ID: "C2", Key: "'C2'", Field: "PHONE", Ours: json.RawMessage(`"1"`), Theirs: json.RawMessage(`"8"`), Now: json.RawMessage(`"3"`)}
	delta := func(steps ...string) Entry { return Entry{Kind: KindRun, Run: &Run{Delta: true, Steps: steps}} }
	done := func(step string, cs ...Conflict) Entry { return Entry{Kind: KindDone, Done: step, Conflicts: cs} }
	for _, c := range []struct {
		name    string
		entries []Entry
		want    map[string][]Conflict
	}{
		{"left", []Entry{delta(), done("customers", c1, c2), done("orders")}, map[string][]Conflict{"customers": {c1, c2}}},
		{"an apply without --delta", []Entry{delta(), done("customers", c1), {Kind: KindRun, Run: &Run{}}, done("customers")},
			map[string][]Conflict{"customers": {c1}}},
		{"sent by the next delta", []Entry{delta(), done("customers", c1), delta(), done("customers")}, map[string][]Conflict{}},
		{"a delta of other steps", []Entry{delta(), done("customers", c1), delta("orders"), done("orders")}, map[string][]Conflict{"customers": {c1}}},
		{"a delta stopped before the step", []Entry{delta(), done("customers", c1), delta()}, map[string][]Conflict{}},
		{"undone", []Entry{delta(), {Kind: KindRecord, Record: &RecordEntry{Step: "customers", ID: "C1", Status: Committed}}, done("customers", c1, c2),
			{Kind: KindRecord, Record: &RecordEntry{Step: "customers", ID: "C1", Status: Committed, Undo: true}}}, map[string][]Conflict{"customers": {c2}}},
	} {
		path := filepath.Join(t.TempDir(), "run.journal")
		j, err := Create(path, testHeader())
		must(t, err)
		must(t, j.Append(c.entries...))
		must(t, j.Close())
		for _, load := range []func(string) (*State, error){Load, LoadReport, LoadIndexed} {
			st, err := load(path)
			must(t, err)
			if !reflect.DeepEqual(st.Conflicts, c.want) {
				t.Errorf("%s: conflicts %+v, want %+v", c.name, st.Conflicts, c.want)
			}
		}
	}
}
