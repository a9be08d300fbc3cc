package executor

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/migrate-tool/migrate/odata"
)

// Issue 16: reading N keyed records costs at most ⌈N/2,000⌉ calls. A GET
// asks for many keys at once with an or-chain $filter of only the fields
// wanted ($select), and a $batch call carries up to 100 such GETs; a whole
// set is read in pages of 2,000 rows instead when most of it is wanted.

// Read limits (SERVICE-NOTES "Queries"): a long or-chain (about 50 values,
// fewer with $expand) makes the URL fail, so a chain stops at readChain
// keys or readURLMax characters of $filter, whichever comes first; a
// response holds at most a page of rows (MAXAPILINES).
const (
	readChain       = 40
	readChainExpand = 20
	readURLMax      = 1500
	readPerBatch    = 100
)

// readWindow is how many records of an upsert or update step wait for
// their read: enough to fill one call with or-chains (limit GETs of
// readChain keys), so that N records cost about N/4,000 calls, not N/100.
func (r *runner) readWindow() int { return r.limit * readChain }

// ReadFunc sends GETs in one $batch call and returns their answers in the
// order of reqs. The run's reads count against its semaphore and
// statistics; Undo and Verify send theirs directly.
type ReadFunc func(ctx context.Context, reqs []odata.BatchRequest) ([]odata.BatchResponse, error)

// Reader reads entities of one entity set by key, as few calls as it can.
type Reader struct {
	Send ReadFunc
	// Set is the entity set and Type its entity type (from the metadata).
	Set  string
	Type *odata.EntityType
	// Select lists the fields wanted (the key fields are added); nil reads
	// every field. Expand lists sub-forms to read with each entity.
	Select []string
	Expand []string
	// PerBatch caps GETs per call (0: 100).
	PerBatch int
	// Calls counts the $batch calls sent.
	Calls int
}

// Found is what a keyed read learnt of one key.
type Found struct {
	// Status is 200 (Body holds the entity), 404 (absent), or another
	// status when the entity could not be read (Body holds the answer).
	Status int
	Body   json.RawMessage
}

// ReadKeys reads the entities with the given key expressions (as the
// journal and keyOf write them) and returns what was found of each key.
//
// A key is absent only when the filter that asked for it provably applied
// (SERVICE-NOTES: a filter the server cannot apply is ignored silently):
// every row that came back is one of the keys asked for, with its key
// fields. Otherwise, and when the server refuses the filter, that chain's
// keys are read one GET each, where a 404 is an answer.
func (rd *Reader) ReadKeys(ctx context.Context, keys []string) (map[string]Found, error) {
	out := make(map[string]Found, len(keys))
	var chains [][]string
	var filters []string
	var single []string
	var cur []string
	var parts []string
	size := 0
	limit := readChain
	if len(rd.Expand) > 0 {
		limit = readChainExpand
	}
	flush := func() {
		if len(cur) > 0 {
			chains = append(chains, cur)
			filters = append(filters, strings.Join(parts, " or "))
		}
		cur, parts, size = nil, nil, 0
	}
	seen := map[string]bool{}
	for _, k := range keys {
		if seen[k] {
			continue
		}
		seen[k] = true
		cond, err := keyFilter(rd.Type, k)
		if err != nil {
			single = append(single, k)
			continue
		}
		if len(cur) == limit || size+len(cond) > readURLMax {
			flush()
		}
		cur = append(cur, k)
		parts = append(parts, cond)
		size += len(cond) + 4
	}
	flush()
	reqs := make([]odata.BatchRequest, len(chains))
	for i, f := range filters {
		q := odata.Query{Filter: f, Select: rd.selected(), Expand: rd.Expand}
		reqs[i] = odata.BatchRequest{ID: itoa(i + 1), Method: "GET", URL: rd.Set + "?" + q.Encode()}
	}
	resps, err := rd.send(ctx, reqs)
	if err != nil {
		return nil, err
	}
	for i, resp := range resps {
		rows, ok := rd.proven(resp, chains[i])
		if !ok {
			single = append(single, chains[i]...)
			continue
		}
		for _, k := range chains[i] {
			if row, found := rows[k]; found {
				out[k] = Found{Status: 200, Body: row}
			} else {
				out[k] = Found{Status: 404}
			}
		}
	}
	if len(single) == 0 {
		return out, nil
	}
	// One GET per key: without $select, which may be what the server
	// refused (a field hidden by field-level permissions).
	reqs = reqs[:0]
	suffix := ""
	if len(rd.Expand) > 0 {
		suffix = "?" + odata.Query{Expand: rd.Expand}.Encode()
	}
	for i, k := range single {
		reqs = append(reqs, odata.BatchRequest{ID: itoa(i + 1), Method: "GET", URL: rd.Set + "(" + k + ")" + suffix})
	}
	resps, err = rd.send(ctx, reqs)
	if err != nil {
		return nil, err
	}
	for i, resp := range resps {
		out[single[i]] = Found{Status: resp.Status, Body: resp.Body}
	}
	return out, nil
}

// proven maps the rows of a chain's answer by key, or reports that the
// answer does not prove the filter applied.
func (rd *Reader) proven(resp odata.BatchResponse, chain []string) (map[string]json.RawMessage, bool) {
	if resp.Status != 200 {
		return nil, false
	}
	var coll struct {
		Value []json.RawMessage `json:"value"`
	}
	if json.Unmarshal(resp.Body, &coll) != nil || len(coll.Value) > len(chain) {
		return nil, false
	}
	asked := make(map[string]bool, len(chain))
	for _, k := range chain {
		asked[canonicalKey(rd.Type, k)] = true
	}
	byKey := make(map[string]json.RawMessage, len(coll.Value))
	for _, raw := range coll.Value {
		e, err := odata.DecodeEntity(raw)
		if err != nil {
			return nil, false
		}
		k := keyOf(rd.Type, e)
		if k == "" || !asked[k] {
			return nil, false
		}
		byKey[k] = raw
	}
	rows := make(map[string]json.RawMessage, len(chain))
	for _, k := range chain {
		if raw, ok := byKey[canonicalKey(rd.Type, k)]; ok {
			rows[k] = raw
		}
	}
	return rows, true
}

// window is how many keys fill one call: perBatch GETs of a chain each.
func (rd *Reader) window() int {
	if len(rd.Expand) > 0 {
		return rd.perBatch() * readChainExpand
	}
	return rd.perBatch() * readChain
}

func (rd *Reader) selected() []string {
	if len(rd.Select) == 0 || rd.Type == nil {
		return nil
	}
	sel := append([]string(nil), rd.Type.Key...)
	for _, f := range rd.Select {
		if !rd.Type.IsKey(f) && rd.Type.Property(f) != nil {
			sel = append(sel, f)
		}
	}
	sort.Strings(sel[len(rd.Type.Key):])
	return sel
}

func (rd *Reader) perBatch() int {
	if rd.PerBatch <= 0 || rd.PerBatch > readPerBatch {
		return readPerBatch
	}
	return rd.PerBatch
}

// send sends reqs in calls of perBatch GETs.
func (rd *Reader) send(ctx context.Context, reqs []odata.BatchRequest) ([]odata.BatchResponse, error) {
	var out []odata.BatchResponse
	per := rd.perBatch()
	for start := 0; start < len(reqs); start += per {
		end := min(start+per, len(reqs))
		chunk := make([]odata.BatchRequest, end-start)
		for i, r := range reqs[start:end] {
			r.ID = itoa(i + 1)
			chunk[i] = r
		}
		rd.Calls++
		got, err := rd.Send(ctx, chunk)
		if err != nil {
			return nil, err
		}
		if len(got) != len(chunk) {
			return nil, fmt.Errorf("reading %s: %d answers to %d reads", rd.Set, len(got), len(chunk))
		}
		out = append(out, got...)
	}
	return out, nil
}

// keyFilter is the $filter condition that selects the entity of key: a
// single key's field eq its value, a composite key's pairs joined by and.
func keyFilter(t *odata.EntityType, key string) (string, error) {
	parts, err := keyParts(t, key)
	if err != nil {
		return "", err
	}
	conds := make([]string, len(parts))
	for i, p := range parts {
		conds[i] = odata.Eq(p.Name, p.Value)
	}
	if len(conds) == 1 {
		return conds[0], nil
	}
	return "(" + strings.Join(conds, " and ") + ")", nil
}

// chainKeys reads back the key expressions of a $filter that ReadKeys
// wrote (keyFilter's conditions joined by or), through the filter grammar,
// for the dry run's simulated service; ok is false for any other filter.
func chainKeys(t *odata.EntityType, filter string) (keys []string, ok bool) {
	if t == nil {
		return nil, false
	}
	f, err := odata.ParseFilter(t, filter)
	if err != nil {
		return nil, false
	}
	alts, ok := odata.KeyEqualities(f, t.Key)
	if !ok {
		return nil, false
	}
	for _, m := range alts {
		k := keyOf(t, m)
		if k == "" {
			return nil, false
		}
		keys = append(keys, k)
	}
	return keys, len(keys) > 0
}

// keyParts reads a key expression into the type's key fields and values.
func keyParts(t *odata.EntityType, key string) ([]odata.KeyPart, error) {
	if t == nil || len(t.Key) == 0 {
		return nil, fmt.Errorf("no key fields known")
	}
	parts, err := odata.ParsePathKey(key)
	if err != nil {
		return nil, err
	}
	if len(parts) == 1 && parts[0].Name == "" && len(t.Key) == 1 {
		parts[0].Name = t.Key[0]
	}
	if len(parts) != len(t.Key) {
		return nil, fmt.Errorf("key %s: %d values for %d key fields", key, len(parts), len(t.Key))
	}
	for _, p := range parts {
		if !t.IsKey(p.Name) {
			return nil, fmt.Errorf("key %s: %s is not a key field", key, p.Name)
		}
	}
	return parts, nil
}

// canonicalKey is the key expression keyOf writes for key, so that a key
// as the journal holds it and one read from an answer compare equal
// (composite keys in the type's order).
func canonicalKey(t *odata.EntityType, key string) string {
	parts, err := keyParts(t, key)
	if err != nil {
		return key
	}
	m := make(map[string]any, len(parts))
	for _, p := range parts {
		m[p.Name] = p.Value
	}
	if k := keyOf(t, m); k != "" {
		return k
	}
	return key
}

// SendVia is the ReadFunc of a client outside a run (Undo, Verify): a
// read changes nothing, so a call whose answer was lost, or that broke
// the $batch protocol, is sent again, up to readAttempts times; a call the
// server refuses is not.
func SendVia(client Client) ReadFunc {
	return func(ctx context.Context, reqs []odata.BatchRequest) ([]odata.BatchResponse, error) {
		var err error
		for attempt := 0; attempt < readAttempts; attempt++ {
			var got []odata.BatchResponse
			got, err = client.Batch(ctx, reqs, batchOptions)
			if err == nil {
				if out, problem := readAnswers(reqs, got); out != nil {
					return out, nil
				} else {
					err = fmt.Errorf("the server's answer to a read broke the $batch protocol: %s", problem)
				}
				continue
			}
			if _, ok := refused(err); ok || ctx.Err() != nil {
				break
			}
		}
		return nil, err
	}
}
