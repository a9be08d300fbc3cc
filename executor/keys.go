package executor

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/plan"
	"github.com/migrate-tool/migrate/transform"
)

// keyFromLocation takes the key expression from a Location header such as
// .../ORDERS('SO001') or .../ORDERITEMS_SUBFORM(3), spelt as odata.EntityKey spells
// it whether the server percent-encoded it or not; "" when there is none.
func keyFromLocation(loc string) string {
	if strings.HasSuffix(loc, "("+placeholderKey+")") {
		return placeholderKey // the dry run's simulated service
	}
	k, err := odata.LocationKey(loc)
	if err != nil {
		return ""
	}
	return k
}

// shownKey is a key expression as a person reads it in diff's output: as
// odata.EntityKey writes it, without the URL's escapes ('O”Neil & Co', Hebrew as it
// is), so that what a person compares with the source looks like it.
func shownKey(key string) string {
	if raw, err := url.PathUnescape(key); err == nil {
		return raw
	}
	return key
}

// KeyValue turns a key expression (as journaled) back into a value, for
// ref() and for the reports: a single key's value (string, int64 or
// Decimal), or a map of a composite key's values.
func KeyValue(key string) any {
	if key == "" {
		return nil
	}
	parts, err := odata.ParsePathKey(key)
	if err != nil {
		return key
	}
	if len(parts) == 1 && parts[0].Name == "" {
		return parts[0].Value
	}
	m := make(map[string]any, len(parts))
	for _, p := range parts {
		m[p.Name] = p.Value
	}
	return m
}

// StepKeys are the keys of the records step would write, each once, in
// source order: the records whose every key field the plan gives (a
// document the server numbers has none yet, and nothing to keep): what
// an export's before-image reads from the target.
func (run *Prepared) StepKeys(ctx context.Context, st *plan.Step) ([][]any, error) {
	es := run.Metadata.EntitySet(st.Entity)
	if es == nil || es.Type == nil {
		return nil, fmt.Errorf("step %s: unknown entity %s", st.Name, st.Entity)
	}
	key := es.Type.Key
	seen := map[string]bool{}
	var out [][]any
	err := run.records.Records(ctx, st.Name, run.open, nil, func(res transform.Result) error {
		if res.Record == nil {
			return nil
		}
		vals := make([]any, len(key))
		for i, k := range key {
			v, ok := res.Record.Fields[k]
			if !ok || v == nil {
				return nil
			}
			vals[i] = v
		}
		id := fmt.Sprint(vals...)
		if !seen[id] {
			seen[id] = true
			out = append(out, vals)
		}
		return nil
	})
	return out, err
}
