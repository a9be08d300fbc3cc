package crashtest

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
)

// serverAssigned are fields the server fills in on its own (auto-unique
// keys, document numbers, stamps of an attachment), by the entity set or
// sub-form they appear in ("" for everywhere). The comparison ignores them;
// what the server derives from the load (an order's CDES, a line's PDES,
// line numbers) is compared.
var serverAssigned = map[string]map[string]bool{
	"":                 {"CUST": true, "PART": true, "ORD": true, "FAMILY": true},
	"ORDERS":           {"ORDNAME": true},
	"EXTFILES_SUBFORM": {"CURDATE": true, "UDATE": true, "USERLOGIN": true, "LUSERLOGIN": true, "SUFFIX": true, "FILESIZE": true},
}

// normalize drops nulls and server-assigned fields, recursively; name is
// the entity set or sub-form the row belongs to.
func normalize(name string, row map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range row {
		if v == nil || serverAssigned[""][k] || serverAssigned[name][k] {
			continue
		}
		switch x := v.(type) {
		case map[string]any:
			out[k] = normalize(k, x)
		case []map[string]any: // Snapshot's collections
			if len(x) == 0 {
				continue
			}
			list := make([]any, len(x))
			for i, e := range x {
				list[i] = normalize(k, e)
			}
			out[k] = list
		case []any: // the same after a JSON round trip
			if len(x) == 0 {
				continue
			}
			list := make([]any, len(x))
			for i, e := range x {
				if m, ok := e.(map[string]any); ok {
					list[i] = normalize(k, m)
				} else {
					list[i] = e
				}
			}
			out[k] = list
		default:
			out[k] = v
		}
	}
	return out
}

// identity names the field a set's rows are matched by: the key, or for
// orders (numbered by the server) the source order number in DETAILS.
var identity = map[string]string{"CUSTOMERS": "CUSTNAME", "LOGPART": "PARTNAME", "ORDERS": "DETAILS"}

// entityKey names each set's key: a row the company held before the run is
// the same row afterwards only under the same key, and untouched only
// with every field as it was (server-assigned ones included).
var entityKey = map[string]string{"CUSTOMERS": "CUSTNAME", "LOGPART": "PARTNAME", "ORDERS": "ORDNAME"}

// company is a snapshot of what the sandbox held before the run (nil: a
// fresh sandbox).
type company map[string][]map[string]any

// diff is what a comparison found; zero is a pass.
type diff struct {
	Rows       int      // rows compared
	Missing    []string // expected, absent
	Duplicated []string // present more than once
	Extra      []string // present, not expected
	Different  []string // present once, with other content
	Touched    []string // held before the run, now gone or changed
}

func (d diff) ok() bool {
	return len(d.Missing)+len(d.Duplicated)+len(d.Extra)+len(d.Different)+len(d.Touched) == 0
}

func (d diff) String() string {
	if d.ok() {
		return fmt.Sprintf("%d rows exact", d.Rows)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d rows: %d missing, %d duplicated, %d extra, %d different, %d held before and touched", d.Rows, len(d.Missing), len(d.Duplicated), len(d.Extra), len(d.Different), len(d.Touched))
	for _, part := range []struct {
		what string
		list []string
	}{{"missing", d.Missing}, {"duplicated", d.Duplicated}, {"extra", d.Extra}, {"different", d.Different}, {"touched", d.Touched}} {
		for i, s := range part.list {
			if i == 5 {
				fmt.Fprintf(&b, "\n  %s: … and %d more", part.what, len(part.list)-5)
				break
			}
			fmt.Fprintf(&b, "\n  %s: %s", part.what, s)
		}
	}
	return b.String()
}

// compare matches every set of want against the snapshot, exactly, on top
// of what the company held before the run: each row it held must still be
// there untouched and is not the load's. A row held before that the load
// writes under the same key (an upsert that found nothing to change)
// counts as both.
func compare(want expected, before company, snap map[string][]map[string]any) diff {
	var d diff
	d.Touched = touched(before, snap)
	snap = withoutHeld(want, before, snap)
	for _, set := range slices.Sorted(maps.Keys(want)) {
		id := identity[set]
		got := map[string][]map[string]any{}
		for _, row := range snap[set] {
			k := fmt.Sprint(row[id])
			got[k] = append(got[k], normalize(set, row))
		}
		seen := map[string]bool{}
		for _, w := range want[set] {
			k := fmt.Sprint(w[id])
			seen[k] = true
			d.Rows++
			rows := got[k]
			switch {
			case len(rows) == 0:
				d.Missing = append(d.Missing, set+" "+k)
			case len(rows) > 1:
				d.Duplicated = append(d.Duplicated, fmt.Sprintf("%s %s (%d times)", set, k, len(rows)))
			default:
				if ws, gs := canonical(w), canonical(rows[0]); ws != gs {
					d.Different = append(d.Different, fmt.Sprintf("%s %s:\n    want %s\n    got  %s", set, k, ws, gs))
				}
			}
		}
		for k, rows := range got {
			if !seen[k] {
				d.Extra = append(d.Extra, fmt.Sprintf("%s %s (%d)", set, k, len(rows)))
			}
		}
	}
	sort.Strings(d.Extra)
	return d
}

// canonical is a row as JSON with sorted keys (encoding/json sorts map keys).
func canonical(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%#v", v)
	}
	return string(b)
}

// leftovers reports what undo left different from what the company held
// before the run: rows of the sets a load writes that were not there, and
// rows that were and are gone or changed.
func leftovers(before company, snap map[string][]map[string]any) []string {
	out := touched(before, snap)
	for _, set := range []string{"CUSTOMERS", "LOGPART", "ORDERS"} {
		held := keyed(set, before[set])
		for _, row := range snap[set] {
			if _, ok := held[fmt.Sprint(row[entityKey[set]])]; !ok {
				out = append(out, fmt.Sprintf("%s %v", set, row[identity[set]]))
			}
		}
	}
	return out
}

// touched lists the rows held before that snap no longer holds as they were.
func touched(before company, snap map[string][]map[string]any) []string {
	var out []string
	for _, set := range slices.Sorted(maps.Keys(before)) {
		if entityKey[set] == "" {
			continue // the sandbox's own (CURRENCIES)
		}
		now := keyed(set, snap[set])
		for _, row := range before[set] {
			k := fmt.Sprint(row[entityKey[set]])
			switch got, ok := now[k]; {
			case !ok:
				out = append(out, fmt.Sprintf("%s %s (%v %v): held before the run, now gone", set, k, identity[set], row[identity[set]]))
			case canonical(got) != canonical(row):
				out = append(out, fmt.Sprintf("%s %s: held before the run, now changed:\n    was %s\n    now %s", set, k, canonical(row), canonical(got)))
			}
		}
	}
	return out
}

// withoutHeld is snap without the rows held before, except those the load
// writes under their key.
func withoutHeld(want expected, before company, snap map[string][]map[string]any) map[string][]map[string]any {
	if len(before) == 0 {
		return snap
	}
	out := make(map[string][]map[string]any, len(snap))
	for set, rows := range snap {
		held := keyed(set, before[set])
		written := keyed(set, want[set])
		for _, row := range rows {
			k := fmt.Sprint(row[entityKey[set]])
			if _, ok := held[k]; ok {
				if _, ok := written[k]; !ok {
					continue
				}
			}
			out[set] = append(out[set], row)
		}
	}
	return out
}

// keyed indexes rows of set by their key; rows without one (expected
// orders, numbered by the server) are left out.
func keyed(set string, rows []map[string]any) map[string]map[string]any {
	out := map[string]map[string]any{}
	key, ok := entityKey[set]
	if !ok {
		return out
	}
	for _, row := range rows {
		if v, ok := row[key]; ok && v != nil {
			out[fmt.Sprint(v)] = row
		}
	}
	return out
}
