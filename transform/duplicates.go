package transform

import (
	"fmt"
	"hash/maphash"
	"strings"

	"github.com/migrate-tool/migrate/source"
)

// seenKeys remembers the entity keys (or the ids) that a step's rows have
// given, so that a second row with the same one is refused before anything
// is sent: the server would refuse it (409) and the journal, which files
// records by identity, would call the first, committed record failed.
//
// Memory: a key is kept as a 128-bit hash and the line of its first row
// (the step's rows all come from one file and sheet): with the map's
// overhead about 56 bytes a key (BenchmarkSeenKeys). Past max keys in
// memory, they go to sorted runs on disk (keyspill.go), which keep under a
// byte a key in memory. Two different keys share a hash with odds of
// about 1 in 10^26 at a million keys.
type seenKeys struct {
	seeds  [2]maphash.Seed
	lines  map[[2]uint64]uint32 // a sheet has at most 1,048,576 rows; a CSV file fewer than 4 billion lines
	max    int                  // keys the map may hold before they go to disk; 0: no limit
	budget int64                // bytes the map and the runs' filters may take together
	disk   *keyRuns
}

// seenKeyBytes is what a key costs in seenKeys' map.
const seenKeyBytes = 56

// newSeenKeys keeps up to budget bytes of keys in memory (0: no limit).
func newSeenKeys(budget int64) *seenKeys {
	s := &seenKeys{seeds: [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}, lines: make(map[[2]uint64]uint32)}
	if budget > 0 {
		s.budget = budget
		s.max = max(1024, int(budget/seenKeyBytes))
	}
	return s
}

// mapShare is the keys the map may hold once runs are on disk: what their
// filters and indexes leave of the budget, but never under a quarter of it
// (smaller runs would only mean more of them to merge and look in).
func (s *seenKeys) mapShare() int {
	left := max(s.budget/4, s.budget-s.disk.memBytes())
	return max(1024, int(left/seenKeyBytes))
}

// first records that the row at line gives key and returns the line of an
// earlier row that gave it. An error is the temporary file's.
func (s *seenKeys) first(key string, line int) (int, bool, error) {
	h := [2]uint64{maphash.String(s.seeds[0], key), maphash.String(s.seeds[1], key)}
	if prev, ok := s.lines[h]; ok {
		return int(prev), true, nil
	}
	if s.disk != nil {
		if prev, ok, err := s.disk.find(h); err != nil || ok {
			return int(prev), ok, err
		}
	}
	s.lines[h] = uint32(line)
	if s.max > 0 && len(s.lines) >= s.max {
		if s.disk == nil {
			s.disk = &keyRuns{}
		}
		if err := s.disk.add(s.lines); err != nil {
			return 0, false, err
		}
		if s.max = s.mapShare(); s.max < len(s.lines) {
			s.lines = make(map[[2]uint64]uint32, s.max) // smaller: let the old buckets go
		} else {
			clear(s.lines) // its buckets are used again
		}
	}
	return 0, false, nil
}

// close removes the keys' temporary files.
func (s *seenKeys) close() {
	if s != nil {
		s.disk.close()
	}
}

// duplicate checks a record's entity key and id against the step's earlier
// rows: a row error naming both rows, or nil. A key whose fields did not
// all come out (a field in error, an empty cell) is not checked: that row
// is refused for its own reasons. hasID says the id expression gave a value.
func (r *run) duplicate(rec *Record, row source.Row, hasID bool) *RowError {
	st := r.st
	if key, ok := r.keyText(rec); ok {
		if r.seenKeys == nil {
			r.seenKeys = newSeenKeys(r.p.memory() / spillShare)
		}
		prev, dup, err := r.seenKeys.first(key, row.Loc.Line)
		if err != nil {
			r.fatal = fmt.Errorf("step %s: %w", st.name, err)
			return nil
		}
		if dup {
			fl := st.field(st.key[0])
			column := ""
			if fl != nil {
				column = fl.expr.column
			}
			verb := "comes"
			if len(st.key) > 1 {
				verb = "come"
			}
			e := r.rowError(row, column, fl, fmt.Sprintf("%s already %s from %s; each record of a step needs a key of its own", r.keyShown(rec), verb, earlier(row, column, prev)))
			e.Value = valueText(rec.Fields[st.key[0]])
			return e
		}
	}
	if hasID {
		if r.seenIDs == nil {
			r.seenIDs = newSeenKeys(r.p.memory() / spillShare)
		}
		prev, dup, err := r.seenIDs.first(rec.ID, row.Loc.Line)
		if err != nil {
			r.fatal = fmt.Errorf("step %s: %w", st.name, err)
			return nil
		}
		if dup {
			e := r.exprError(row, st.id, fmt.Sprintf("id %q already comes from %s; each record of a step needs an id of its own", rec.ID, earlier(row, "", prev)))
			e.Value = rec.ID
			return e
		}
	}
	return nil
}

// keyText is the record's entity key as one string, false when the step
// has no key or a key field has no value.
func (r *run) keyText(rec *Record) (string, bool) {
	key := r.st.key
	if len(key) == 0 {
		return "", false
	}
	var b strings.Builder
	for i, name := range key {
		v := rec.Fields[name]
		t, ok := asText(v)
		if v == nil || !ok || t == "" {
			return "", false
		}
		if len(key) == 1 {
			return t, true
		}
		if i > 0 {
			b.WriteByte(0)
		}
		b.WriteString(t)
	}
	return b.String(), true
}

// keyShown is the record's key as a message shows it: CUSTNAME "C001", or
// IVNUM "I1", IVTYPE "A".
func (r *run) keyShown(rec *Record) string {
	parts := make([]string, len(r.st.key))
	for i, name := range r.st.key {
		t, _ := asText(rec.Fields[name])
		parts[i] = name + " " + quote(t)
	}
	return strings.Join(parts, ", ")
}

// earlier is the place of the step's earlier row at line: the same cell of
// it in a workbook (customers.xlsx!Customers!A3), its line in a CSV file.
func earlier(row source.Row, column string, line int) string {
	prev := source.Row{Loc: row.Loc, Header: row.Header}
	prev.Loc.Line = line
	if column == "" {
		return prev.Loc.String()
	}
	return prev.CellRef(column)
}
