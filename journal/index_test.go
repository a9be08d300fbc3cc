package journal

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"testing"
)

// writeMixed writes a journal of n records over two steps as runs leave
// them: committed with lines, failed with errors, skipped, one batch in
// doubt, one line retried after being forgotten, a watermark. It returns
// the lines' ends, so that tests can cut the file anywhere.
func writeMixed(t *testing.T, path string, n int, seed uint64) []int64 {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 7))
	var buf bytes.Buffer
	var ends []int64
	put := func(e Entry) {
		l, err := EncodeLine(e)
		must(t, err)
		buf.Write(l)
		ends = append(ends, int64(buf.Len()))
	}
	put(Entry{Kind: KindHeader, Header: &Header{Plan: "mixed", PlanHash: "h", Steps: []Step{{Name: "customers", Entity: "CUSTOMERS"}, {Name: "orders", Entity: "ORDERS"}}}})
	put(Entry{Kind: KindWatermark, Mark: &Watermark{Step: "orders", Field: "ORDNAME", Value: "'SO0'"}})
	// A trial (apply --limit) that read customers to its end.
	put(Entry{Kind: KindRun, Run: &Run{Limit: 10, Steps: []string{"customers", "orders"}}})
	put(Entry{Kind: KindDone, Done: "customers"})
	b := 0
	var retry []string
	for i := 0; i < n; {
		b++
		var subs []Sub
		var res []SubResult
		var recs []Entry
		step := "customers"
		if i >= n/2 {
			step = "orders"
		}
		for k := 0; k < 10 && i < n; k, i = k+1, i+1 {
			id := fmt.Sprintf("R%05d", (i*7919)%100003) // unique, not in order
			if len(retry) > 0 && rng.IntN(4) == 0 {
				id, retry = retry[0], retry[1:]
			}
			if rng.IntN(10) == 0 {
				recs = append(recs, Entry{Kind: KindRecord, Record: &RecordEntry{Step: step, ID: id, Status: Skipped, Loc: "f.csv:" + id}})
				continue
			}
			sid := fmt.Sprintf("r%d", k)
			subs = append(subs, Sub{ID: sid, Step: step, Rec: id, Op: OpCreate, Meth: "POST", URL: "X", RowHash: "rh" + id,
				Match: json.RawMessage(`{"A":"` + id + ` x","N":[1,{"b":null}]}`), Lines: json.RawMessage(`{"L":[{"P":"a\"]}"},{}]}`)})
			child := Sub{ID: sid + "c", Step: step, Rec: id, Path: "0", Op: OpCreate, Meth: "POST", URL: "$" + sid + "/L", Nav: "L"}
			subs = append(subs, child)
			switch rng.IntN(8) {
			case 0:
				res = append(res, SubResult{ID: sid, Status: 201, Key: "'" + id + "'"}, SubResult{ID: child.ID, Status: 400, Error: "bad line"})
				recs = append(recs, Entry{Kind: KindRecord, Record: &RecordEntry{Step: step, ID: id, Status: Failed, Key: "'" + id + "'",
					Errors: []Problem{{Cell: "f.csv:" + id, Message: "bad line"}}, Partly: "X created with 0 of 1 lines"}})
			case 1:
				res = append(res, SubResult{ID: sid, Status: 201, Key: "'" + id + "'"}, SubResult{ID: child.ID, Status: -1})
				retry = append(retry, id) // forgotten: pending, sent again later
			default:
				res = append(res, SubResult{ID: sid, Status: 201, Key: "'" + id + "'"}, SubResult{ID: child.ID, Status: 201, Key: "1"})
				// Some deep inserts: lines carried in the entity's body.
				recs = append(recs, Entry{Kind: KindRecord, Record: &RecordEntry{Step: step, ID: id, Status: Committed, Key: "'" + id + "'", RowHash: "rh" + id, Carried: rng.IntN(3)}})
			}
		}
		if len(subs) > 0 {
			put(Entry{Kind: KindIntent, Batch: b, Subs: subs})
			if b%17 == 5 {
				put(Entry{Kind: KindOutcome, Batch: b, InDoubt: "timeout"})
				continue
			}
			put(Entry{Kind: KindOutcome, Batch: b, Results: res})
		}
		for _, e := range recs {
			put(e)
		}
	}
	must(t, os.WriteFile(path, buf.Bytes(), 0o600))
	return ends
}

// sameAsFull checks that a lean state says what the full replay says:
// counts, every record's status, key and children, the unsettled records
// in full, what is in doubt.
func sameAsFull(t *testing.T, lean, full *State) {
	t.Helper()
	if !lean.Lean() {
		t.Fatal("the state is not lean")
	}
	if lean.Entries != full.Entries || lean.ValidSize != full.ValidSize || lean.LastBatch != full.LastBatch || lean.Torn != full.Torn {
		t.Fatalf("lean: %d entries, %d bytes, batch %d, torn %v; full: %d, %d, %d, %v", lean.Entries, lean.ValidSize, lean.LastBatch, lean.Torn,
			full.Entries, full.ValidSize, full.LastBatch, full.Torn)
	}
	if !reflect.DeepEqual(lean.StepNames, full.StepNames) || !reflect.DeepEqual(lean.Marks, full.Marks) || !reflect.DeepEqual(lean.Header, full.Header) {
		t.Fatalf("steps, marks or header differ: %v %v", lean.StepNames, full.StepNames)
	}
	if lean.Runs != full.Runs || !reflect.DeepEqual(lean.LastRun, full.LastRun) || !reflect.DeepEqual(lean.Done, full.Done) || lean.Complete() != full.Complete() {
		t.Fatalf("runs differ: lean %d %+v %v, full %d %+v %v", lean.Runs, lean.LastRun, lean.Done, full.Runs, full.LastRun, full.Done)
	}
	for _, name := range full.StepNames {
		if lc, fc := lean.Counts(name), full.Counts(name); lc != fc {
			t.Fatalf("%s: lean counts %+v, full %+v", name, lc, fc)
		}
		ss := full.Steps[name]
		if lean.Size(name) != len(ss.IDs) {
			t.Fatalf("%s: lean size %d, full %d", name, lean.Size(name), len(ss.IDs))
		}
		kids := lean.Steps[name].Settled.Children
		var hot []string
		for _, id := range ss.IDs {
			f, l := ss.Records[id], lean.Record(name, id)
			if l == nil || l.Status() != f.Status() || l.Key != f.Key || l.Created != f.Created || l.RowHash != f.RowHash || l.Children() != f.Children() {
				t.Fatalf("%s %s: lean %+v, full %+v", name, id, l, f)
			}
			if r := lean.Steps[name].Records[id]; r != nil {
				hot = append(hot, id)
				kids += r.Children()
				if !reflect.DeepEqual(r.Errors, f.Errors) || r.Partly != f.Partly || len(r.Subs) != len(f.Subs) || r.FailedInTrial != f.FailedInTrial {
					t.Fatalf("%s %s: unsettled record differs: %+v, %+v", name, id, r, f)
				}
			} else if s := f.Status(); s != Committed && s != Skipped {
				t.Fatalf("%s %s is %s, and the lean state does not hold it", name, id, s)
			}
		}
		if !reflect.DeepEqual(hot, lean.Steps[name].IDs) && !(len(hot) == 0 && len(lean.Steps[name].IDs) == 0) {
			t.Fatalf("%s: lean IDs %v, want %v", name, lean.Steps[name].IDs, hot)
		}
		want := 0
		for _, id := range ss.IDs {
			want += ss.Records[id].Children()
		}
		if kids != want {
			t.Fatalf("%s: %d children, want %d", name, kids, want)
		}
	}
	ids := func(st *State) []string {
		var out []string
		for _, s := range st.InDoubtSubs() {
			out = append(out, fmt.Sprint(s.Batch, s.ID, s.Rec, s.Unknown, s.Error))
		}
		return out
	}
	if l, f := ids(lean), ids(full); !reflect.DeepEqual(l, f) {
		t.Fatalf("in doubt: lean %v, full %v", l, f)
	}
	var settledIDs []string
	must(t, lean.EachSettled(func(r SettledRecord) error {
		settledIDs = append(settledIDs, r.Step+" "+r.ID)
		if f := full.Record(r.Step, r.ID); f == nil || f.Status() != r.Status || f.Key != r.Key {
			t.Fatalf("EachSettled gave %+v; full: %+v", r, f)
		}
		return nil
	}))
	if !sort.StringsAreSorted(settledIDs) {
		t.Fatal("EachSettled is not in order")
	}
}

func smallOverlay(t *testing.T) {
	old := overlayMin
	overlayMin = 16
	t.Cleanup(func() { overlayMin = old })
}

// TestLeanIsFull: a lean state, built from the log (writing its index as
// it goes) or from the index, says what the full replay says.
func TestLeanIsFull(t *testing.T) {
	smallOverlay(t)
	path := filepath.Join(t.TempDir(), "run.journal")
	writeMixed(t, path, 2000, 1)
	full, err := Load(path)
	must(t, err)
	built, err := loadIndexed(t, path)
	must(t, err)
	sameAsFull(t, built, full)
	if _, err := os.Stat(IndexPath(path)); err != nil {
		t.Fatalf("no index written: %v", err)
	}
	fromIndex, err := loadIndexed(t, path)
	must(t, err)
	if fromIndex.idx.count() == 0 {
		t.Fatal("the second load did not use the index")
	}
	sameAsFull(t, fromIndex, full)
}

// TestIndexIsOnlyACache: whatever happened to the index (deleted,
// truncated, damaged, left half written by a crash, older than the log,
// belonging to another journal), the lean state is the log's.
func TestIndexIsOnlyACache(t *testing.T) {
	smallOverlay(t)
	cases := []struct {
		name string
		harm func(t *testing.T, path string, ends []int64)
	}{
		{"deleted", func(t *testing.T, path string, _ []int64) { must(t, os.Remove(IndexPath(path))) }},
		{"truncated", func(t *testing.T, path string, _ []int64) {
			fi, err := os.Stat(IndexPath(path))
			must(t, err)
			must(t, os.Truncate(IndexPath(path), fi.Size()/2))
		}},
		{"a byte changed", func(t *testing.T, path string, _ []int64) {
			b, err := os.ReadFile(IndexPath(path))
			must(t, err)
			b[len(b)/3] ^= 0x20
			must(t, os.WriteFile(IndexPath(path), b, 0o600))
		}},
		{"empty", func(t *testing.T, path string, _ []int64) { must(t, os.WriteFile(IndexPath(path), nil, 0o600)) }},
		{"a run deleted", func(t *testing.T, path string, _ []int64) { must(t, os.Remove(someRun(t, path))) }},
		{"a byte of a run changed", func(t *testing.T, path string, _ []int64) {
			run := someRun(t, path)
			b, err := os.ReadFile(run)
			must(t, err)
			b[len(b)/2] ^= 0x20
			must(t, os.WriteFile(run, b, 0o600))
		}},
		{"a run replaced by another of the same length", func(t *testing.T, path string, _ []int64) {
			run := someRun(t, path)
			b, err := os.ReadFile(run)
			must(t, err)
			// Another journal's run: its own checksum holds, the head's
			// does not.
			was := bytes.Clone(b)
			if b = bytes.Replace(b, []byte("R0"), []byte("Q0"), 1); bytes.Equal(b, was) {
				t.Fatal("the run holds no R0 to change")
			}
			sum := crc32.Checksum(b[:len(b)-8], castagnoli)
			binary.LittleEndian.PutUint32(b[len(b)-8:], sum)
			must(t, os.WriteFile(run, b, 0o600))
		}},
		{"crash mid-write", func(t *testing.T, path string, _ []int64) {
			// The temporary file of a write that never got to its rename,
			// and no index: what a kill during the write leaves.
			b, err := os.ReadFile(IndexPath(path))
			must(t, err)
			must(t, os.WriteFile(filepath.Join(filepath.Dir(path), "."+filepath.Base(IndexPath(path))+"-123"), b[:len(b)/2], 0o600))
			must(t, os.Remove(IndexPath(path)))
		}},
		{"older than the log", func(t *testing.T, path string, _ []int64) {
			f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
			must(t, err)
			for _, e := range []Entry{
				{Kind: KindIntent, Batch: 9000, Subs: []Sub{{ID: "n1", Step: "orders", Rec: "NEW1", Op: OpCreate, Meth: "POST", URL: "X"}}},
				{Kind: KindOutcome, Batch: 9000, Results: []SubResult{{ID: "n1", Status: 201, Key: "'NEW1'"}}},
				{Kind: KindRecord, Record: &RecordEntry{Step: "orders", ID: "NEW1", Status: Committed, Key: "'NEW1'"}},
			} {
				l, _ := EncodeLine(e)
				f.Write(l)
			}
			must(t, f.Close())
		}},
		{"log cut before what it covers", func(t *testing.T, path string, ends []int64) {
			must(t, os.Truncate(path, ends[len(ends)/2]))
		}},
		{"log rewritten at the same length", func(t *testing.T, path string, ends []int64) {
			b, err := os.ReadFile(path)
			must(t, err)
			// Another journal of the same length: the header's plan changed.
			b = bytes.Replace(b, []byte(`"plan":"mixed"`), []byte(`"plan":"MIXED"`), 1)
			l, _ := EncodeLine(Entry{Kind: KindHeader, Header: &Header{Plan: "MIXED", PlanHash: "h", Steps: []Step{{Name: "customers", Entity: "CUSTOMERS"}, {Name: "orders", Entity: "ORDERS"}}}})
			b = append(l, b[ends[0]:]...)
			must(t, os.WriteFile(path, b, 0o600))
		}},
		{"torn last line after it", func(t *testing.T, path string, _ []int64) {
			f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
			must(t, err)
			f.WriteString(`1234abcd {"t":"intent","b":99`)
			must(t, f.Close())
		}},
	}
	// The subtests run at once (each on its own journal): their time is
	// the disk's flushes, not the processor's. smallOverlay's setting
	// stands until the last of them ends.
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "run.journal")
			ends := writeMixed(t, path, 600, 2)
			_, err := loadIndexed(t, path) // writes the index
			must(t, err)
			c.harm(t, path, ends)
			full, err := Load(path)
			must(t, err)
			lean, err := loadIndexed(t, path)
			must(t, err)
			sameAsFull(t, lean, full)
			// And once more, from whatever the load left.
			lean, err = loadIndexed(t, path)
			must(t, err)
			sameAsFull(t, lean, full)
			j, st, err := OpenIndexed(path)
			must(t, err)
			sameAsFull(t, st, full)
			must(t, j.Close())
			if m, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".*-*")); len(m) > 0 {
				t.Fatalf("a half-written index is left: %v", m)
			}
		})
	}
}

// TestLiveLeanIsReplay: a journal opened lean follows its appends as the
// full replay of the file would, across the writes of its index, and its
// Close leaves an index that the next open trusts.
func TestLiveLeanIsReplay(t *testing.T) {
	smallOverlay(t)
	j, st, path, lines := openMixed(t, 800, 3)
	if !st.Lean() {
		t.Fatal("not lean")
	}
	for i, l := range lines {
		if len(l) == 0 {
			continue
		}
		// Unsynced: the live state is what is compared, not each line's fsync.
		must(t, j.AppendUnsynced(lineEntry(t, l)))
		if i%97 == 0 || i == len(lines)-1 {
			full, err := Load(path)
			must(t, err)
			sameAsFull(t, snapshot(t, j), full)
		}
	}
	for _, id := range []string{"R00001", "R00100"} {
		full, _ := Load(path)
		k, ok := j.Key("customers", id)
		if f := full.Record("customers", id); (f != nil && f.Key != "") != ok || ok && k != f.Key {
			t.Fatalf("Key(customers, %s) = %q %v; full %+v", id, k, ok, f)
		}
	}
	must(t, j.Close())
	full, err := Load(path)
	must(t, err)
	lean, err := loadIndexed(t, path)
	must(t, err)
	if lean.indexed != full.Entries {
		t.Fatalf("Close left an index of %d entries, want %d", lean.indexed, full.Entries)
	}
	sameAsFull(t, lean, full)
}

// TestLeanAfterUndo: undo works on settled records again; the index keeps
// too little of them, so the state is built in full, as Load builds it.
func TestLeanAfterUndo(t *testing.T) {
	smallOverlay(t)
	path := filepath.Join(t.TempDir(), "run.journal")
	writeMixed(t, path, 300, 4)
	_, err := loadIndexed(t, path)
	must(t, err)
	full, err := Load(path)
	must(t, err)
	var id string
	for _, x := range full.Steps["customers"].IDs {
		if full.Record("customers", x).Status() == Committed {
			id = x
			break
		}
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	must(t, err)
	for _, e := range []Entry{
		{Kind: KindIntent, Batch: 5000, Subs: []Sub{{ID: "u1", Step: "customers", Rec: id, Op: OpUndoDelete, Meth: "DELETE", URL: "X('" + id + "')"}}},
		{Kind: KindOutcome, Batch: 5000, Results: []SubResult{{ID: "u1", Status: 204}}},
	} {
		l, _ := EncodeLine(e)
		f.Write(l)
	}
	must(t, f.Close())
	st, err := loadIndexed(t, path)
	must(t, err)
	full, err = Load(path)
	must(t, err)
	if st.Lean() {
		t.Fatal("a state whose settled record was undone is lean")
	}
	if !reflect.DeepEqual(normalize(st), normalize(full)) {
		t.Fatal("differs from Load")
	}
}

// TestIndexKeepsFinished: whether the last apply finished (its finished
// line) is the same from the index as from the log, before and after a
// later line.
func TestIndexKeepsFinished(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.journal")
	h := testHeader()
	h.MarksFinish = true
	j, err := CreateIndexed(path, h)
	must(t, err)
	must(t, j.Append(Entry{Kind: KindRecord, Record: &RecordEntry{Step: "customers", ID: "C1", Status: Committed}}))
	check := func(want bool) {
		t.Helper()
		full, err := Load(path)
		must(t, err)
		lean, err := loadIndexed(t, path)
		must(t, err)
		if full.Finished() != want || lean.Finished() != want || lean.Complete() != full.Complete() {
			t.Fatalf("finished: full %v, lean %v, want %v; complete: full %v, lean %v", full.Finished(), lean.Finished(), want, full.Complete(), lean.Complete())
		}
	}
	must(t, j.Close())
	check(false)
	j, _, err = OpenIndexed(path)
	must(t, err)
	must(t, j.Append(Entry{Kind: KindFinished}))
	must(t, j.Close())
	check(true) // from the index Close wrote
	must(t, os.Remove(IndexPath(path)))
	check(true) // from the log
	j, _, err = OpenIndexed(path)
	must(t, err)
	must(t, j.Append(Entry{Kind: KindIntent, Batch: 1, Subs: []Sub{{ID: "r1", Step: "customers", Rec: "C2", Op: OpCreate, Meth: "POST", URL: "CUSTOMERS"}}}))
	must(t, j.Close())
	check(false)
}

// TestHeldKeys: the keys a step's records hold, read from the records in
// flight, the overlay and the index in place, are what the full replay's
// records hold, at every point of a run; another step's keys are not
// the step's.
func TestHeldKeys(t *testing.T) {
	smallOverlay(t)
	j, _, path, lines := openMixed(t, 600, 5)
	defer j.Close()
	var keys []string
	for i := 0; i < 100003; i += 7 {
		keys = append(keys, fmt.Sprintf("'R%05d'", i))
	}
	checked := 0
	for i, l := range lines {
		if len(l) == 0 {
			continue
		}
		// Unsynced: the live state is what is compared, not each line's fsync.
		must(t, j.AppendUnsynced(lineEntry(t, l)))
		if i%53 != 0 && i != len(lines)-1 {
			continue
		}
		full, err := Load(path)
		must(t, err)
		for _, step := range []string{"customers", "orders"} {
			want := map[string]bool{}
			if ss := full.Steps[step]; ss != nil {
				for _, rec := range ss.Records {
					if rec.Key != "" {
						want[rec.Key] = true
					}
				}
			}
			got, err := j.HeldKeys(step, keys)
			must(t, err)
			for _, k := range keys {
				if got[k] != want[k] {
					t.Fatalf("after line %d: HeldKeys(%s) says %s %v, the replay %v", i+1, step, k, got[k], want[k])
				}
				if want[k] {
					checked++
				}
			}
		}
	}
	if j.live.idx.count() == 0 || checked == 0 {
		t.Fatalf("nothing came from the index (%v) or nothing was held (%d)", j.live.idx.count(), checked)
	}
}

// openMixed writes a journal of n records (writeMixed) and opens, indexed,
// a journal holding its header alone: the rest of its lines, returned,
// are for the test to append one by one.
func openMixed(t *testing.T, n int, seed uint64) (j *Journal, st *State, path string, rest [][]byte) {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join(dir, "src.journal")
	writeMixed(t, src, n, seed)
	b, err := os.ReadFile(src)
	must(t, err)
	lines := bytes.SplitAfter(bytes.TrimSuffix(b, []byte("\n")), []byte("\n"))
	lines[len(lines)-1] = append(lines[len(lines)-1], '\n')
	path = filepath.Join(dir, "run.journal")
	must(t, os.WriteFile(path, lines[0], 0o600))
	j, st, err = OpenIndexed(path)
	must(t, err)
	t.Cleanup(func() { closeFiles(st) })
	return j, st, path, lines[1:]
}

// lineEntry decodes one journal line.
func lineEntry(t *testing.T, l []byte) Entry {
	var e Entry
	must(t, json.Unmarshal(l[9:len(l)-1], &e))
	return e
}

// someRun is the path of one of the index's runs (the oldest).
func someRun(t *testing.T, path string) string {
	t.Helper()
	head, err := readHead(IndexPath(path))
	must(t, err)
	var h indexHead
	must(t, json.Unmarshal(head, &h))
	if len(h.Tables) == 0 {
		t.Fatal("the index names no run")
	}
	return filepath.Join(filepath.Dir(path), h.Tables[0].Name)
}

// TestIndexRuns: records settled a few at a time go to runs that are
// merged as they fill a level; the folder holds the head and the runs it
// names, no more (the merged ones and the temporaries gone), and each
// record is found in them.
func TestIndexRuns(t *testing.T) {
	smallOverlay(t)
	for _, fm := range []int{1 << 20, 100} {
		t.Run(fmt.Sprintf("filters up to %d entries", fm), func(t *testing.T) {
			old := filterMax
			filterMax = fm
			t.Cleanup(func() { filterMax = old })
			indexRuns(t)
		})
	}
}

func indexRuns(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "run.journal")
	j, err := CreateIndexed(path, Header{Plan: "p", Steps: []Step{{Name: "s", Entity: "E"}}})
	must(t, err)
	const n = 1200
	for i := range n {
		id := fmt.Sprintf("%d", (i*7919)%10007)
		// Unsynced: the runs are what is tested here, not each line's fsync.
		must(t, j.AppendUnsynced(Entry{Kind: KindRecord, Record: &RecordEntry{Step: "s", ID: id, Status: Committed, Key: "'" + id + "'"}}))
	}
	must(t, j.Close())
	head, err := readHead(IndexPath(path))
	must(t, err)
	var h indexHead
	must(t, json.Unmarshal(head, &h))
	// 1200 records 16 at a time, 8 runs of a level merged: a few runs of
	// each level, never 1200/16.
	if len(h.Tables) == 0 || len(h.Tables) > 3*(mergeWidth-1) {
		t.Fatalf("%d runs, want between 1 and %d", len(h.Tables), 3*(mergeWidth-1))
	}
	want := map[string]bool{"run.journal": true, "run.journal.idx": true}
	total := 0
	for _, r := range h.Tables {
		want[r.Name] = true
		total += r.N
	}
	if total != n {
		t.Errorf("the runs hold %d entries, want %d (each record once: none was settled twice)", total, n)
	}
	des, err := os.ReadDir(dir)
	must(t, err)
	for _, de := range des {
		if !want[de.Name()] {
			t.Errorf("%s is left in the folder: no head names it", de.Name())
		}
		delete(want, de.Name())
	}
	if len(want) > 0 {
		t.Errorf("missing from the folder: %v", want)
	}
	st, err := loadIndexed(t, path)
	must(t, err)
	for i := range n {
		id := fmt.Sprintf("%d", (i*7919)%10007)
		if r := st.Record("s", id); r == nil || r.Key != "'"+id+"'" || r.Status() != Committed {
			t.Fatalf("record %s: %+v", id, r)
		}
	}
	// Never written: before, among and after the records' ids.
	for _, id := range []string{"", "0a", "5000x", "99999", "nope"} {
		if r := st.Record("s", id); r != nil {
			t.Fatalf("a record never written (%q) is found: %+v", id, r)
		}
	}
}

// TestSnapshotOutlivesMerge: a copy of the state taken before a merge
// replaced its runs still finds its records in them, the files gone, and
// so does the journal's own state after Close released its runs.
func TestSnapshotOutlivesMerge(t *testing.T) {
	j, put := committing(t)
	put(0, 100)
	snap := snapshot(t, j)
	t.Cleanup(func() { closeFiles(snap) })
	before := snap.idx.list
	if len(before) == 0 {
		t.Fatal("no run written yet")
	}
	put(100, 600)
	for _, r := range before {
		if !r.removed.Load() {
			t.Fatalf("%s is still named: no merge replaced it", r.name)
		}
	}
	must(t, j.Close())
	for i := range 100 {
		id := fmt.Sprintf("%05d", i)
		if r := snap.Record("s", id); r == nil || r.Key != "'"+id+"'" {
			t.Fatalf("the snapshot lost record %s: %+v", id, r)
		}
	}
	if snap.ioErr != nil {
		t.Fatal(snap.ioErr)
	}
	st := j.State()
	t.Cleanup(func() { closeFiles(st) })
	for i := range 600 {
		id := fmt.Sprintf("%05d", i)
		if r := st.Record("s", id); r == nil || r.Key != "'"+id+"'" {
			t.Fatalf("after Close, record %s: %+v", id, r)
		}
	}
}

// loadIndexed is LoadIndexed whose runs' files are closed when the test
// ends, so that its folder can be removed under Windows too (where an open
// file keeps its name).
func loadIndexed(t testing.TB, path string) (*State, error) {
	st, err := LoadIndexed(path)
	if err == nil {
		t.Cleanup(func() { closeFiles(st) })
	}
	return st, err
}

// closeFiles closes the files of every run st reads, a merge's replaced
// ones too.
func closeFiles(st *State) {
	if st.idx == nil {
		return
	}
	for _, r := range st.idx.list {
		r.removed.Store(false)
		r.release()
	}
}

// snapshot is j.Snapshot() whose runs' files are closed when the test
// ends (loadIndexed).
func snapshot(t testing.TB, j *Journal) *State {
	st := j.Snapshot()
	t.Cleanup(func() { closeFiles(st) })
	return st
}

// FuzzRunFile: a run file of any content, its checksums made to hold (so
// that the parser behind them is reached), is refused or read, never a
// panic: its blocks' keys, filter and entries looked up and walked.
func FuzzRunFile(f *testing.F) {
	dir := f.TempDir()
	w, err := newRunWriter(dir, "seed", 0, 40)
	if err != nil {
		f.Fatal(err)
	}
	for i := range 40 {
		id := fmt.Sprintf("R%03d", i)
		e := entry{tkey{i % 2, id}, settled{status: Committed, key: "'" + id + "'", wrote: `{"A":1}`, gone: i%7 == 0}}
		if err := w.put(&e); err != nil {
			f.Fatal(err)
		}
	}
	seed, err := w.finish()
	if err != nil {
		f.Fatal(err)
	}
	seed.release() // its folder goes when the fuzz ends (Windows keeps an open file)
	b, err := os.ReadFile(filepath.Join(dir, seed.name))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add(b[:len(b)/2])
	f.Add([]byte(runMagic))
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) < runFooter {
			return
		}
		b = bytes.Clone(b)
		sum := crc32.Checksum(b[:len(b)-8], castagnoli)
		binary.LittleEndian.PutUint32(b[len(b)-8:], sum)
		n := binary.LittleEndian.Uint64(b[len(b)-runFooter+16:])
		if n > 1<<20 {
			return
		}
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "r"), b, 0o600); err != nil {
			t.Fatal(err)
		}
		tb, err := openRun(dir, runRef{Name: "r", N: int(n), Size: int64(len(b)), Sum: sum})
		if err != nil {
			return
		}
		x := &runs{list: []*table{tb}}
		defer x.release()
		for _, id := range []string{"", "R000", "R013", "R039", "zzz"} {
			x.lookup(0, id)
			x.lookup(1, id)
		}
		x.each(func(*entry) error { return nil })
	})
}

// TestReleaseClosesReplacedRuns: a copy of the state holds the runs a
// merge replaced open, to read them (on Windows their files go only once
// closed); Release closes them.
func TestReleaseClosesReplacedRuns(t *testing.T) {
	j, put := committing(t)
	put(0, 100)
	snap := snapshot(t, j)
	put(100, 600)
	open := 0
	for _, r := range snap.idx.list {
		if r.removed.Load() && r.f != nil {
			open++
		}
	}
	if open == 0 {
		t.Fatal("no replaced run is held open: the test proves nothing")
	}
	snap.Release()
	for _, r := range snap.idx.list {
		if r.removed.Load() && r.f != nil {
			t.Errorf("%s: replaced, still open after Release", r.name)
		}
	}
	must(t, j.Close())
}

// committing is a new indexed journal of step s with a small overlay, and
// put, which appends records from to to (their ids, and keys, 00000...)
// committed.
func committing(t *testing.T) (*Journal, func(from, to int)) {
	t.Helper()
	smallOverlay(t)
	path := filepath.Join(t.TempDir(), "run.journal")
	j, err := CreateIndexed(path, Header{Plan: "p", Steps: []Step{{Name: "s", Entity: "E"}}})
	must(t, err)
	return j, func(from, to int) {
		for i := from; i < to; i++ {
			id := fmt.Sprintf("%05d", i)
			must(t, j.Append(Entry{Kind: KindRecord, Record: &RecordEntry{Step: "s", ID: id, Status: Committed, Key: "'" + id + "'"}}))
		}
	}
}
