package journal

import (
	"bytes"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// chainedJournal writes a journal of a header and n batches (an intent, an
// outcome and a record each) through Create and Append, and returns its
// lines without their newlines.
func chainedJournal(t *testing.T, n int) (string, [][]byte) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "run.journal")
	j, err := Create(path, Header{PlanHash: "x", Steps: []Step{{Name: "orders", Entity: "ORDERS"}}})
	must(t, err)
	for i := 1; i <= n; i++ {
		b := j.NextBatch()
		id := fmt.Sprint("O", i)
		must(t, j.Append(Entry{Kind: KindIntent, Batch: b, Subs: []Sub{{ID: "r", Step: "orders", Rec: id, Op: OpCreate, Meth: "POST", URL: "ORDERS"}}}))
		must(t, j.Append(Entry{Kind: KindOutcome, Batch: b, Results: []SubResult{{ID: "r", Status: 201, Key: "'" + id + "'"}}},
			Entry{Kind: KindRecord, Record: &RecordEntry{Step: "orders", ID: id, Status: Committed, Key: "'" + id + "'"}}))
	}
	must(t, j.Close())
	return path, readLines(t, path)
}

func readLines(t *testing.T, path string) [][]byte {
	t.Helper()
	data, err := os.ReadFile(path)
	must(t, err)
	return bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
}

func joinLines(lines [][]byte) []byte {
	return append(bytes.Join(lines, []byte("\n")), '\n')
}

// withCRC gives a changed line its checksum again, as someone editing the
// journal on purpose would.
func withCRC(js string) []byte {
	return fmt.Appendf(nil, "%08x %s", crc32.Checksum([]byte(js), castagnoli), js)
}

func TestChainHolds(t *testing.T) {
	t.Parallel()
	path, lines := chainedJournal(t, 5)
	c, err := CheckChainFile(path)
	must(t, err)
	if !c.Intact() || c.Lines != len(lines) || c.Lines != 16 {
		t.Fatalf("a journal as written: %+v (%d lines)", c, len(lines))
	}
	if !bytes.HasPrefix(lines[1][9:], []byte(`{"seq":2,"prev":"`)) {
		t.Errorf("line 2: %s", lines[1])
	}
	// Replay reads the chained lines as before.
	st, err := Load(path)
	must(t, err)
	if got := st.Counts("orders").Committed; got != 5 || !st.Header.Chained {
		t.Errorf("replay: %d committed, chained %v", got, st.Header.Chained)
	}

	// A resumed run chains on from the last line, a torn one cut off.
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	must(t, err)
	_, err = f.WriteString(`1234abcd {"seq":17,"prev":"00`)
	must(t, err)
	f.Close()
	if c, err := CheckChainFile(path); err != nil || !c.Intact() || c.Lines != 16 {
		t.Fatalf("a torn last line: %+v %v", c, err)
	}
	j, _, err := Open(path)
	must(t, err)
	must(t, j.Append(Entry{Kind: KindRun, Run: &Run{}}))
	must(t, j.Close())
	j, _, err = OpenIndexed(path)
	must(t, err)
	must(t, j.Append(Entry{Kind: KindRun, Run: &Run{}}))
	must(t, j.Close())
	c, err = CheckChainFile(path)
	must(t, err)
	if !c.Intact() || c.Lines != 18 {
		t.Fatalf("resumed twice: %+v", c)
	}
	if last := readLines(t, path)[17]; !bytes.Contains(last, []byte(`"seq":18,`)) {
		t.Errorf("the last line: %s", last)
	}
}

// Appends from many goroutines at once (batches completing together) chain
// in the order the lines reach the file.
func TestChainConcurrentAppends(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "run.journal")
	j, err := Create(path, Header{PlanHash: "x"})
	must(t, err)
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 25; i++ {
				id := fmt.Sprint("G", g, "-", i)
				if err := j.AppendUnsynced(Entry{Kind: KindRecord, Record: &RecordEntry{Step: "s", ID: id, Status: Committed}},
					Entry{Kind: KindRecord, Record: &RecordEntry{Step: "s", ID: id + "b", Status: Committed}}); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	must(t, j.Close())
	c, err := CheckChainFile(path)
	must(t, err)
	if !c.Intact() || c.Lines != 1+8*25*2 {
		t.Fatalf("%+v", c)
	}
}

// An older journal, without the chain, is read as ever and said to be
// not chained; a run that resumes it does not begin a chain half-way.
func TestChainOlderJournal(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "old.journal")
	var data []byte
	for _, e := range []Entry{{Kind: KindHeader, Header: &Header{PlanHash: "x"}}, {Kind: KindRun, Run: &Run{}}} {
		l, err := EncodeLine(e)
		must(t, err)
		data = append(data, l...)
	}
	must(t, os.WriteFile(path, data, 0o600))
	j, _, err := Open(path)
	must(t, err)
	must(t, j.Append(Entry{Kind: KindRun, Run: &Run{}}))
	must(t, j.Close())
	c, err := CheckChainFile(path)
	must(t, err)
	if c.Chained || len(c.Breaks) > 0 || c.Intact() || c.Lines != 3 || c.Head == "" {
		t.Fatalf("%+v", c)
	}
	if got := string(readLines(t, path)[2]); strings.Contains(got, "prev") {
		t.Errorf("an unchained journal's new line: %s", got)
	}
}

// Each way of changing a journal after it was written is found, at the
// line it concerns.
func TestChainBreaks(t *testing.T) {
	t.Parallel()
	_, lines := chainedJournal(t, 5) // 16 lines
	edit := func(n int, from, to string) func([][]byte) [][]byte {
		return func(l [][]byte) [][]byte {
			js := string(l[n-1][9:])
			if !strings.Contains(js, from) {
				t.Fatalf("line %d has no %q: %s", n, from, js)
			}
			l[n-1] = withCRC(strings.Replace(js, from, to, 1))
			return l
		}
	}
	tests := []struct {
		name   string
		change func([][]byte) [][]byte
		want   []string // "line N: problem", in order
	}{
		{"a key changed", edit(7, `'O2'`, `'O9'`), []string{"line 7: changed after it was written: line 8"}},
		{"the header's plan hash changed", edit(1, `"plan_hash":"x"`, `"plan_hash":"y"`), []string{"line 1: changed after it was written: line 2"}},
		{"a line changed without its checksum", func(l [][]byte) [][]byte {
			l[5] = bytes.Replace(l[5], []byte("201"), []byte("500"), 1)
			return l
		}, []string{"line 6: damaged"}},
		{"a line removed", func(l [][]byte) [][]byte { return slices.Delete(l, 6, 7) },
			[]string{"line 7: the line before it, written as line 7, was removed"}},
		{"two lines removed", func(l [][]byte) [][]byte { return slices.Delete(l, 3, 5) },
			[]string{"line 4: the line before it, written as line 4, was removed", "line 4: the line before it, written as line 5, was removed"}},
		{"a line copied in", func(l [][]byte) [][]byte { return slices.Insert(l, 9, l[3]) },
			[]string{"line 10: repeats line number 4, which line 4 has"}},
		{"a line of another kind inserted", func(l [][]byte) [][]byte {
			extra, _ := EncodeLine(Entry{Kind: KindRecord, Record: &RecordEntry{Step: "orders", ID: "O9", Status: Committed}})
			return slices.Insert(l, 9, bytes.TrimSuffix(extra, []byte("\n")))
		}, []string{"line 10: carries no chain link"}},
		{"two lines swapped", func(l [][]byte) [][]byte {
			l[4], l[5] = l[5], l[4]
			return l
		}, []string{"line 6: moved: it was written as line 5, before the line now at 5"}},
		{"a line moved down", func(l [][]byte) [][]byte {
			moved := l[2]
			l = slices.Delete(l, 2, 3)
			return slices.Insert(l, 10, moved)
		}, []string{"line 11: moved: it was written as line 3, before the line now at 3"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := CheckChain(bytes.NewReader(joinLines(tt.change(slices.Clone(lines)))))
			must(t, err)
			var got []string
			for _, b := range c.Breaks {
				got = append(got, b.String())
			}
			if len(got) != len(tt.want) {
				t.Fatalf("breaks:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
			for i := range got {
				if !strings.HasPrefix(got[i], tt.want[i]) {
					t.Errorf("break %d: %s\nwant %s...", i, got[i], tt.want[i])
				}
			}
		})
	}
	// The last line changed, or the last lines cut off: the chain holds,
	// its head is another (what evidence records).
	c0, err := CheckChain(bytes.NewReader(joinLines(lines)))
	must(t, err)
	for name, l := range map[string][][]byte{
		"last line changed": edit(16, `'O5'`, `'O6'`)(slices.Clone(lines)),
		"cut short":         lines[:13],
	} {
		c, err := CheckChain(bytes.NewReader(joinLines(l)))
		must(t, err)
		if !c.Intact() || c.Head == c0.Head {
			t.Errorf("%s: %+v, head %s as before", name, c, c0.Head)
		}
	}
}

// BenchmarkChain is the chain's cost: writing a batch's intent, outcome
// and 20 record lines (AppendUnsynced, no fsync: the CPU alone) with the
// chain and without it, and CheckChain's reading speed.
func BenchmarkChain(b *testing.B) {
	subs := make([]Sub, 100)
	res := make([]SubResult, 100)
	recs := make([]Entry, 0, 21)
	for i := range subs {
		subs[i] = Sub{ID: fmt.Sprint("r", i), Step: "orders", Rec: fmt.Sprintf("O%07d", i), Op: OpCreate, Meth: "POST", URL: "ORDERS", Hash: "0123456789abcdef"}
		res[i] = SubResult{ID: subs[i].ID, Status: 201, Key: fmt.Sprintf("'O%07d'", i)}
	}
	recs = append(recs, Entry{Kind: KindOutcome, Results: res})
	for i := 0; i < 20; i++ {
		recs = append(recs, Entry{Kind: KindRecord, Record: &RecordEntry{Step: "orders", ID: fmt.Sprintf("O%07d", i), Status: Committed, Key: "'X'"}})
	}
	var path string
	for _, chained := range []bool{false, true} {
		p := filepath.Join(b.TempDir(), "bench.journal")
		j, err := Create(p, Header{PlanHash: "x"})
		if err != nil {
			b.Fatal(err)
		}
		j.chained = chained
		start := time.Now()
		for i := 0; i < b.N; i++ {
			n := j.NextBatch()
			recs[0].Batch = n
			if err := j.AppendUnsynced(Entry{Kind: KindIntent, Batch: n, Subs: subs}); err != nil {
				b.Fatal(err)
			}
			if err := j.AppendUnsynced(recs...); err != nil {
				b.Fatal(err)
			}
		}
		d := time.Since(start)
		j.Close()
		name := "unchained-us/batch"
		if chained {
			name, path = "chained-us/batch", p
		}
		b.ReportMetric(float64(d.Microseconds())/float64(b.N), name)
	}
	fi, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	c, err := CheckChainFile(path)
	if err != nil || !c.Intact() {
		b.Fatalf("%+v %v", c, err)
	}
	b.ReportMetric(float64(fi.Size())/1e6/time.Since(start).Seconds(), "check-MB/s")
}
