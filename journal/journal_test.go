package journal

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func testHeader() Header {
	return Header{Plan: "demo", PlanHash: "abc", Sources: map[string]string{"a.csv": "01"},
		Target: "http://x/odata", SystemVersion: "25.1", ToolVersion: "test",
		Created: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		Steps:   []Step{{Name: "customers", Entity: "CUSTOMERS"}, {Name: "orders", Entity: "ORDERS", Wave: 1}}}
}

// writeRun writes a small run: two customers committed, an order whose
// second line failed, and a batch whose outcome was lost.
func writeRun(t *testing.T, path string) {
	t.Helper()
	j, err := Create(path, testHeader())
	if err != nil {
		t.Fatal(err)
	}
	b := j.NextBatch()
	must(t, j.Append(Entry{Kind: KindIntent, Batch: b, Subs: []Sub{
		{ID: "r1", Step: "customers", Rec: "C1", Op: OpCreate, Meth: "POST", URL: "CUSTOMERS", Key: "'C1'"},
		{ID: "r2", Step: "customers", Rec: "C2", Op: OpCreate, Meth: "POST", URL: "CUSTOMERS", Key: "'C2'"},
	}}))
	must(t, j.Append(Entry{Kind: KindOutcome, Batch: b, Results: []SubResult{{ID: "r1", Status: 201}, {ID: "r2", Status: 201}}},
		Entry{Kind: KindRecord, Record: &RecordEntry{Step: "customers", ID: "C1", Status: Committed}},
		Entry{Kind: KindRecord, Record: &RecordEntry{Step: "customers", ID: "C2", Status: Committed}}))
	b = j.NextBatch()
	must(t, j.Append(Entry{Kind: KindIntent, Batch: b, Subs: []Sub{
		{ID: "r1", Step: "orders", Rec: "O1", Op: OpCreate, Meth: "POST", URL: "ORDERS"},
		{ID: "r1c0", Step: "orders", Rec: "O1", Path: "0", Op: OpCreate, Meth: "POST", URL: "$r1/ORDERITEMS_SUBFORM", Nav: "ORDERITEMS_SUBFORM"},
		{ID: "r1c1", Step: "orders", Rec: "O1", Path: "1", Op: OpCreate, Meth: "POST", URL: "$r1/ORDERITEMS_SUBFORM", Nav: "ORDERITEMS_SUBFORM"},
	}}))
	must(t, j.Append(Entry{Kind: KindOutcome, Batch: b, Results: []SubResult{
		{ID: "r1", Status: 201, Key: "'SO1'"}, {ID: "r1c0", Status: 201, Key: "1"}, {ID: "r1c1", Status: 400, Error: "no such part"}}},
		Entry{Kind: KindRecord, Record: &RecordEntry{Step: "orders", ID: "O1", Status: Failed, Loc: "o.csv:3",
			Errors: []Problem{{Cell: "o.csv:3", Message: "no such part"}}, Row: &Row{Header: []string{"No", "Part"}, Cells: []string{"1", "X"}}}}))
	b = j.NextBatch()
	must(t, j.Append(Entry{Kind: KindIntent, Batch: b, Subs: []Sub{
		{ID: "r1", Step: "orders", Rec: "O2", Op: OpCreate, Meth: "POST", URL: "ORDERS"},
	}}))
	must(t, j.Close())
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestReplay(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "run.journal")
	writeRun(t, path)
	st, err := Load(path)
	must(t, err)
	if st.Header.PlanHash != "abc" || st.LastBatch != 3 || st.Torn {
		t.Fatalf("header/batch: %+v", st)
	}
	if got := st.Counts("customers"); got != (Counts{Committed: 2}) {
		t.Errorf("customers: %+v", got)
	}
	if got := st.Counts("orders"); got != (Counts{Failed: 1, InDoubt: 1}) {
		t.Errorf("orders: %+v", got)
	}
	o1 := st.Record("orders", "O1")
	if o1.Key != "'SO1'" || !o1.Created || o1.Subs["0"].ResultKey != "1" || o1.Subs["1"].Status != 400 {
		t.Errorf("O1: %+v", o1)
	}
	if o1.Row == nil || o1.Row.Cells[1] != "X" || o1.Errors[0].Message != "no such part" {
		t.Errorf("O1 row: %+v", o1.Row)
	}
	if c1 := st.Record("customers", "C1"); c1.Key != "'C1'" {
		t.Errorf("C1 key %q", c1.Key)
	}
	in := st.InDoubtSubs()
	if len(in) != 1 || in[0].Rec != "O2" || in[0].Batch != 3 {
		t.Fatalf("in doubt: %+v", in)
	}
	if st.Complete() {
		t.Error("complete with a failure")
	}
}

func TestReconcileOutcome(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "run.journal")
	writeRun(t, path)
	j, st, err := Open(path)
	must(t, err)
	if st.Record("orders", "O2").Status() != InDoubt {
		t.Fatal("O2 should be in doubt")
	}
	// Reconciliation: the order is provably absent.
	must(t, j.Append(Entry{Kind: KindOutcome, Batch: 3, Results: []SubResult{{ID: "r1", Status: -1}}}))
	must(t, j.Close())
	st, err = Load(path)
	must(t, err)
	o2 := st.Record("orders", "O2")
	if o2.Status() != Pending || len(o2.Subs) != 0 || len(st.InDoubtSubs()) != 0 {
		t.Fatalf("O2 after reconcile: %v %+v", o2.Status(), o2.Subs)
	}
	if b := j.batch; b != 3 {
		t.Errorf("next batch base %d", b)
	}
}

func TestTornTail(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "run.journal")
	writeRun(t, path)
	full, _ := os.ReadFile(path)
	for _, cut := range []int{1, 5, 20} {
		data := full[:len(full)-cut]
		st, err := Replay(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("cut %d: %v", cut, err)
		}
		if !st.Torn || st.Record("orders", "O2") != nil {
			t.Errorf("cut %d: torn=%v O2=%v", cut, st.Torn, st.Record("orders", "O2"))
		}
	}
	// A flipped byte in the last line is torn too; Open then cuts it off on
	// the next append, and the file replays cleanly.
	bad := append([]byte(nil), full...)
	bad[len(bad)-5] ^= 0x20
	must(t, os.WriteFile(path, bad, 0o600))
	j, st, err := Open(path)
	must(t, err)
	if !st.Torn {
		t.Fatal("flipped last line not seen")
	}
	must(t, j.Append(Entry{Kind: KindRecord, Record: &RecordEntry{Step: "orders", ID: "O3", Status: Skipped}}))
	must(t, j.Close())
	st, err = Load(path)
	must(t, err)
	if st.Torn || st.Record("orders", "O3").Status() != Skipped || st.Record("orders", "O2") != nil {
		t.Fatalf("after repair: torn=%v", st.Torn)
	}
}

func TestCorruptMiddle(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "run.journal")
	writeRun(t, path)
	full, _ := os.ReadFile(path)
	lines := bytes.SplitAfter(full, []byte("\n"))
	tests := []struct {
		name string
		line int // 1-based line to damage
		mod  func([]byte) []byte
		want string
	}{
		{"checksum", 3, func(b []byte) []byte { b = append([]byte(nil), b...); b[20] ^= 1; return b }, "checksum mismatch"},
		{"garbage", 2, func([]byte) []byte { return []byte("hello\n") }, "not a journal line"},
		{"header", 1, func([]byte) []byte { return []byte("zzz\n") }, "not a journal line"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			for i, l := range lines {
				if i+1 == tc.line {
					l = tc.mod(l)
				}
				buf.Write(l)
			}
			_, err := Replay(&buf)
			var ce *CorruptError
			if !errors.As(err, &ce) || ce.Line != tc.line || !strings.Contains(ce.Error(), tc.want) {
				t.Fatalf("got %v, want line %d %q", err, tc.line, tc.want)
			}
		})
	}
}

func TestCreateRefusesExisting(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "run.journal")
	writeRun(t, path)
	if _, err := Create(path, testHeader()); !errors.Is(err, ErrExists) {
		t.Fatalf("got %v", err)
	}
}

// genJournal builds a journal of n sub-requests in batches of 100: every
// record an order with four lines, all committed.
func genJournal(tb testing.TB, n int) []byte {
	var buf bytes.Buffer
	line, _ := EncodeLine(Entry{Kind: KindHeader, Header: &Header{PlanHash: "x"}})
	buf.Write(line)
	rec := 0
	for b := 1; b*100 <= n; b++ {
		subs := make([]Sub, 0, 100)
		res := make([]SubResult, 0, 100)
		var recs []Entry
		for i := 0; i < 20; i++ {
			rec++
			id := fmt.Sprintf("O%07d", rec)
			rid := fmt.Sprintf("r%d", i)
			subs = append(subs, Sub{ID: rid, Step: "orders", Rec: id, Op: OpCreate, Meth: "POST", URL: "ORDERS", Hash: "0123456789abcdef"})
			res = append(res, SubResult{ID: rid, Status: 201, Key: "'" + id + "'"})
			for c := 0; c < 4; c++ {
				cid := fmt.Sprintf("%sc%d", rid, c)
				subs = append(subs, Sub{ID: cid, Step: "orders", Rec: id, Path: fmt.Sprint(c), Op: OpCreate, Meth: "POST", URL: "$" + rid + "/ORDERITEMS_SUBFORM", Nav: "ORDERITEMS_SUBFORM", Hash: "0123456789abcdef"})
				res = append(res, SubResult{ID: cid, Status: 201, Key: fmt.Sprint(c + 1)})
			}
			recs = append(recs, Entry{Kind: KindRecord, Record: &RecordEntry{Step: "orders", ID: id, Status: Committed}})
		}
		l, _ := EncodeLine(Entry{Kind: KindIntent, Batch: b, Subs: subs})
		buf.Write(l)
		l, _ = EncodeLine(Entry{Kind: KindOutcome, Batch: b, Results: res})
		buf.Write(l)
		for _, e := range recs {
			l, _ = EncodeLine(e)
			buf.Write(l)
		}
	}
	return buf.Bytes()
}

func TestGeneratedReplay(t *testing.T) {
	t.Parallel()
	data := genJournal(t, 10000)
	st, err := Replay(bytes.NewReader(data))
	must(t, err)
	if c := st.Counts("orders"); c.Committed != 2000 {
		t.Fatalf("%+v", c)
	}
}

// BenchmarkReplay replays 1,000,000 sub-request entries (10,000 batches).
func BenchmarkReplay(b *testing.B) {
	data := genJournal(b, 1000000)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		st, err := Replay(bytes.NewReader(data))
		if err != nil || st.Counts("orders").Committed != 200000 {
			b.Fatal(err)
		}
	}
}

// BenchmarkAppend is the journal's overhead per batch: one intent and one
// outcome of 100 sub-requests, each fsynced.
func BenchmarkAppend(b *testing.B) {
	j, err := Create(filepath.Join(b.TempDir(), "bench.journal"), Header{PlanHash: "x"})
	if err != nil {
		b.Fatal(err)
	}
	defer j.Close()
	subs := make([]Sub, 100)
	res := make([]SubResult, 100)
	for i := range subs {
		subs[i] = Sub{ID: fmt.Sprint("r", i), Step: "orders", Rec: fmt.Sprint(i), Op: OpCreate, Meth: "POST", URL: "ORDERS"}
		res[i] = SubResult{ID: subs[i].ID, Status: 201, Key: "'X'"}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		n := j.NextBatch()
		if err := j.Append(Entry{Kind: KindIntent, Batch: n, Subs: subs}); err != nil {
			b.Fatal(err)
		}
		if err := j.Append(Entry{Kind: KindOutcome, Batch: n, Results: res}); err != nil {
			b.Fatal(err)
		}
	}
}

func FuzzReplay(f *testing.F) {
	data := genJournal(f, 100)
	f.Add(data)
	f.Add(data[:len(data)/2])
	f.Add([]byte("00000000 {}\n"))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, b []byte) {
		st, err := Replay(bytes.NewReader(b))
		if err != nil {
			return
		}
		for _, name := range st.StepNames {
			st.Counts(name)
		}
		st.InDoubtSubs()
		st.Complete()
	})
}

// TestReadHeader: the first line alone, as a command checks the target
// before it sends anything; a journal without a whole header is damaged.
func TestReadHeader(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "run.journal")
	j, err := Create(path, Header{PlanHash: "h", Target: "https://erp/odata/Priority/tabula.ini/demo"})
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Append(Entry{Kind: KindIntent, Batch: 1, Subs: []Sub{{ID: "1", Step: "s", Rec: "1", Op: OpCreate, Meth: "POST", URL: "X"}}}); err != nil {
		t.Fatal(err)
	}
	j.Close()
	hdr, err := ReadHeader(path)
	if err != nil || hdr.Target != "https://erp/odata/Priority/tabula.ini/demo" || hdr.PlanHash != "h" {
		t.Fatalf("%v %+v", err, hdr)
	}
	b, _ := os.ReadFile(path)
	torn := filepath.Join(dir, "torn.journal")
	if err := os.WriteFile(torn, b[:20], 0o600); err != nil {
		t.Fatal(err)
	}
	var ce *CorruptError
	if _, err := ReadHeader(torn); !errors.As(err, &ce) || ce.Line != 1 {
		t.Fatalf("torn header: %v", err)
	}
}
