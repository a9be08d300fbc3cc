package journal

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestFinished: a run is complete only when its last apply finished every
// step, as status reports it: a journal whose writer marks the end and whose
// last apply stopped after step 1 committed everything, step 2 never
// begun, is not complete. Journals written before the mark are read as
// before.
func TestFinished(t *testing.T) {
	t.Parallel()
	intent := func(b int, op OpKind) Entry {
		return Entry{Kind: KindIntent, Batch: b, Subs: []Sub{{ID: "1", Step: "parts", Rec: "P1", Op: op, Meth: "POST", URL: "LOGPART"}}}
	}
	outcome := func(b, status int) Entry {
		return Entry{Kind: KindOutcome, Batch: b, Results: []SubResult{{ID: "1", Status: status, Key: "'P1'"}}}
	}
	committed := Entry{Kind: KindRecord, Record: &RecordEntry{Step: "parts", ID: "P1", Status: Committed, Key: "'P1'"}}
	finished := Entry{Kind: KindFinished}
	sent := []Entry{intent(1, OpCreate), outcome(1, 201), committed}
	undone := []Entry{intent(2, OpUndoDelete), outcome(2, 204), {Kind: KindRecord, Record: &RecordEntry{Step: "parts", ID: "P1", Status: Committed, Undo: true}}}
	cat := func(l ...[]Entry) []Entry {
		var out []Entry
		for _, x := range l {
			out = append(out, x...)
		}
		return out
	}
	for _, c := range []struct {
		name               string
		marks              bool // the header says the writer marks the end
		entries            []Entry
		finished, complete bool
	}{
		{"stopped after step 1", true, sent, false, false},
		{"finished", true, cat(sent, []Entry{finished}), true, true},
		{"begun again after it finished, then stopped", true, cat(sent, []Entry{finished}, []Entry{intent(2, OpCreate)}), false, false},
		{"a record journaled again after it finished", true, cat(sent, []Entry{finished, committed}), false, false},
		// Undo does not begin an apply; its records are as never sent.
		{"undone after it finished", true, cat(sent, []Entry{finished}, undone), true, false},
		{"nothing sent, finished", true, []Entry{finished}, true, true},
		{"written before the mark: taken as finished", false, sent, true, true},
		{"written before the mark, resumed by a migrate that marks it, stopped", false, cat(sent, []Entry{finished}, []Entry{intent(2, OpCreate)}), false, false},
		{"written before the mark, resumed and finished", false, cat(sent, []Entry{intent(2, OpCreate), outcome(2, 201), committed, finished}), true, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := testHeader()
			h.MarksFinish = c.marks
			var buf bytes.Buffer
			for _, e := range append([]Entry{{Kind: KindHeader, Header: &h}}, c.entries...) {
				b, err := EncodeLine(e)
				must(t, err)
				buf.Write(b)
			}
			path := filepath.Join(t.TempDir(), "run.journal")
			must(t, os.WriteFile(path, buf.Bytes(), 0o600))
			st, err := Load(path)
			must(t, err)
			if st.Finished() != c.finished || st.Complete() != c.complete {
				t.Errorf("finished %v, complete %v; want %v, %v", st.Finished(), st.Complete(), c.finished, c.complete)
			}
		})
	}
}
