package executor

import (
	"fmt"
	"math/rand"
	"slices"
	"testing"

	"github.com/migrate-tool/migrate/journal"
	"github.com/migrate-tool/migrate/odata"
)

// tree builds a record's ops: a root with n children (each with kids
// grandchildren), depth first.
func tree(name string, n, kids int) unit {
	w := &work{id: name}
	root := &op{work: w, kind: journal.OpCreate, method: "POST", url: "ORDERS"}
	for i := 0; i < n; i++ {
		c := &op{work: w, parent: root, nav: "ORDERITEMS_SUBFORM", kind: journal.OpCreate, method: "POST", path: fmt.Sprint(i)}
		root.kids = append(root.kids, c)
		for j := 0; j < kids; j++ {
			c.kids = append(c.kids, &op{work: w, parent: c, nav: "ORDERITEMSTEXT_SUBFORM", single: true, kind: journal.OpCreate, method: "POST"})
		}
	}
	return flatten(root, nil)
}

type captured struct {
	batches [][]*op
	later   [][]unit
}

func newPacker(limit int, c *captured) *packer {
	return &packer{limit: limit, emit: func(b []*op, l []unit) error {
		c.batches = append(c.batches, b)
		c.later = append(c.later, l)
		return nil
	}}
}

func TestPackKeepsRecordsWhole(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		limit   int
		records []int // children per record
		want    []int // batch sizes
		later   []int // continuation ops per batch
	}{
		{"fits", 100, []int{2, 3}, []int{7}, []int{0}},
		{"next batch when it does not fit", 10, []int{4, 4, 4}, []int{10, 5}, []int{0, 0}},
		{"exactly full flushes", 6, []int{2, 2}, []int{6}, []int{0}},
		{"big record fills the room and continues", 10, []int{2, 20}, []int{10}, []int{14}},
		{"big record alone", 100, []int{249}, []int{100}, []int{150}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := &captured{}
			pk := newPacker(tc.limit, c)
			for i, n := range tc.records {
				if err := pk.add(tree(fmt.Sprint(i), n, 0)); err != nil {
					t.Fatal(err)
				}
			}
			pk.flush()
			if len(c.batches) != len(tc.want) {
				t.Fatalf("%d batches, want %d", len(c.batches), len(tc.want))
			}
			for i, b := range c.batches {
				if len(b) != tc.want[i] {
					t.Errorf("batch %d: %d ops, want %d", i, len(b), tc.want[i])
				}
				n := 0
				for _, u := range c.later[i] {
					n += len(u)
					if u[0].parent == nil {
						t.Errorf("continuation unit without parent")
					}
				}
				if n != tc.later[i] {
					t.Errorf("batch %d: %d ops follow, want %d", i, n, tc.later[i])
				}
			}
		})
	}
}

func TestPackNeverSplitsFromParentWithoutAddress(t *testing.T) {
	t.Parallel()
	// Lines with texts: a continuation unit holds a line and its text.
	c := &captured{}
	pk := newPacker(10, c)
	pk.add(tree("big", 8, 1)) // 1 + 16 ops
	if len(c.batches) != 1 || len(c.batches[0]) != 10 {
		t.Fatalf("%v", c.batches)
	}
	reqs := assemble(c.batches[0], 1)
	for i, r := range reqs {
		o := c.batches[0][i]
		if o.parent != nil && (r.URL[0] != '$' || len(r.DependsOn) != 1 || r.DependsOn[0] != o.parent.id) {
			t.Errorf("%d: %s %v", i, r.URL, r.DependsOn)
		}
	}
	// The last op of the head is a line whose text follows: that unit is
	// the text alone, addressed by the line once it exists.
	for _, u := range c.later[0] {
		if u[0].parent == nil || u[0].parent.parent == nil && len(u) != 2 {
			t.Errorf("unit %v", u)
		}
	}
	last := c.later[0][0]
	if !last[0].single {
		t.Fatalf("first continuation should be the split line's text: %+v", last[0])
	}
	// Once the line exists it is addressed by its key.
	line := last[0].parent
	line.done, line.status, line.key, line.batch = true, 201, "9", 1
	line.parent.abs = "ORDERS('SO1')"
	line.abs = childAbs(line.parent, line)
	r := assemble([]*op{last[0]}, 2)
	if r[0].URL != "ORDERS('SO1')/ORDERITEMS_SUBFORM(9)/ORDERITEMSTEXT_SUBFORM" || r[0].DependsOn != nil {
		t.Fatalf("continuation: %+v", r[0])
	}
}

// TestPackingDensity: loads of entities with 0-5 lines average at least
// 95 operations per call.
func TestPackingDensity(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewSource(1))
	c := &captured{}
	pk := newPacker(100, c)
	ops := 0
	for i := 0; i < 5000; i++ {
		u := tree(fmt.Sprint(i), rng.Intn(6), 0)
		ops += len(u)
		pk.add(u)
	}
	pk.flush()
	avg := float64(ops) / float64(len(c.batches))
	if avg < 95 {
		t.Fatalf("average %.1f operations per call", avg)
	}
	t.Logf("%d ops in %d calls: %.1f per call", ops, len(c.batches), avg)
}

func TestAssembleIDsAndBodies(t *testing.T) {
	t.Parallel()
	u := tree("r", 2, 0)
	u[0].body = []byte(`{"CUSTNAME":"C1"}`)
	reqs := assemble(u, 3)
	want := []odata.BatchRequest{
		{ID: "1", Method: "POST", URL: "ORDERS"},
		{ID: "2", Method: "POST", URL: "$1/ORDERITEMS_SUBFORM", DependsOn: []string{"1"}},
		{ID: "3", Method: "POST", URL: "$1/ORDERITEMS_SUBFORM", DependsOn: []string{"1"}},
	}
	for i, r := range reqs {
		if r.ID != want[i].ID || r.URL != want[i].URL || fmt.Sprint(r.DependsOn) != fmt.Sprint(want[i].DependsOn) {
			t.Errorf("%d: %+v", i, r)
		}
	}
	if reqs[0].Header("Content-Type") != "application/json" || reqs[1].Headers != nil {
		t.Errorf("headers %v %v", reqs[0].Headers, reqs[1].Headers)
	}
}

func TestKeys(t *testing.T) {
	t.Parallel()
	tests := []struct {
		names []string
		vals  []any
		want  string
		value any
	}{
		{[]string{"CUSTNAME"}, []any{"O'Neil & Co"}, "'O''Neil%20%26%20Co'", "O'Neil & Co"},
		{[]string{"KLINE"}, []any{int64(3)}, "3", int64(3)},
		{[]string{"IVNUM", "IVTYPE", "DEBIT"}, []any{"IV1", "A", "D"}, "IVNUM='IV1',IVTYPE='A',DEBIT='D'", map[string]any{"IVNUM": "IV1", "IVTYPE": "A", "DEBIT": "D"}},
		{[]string{"A"}, []any{"a,b=c"}, "'a,b=c'", "a,b=c"},
	}
	for _, tc := range tests {
		got, err := odata.PathKey(tc.names, tc.vals)
		if err != nil || got != tc.want {
			t.Errorf("PathKey(%v) = %q, %v; want %q", tc.vals, got, err, tc.want)
		}
		if raw, _ := odata.FormatKey(tc.names, tc.vals); "("+shownKey(got)+")" != raw {
			t.Errorf("shownKey(%q) = %q, want %q without its parentheses", got, shownKey(got), raw)
		}
		if v := KeyValue(got); fmt.Sprint(v) != fmt.Sprint(tc.value) {
			t.Errorf("KeyValue(%q) = %#v, want %#v", got, v, tc.value)
		}
	}
	if _, err := odata.PathKey([]string{"A"}, []any{nil}); err == nil {
		t.Error("nil key accepted")
	}
	// However the server spells the Location, the key is odata.EntityKey's spelling
	// (docs/servers.md, Writing and batches: %27 for quotes).
	for loc, want := range map[string]string{
		"http://x/ORDERS('SO1')":                       "'SO1'",
		"http://x/ORDERS(%27SO1%27)":                   "'SO1'",
		"http://x/CUSTOMERS('O''Neil & Co')":           "'O''Neil%20%26%20Co'",
		"http://x/CUSTOMERS('A(1)')":                   "'A(1)'",
		"http://x/CUSTOMERS('לקוח')":                   "'%D7%9C%D7%A7%D7%95%D7%97'",
		"http://x/ORDERS('SO1')/ORDERITEMS_SUBFORM(3)": "3",
		"http://x/ORDERS":                              "",
		"(" + placeholderKey + ")":                     placeholderKey,
	} {
		if k := keyFromLocation(loc); k != want {
			t.Errorf("keyFromLocation(%q) = %q, want %q", loc, k, want)
		}
	}
}

// A batch holds about maxBytes of bodies at most: records of 100 KB go a
// few at a time, whatever the sub-request limit; one larger than
// maxBytes goes alone, and small ones fill batches as before.
func TestPackWithinBytes(t *testing.T) {
	t.Parallel()
	rec := func(n int) unit { return unit{&op{body: make([]byte, n)}} }
	for _, tc := range []struct {
		name  string
		sizes []int
		want  []int // batch sizes
	}{
		{"big records a few at a time", []int{100, 100, 100, 100, 100}, []int{2, 2, 1}},
		{"one past the bytes alone", []int{10, 500, 10}, []int{1, 1, 1}},
		{"small ones up to the limit", []int{1, 1, 1, 1, 1}, []int{4, 1}},
	} {
		c := &captured{}
		pk := newPacker(4, c)
		pk.maxBytes = 250
		for _, n := range tc.sizes {
			if err := pk.add(rec(n)); err != nil {
				t.Fatal(err)
			}
		}
		if err := pk.flush(); err != nil {
			t.Fatal(err)
		}
		var got []int
		for _, b := range c.batches {
			got = append(got, len(b))
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: batches %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestStandardSingles: under the odata dialect a single-object sub-form
// sent on its own is a PATCH of its parent holding it, whether the parent
// is made in the same batch ($1) or exists; lines and the caller's
// requests stay as they were.
func TestStandardSingles(t *testing.T) {
	t.Parallel()
	order := &op{kind: journal.OpCreate, method: "POST", url: "ORDERS", body: []byte(`{"CUSTNAME":"C1"}`)}
	line := &op{method: "POST", parent: order, nav: "ORDERITEMS_SUBFORM", body: []byte(`{"PARTNAME":"B"}`)}
	text := &op{method: "POST", parent: order, nav: "ORDERSTEXT_SUBFORM", single: true, body: []byte(`{"TEXT":"t"}`)}
	old := &op{method: "POST", parent: &op{abs: "ORDERS(3a943e5e-c925-4fae-b2d5-9e2f0a36c6d8)", done: true}, nav: "ORDERSTEXT_SUBFORM", single: true, body: []byte(`{"TEXT":"u"}`)}
	batch := []*op{order, line, text, old}
	reqs := assemble(batch, 1)
	got := standardSingles(batch, reqs)
	want := []string{
		`POST ORDERS {"CUSTNAME":"C1"}`,
		`POST $1/ORDERITEMS_SUBFORM {"PARTNAME":"B"}`,
		`PATCH $1 {"ORDERSTEXT_SUBFORM":{"TEXT":"t"}}`,
		`PATCH ORDERS(3a943e5e-c925-4fae-b2d5-9e2f0a36c6d8) {"ORDERSTEXT_SUBFORM":{"TEXT":"u"}}`,
	}
	for i, r := range got {
		if s := r.Method + " " + r.URL + " " + string(r.Body); s != want[i] {
			t.Errorf("%d: %s, want %s", i, s, want[i])
		}
	}
	if reqs[2].Method != "POST" || reqs[2].URL != "$1/ORDERSTEXT_SUBFORM" {
		t.Errorf("the caller's request changed: %+v", reqs[2])
	}
	if got[2].DependsOn[0] != "1" {
		t.Errorf("the PATCH of $1 does not depend on its create: %+v", got[2])
	}
}
