package executor

import (
	"context"
	"fmt"

	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/plan"
	"github.com/migrate-tool/migrate/read"
	"github.com/migrate-tool/migrate/transform"
)

// TargetLookups reads the lookups that read the target: every row of the
// lookup's entity its filter gives, page by page (package read: rows
// outside the filter stop the lookup rather than build a silently wrong
// table).
func TargetLookups(client *odata.Client, md *odata.Metadata) transform.TargetReader {
	return func(ctx context.Context, l *plan.Lookup, fn func(key, value any) error) error {
		es := md.EntitySet(l.Entity)
		if es == nil || es.Type == nil {
			return fmt.Errorf("unknown entity %s", l.Entity)
		}
		return read.Each(ctx, client, read.Query{Set: l.Entity, Type: es.Type, Filter: l.Filter}, func(row map[string]any) error {
			// A field hidden by field-level permissions is missing from
			// the answer, and a table built without it is wrong.
			for _, f := range []string{l.KeyField, l.ValueField} {
				if _, returned := row[f]; !returned {
					return fmt.Errorf("%s does not return %s on read (a field-level permission): let the API user read it, or look up another field", l.Entity, f)
				}
			}
			return fn(row[l.KeyField], row[l.ValueField])
		})
	}
}
