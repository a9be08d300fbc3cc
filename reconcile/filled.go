package reconcile

import (
	"encoding/json"
	"slices"

	"github.com/migrate-tool/migrate/compare"
	"github.com/migrate-tool/migrate/journal"
	"github.com/migrate-tool/migrate/odata"
)

// Filled is what entity got holds of the fields a write sent (sent: its
// journal.Sub.Match, decoded) where the server did not take them as sent:
// a name it fills from a reference, a value it normalised. Undo and verify
// take that for what the write left, not for a change made since. nil
// when the server took every field as sent. The fields compare without
// their type (compare.Value), as undo compares them: a value the server
// rounded or kept as a day is kept as the server holds it; one taken for
// filled wrongly costs only its bytes in the journal.
func Filled(sent, got map[string]any) json.RawMessage {
	if len(sent) == 0 || got == nil {
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

// Outcome is the outcome of sub-request s found done on the server (status,
// key), its entity (of type t) read holding entity: with what the server
// filled in place of what s sent (Filled, Fills), as the lost answer
// would have said.
func Outcome(s *journal.SubState, status int, key string, t *odata.EntityType, entity map[string]any) journal.SubResult {
	res := journal.SubResult{ID: s.ID, Status: status, Key: key}
	if sent, err := odata.DecodeEntity(s.Match); err == nil {
		if res.Filled = Filled(sent, entity); res.Filled != nil {
			res.Fills = Fills(t, sent, entity)
		}
	}
	return res
}

// Fills are the fields of sent that entity got holds another value of by
// the field's type (t's, compare.Value): the server's own value, not
// another form of the one sent (a date written another way, a decimal
// rounded to its Scale). Of a field filled from a reference, the name
// stays; of a field normalised, none: documents in doubt are matched on
// the one and not the other (journal.SubResult.Fills, Reader.NoteFilled).
func Fills(t *odata.EntityType, sent, got map[string]any) []string {
	return slices.DeleteFunc(compare.Differs(t, got, sent), func(k string) bool {
		_, held := got[k]
		return !held // not returned: nothing filled, nothing to tell
	})
}
