package journal

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/migrate-tool/migrate/internal/golden"
)

// compatText holds texts json.Marshal escapes or replaces: markup, quotes
// and backslashes, controls, Hebrew, a line separator, a byte that is not
// UTF-8.
const compatText = "O'Neil & Co <b> \"q\" \\ tab\t שלום \u2028 bad \xff"

// everyKind is one run's journal holding every kind of entry, with every
// field that a run writes, the texts json.Marshal escapes and raw values
// it compacts: testdata/every-kind.journal is what the journal wrote of it
// when its lines were encoded by hand, and what it writes now must be
// byte for byte the same (a line's hash chains the next, and a resume
// appends to journals written before).
func everyKind(t *testing.T, path string) {
	t.Helper()
	at := time.Date(2026, 11, 27, 9, 1, 2, 345678900, time.UTC)
	h := testHeader()
	h.Sources["b.xlsx"] = "02"
	h.User, h.Dialect, h.MarksFinish = "ana", "odata", true
	h.Steps[1].Match = []string{"CUSTNAME", "DUEDATE"}
	j, err := Create(path, h)
	must(t, err)
	raw := json.RawMessage(`{"A": "<x>",  "B":[1, 2.50,{"c":null}], "D":"é\u00e9"}`)
	must(t, j.Append(Entry{Kind: KindRun, Run: &Run{Limit: 5, Steps: []string{"customers", "orders"}, Delta: true}}))
	must(t, j.Append(Entry{Kind: KindWatermark, Mark: &Watermark{Step: "orders", Field: "ORD", Value: "12"}}))
	must(t, j.Append(Entry{Kind: KindWatermark, Mark: &Watermark{Step: "customers", Field: "CUST"}}))
	b := j.NextBatch()
	must(t, j.Append(Entry{Kind: KindIntent, Batch: b, At: new(at), Subs: []Sub{
		{ID: "r1", Step: "customers", Rec: compatText, Op: OpCreate, Meth: "POST", URL: "CUSTOMERS", Hash: "ab12", Key: "'C1'",
			Match: json.RawMessage(`{"CUSTNAME":"C1"}`), RowHash: "rh1"},
		{ID: "r2", Step: "orders", Rec: "O1", Op: OpCreate, Meth: "POST", URL: "ORDERS", Hash: "cd34",
			Lines: json.RawMessage(`{"ORDERITEMS_SUBFORM":[{"PARTNAME":"P1"},{}]}`), Texts: json.RawMessage(`{"2":{"ORDERSTEXT_SUBFORM":{"TEXT":"<p>fast</p>"}}}`), Nested: 3},
		{ID: "r3", Step: "orders", Rec: "O0", Path: "0.1", Op: OpPatch, Meth: "PATCH", URL: "ORDERS('SO0')/ORDERITEMS_SUBFORM(2)", Nav: "ORDERITEMS_SUBFORM", Line: "2",
			Before: raw, Match: json.RawMessage(`{"QUANT":3}`)},
		{ID: "r4", Step: "orders", Rec: "O0", Op: OpRead, Meth: "GET", URL: "ORDERS('SO0')"},
		{ID: "r5", Step: "orders", Rec: "O0", Path: "1", Op: OpDelete, Meth: "DELETE", URL: "ORDERS('SO0')/ORDERITEMS_SUBFORM(3)", Line: "3", Before: json.RawMessage(`{"KLINE":3}`)},
	}}))
	must(t, j.Append(Entry{Kind: KindOutcome, Batch: b, At: new(at.Add(time.Second)), Calls: 3, Throttled: 2, WaitMS: 61500, Results: []SubResult{
		{ID: "r1", Status: 201, Key: "'C1'", Location: "CUSTOMERS('C1')", Filled: json.RawMessage(`{"CUSTDES": "Acme &amp;"}`)},
		{ID: "r2", Status: 201, Key: "'SO1'"},
		{ID: "r3", Status: 200},
		{ID: "r4", Status: 200},
		{ID: "r5", Status: 400, Error: compatText},
	}}))
	kids := EncodeKids([]WroteKid{{Path: "0", Nav: "ORDERITEMS_SUBFORM", Key: "1", Wrote: json.RawMessage(`{"PARTNAME":"P1"}`), Filled: json.RawMessage(`{"PRICE":2}`), Held: json.RawMessage(`{"QUANT":4}`), Hash: "k1"},
		{Path: "2", Nav: "ORDERSTEXT_SUBFORM", Single: true, Hash: "t<1>"}})
	must(t, j.Append(
		Entry{Kind: KindRecord, Record: &RecordEntry{Step: "customers", ID: compatText, Status: Committed, Loc: "a.csv:2", Key: "'C1'", RowHash: "rh1",
			Keyed: []KeyedRow{{Loc: "a.csv:2", Header: []string{"No", compatText}, Cells: []string{"C1", ""}}}, SrcHash: "s1",
			Held: json.RawMessage(`{"PHONE":"1"}`), Wrote: raw, Filled: json.RawMessage(`{"CUSTDES":"Acme"}`)}},
		Entry{Kind: KindRecord, Record: &RecordEntry{Step: "orders", ID: "O1", Status: Committed, Key: "'SO1'", Carried: 3,
			Keyed: []KeyedRow{{Loc: "o.csv:2", Header: []string{"No"}, Cells: []string{"O1"}}, {Loc: "o.csv:2", Path: "0", Nav: "ORDERITEMS_SUBFORM", Key: "1"}},
			Wrote: json.RawMessage(`{"CUSTNAME":"C1"}`), LinesHash: "lh1", WroteKids: kids}},
		Entry{Kind: KindRecord, Record: &RecordEntry{Step: "orders", ID: "O0", Status: Failed, Loc: "o.csv:4", Partly: "ORDERS('SO0') patched with 1 of 2 lines",
			Errors: []Problem{{Cell: "o.csv:4", Field: "PARTNAME", Value: "X<1>", Plan: "plan.yaml:31:9", Message: compatText}, {Message: "second"}},
			Row:    &Row{Header: []string{"No", "Part"}, Cells: []string{"O0", "X<1>"}, Loc: "o.csv:4"},
			Rows:   []Row{{Header: []string{"No"}, Cells: []string{"O0"}}, {Header: []string{"No"}, Cells: []string{"O0b"}, Loc: "o.csv:5"}}}},
		Entry{Kind: KindRecord, Record: &RecordEntry{Step: "orders", ID: "o.csv:9", Status: Waived, Reason: "the \"total\" line"}},
	))
	must(t, j.Append(Entry{Kind: KindReads, At: new(at.Add(2 * time.Second)), Gets: 4}))
	must(t, j.Append(Entry{Kind: KindDone, Done: "customers", Conflicts: []Conflict{
		{ID: compatText, Key: "'C1'", Field: "PHONE", Ours: json.RawMessage(`"1"`), Theirs: json.RawMessage(`"9"`), Now: json.RawMessage(`"2"`)},
		{ID: "C2", Key: "'C2'", Field: "TEXT", Line: "CUSTOMERSTEXT_SUBFORM", Text: true, Ours: json.RawMessage(`"a"`), Now: json.RawMessage(`"<b>"`)}}},
		Entry{Kind: KindDone, Done: "orders", Gone: []string{"o.csv:9", "o.csv:10"}}))
	b = j.NextBatch()
	must(t, j.Append(Entry{Kind: KindIntent, Batch: b, At: new(time.Date(2026, 11, 27, 11, 0, 0, 0, time.FixedZone("IL", 7200))), Subs: []Sub{
		{ID: "u1", Step: "orders", Rec: "O1", Path: "0", Op: OpUndoDelete, Meth: "DELETE", URL: "ORDERS('SO1')/ORDERITEMS_SUBFORM(1)", Line: "1"},
		{ID: "u2", Step: "orders", Rec: "O0", Path: "0.1", Op: OpUndoPatch, Meth: "PATCH", URL: "ORDERS('SO0')/ORDERITEMS_SUBFORM(2)", Line: "2", Match: raw},
		{ID: "u3", Step: "orders", Rec: "O0", Path: "1", Op: OpUndoCreate, Meth: "POST", URL: "ORDERS('SO0')/ORDERITEMS_SUBFORM", Nav: "ORDERITEMS_SUBFORM", Line: "3",
			Before: json.RawMessage(`{"KLINE":3}`)},
	}}))
	must(t, j.Append(Entry{Kind: KindOutcome, Batch: b, InDoubt: "timeout after 30s"}))
	must(t, j.Append(Entry{Kind: KindOutcome, Batch: b, Results: []SubResult{{ID: "u1", Status: 204}, {ID: "u2", Status: 200, By: "user"}, {ID: "u3", Status: -1}}}))
	must(t, j.Append(Entry{Kind: KindRecord, Record: &RecordEntry{Step: "orders", ID: "O1", Status: Committed, Undo: true}}))
	must(t, j.Append(Entry{Kind: KindAccept, Accept: &Accepted{PlanHash: "def", Sources: map[string]string{"b.xlsx": "03", "a.csv": "04"}}}))
	must(t, j.Append(Entry{Kind: KindTotals, At: new(at), Totals: &Totals{Rows: []TotalRow{
		{Step: "orders", Name: "lines", Expr: "count(ORDERITEMS)", Source: "4", Sent: "4", Target: "4"},
		{Step: "orders", Name: "amount", Expr: "sum(PRICE)", By: "CUSTNAME", Group: "C<1>", Source: "2.5", Sent: "2.5", Target: "2.50"}}}}))
	must(t, j.Append(Entry{Kind: KindFinished, At: new(at.Add(3 * time.Second))}))
	must(t, j.Close())
}

// TestJournalBytes: a journal of every kind of entry is written byte for
// byte as it was when the lines were encoded by hand (the golden file was
// written then).
func TestJournalBytes(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "run.journal")
	everyKind(t, path)
	b, err := os.ReadFile(path)
	must(t, err)
	golden.Check(t, "testdata/every-kind.journal", b)
}

// TestOldJournalReplays: the journal written by the hand encoder still
// replays, its chain holds, and every line decoded and encoded again is
// the line on disk.
func TestOldJournalReplays(t *testing.T) {
	t.Parallel()
	const path = "testdata/every-kind.journal"
	b, err := os.ReadFile(path)
	must(t, err)
	lines := bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n"))
	c, err := CheckChainFile(path)
	must(t, err)
	if !c.Intact() || c.Lines != len(lines) || c.Lines < 20 {
		t.Fatalf("chain %+v of %d lines", c, len(lines))
	}
	// What replay makes of it, as it did when the lines were decoded by
	// hand: the report's state (keyed rows, batches, run times) and a
	// resume's.
	var states []byte
	for _, load := range []func(string) (*State, error){LoadReport, Load} {
		st, err := load(path)
		must(t, err)
		js, err := json.MarshalIndent(st, "", " ")
		must(t, err)
		states = append(append(states, js...), '\n')
	}
	golden.Check(t, "testdata/every-kind.state.json", states)
	for i, l := range lines {
		if bytes.Contains(l, []byte(`\ufffd`)) {
			// json.Marshal writes a byte that is not UTF-8 as \ufffd, and
			// the rune it decodes to as itself: no codec gives such a
			// line back (TestJournalBytes holds its first writing).
			continue
		}
		var e Entry
		if err := json.Unmarshal(l[9:], &e); err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		again, err := EncodeLine(e)
		must(t, err)
		if !bytes.Equal(again[:len(again)-1], l) {
			t.Errorf("line %d encoded again:\n%s\non disk:\n%s", i+1, again, l)
		}
	}
}
