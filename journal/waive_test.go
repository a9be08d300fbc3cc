package journal

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWaive: a waived failed record (one the user closed because it will
// never load) is counted as waived, not
// failed, keeps its rows and problems and its reason, leaves a finished
// run finished and complete, and reads the same from the log, from the
// index and from the live state of a journal being written.
func TestWaive(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "run.journal")
	h := testHeader()
	h.MarksFinish = true
	j, err := CreateIndexed(path, h)
	must(t, err)
	failed := &RecordEntry{Step: "orders", ID: "orders.csv:9", Status: Failed, Loc: "orders.csv:9",
		Errors: []Problem{{Cell: "orders.csv:9", Message: "no customer TOTAL"}}, Row: &Row{Header: []string{"No"}, Cells: []string{"TOTAL"}}}
	must(t, j.Append(Entry{Kind: KindRun, Run: &Run{}},
		Entry{Kind: KindRecord, Record: &RecordEntry{Step: "customers", ID: "C1", Status: Committed}},
		Entry{Kind: KindRecord, Record: failed},
		Entry{Kind: KindDone, Done: "customers"}, Entry{Kind: KindDone, Done: "orders"}, Entry{Kind: KindFinished}))
	must(t, j.Close())
	if st, err := Load(path); err != nil || st.Complete() {
		t.Fatalf("before the waive: complete %v, %v", st.Complete(), err)
	}
	j, _, err = OpenIndexed(path)
	must(t, err)
	must(t, j.Append(Entry{Kind: KindRecord, Record: &RecordEntry{Step: "orders", ID: "orders.csv:9", Status: Waived, Reason: "the export's total line"}}))
	live := snapshot(t, j)
	must(t, j.Close())
	check := func(name string, st *State) {
		t.Helper()
		if got := st.Counts("orders"); got != (Counts{Waived: 1}) {
			t.Errorf("%s: orders %+v, want one waived", name, got)
		}
		if !st.Finished() || !st.Complete() {
			t.Errorf("%s: finished %v, complete %v; want both", name, st.Finished(), st.Complete())
		}
		r := st.Record("orders", "orders.csv:9")
		if r == nil || r.Status() != Waived || r.Reason != "the export's total line" || r.Row == nil || r.Row.Cells[0] != "TOTAL" || len(r.Errors) != 1 {
			t.Errorf("%s: the waived record is %+v", name, r)
		}
	}
	full, err := Load(path)
	must(t, err)
	check("log", full)
	check("live", live)
	lean, err := loadIndexed(t, path)
	must(t, err)
	check("index", lean)
	must(t, os.Remove(IndexPath(path)))
	lean, err = loadIndexed(t, path)
	must(t, err)
	check("index rebuilt", lean)
}

// TestAccept: an accepted plan and sources replace the header's hashes,
// from the log and from the index alike, so that --allow-plan-change is asked
// for once, not on every later run.
func TestAccept(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "run.journal")
	j, err := CreateIndexed(path, testHeader())
	must(t, err)
	must(t, j.Append(Entry{Kind: KindAccept, Accept: &Accepted{PlanHash: "def", Sources: map[string]string{"a.csv": "02"}}}))
	must(t, j.Close())
	for name, load := range map[string]func(string) (*State, error){"log": Load, "index": LoadIndexed} {
		st, err := load(path)
		must(t, err)
		if st.Header.PlanHash != "def" || st.Header.Sources["a.csv"] != "02" || st.Header.Plan != "demo" {
			t.Errorf("%s: header %+v, want the accepted hashes", name, st.Header)
		}
	}
	// A last line that is no valid entry is ignored as a torn one is.
	st, err := Replay(strings.NewReader(mustLine(t, Entry{Kind: KindHeader, Header: &Header{PlanHash: "x"}}) + mustLine(t, Entry{Kind: KindAccept, Accept: &Accepted{}})))
	if err != nil || !st.Torn || st.Header.PlanHash != "x" {
		t.Errorf("an accept without a plan hash: %v, torn %v, plan hash %q", err, st.Torn, st.Header.PlanHash)
	}
}

func mustLine(t *testing.T, e Entry) string {
	t.Helper()
	b, err := EncodeLine(e)
	must(t, err)
	return string(b)
}

// TestSrcHash: a committed record's source hash is kept by the log, the
// index and the live state alike, so a resume can tell its rows changed.
func TestSrcHash(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "run.journal")
	j, err := CreateIndexed(path, testHeader())
	must(t, err)
	must(t, j.Append(Entry{Kind: KindRecord, Record: &RecordEntry{Step: "customers", ID: "C1", Status: Committed, Key: "'C1'", SrcHash: "5ca1ab1e"}}))
	live := snapshot(t, j)
	must(t, j.Close())
	full, err := Load(path)
	must(t, err)
	lean, err := loadIndexed(t, path) // from the index Close wrote
	must(t, err)
	for name, st := range map[string]*State{"live": live, "log": full, "index": lean} {
		if r := st.Record("customers", "C1"); r == nil || r.SrcHash != "5ca1ab1e" {
			t.Errorf("%s: %+v", name, r)
		}
	}
}
