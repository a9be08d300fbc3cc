package executor

import (
	"testing"

	"github.com/migrate-tool/migrate/plan"
	"github.com/migrate-tool/migrate/transform"
)

// Written again, the mapping keeps every target and confirmation, notes
// what is new and keeps what the sources no longer give.
func TestMappingMerge(t *testing.T) {
	t.Parallel()
	p := &plan.Plan{Maps: []*plan.ValueMap{
		{Name: "units", File: "m.csv"},
		{Name: "colours", Entries: []plan.MapEntry{{Source: "red", Target: "R"}}},
	}}
	values := []MapValue{
		{Map: "colours", Value: "red", Count: 1, Cells: []string{"p.csv:2"}},
		{Map: "units", Value: "kg", Count: 2, Cells: []string{"p.csv:2", "p.csv:4"}},
		{Map: "units", Value: "ltr", Count: 1, Cells: []string{"p.csv:3"}},
		{Map: "colours", Value: "blue", Count: 1, Cells: []string{"p.csv:3"}},
	}
	old := []transform.MapRow{
		{Map: "units", Source: "kg", Count: 9, Cells: "x", Target: "KGM", Confirmed: true},
		{Map: "units", Source: "box", Target: "BX"},
		{Map: "gone", Source: "a", Target: "A", Confirmed: true},
	}
	row := func(m, src string, n int, cells, target string, ok bool, note string) MappingRow {
		return MappingRow{MapRow: transform.MapRow{Map: m, Source: src, Count: n, Cells: cells, Target: target, Confirmed: ok}, Note: note}
	}
	tests := []struct {
		name   string
		old    []transform.MapRow
		before bool
		codes  map[string][]string
		want   []MappingRow
	}{
		{"first", nil, false, nil, []MappingRow{
			row("units", "kg", 2, "p.csv:2, p.csv:4", "KG", false, ""),
			row("units", "ltr", 1, "p.csv:3", "LTR", false, ""),
			row("colours", "red", 1, "p.csv:2", "R", true, NotePlan),
			row("colours", "blue", 1, "p.csv:3", "BLUE", false, ""),
		}},
		{"codes", nil, false, map[string][]string{"units": {"KG", "LTRS", "EA"}}, []MappingRow{
			row("units", "kg", 2, "p.csv:2, p.csv:4", "KG", false, ""),
			row("units", "ltr", 1, "p.csv:3", "LTRS", false, ""),
			row("colours", "red", 1, "p.csv:2", "R", true, NotePlan),
			row("colours", "blue", 1, "p.csv:3", "BLUE", false, ""),
		}},
		{"again", old, true, nil, []MappingRow{
			row("units", "kg", 2, "p.csv:2, p.csv:4", "KGM", true, ""),
			row("units", "ltr", 1, "p.csv:3", "LTR", false, NoteNew),
			row("colours", "red", 1, "p.csv:2", "R", true, NotePlan),
			row("colours", "blue", 1, "p.csv:3", "BLUE", false, NoteNew),
			row("units", "box", 0, "", "BX", false, NoteGone),
			row("gone", "a", 0, "", "A", true, NoteUnknown),
		}},
		// The file before says red is X, unconfirmed: the plan's inline map
		// is what the load uses, so the file says so.
		{"inline over the file", []transform.MapRow{{Map: "colours", Source: "red", Target: "X"}}, true, nil, []MappingRow{
			row("units", "kg", 2, "p.csv:2, p.csv:4", "KG", false, NoteNew),
			row("units", "ltr", 1, "p.csv:3", "LTR", false, NoteNew),
			row("colours", "red", 1, "p.csv:2", "R", true, NotePlan),
			row("colours", "blue", 1, "p.csv:3", "BLUE", false, NoteNew),
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := Mapping(p, values, tt.old, tt.before, tt.codes)
			if len(got) != len(tt.want) {
				t.Fatalf("%d rows, want %d: %+v", len(got), len(tt.want), got)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Errorf("row %d = %+v\nwant     %+v", i, got[i], tt.want[i])
				}
			}
		})
	}
}
