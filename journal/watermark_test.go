package journal

import (
	"path/filepath"
	"testing"
)

// A watermark bounds the batches journaled after it; a record identified
// by its location keeps its row's hash from the intent and from its record
// entry; a decision of the user is an outcome like any other.
func TestWatermarksRowHashesAndDecisions(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "run.journal")
	writeRun(t, path) // batches 1..3; batch 3 (orders O2) in doubt
	j, _, err := Open(path)
	must(t, err)
	must(t, j.Append(Entry{Kind: KindWatermark, Mark: &Watermark{Step: "orders", Field: "ORD", Value: "41"}}))
	b := j.NextBatch()
	must(t, j.Append(Entry{Kind: KindIntent, Batch: b, Subs: []Sub{
		{ID: "r1", Step: "orders", Rec: "o.csv:9", Op: OpCreate, Meth: "POST", URL: "ORDERS", RowHash: "h9"},
	}}))
	must(t, j.Append(Entry{Kind: KindOutcome, Batch: b, Results: []SubResult{{ID: "r1", Status: 201, Key: "'SO9'"}}},
		Entry{Kind: KindRecord, Record: &RecordEntry{Step: "orders", ID: "o.csv:9", Status: Committed, Key: "'SO9'", RowHash: "h9"}}))
	must(t, j.Append(Entry{Kind: KindWatermark, Mark: &Watermark{Step: "orders", Field: "ORD"}}))
	// The user decides the order in doubt of batch 3.
	must(t, j.Append(Entry{Kind: KindOutcome, Batch: 3, Results: []SubResult{{ID: "r1", Status: 201, Key: "'SO7'", By: "user"}}}))
	must(t, j.Close())

	st, err := Load(path)
	must(t, err)
	tests := []struct {
		step  string
		batch int
		want  string
		ok    bool
	}{
		{"orders", 3, "", false}, // before any watermark: an old journal's behaviour
		{"orders", b, "41", true},
		{"orders", b + 1, "", true}, // the second: the entity was empty then
		{"customers", b, "", false},
	}
	for _, tt := range tests {
		w, ok := st.WatermarkFor(tt.step, tt.batch)
		if ok != tt.ok || w.Value != tt.want || ok && w.Field != "ORD" {
			t.Errorf("WatermarkFor(%s, %d) = %+v, %v; want %q, %v", tt.step, tt.batch, w, ok, tt.want, tt.ok)
		}
	}
	if r := st.Record("orders", "o.csv:9"); r.RowHash != "h9" || r.Status() != Committed {
		t.Errorf("o.csv:9: hash %q, %v", r.RowHash, r.Status())
	}
	if o2 := st.Record("orders", "O2"); o2.Status() == InDoubt || o2.Key != "'SO7'" || !o2.Created || o2.Subs[""].ResultKey != "'SO7'" {
		t.Errorf("O2 after the user's decision: %v, key %q", o2.Status(), o2.Key)
	}
	if c := st.Clone(); len(c.Marks["orders"]) != 2 {
		t.Errorf("clone lost the watermarks: %+v", c.Marks)
	}
}
