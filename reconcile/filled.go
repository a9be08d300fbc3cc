package reconcile

import (
	"encoding/json"

	"github.com/migrate-tool/migrate/compare"
	"github.com/migrate-tool/migrate/odata"
)

// Filled is what entity got holds of the fields a write sent (match, its
// journal.Sub.Match) where the server did not take them as sent: a name it
// fills from a reference, a value it normalised. Undo and verify take that
// for what the write left, not for a change made since; reconciliation
// does not match documents on such a field again (NoteFilled). nil when
// the server took every field as sent. The fields compare without their
// type (compare.Value), as undo compares them: a value the server rounded
// or kept as a day is kept as the server holds it; one taken for filled
// wrongly costs only its bytes in the journal.
func Filled(match json.RawMessage, got map[string]any) json.RawMessage {
	sent, err := odata.DecodeEntity(match)
	if err != nil || len(sent) == 0 || got == nil {
		return nil
	}
	var out map[string]any
	for k, v := range sent {
		g, ok := got[k]
		if !ok || compare.Value(nil, g, v) {
			continue
		}
		if out == nil {
			out = map[string]any{}
		}
		out[k] = g
	}
	if out == nil {
		return nil
	}
	b, _ := json.Marshal(out)
	return b
}
