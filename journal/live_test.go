package journal

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"
)

// normalize drops the lazily built lookup of open batches, which replay
// and the live state build at different moments.
func normalize(st *State) *State {
	for _, ob := range st.open {
		ob.byID = nil
	}
	return st
}

// TestLiveStateIsReplay: after every append, the journal's own state is
// what a replay of the file gives, for a new journal and a resumed one.
func TestLiveStateIsReplay(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "run.journal")
	writeRun(t, path)
	j, st, err := Open(path)
	must(t, err)
	defer j.Close()
	if !reflect.DeepEqual(normalize(snapshot(t, j)), normalize(st)) {
		t.Fatal("live state after Open differs from the replay")
	}
	steps := []Entry{
		{Kind: KindOutcome, Batch: 3, Results: []SubResult{{ID: "r1", Status: 201, Key: "'SO2'"}}},
		{Kind: KindRecord, Record: &RecordEntry{Step: "orders", ID: "O2", Status: Committed}},
		{Kind: KindIntent, Batch: 4, Subs: []Sub{{ID: "r1", Step: "orders", Rec: "O1", Path: "1", Op: OpCreate, Meth: "POST", URL: "ORDERS('SO1')/ORDERITEMS_SUBFORM", Match: []byte(` {"A": 1} `)}}},
		{Kind: KindOutcome, Batch: 4, Results: []SubResult{{ID: "r1", Status: -1}}},
	}
	for i, e := range steps {
		must(t, j.Append(e))
		want, err := Load(path)
		must(t, err)
		if got := normalize(snapshot(t, j)); !reflect.DeepEqual(got, normalize(want)) {
			t.Fatalf("after append %d the live state differs from the replay:\n%+v\n%+v", i, got, want)
		}
	}
	if c := j.Counts("orders"); c.Committed != 1 || c.Pending != 1 {
		t.Fatalf("Counts(orders) = %+v, want 1 committed (O2) and O1 pending (its retried line was forgotten)", c)
	}
}

// TestLiveStateOfNewJournal: Create's state follows its appends, and a
// snapshot does not change when more is appended.
func TestLiveStateOfNewJournal(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "new.journal")
	j, err := Create(path, testHeader())
	must(t, err)
	before := snapshot(t, j)
	must(t, j.Append(Entry{Kind: KindIntent, Batch: j.NextBatch(), Subs: []Sub{{ID: "r1", Step: "customers", Rec: "C9", Op: OpCreate, Meth: "POST", URL: "CUSTOMERS"}}}))
	if before.Record("customers", "C9") != nil {
		t.Fatal("a snapshot changed after a later append")
	}
	mid := snapshot(t, j)
	must(t, j.Append(Entry{Kind: KindOutcome, Batch: 1, Results: []SubResult{{ID: "r1", Status: 201, Key: "'C9'"}}}))
	if got := mid.Record("customers", "C9"); got.Status() != InDoubt || got.Key != "" || got.Subs[""].Status != 0 {
		t.Fatalf("a snapshot taken while batch 1 was open saw its outcome: %s %q", got.Status(), got.Key)
	}
	if got := snapshot(t, j).Record("customers", "C9"); got.Subs[""].Status != 201 || got.Key != "'C9'" {
		t.Fatalf("the live state missed batch 1's outcome: %+v", got.Subs[""])
	}
	must(t, j.Close())
	want, err := Load(path)
	must(t, err)
	if !reflect.DeepEqual(normalize(j.State()), normalize(want)) {
		t.Fatal("State after Close differs from Load")
	}
	if got := j.State().Record("customers", "C9").Status(); got != Pending {
		t.Fatalf("C9 is %s, want pending (created, no record entry)", got)
	}
}

// TestLiveStateAfterTornTail: a resumed journal whose torn tail is cut
// off on the next append agrees with the replay of the repaired file.
func TestLiveStateAfterTornTail(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "torn.journal")
	writeRun(t, path)
	data, err := os.ReadFile(path)
	must(t, err)
	must(t, os.WriteFile(path, append(data, []byte("1234abcd {\"k\":\"rec")...), 0o600))
	j, st, err := Open(path)
	must(t, err)
	if !st.Torn {
		t.Fatal("the torn tail was not seen")
	}
	must(t, j.Append(Entry{Kind: KindRecord, Record: &RecordEntry{Step: "orders", ID: "O3", Status: Skipped}}))
	must(t, j.Close())
	want, err := Load(path)
	must(t, err)
	if !reflect.DeepEqual(normalize(j.State()), normalize(want)) {
		t.Fatal("live state differs from the replay of the repaired file")
	}
	if !bytes.HasSuffix(mustRead(t, path), []byte("\n")) {
		t.Fatal("the file does not end with a complete line")
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	must(t, err)
	return b
}

// BenchmarkClone is what Open adds to a replay of 1,000,000 sub-requests:
// the copy that becomes the journal's live state.
func BenchmarkClone(b *testing.B) {
	st, err := Replay(bytes.NewReader(genJournal(b, 1000000)))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if c := st.Clone(); len(c.Steps["orders"].IDs) != 200000 {
			b.Fatal("clone lost records")
		}
	}
}

// TestConcurrentAppends: appends from several goroutines (sharing fsyncs)
// all land, each as whole lines, and the live state is the replay.
func TestConcurrentAppends(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "conc.journal")
	j, err := Create(path, testHeader())
	must(t, err)
	const workers, each = 8, 40
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		go func(w int) {
			for i := 0; i < each; i++ {
				b := j.NextBatch()
				id := "C" + strconv.Itoa(w) + "-" + strconv.Itoa(i)
				if err := j.Append(Entry{Kind: KindIntent, Batch: b, Subs: []Sub{{ID: "r1", Step: "customers", Rec: id, Op: OpCreate, Meth: "POST", URL: "CUSTOMERS"}}}); err != nil {
					errs <- err
					return
				}
				if err := j.Append(Entry{Kind: KindOutcome, Batch: b, Results: []SubResult{{ID: "r1", Status: 201, Key: "'" + id + "'"}}},
					Entry{Kind: KindRecord, Record: &RecordEntry{Step: "customers", ID: id, Status: Committed}}); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}(w)
	}
	for w := 0; w < workers; w++ {
		must(t, <-errs)
	}
	must(t, j.Close())
	st, err := Load(path)
	must(t, err)
	if st.Entries != 1+workers*each*3 || st.Torn {
		t.Fatalf("%d entries (torn %v), want %d", st.Entries, st.Torn, 1+workers*each*3)
	}
	if c := st.Counts("customers"); c.Committed != workers*each {
		t.Fatalf("Counts = %+v, want %d committed", c, workers*each)
	}
	if !reflect.DeepEqual(normalize(j.State()), normalize(st)) {
		t.Fatal("live state differs from the replay")
	}
	if err := j.Append(Entry{Kind: KindRecord, Record: &RecordEntry{Step: "customers", ID: "late", Status: Skipped}}); err == nil {
		t.Fatal("Append after Close succeeded")
	}
}

// BenchmarkAppendParallel is Append from 4 goroutines, as the executor's
// concurrent batches do: overlapping appends share an fsync.
func BenchmarkAppendParallel(b *testing.B) {
	j, err := Create(filepath.Join(b.TempDir(), "par.journal"), Header{PlanHash: "x"})
	if err != nil {
		b.Fatal(err)
	}
	defer j.Close()
	subs := make([]Sub, 100)
	for i := range subs {
		subs[i] = Sub{ID: "r" + strconv.Itoa(i), Step: "orders", Rec: strconv.Itoa(i), Op: OpCreate, Meth: "POST", URL: "ORDERS"}
	}
	b.ReportAllocs()
	b.SetParallelism(2) // 2 × GOMAXPROCS goroutines
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := j.Append(Entry{Kind: KindIntent, Batch: j.NextBatch(), Subs: subs}); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// TestAppendUnsynced: unsynced entries are written in order, visible in
// the live state at once, and a later Append (or Sync, Close) covers them.
func TestAppendUnsynced(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "lazy.journal")
	j, err := Create(path, testHeader())
	must(t, err)
	b := j.NextBatch()
	must(t, j.Append(Entry{Kind: KindIntent, Batch: b, Subs: []Sub{{ID: "r1", Step: "customers", Rec: "C1", Op: OpCreate, Meth: "POST", URL: "CUSTOMERS"}}}))
	must(t, j.AppendUnsynced(Entry{Kind: KindOutcome, Batch: b, Results: []SubResult{{ID: "r1", Status: 201, Key: "'C1'"}}}))
	if got := j.Counts("customers"); got.InDoubt != 0 || got.Pending != 1 {
		t.Fatalf("Counts after the unsynced outcome = %+v, want C1 pending (decided, no record entry yet)", got)
	}
	st, err := Load(path)
	must(t, err)
	if st.Entries != 3 {
		t.Fatalf("%d entries in the file, want 3 (written, even if not yet fsynced)", st.Entries)
	}
	must(t, j.Sync())
	must(t, j.AppendUnsynced(Entry{Kind: KindRecord, Record: &RecordEntry{Step: "customers", ID: "C1", Status: Committed}}))
	must(t, j.Close())
	st, err = Load(path)
	must(t, err)
	if c := st.Counts("customers"); c.Committed != 1 {
		t.Fatalf("Counts after Close = %+v, want C1 committed", c)
	}
	if err := j.AppendUnsynced(Entry{Kind: KindRecord, Record: &RecordEntry{Step: "customers", ID: "C2", Status: Skipped}}); err == nil {
		t.Fatal("AppendUnsynced after Close succeeded")
	}
}

// TestFold: an outcome folded into a loaded state settles its batch as
// the same outcome appended and replayed would, and leaves the file as
// it was; an outcome of a batch the state never opened is refused, as a
// replay refuses it.
func TestFold(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "run.journal")
	j, err := Create(path, testHeader())
	must(t, err)
	intent := Entry{Kind: KindIntent, Batch: 1, Subs: []Sub{
		{ID: "1", Step: "customers", Rec: "C1", Op: OpCreate, Meth: "POST", URL: "CUSTOMERS", Key: "C1"},
		{ID: "2", Step: "customers", Rec: "C2", Op: OpCreate, Meth: "POST", URL: "CUSTOMERS", Key: "C2"},
	}}
	must(t, j.Append(intent, Entry{Kind: KindOutcome, Batch: 1, InDoubt: "the answer was lost"}))
	must(t, j.Close())
	st, err := Load(path)
	must(t, err)
	if got := len(st.InDoubtSubs()); got != 2 {
		t.Fatalf("loaded: %d sub-requests in doubt, want 2", got)
	}
	settled := Entry{Kind: KindOutcome, Batch: 1, Results: []SubResult{{ID: "1", Status: 201, Key: "C1"}, {ID: "2", Status: -1, Error: "reconciled: absent"}}}
	must(t, st.Fold(settled))
	if got := len(st.InDoubtSubs()); got != 0 {
		t.Errorf("folded: %d sub-requests in doubt, want none", got)
	}
	if r := st.Record("customers", "C1"); r == nil || r.Key != "C1" || !r.Subs[""].OK() {
		t.Errorf("folded: C1 is %+v, want made with its key", r)
	}
	if r := st.Record("customers", "C2"); r != nil && r.Subs[""] != nil {
		t.Errorf("folded: C2 still holds %+v, want it forgotten (sent again)", r.Subs[""])
	}
	again, err := Load(path)
	must(t, err)
	if got := len(again.InDoubtSubs()); got != 2 {
		t.Errorf("the file after Fold: %d sub-requests in doubt, want the 2 it held", got)
	}
	if err := st.Fold(Entry{Kind: KindOutcome, Batch: 9, Results: []SubResult{{ID: "1", Status: 201}}}); err == nil {
		t.Error("an outcome of a batch never opened was folded")
	}
}
