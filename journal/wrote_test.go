package journal

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// What a committed record was written with (its lines too) comes back from every path a
// state is read by: the full replay, the lean state's memory, the index
// Close wrote, and the index rebuilt from the log. A record of a journal
// written before it was kept has none.
func TestWroteSurvivesTheIndex(t *testing.T) {
	smallOverlay(t)
	const kids = `[{"p":"0","n":"GENCUSTNOTES_SUBFORM","k":"1","wr":{"SUBJECT":"a"},"h":"x"}]`
	path := filepath.Join(t.TempDir(), "run.journal")
	j, err := CreateIndexed(path, Header{PlanHash: "p"})
	must(t, err)
	must(t, j.Append(
		Entry{Kind: KindRecord, Record: &RecordEntry{Step: "customers", ID: "C1", Status: Committed, Key: "'C1'", SrcHash: "s1", LinesHash: "l1",
			Wrote: []byte(`{"CUSTDES":"One","CUSTNAME":"C1"}`), Filled: []byte(`{"CUSTDES":"ONE"}`), WroteKids: []byte(kids)}},
		Entry{Kind: KindRecord, Record: &RecordEntry{Step: "customers", ID: "C2", Status: Committed, Key: "'C2'"}},
		Entry{Kind: KindFinished}))
	check := func(how string, st *State) {
		t.Helper()
		c1 := st.Record("customers", "C1")
		if c1 == nil || string(c1.Wrote) != `{"CUSTDES":"One","CUSTNAME":"C1"}` || string(c1.Filled) != `{"CUSTDES":"ONE"}` || c1.SrcHash != "s1" || c1.LinesHash != "l1" ||
			string(c1.WroteKids) != kids {
			t.Errorf("%s: C1 = %+v", how, c1)
		}
		if got, err := DecodeKids(c1.WroteKids); err != nil || len(got) != 1 || got[0].Key != "1" || string(got[0].Wrote) != `{"SUBJECT":"a"}` {
			t.Errorf("%s: C1's lines = %+v, %v", how, got, err)
		}
		if c2 := st.Record("customers", "C2"); c2 == nil || c2.Wrote != nil || c2.Filled != nil || c2.WroteKids != nil {
			t.Errorf("%s: C2 (no record of what it was written with) = %+v", how, c2)
		}
	}
	everyRead(t, j, path, check)
}

// everyRead checks, with check, the state of journal j (at path) by every
// path a state is read by: the lean state's memory, the full replay once
// j is closed, the index Close wrote, and the index rebuilt from the log.
func everyRead(t *testing.T, j *Journal, path string, check func(how string, st *State)) {
	t.Helper()
	check("live", snapshot(t, j))
	must(t, j.Close())
	full, err := Load(path)
	must(t, err)
	check("replay", full)
	lean, err := loadIndexed(t, path)
	must(t, err)
	check("index", lean)
	must(t, os.Remove(IndexPath(path)))
	rebuilt, err := loadIndexed(t, path)
	must(t, err)
	check("rebuilt", rebuilt)
}

// A second PATCH of a record (a delta load's over an update's) keeps the
// before-image of the first for the fields both changed: undo restores what
// the entity held before the journal, not between its runs.
func TestPatchAfterPatchKeepsTheFirstBeforeImage(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.journal")
	j, err := Create(path, Header{PlanHash: "p"})
	must(t, err)
	patch := func(b int, before, match string) {
		must(t, j.Append(Entry{Kind: KindIntent, Batch: b, Subs: []Sub{{ID: "r1", Step: "customers", Rec: "C1", Op: OpPatch, Meth: "PATCH",
			URL: "CUSTOMERS('C1')", Key: "'C1'", Before: []byte(before), Match: []byte(match)}}}))
		must(t, j.Append(Entry{Kind: KindOutcome, Batch: b, Results: []SubResult{{ID: "r1", Status: 200}}},
			Entry{Kind: KindRecord, Record: &RecordEntry{Step: "customers", ID: "C1", Status: Committed, Key: "'C1'"}}))
	}
	patch(1, `{"A":"a0","B":"b0"}`, `{"A":"a1","B":"b1"}`)
	patch(2, `{"B":"b1","C":"c1"}`, `{"B":"b2","C":"c2"}`)
	must(t, j.Close())
	st, err := Load(path)
	must(t, err)
	s := st.Record("customers", "C1").Subs[""]
	if string(s.Before) != `{"A":"a0","B":"b0","C":"c1"}` || string(s.Match) != `{"A":"a1","B":"b2","C":"c2"}` {
		t.Errorf("before %s, match %s", s.Before, s.Match)
	}
}

// Each apply's times: from its run entry (or, before those were timed, its
// first timed line) to its last timed line; undo's lines are not a run's.
func TestRunTimes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.journal")
	j, err := Create(path, Header{PlanHash: "p"})
	must(t, err)
	at := func(m int) time.Time { return time.Date(2026, 11, 27, 9, m, 0, 0, time.UTC) }
	batch := func(b int, op OpKind, sent, answered time.Time) {
		must(t, j.Append(Entry{Kind: KindIntent, Batch: b, At: new(sent), Subs: []Sub{{ID: "1", Step: "s", Rec: fmt.Sprint(b), Op: op, Meth: "POST", URL: "X"}}}))
		must(t, j.Append(Entry{Kind: KindOutcome, Batch: b, At: new(answered), Results: []SubResult{{ID: "1", Status: 201}}}))
	}
	must(t, j.Append(Entry{Kind: KindRun, Run: &Run{}})) // an older writer: no time on its run entry
	batch(1, OpCreate, at(1), at(2))
	batch(2, OpCreate, at(3), at(5))
	must(t, j.Append(Entry{Kind: KindFinished, At: new(at(6))}))
	must(t, j.Append(Entry{Kind: KindRun, Run: &Run{Delta: true}, At: new(at(30))}))
	batch(3, OpCreate, at(31), at(32))
	must(t, j.Append(Entry{Kind: KindFinished, At: new(at(33))}))
	batch(4, OpUndoDelete, at(50), at(51))
	must(t, j.Close())
	st, err := LoadReport(path)
	must(t, err)
	want := []RunTime{{Start: at(1), End: at(6)}, {Run: Run{Delta: true}, Start: at(30), End: at(33)}}
	if len(st.RunTimes) != len(want) {
		t.Fatalf("runs %+v, want %+v", st.RunTimes, want)
	}
	for i, w := range want {
		if g := st.RunTimes[i]; g.Delta != w.Delta || !g.Start.Equal(w.Start) || !g.End.Equal(w.End) {
			t.Errorf("run %d: %+v, want %+v", i+1, g, w)
		}
	}
}

// A delta's PATCH of a document the journal created stands for both in the
// record's state: what the create and the PATCH wrote together, the lines
// the create carried, what the server filled at the create but for the
// field patched; a PATCH found never to have taken leaves the create as it
// was.
func TestPatchOverCreate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.journal")
	j, err := Create(path, Header{PlanHash: "p"})
	must(t, err)
	must(t, j.Append(Entry{Kind: KindIntent, Batch: 1, Subs: []Sub{{ID: "1", Step: "orders", Rec: "O1", Op: OpCreate, Meth: "POST", URL: "ORDERS",
		Match: []byte(`{"CUSTNAME":"c1","DETAILS":"a"}`), Lines: []byte(`{"ORDERITEMS_SUBFORM":[{"TQUANT":1}]}`), Nested: 1}}}))
	must(t, j.Append(Entry{Kind: KindOutcome, Batch: 1, Results: []SubResult{{ID: "1", Status: 201, Key: "'SO1'", Filled: []byte(`{"CUSTNAME":"C1","DETAILS":"A"}`)}}},
		Entry{Kind: KindRecord, Record: &RecordEntry{Step: "orders", ID: "O1", Status: Committed, Key: "'SO1'", SrcHash: "s"}}))
	patch := func(b int, status int) {
		must(t, j.Append(Entry{Kind: KindIntent, Batch: b, Subs: []Sub{{ID: "1", Step: "orders", Rec: "O1", Op: OpPatch, Meth: "PATCH", URL: "ORDERS('SO1')",
			Key: "'SO1'", Before: []byte(`{"DETAILS":"A"}`), Match: []byte(`{"DETAILS":"b"}`)}}}))
		must(t, j.Append(Entry{Kind: KindOutcome, Batch: b, Results: []SubResult{{ID: "1", Status: status}}}))
	}
	patch(2, 204)
	st := snapshot(t, j)
	s := st.Record("orders", "O1").Subs[""]
	if s.Op != OpPatch || string(s.Match) != `{"CUSTNAME":"c1","DETAILS":"b"}` || string(s.Filled) != `{"CUSTNAME":"C1"}` ||
		string(s.Lines) != `{"ORDERITEMS_SUBFORM":[{"TQUANT":1}]}` || s.Nested != 1 || !st.Record("orders", "O1").Created {
		t.Errorf("after the PATCH: %+v", s)
	}
	patch(3, -1) // reconciliation: never taken
	must(t, j.Close())
	full, err := Load(path)
	must(t, err)
	if s := full.Record("orders", "O1").Subs[""]; s == nil || s.Op != OpPatch || s.Batch != 2 {
		t.Errorf("after a PATCH that never took: %+v", s)
	}
}

// A delta's PATCH of a line the run created stands over the line's create
// and says so (Over), so that undo deletes the line; a PATCH of a line the
// run did not create stands over nothing.
func TestLinePatchOverItsCreate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.journal")
	j, err := Create(path, Header{PlanHash: "p"})
	must(t, err)
	must(t, j.Append(Entry{Kind: KindIntent, Batch: 1, Subs: []Sub{
		{ID: "1", Step: "customers", Rec: "C1", Path: "0", Op: OpCreate, Meth: "POST", URL: "CUSTOMERS('C1')/GENCUSTNOTES_SUBFORM", Nav: "GENCUSTNOTES_SUBFORM",
			Match: []byte(`{"SUBJECT":"a","CURDATE":"2026-01-01"}`)}}}))
	must(t, j.Append(Entry{Kind: KindOutcome, Batch: 1, Results: []SubResult{{ID: "1", Status: 201, Key: "1"}}},
		Entry{Kind: KindRecord, Record: &RecordEntry{Step: "customers", ID: "C1", Status: Committed, Key: "'C1'"}}))
	linePatch := func(b int, path string) {
		must(t, j.Append(Entry{Kind: KindIntent, Batch: b, Subs: []Sub{{ID: "1", Step: "customers", Rec: "C1", Path: path, Op: OpPatch, Meth: "PATCH",
			URL: "CUSTOMERS('C1')/GENCUSTNOTES_SUBFORM(1)", Key: "1", Nav: "GENCUSTNOTES_SUBFORM", Line: "1", Before: []byte(`{"SUBJECT":"a"}`), Match: []byte(`{"SUBJECT":"b"}`)}}}))
		must(t, j.Append(Entry{Kind: KindOutcome, Batch: b, Results: []SubResult{{ID: "1", Status: 200, Key: "1"}}}))
	}
	linePatch(2, "0")
	linePatch(3, "1")
	must(t, j.Close())
	st, err := Load(path)
	must(t, err)
	rec := st.Record("customers", "C1")
	if s := rec.Subs["0"]; s.Op != OpPatch || s.Over != OpCreate || s.ResultKey != "1" || string(s.Match) != `{"CURDATE":"2026-01-01","SUBJECT":"b"}` {
		t.Errorf("the PATCH over the create: %+v", s)
	}
	if s := rec.Subs["1"]; s.Over != "" {
		t.Errorf("a PATCH over nothing: %+v", s)
	}
}

// EncodeKids writes what json.Marshal writes, non-ASCII and markup too.
func TestEncodeKids(t *testing.T) {
	if EncodeKids(nil) != nil {
		t.Errorf("EncodeKids(nil) = %s", EncodeKids(nil))
	}
	for _, kids := range [][]WroteKid{
		{{Path: "0", Nav: "ORDERITEMS_SUBFORM", Key: "1", Wrote: []byte(`{"PARTNAME":"B-100","TQUANT":5}`), Filled: []byte(`{"PDES":"x"}`)}, {Path: "3", Nav: "ORDERSTEXT_SUBFORM", Single: true, Hash: "ab"}},
		{{Path: "0", Nav: "GENCUSTNOTES_SUBFORM", Key: "'א'", Wrote: []byte(`{"SUBJECT":"<p>שלום & co</p>"}`)}},
	} {
		want, err := json.Marshal(kids)
		must(t, err)
		if got := EncodeKids(kids); string(got) != string(want) {
			t.Errorf("EncodeKids wrote\n%s\njson.Marshal\n%s", got, want)
		}
	}
}

// The fields the server answered a create or PATCH of a step's entity with
// its own value of (Fills; FilledFields, which reconciliation does not
// match documents in doubt on) come back from every path a state is read
// by; a field only written another way (Filled without Fills) is not one,
// and a line's is its sub-form's.
func TestFilledFieldsSurviveTheIndex(t *testing.T) {
	smallOverlay(t)
	path := filepath.Join(t.TempDir(), "run.journal")
	j, err := CreateIndexed(path, Header{PlanHash: "p"})
	must(t, err)
	must(t, j.Append(
		Entry{Kind: KindIntent, Batch: 1, Subs: []Sub{
			{ID: "1", Step: "orders", Rec: "O1", Op: OpCreate, Meth: "POST", URL: "ORDERS", Match: []byte(`{"CDES":"Typed","CUSTNAME":"C1"}`)},
			{ID: "2", Step: "orders", Rec: "O1", Path: "0", Nav: "ORDERITEMS_SUBFORM", Op: OpCreate, Meth: "POST", URL: "$1/ORDERITEMS_SUBFORM", Match: []byte(`{"PDES":"x"}`)}}},
		Entry{Kind: KindOutcome, Batch: 1, Results: []SubResult{
			{ID: "1", Status: 201, Key: "'SO1'", Filled: []byte(`{"CDES":"Acme","CURDATE":"2026-03-01T00:00:00Z"}`), Fills: []string{"CDES"}},
			{ID: "2", Status: 201, Key: "1", Filled: []byte(`{"PDES":"Bolt"}`), Fills: []string{"PDES"}}}},
		Entry{Kind: KindRecord, Record: &RecordEntry{Step: "orders", ID: "O1", Status: Committed, Key: "'SO1'"}},
		Entry{Kind: KindFinished}))
	check := func(how string, st *State) {
		t.Helper()
		if got := st.FilledFields("orders", ""); !slices.Equal(got, []string{"CDES"}) {
			t.Errorf("%s: filled fields %v, want [CDES]", how, got)
		}
		if got := st.FilledFields("orders", "ORDERITEMS_SUBFORM"); !slices.Equal(got, []string{"PDES"}) {
			t.Errorf("%s: filled fields of the lines %v, want [PDES]", how, got)
		}
	}
	everyRead(t, j, path, check)
}

// TestDeltaHeld: a record a delta load commits again keeps the fields the
// server was found holding before, but for those the sources changed since
// (the delta sent them, or found them held anew), and adds those it found
// held.
func TestDeltaHeld(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name                           string
		held, wrote, nowHeld, nowWrote string
		want                           string
	}{
		{"nothing held", ``, `{"A":1}`, ``, `{"A":2}`, ``},
		{"held now", ``, `{"A":1}`, `{"A":2}`, `{"A":2}`, `{"A":2}`},
		{"held before, unchanged since", `{"A":1}`, `{"A":1,"B":1}`, ``, `{"A":1,"B":2}`, `{"A":1}`},
		{"held before, changed since: sent", `{"A":1}`, `{"A":1,"B":1}`, ``, `{"A":3,"B":1}`, ``},
		{"held before and anew", `{"A":1,"B":1}`, `{"A":1,"B":1}`, `{"B":2}`, `{"A":1,"B":2}`, `{"A":1,"B":2}`},
	} {
		got := deltaHeld(raw(c.held), raw(c.wrote), raw(c.nowHeld), raw(c.nowWrote))
		if string(got) != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
}

func raw(s string) json.RawMessage {
	if s == "" {
		return nil
	}
	return json.RawMessage(s)
}
