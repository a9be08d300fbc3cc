package campaign

import (
	"encoding/json"
	"fmt"
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

// diff is what a comparison found; zero is a pass.
type diff struct {
	Rows       int      // rows compared
	Missing    []string // expected, absent
	Duplicated []string // present more than once
	Extra      []string // present, not expected
	Different  []string // present once, with other content
}

func (d diff) ok() bool {
	return len(d.Missing)+len(d.Duplicated)+len(d.Extra)+len(d.Different) == 0
}

func (d diff) String() string {
	if d.ok() {
		return fmt.Sprintf("%d rows exact", d.Rows)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d rows: %d missing, %d duplicated, %d extra, %d different", d.Rows, len(d.Missing), len(d.Duplicated), len(d.Extra), len(d.Different))
	for _, part := range []struct {
		what string
		list []string
	}{{"missing", d.Missing}, {"duplicated", d.Duplicated}, {"extra", d.Extra}, {"different", d.Different}} {
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

// compare matches every set of want against the snapshot, exactly.
func compare(want expected, snap map[string][]map[string]any) diff {
	var d diff
	sets := make([]string, 0, len(want))
	for s := range want {
		sets = append(sets, s)
	}
	sort.Strings(sets)
	for _, set := range sets {
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

// empty reports rows left in the sets a load writes (after undo).
func leftovers(snap map[string][]map[string]any) []string {
	var out []string
	for _, set := range []string{"CUSTOMERS", "LOGPART", "ORDERS"} {
		for _, row := range snap[set] {
			out = append(out, fmt.Sprintf("%s %v", set, row[identity[set]]))
		}
	}
	return out
}
