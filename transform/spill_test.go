package transform

import (
	"encoding/json"
	"hash/maphash"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/migrate-tool/migrate/plan"
	"github.com/migrate-tool/migrate/source"
)

// TestRecordsSpilledAsInMemory: a grouped step (sorted and unsorted rows,
// skipped and rejected rows, typed cells) and a linked sub-form give the
// same results, in the same order, when their rows pass the memory budget
// at once and go to a temporary file as when they stay in memory; the
// file is gone afterwards. Not parallel: it points TMPDIR at its own folder.
func TestRecordsSpilledAsInMemory(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	day := time.Date(2024, 12, 31, 0, 0, 0, 0, time.UTC)
	grouped := func(t *testing.T) *plan.Plan {
		return &plan.Plan{Dir: t.TempDir(),
			Sources: []*plan.Source{{Name: "lines", File: "lines.xlsx", DecimalSeparator: ","}},
			Steps: []*plan.Step{{Name: "orders", Entity: "ORDERS", Source: "lines", GroupBy: xp("row.OrderNo"),
				When:   xp(`row.Part != "SKIP" ? true : skip()`),
				ID:     xp(`"order " + row.OrderNo`),
				Fields: fields("CUSTNAME", "row.Customer", "CURDATE", "row.Date"),
				Subforms: []*plan.Subform{
					{Name: "ORDERITEMS_SUBFORM", Source: "group",
						Fields: fields("PARTNAME", "row.Part", "TQUANT", "row.Qty", "KLINE", "len(group)")},
					{Name: "ORDERSTEXT_SUBFORM", When: xp(`len(group) > 1`), Fields: fields("TEXT", `join(map(group, .Part), ",")`)},
				}}}}
	}
	lines := func(rows ...[]source.Cell) *memSources {
		return &memSources{make: map[string]func() *memReader{"lines": func() *memReader {
			m := newMem("lines.xlsx", []string{"OrderNo", "Customer", "Date", "Part", "Qty", "Flag"}, rows...)
			m.sheet = "Lines"
			return m
		}}}
	}
	row := func(order, part string, qty source.Cell) []source.Cell {
		return []source.Cell{order, "C" + order, day, part, qty, order == "2"}
	}
	for _, tc := range []struct {
		name    string
		plan    func(*testing.T) *plan.Plan
		step    string
		sources *memSources
	}{
		{"grouped, unsorted", grouped, "orders", lines(
			row("1", "P1", source.Number("2")), row("2", "P9", "1"), row("1", "P2", "1,5"), row("1", "SKIP", "1"),
			row("", "P3", "1"), row("3", "P3", "x"), row("2", "P8", nil), row("4", "P4", source.Number("1E-3")))},
		{"grouped, sorted", grouped, "orders", lines(
			row("1", "P1", "1"), row("1", "P2", "2"), row("2", "P3", "3"), row("3", "P4", "4"), row("3", "P5", "5"))},
		{"linked", func(t *testing.T) *plan.Plan {
			p := customersPlan(t)
			p.Steps[0].Subforms[0].Link.Child = x(`row.CustCode == "C999" ? fail("orphan note") : row.CustCode`)
			return p
		}, "customers", customersSources()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var want, got []byte
			for _, memory := range []int64{0, 1} {
				opts := testOptions()
				opts.Memory = memory
				prog := mustCompile(t, tc.plan(t), demoMetadata(), opts)
				if err := prog.BuildLookups(t.Context(), tc.sources.open); err != nil {
					t.Fatal(err)
				}
				b, err := json.Marshal(collect(t, prog, tc.step, tc.sources, nil))
				if err != nil {
					t.Fatal(err)
				}
				if memory == 0 {
					want = b
				} else {
					got = b
				}
			}
			if !strings.Contains(string(want), `"Fields":{`) {
				t.Fatalf("no record was built: %s", want)
			}
			if string(got) != string(want) {
				t.Errorf("spilled:\n%s\nin memory:\n%s", got, want)
			}
		})
	}
	if left, _ := os.ReadDir(tmp); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

// TestLookupTableCompact: every kind of value a lookup's value expression
// gives comes back as it went in, text from the shared buffer and the rest
// as kept, each with the line it came from.
func TestLookupTableCompact(t *testing.T) {
	t.Parallel()
	day := time.Date(2024, 1, 2, 0, 0, 0, 0, time.UTC)
	tbl := newLookupTable("codes", "error")
	entries := []struct {
		key string
		v   any
	}{{"a", "first"}, {"b", ""}, {"c", nil}, {"d", source.Number("12.50")}, {"e", true}, {"f", day}, {"g", "שלום"}, {"h", int64(7)}}
	for i, e := range entries {
		tbl.add(e.key, e.v, source.Location{File: "codes.xlsx", Sheet: "Codes", Line: 10 + i})
	}
	for i, e := range entries {
		got, ok := tbl.get(e.key)
		if !ok || got != e.v {
			t.Errorf("%s = %#v, %v; want %#v", e.key, got, ok, e.v)
		}
		at, _ := tbl.find(e.key)
		if loc := tbl.loc(at).String(); loc != "codes.xlsx!Codes!"+strconv.Itoa(10+i) {
			t.Errorf("%s from %s", e.key, loc)
		}
	}
	if _, ok := tbl.get("z"); ok {
		t.Error("a key never added was found")
	}
	// A key whose hash an earlier key has (made so here: the slot of
	// "collides" is given to "a"'s entry) is kept on the side and found.
	tbl.index[maphash.String(tbl.seed, "collides")] = tbl.index[maphash.String(tbl.seed, "a")]
	if _, ok := tbl.get("collides"); ok {
		t.Fatal("a key never added was found through another key's hash")
	}
	tbl.add("collides", "second", source.Location{File: "codes.xlsx", Sheet: "Codes", Line: 99})
	for key, want := range map[string]string{"a": "first", "collides": "second"} {
		if got, ok := tbl.get(key); !ok || got != want {
			t.Errorf("%s = %v, %v; want %q", key, got, ok, want)
		}
	}

}
