package journal

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"
)

// appendEntryJSON is a second encoder of what json.Marshal encodes: every
// entry it writes must be json.Marshal's bytes, and what it cannot write
// so it must hand on.

// encodeSamples are entries as a run writes them, with the texts and raw
// values json.Marshal escapes or compacts.
func encodeSamples(text string, raw json.RawMessage) []Entry {
	at := time.Date(2026, 11, 23, 17, 4, 5, 123456789, time.UTC)
	sub := Sub{ID: "1", Step: "orders", Rec: text, Path: "0.1", Op: OpCreate, Meth: "POST", URL: "ORDERS", Hash: "ab12", Key: "'SO1'",
		Nav: "ORDERITEMS_SUBFORM", Line: "3", Before: raw, Match: json.RawMessage(`{"A":"x y","B":1.5}`), RowHash: "rh", Lines: json.RawMessage(`{"L":[{"P":"\"q\""},{}]}`)}
	return []Entry{
		{Kind: KindIntent, Batch: 7, Subs: []Sub{sub, {ID: "2", Step: "s", Rec: "r", Op: OpPatch, Meth: "PATCH", URL: "X('1')", Match: raw}}, At: at},
		{Kind: KindOutcome, Batch: 7, Results: []SubResult{{ID: "1", Status: 201, Key: "'SO1'", Location: "ORDERS('SO1')", Filled: raw}, {ID: "2", Status: 400, Error: text, By: "user"}},
			InDoubt: text, At: at, Calls: 2, Throttled: 1, WaitMS: 1500},
		{Kind: KindRecord, Record: &RecordEntry{Step: "orders", ID: text, Status: Committed, Loc: "orders.csv:2", Key: "'SO1'", Partly: text, Undo: true, RowHash: "h",
			Keyed: []KeyedRow{{Loc: "orders.csv:2", Header: []string{"A", text}, Cells: []string{"1", ""}}, {Loc: "orders.csv:3", Path: "0", Nav: "L", Key: "1"}}, Carried: 5}},
		{Kind: KindRecord, Record: &RecordEntry{Step: "orders", ID: "2", Status: Failed, Errors: []Problem{{Message: text}}}},
		{Kind: KindDone, Done: text},
		{Kind: KindOutcome, Batch: 1, At: time.Date(2026, 1, 1, 0, 0, 0, 0, time.FixedZone("IL", 7200))},
		{Kind: KindOutcome, Batch: 1, At: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)},
		{Kind: KindHeader, Header: &Header{Plan: text}},
		{Kind: KindIntent, Subs: []Sub{}},
	}
}

func checkEncode(t *testing.T, text string, raw []byte) (fast int) {
	for _, e := range encodeSamples(text, raw) {
		want, werr := json.Marshal(&e)
		got, ok := appendEntryJSON([]byte("prefix"), &e)
		if !ok {
			continue
		}
		fast++
		if werr != nil || !bytes.Equal(got[6:], want) || string(got[:6]) != "prefix" {
			t.Fatalf("%+v:\nwrote     %s\nMarshal   %s (%v)", e, got, want, werr)
		}
	}
	return fast
}

func TestAppendEntryJSONAsMarshal(t *testing.T) {
	t.Parallel()
	texts := []string{"", "SO1", "O'Neil & Co", "<b>", `a "q" \ b`, "tab\there", "שלום", "bad \xff utf8", "\u2028", "del\x7f"}
	raws := []string{"", `{"A":1}`, `{"A": 1}`, "{\"A\":\n1}", `{"A":"<"}`, `{"A":"x\u003cy"}`, `{"A":"\"}"}`, `{"A":"é"}`, `{"A":`, `null`, `[1,{"b":[]}]`, `"str"`}
	for _, s := range texts {
		for _, r := range raws {
			checkEncode(t, s, []byte(r))
		}
	}
	// The plain entries a run writes are the fast encoder's own.
	if n := checkEncode(t, "SO1", []byte(`{"A":1}`)); n != 5 {
		t.Errorf("%d plain sample entries written by appendEntryJSON, want 5 (intent, outcome, committed record, done, outcome)", n)
	}
}

func FuzzAppendEntryJSON(f *testing.F) {
	f.Add("SO1", []byte(`{"A":1}`))
	f.Add("<&>", []byte(`{"A": "\u0041"}`))
	f.Fuzz(func(t *testing.T, text string, raw []byte) { checkEncode(t, text, raw) })
}
