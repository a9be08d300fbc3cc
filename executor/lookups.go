package executor

import (
	"context"
	"fmt"

	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/plan"
	"github.com/migrate-tool/migrate/transform"
)

// TargetLookups reads the lookups that read the target (issue 16): the
// rows of the lookup's entity its filter gives, paged with $top/$skip in
// the order of the key (odata.MaxPageSize a page; a short page is the
// end). Each row is checked against the filter: a server ignores a filter
// it cannot apply (SERVICE-NOTES), and a row outside it proves that; the
// lookup then fails rather than build a silently wrong table.
func TargetLookups(client *odata.Client, md *odata.Metadata) transform.TargetReader {
	return func(ctx context.Context, l *plan.Lookup, fn func(key, value any) error) error {
		es := md.EntitySet(l.Entity)
		if es == nil || es.Type == nil {
			return fmt.Errorf("unknown entity %s", l.Entity)
		}
		var filter odata.Filter
		if l.Filter != "" {
			f, err := odata.ParseFilter(es.Type, l.Filter)
			if err != nil {
				return err
			}
			filter = f
		}
		// A restarted server's form answers 404 to its first request
		// (SERVICE-NOTES, cold forms): warm it, whatever it answers.
		var warmUp struct{}
		_ = client.Get(ctx, l.Entity, odata.Query{Top: 1}, &warmUp)
		q := odata.Query{Filter: l.Filter, OrderBy: l.KeyField}
		return client.GetAll(ctx, l.Entity, q, odata.MaxPageSize, func(row map[string]any) error {
			// Issue 14.3: a field hidden by field-level permissions is
			// missing from the answer, and a table built without it is wrong.
			for _, f := range []string{l.KeyField, l.ValueField} {
				if _, returned := row[f]; !returned {
					return fmt.Errorf("%s does not return %s on read (a field-level permission): let the API user read it, or look up another field", l.Entity, f)
				}
			}
			if filter != nil && !filter.Match(row) {
				return fmt.Errorf("the server did not apply the filter %q: it returned a row with %s %s; check the filter on the server (a filter it cannot apply, or on a field the API user may not read, is ignored)",
					l.Filter, l.KeyField, jsonValue(row[l.KeyField]))
			}
			return fn(row[l.KeyField], row[l.ValueField])
		})
	}
}
