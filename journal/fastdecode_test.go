package journal

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"
)

// TestFastDecodeRecords: record entries (and undo's intents, outcomes with
// filled fields) decode on the fast path exactly as encoding/json decodes
// them; those with errors or a row fall back.
func TestFastDecodeRecords(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		e    Entry
		fast bool
	}{
		{"committed", Entry{Kind: KindRecord, Record: &RecordEntry{Step: "orders", ID: "O1", Status: Committed, Key: "'SO1'"}}, true},
		{"skipped with loc", Entry{Kind: KindRecord, Record: &RecordEntry{Step: "s", ID: "a.csv:3", Status: Skipped, Loc: "a.csv:3"}}, true},
		{"undo", Entry{Kind: KindRecord, Record: &RecordEntry{Step: "s", ID: "x\"y\\z", Status: Committed, Undo: true}}, true},
		{"outcome with filled fields", Entry{Kind: KindOutcome, Batch: 2, Results: []SubResult{{ID: "1", Status: 201, Key: "'SO1'", Filled: json.RawMessage(`{"CDES":"Acme"}`)}}}, true},
		{"re-create of a replaced line", Entry{Kind: KindIntent, Batch: 4, Subs: []Sub{{ID: "1", Step: "s", Rec: "1", Op: OpUndoCreate, Meth: "POST",
			URL: "ORDERS('SO1')/ORDERITEMS_SUBFORM", Nav: "ORDERITEMS_SUBFORM", Line: "2", Before: json.RawMessage(`{"KLINE":2,"PARTNAME":"P1"}`)}}}, true},
		{"failed with errors", Entry{Kind: KindRecord, Record: &RecordEntry{Step: "s", ID: "1", Status: Failed,
			Errors: []Problem{{Cell: "a.csv:2", Message: "bad"}}, Row: &Row{Header: []string{"A"}, Cells: []string{"1"}}}}, false},
		{"waived", Entry{Kind: KindRecord, Record: &RecordEntry{Step: "orders", ID: "orders.csv:9", Status: Waived, Reason: "the \"total\" line"}}, true},
		{"committed with its source hash", Entry{Kind: KindRecord, Record: &RecordEntry{Step: "orders", ID: "O1", Status: Committed, SrcHash: "5ca1ab1e"}}, true},
		{"committed with keyed rows", Entry{Kind: KindRecord, Record: &RecordEntry{Step: "orders", ID: "O1", Status: Committed, Key: "'SO1'",
			Keyed: []KeyedRow{{Loc: "o.csv:2", Header: []string{"No", "שם"}, Cells: []string{"O1", "\"ב\""}},
				{Loc: "o.csv:2", Path: "0", Nav: "ORDERITEMS_SUBFORM", Key: "1"},
				{Loc: "o.csv:3", Path: "1", Nav: "ORDERITEMS_SUBFORM", Key: "2", Cells: []string{"O1", ""}}}}}, true},
		{"committed upsert with the fields it found held", Entry{Kind: KindRecord, Record: &RecordEntry{Step: "parts", ID: "P1", Status: Committed, Key: "'P1'",
			Held: json.RawMessage(`{"BARCODE":"111","PARTNAME":"P1"}`)}}, true},
		{"deep insert with its texts", Entry{Kind: KindIntent, Batch: 3, Subs: []Sub{{ID: "1", Step: "orders", Rec: "O1", Op: OpCreate, Meth: "POST", URL: "ORDERS",
			Lines: json.RawMessage(`{"ORDERITEMS_SUBFORM":[{"PARTNAME":"P1"}]}`), Texts: json.RawMessage(`{"1":{"ORDERSTEXT_SUBFORM":{"TEXT":"Deliver fast"}}}`)}}}, true},
		{"intent with its time", Entry{Kind: KindIntent, Batch: 2, At: time.Date(2026, 11, 3, 9, 1, 2, 345e6, time.UTC),
			Subs: []Sub{{ID: "1", Step: "s", Rec: "r", Op: OpCreate, Meth: "POST", URL: "X"}}}, true},
		{"outcome with its calls", Entry{Kind: KindOutcome, Batch: 2, At: time.Date(2026, 11, 3, 9, 1, 3, 0, time.FixedZone("", 7200)),
			Calls: 3, Throttled: 2, WaitMS: 61500, Results: []SubResult{{ID: "1", Status: 201, Key: "'A'"}}}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			line, err := EncodeLine(tc.e)
			if err != nil {
				t.Fatal(err)
			}
			js := line[9 : len(line)-1]
			var fast Entry
			ok := fastDecode(js, &fast)
			if ok != tc.fast {
				t.Fatalf("fast path taken: %v, want %v", ok, tc.fast)
			}
			var slow Entry
			if err := json.Unmarshal(js, &slow); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(slow, tc.e) {
				t.Fatalf("encoding/json gives %+v, want %+v", slow, tc.e)
			}
			if ok && !reflect.DeepEqual(fast, slow) {
				t.Fatalf("fast path gives %+v %+v, encoding/json %+v %+v", fast, fast.Record, slow, slow.Record)
			}
		})
	}
}

// FuzzFastDecode: whatever the fast path accepts, encoding/json accepts
// and decodes to the same entry.
func FuzzFastDecode(f *testing.F) {
	for _, e := range []Entry{
		{Kind: KindRecord, Record: &RecordEntry{Step: "orders", ID: "O1", Status: Committed, Key: "'SO1'", Undo: true}},
		{Kind: KindIntent, Batch: 3, Subs: []Sub{{ID: "r1", Step: "s", Rec: "1", Op: OpPatch, Meth: "PATCH", URL: "X('1')", Before: json.RawMessage(`{"A":1}`)}}},
		{Kind: KindOutcome, Batch: 3, Results: []SubResult{{ID: "r1", Status: 204}}, InDoubt: "timeout"},
		{Kind: KindOutcome, Batch: 4, At: time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC), Calls: 2, Throttled: 1, WaitMS: 500},
		{Kind: KindRecord, Record: &RecordEntry{Step: "s", ID: "1", Status: Committed, Keyed: []KeyedRow{{Loc: "a.csv:2", Key: "3", Header: []string{"A"}, Cells: []string{"x"}}}}},
	} {
		line, _ := EncodeLine(e)
		f.Add(line[9 : len(line)-1])
	}
	f.Fuzz(func(t *testing.T, js []byte) {
		var fast Entry
		if !fastDecode(js, &fast) {
			return
		}
		var slow Entry
		if err := json.Unmarshal(js, &slow); err != nil {
			t.Fatalf("fast path accepted what encoding/json refuses (%v): %q", err, js)
		}
		if !reflect.DeepEqual(fast, slow) {
			t.Fatalf("fast %+v, encoding/json %+v for %q", fast, slow, js)
		}
	})
}
