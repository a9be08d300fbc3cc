package journal

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

// TestLoadReportKeepsTimesAndRows: LoadReport keeps each batch's times,
// calls and writes and a committed record's keyed rows; Load, which apply
// uses, keeps neither; an undone record loses its rows.
func TestLoadReportKeepsTimesAndRows(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 3, 9, 0, 0, 0, time.UTC)
	rows := []KeyedRow{{Loc: "o.csv:2", Header: []string{"No"}, Cells: []string{"1"}},
		{Loc: "o.csv:2", Path: "0", Nav: "ORDERITEMS_SUBFORM", Key: "1"}}
	entries := []Entry{
		{Kind: KindHeader, Header: &Header{PlanHash: "x", User: "dana"}},
		{Kind: KindIntent, Batch: 1, At: new(at), Subs: []Sub{
			{ID: "1", Step: "orders", Rec: "1", Op: OpCreate}, {ID: "2", Step: "orders", Rec: "1", Path: "0", Op: OpCreate},
			{ID: "3", Step: "orders", Rec: "2", Op: OpCreate}}},
		{Kind: KindOutcome, Batch: 1, At: new(at.Add(40 * time.Second)), Calls: 2, Throttled: 1, WaitMS: 30000,
			Results: []SubResult{{ID: "1", Status: 201, Key: "'SO1'"}, {ID: "2", Status: 201, Key: "1"}, {ID: "3", Status: 400, Error: "no"}}},
		{Kind: KindRecord, Record: &RecordEntry{Step: "orders", ID: "1", Status: Committed, Key: "'SO1'", Keyed: rows}},
		{Kind: KindRecord, Record: &RecordEntry{Step: "orders", ID: "2", Status: Failed}},
		// A journal from before times were recorded: zero times, no calls.
		{Kind: KindIntent, Batch: 2, Subs: []Sub{{ID: "1", Step: "orders", Rec: "1", Op: OpUndoDelete}}},
		{Kind: KindOutcome, Batch: 2, Results: []SubResult{{ID: "1", Status: 204}}},
		{Kind: KindRecord, Record: &RecordEntry{Step: "orders", ID: "1", Status: Committed, Undo: true}},
	}
	var buf bytes.Buffer
	for i, e := range entries {
		b, err := EncodeLine(e)
		if err != nil {
			t.Fatal(err)
		}
		buf.Write(b)
		if i == 4 {
			// The state before undo: rows kept.
			path, st := loadReport(t, buf.Bytes())
			if got := st.Record("orders", "1").Keyed; !reflect.DeepEqual(got, rows) {
				t.Errorf("rows %+v, want %+v", got, rows)
			}
			plain, err := Load(path)
			if err != nil {
				t.Fatal(err)
			}
			if plain.Record("orders", "1").Keyed != nil || plain.Batches != nil {
				t.Error("Load keeps what only reports need")
			}
		}
	}
	_, st := loadReport(t, buf.Bytes())
	want := []BatchCall{
		{Batch: 1, Sent: at, Answered: at.Add(40 * time.Second), Subs: 3, Calls: 2, Throttled: 1, Waited: 30 * time.Second, Metered: 3, Written: 2}, // three sent, two written
		{Batch: 2, Subs: 1, Undo: true, Metered: 1, Written: 1},
	}
	if !reflect.DeepEqual(st.Batches, want) {
		t.Errorf("batches\n%+v\nwant\n%+v", st.Batches, want)
	}
	if r := st.Record("orders", "1"); r.Keyed != nil || !r.Undone {
		t.Errorf("undone record keeps rows %+v", r.Keyed)
	}
	if st.Header.User != "dana" {
		t.Errorf("user %q", st.Header.User)
	}
}

// loadReport writes a journal's lines to a file and loads it for a report.
func loadReport(t *testing.T, lines []byte) (string, *State) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "run.journal")
	if err := os.WriteFile(path, lines, 0o600); err != nil {
		t.Fatal(err)
	}
	st, err := LoadReport(path)
	if err != nil {
		t.Fatal(err)
	}
	return path, st
}

// A deep insert's count of the entities its body carries (nx) survives
// the journal, so that the report counts its API transactions as apply
// did; a call of reads (KindReads) is a call of the run.
func TestNestedAndReadsReplayed(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "j.journal")
	j, err := Create(path, Header{PlanHash: "p", MarksFinish: true})
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 3, 9, 0, 0, 0, time.UTC)
	must(t, j.Append(Entry{Kind: KindIntent, Batch: 1, At: new(at), Subs: []Sub{{ID: "1", Step: "orders", Rec: "O1", Op: OpCreate, Meth: "POST", URL: "ORDERS", Nested: 4}}}))
	must(t, j.Append(Entry{Kind: KindOutcome, Batch: 1, At: new(at), Calls: 1, Results: []SubResult{{ID: "1", Status: 201, Key: "'SO1'"}}}))
	must(t, j.Append(Entry{Kind: KindReads, At: new(at), Calls: 2, Gets: 40}))
	must(t, j.Close())
	st, err := LoadReport(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Batches) != 2 || st.Batches[0].Metered != 5 || st.Batches[0].Written != 5 || !st.Batches[1].Read || st.Batches[1].Subs != 40 || st.Batches[1].Made() != 2 {
		t.Errorf("batches %+v", st.Batches)
	}
}

// The totals verify records are read back, the last one counting, by the
// replay every command and the run report use; they change nothing else.
func TestTotalsRecorded(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "run.journal")
	writeRun(t, path)
	before, err := Load(path)
	must(t, err)
	first, second := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC), time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	for _, at := range []time.Time{first, second} {
		j, _, err := Open(path)
		must(t, err)
		target := "31.5"
		if at == second {
			target = "36.5"
		}
		must(t, j.Append(Entry{Kind: KindTotals, At: new(at), Totals: &Totals{Rows: []TotalRow{
			{Step: "orders", Name: "quantity", Expr: "sum(ORDERITEMS_SUBFORM.TQUANT)", Source: "31.5", Sent: "31.5", Target: target},
			{Step: "orders", Name: "amount", Expr: "sum(ORDERITEMS_SUBFORM.PRICE) by ORDERITEMS_SUBFORM.ICODE", By: "ORDERITEMS_SUBFORM.ICODE", Group: "USD", Source: "1", Sent: "1", Target: "1"},
		}}}))
		must(t, j.Close())
	}
	for name, load := range map[string]func(string) (*State, error){"Load": Load, "LoadReport": LoadReport} {
		st, err := load(path)
		must(t, err)
		if st.Totals == nil || !st.TotalsAt.Equal(second) || len(st.Totals.Rows) != 2 || st.Totals.Rows[0].Target != "36.5" || st.Totals.Rows[1].Group != "USD" {
			t.Errorf("%s: totals %+v at %v, want the second", name, st.Totals, st.TotalsAt)
		}
		for _, step := range []string{"customers", "orders"} {
			if st.Complete() != before.Complete() || st.Counts(step) != before.Counts(step) {
				t.Errorf("%s: the totals changed the run: complete %v, %s %+v", name, st.Complete(), step, st.Counts(step))
			}
		}
	}
}
