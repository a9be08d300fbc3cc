package read

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/migrate-tool/migrate/odata"
)

// Reading N keyed records costs at most ⌈N/2,000⌉ calls. A GET
// asks for many keys at once with an or-chain $filter of only the fields
// wanted ($select), and a $batch call carries up to 100 such GETs; a whole
// set is read in pages of 2,000 rows instead when most of it is wanted.

// Read limits (docs/servers.md, Reading): a long or-chain (about 50 values,
// fewer with $expand) makes the URL fail, so a chain stops at Chain
// keys or urlMax characters of $filter, whichever comes first; a
// response holds at most a page of rows (MAXAPILINES).
const (
	// Chain is the keys an or-chain GET asks for; ChainExpand with $expand.
	Chain       = 40
	ChainExpand = 20
	urlMax      = 1500
	// PerBatch is the GETs a $batch call carries at most.
	PerBatch = 100
)

// Send sends GETs in one $batch call and returns their answers in the
// order of reqs. A run's reads count against its semaphore and
// statistics (executor); Undo and Verify send theirs through Via.
type Send func(ctx context.Context, reqs []odata.BatchRequest) ([]odata.BatchResponse, error)

// Keys reads entities of one entity set by key, as few calls as it can:
// Chain keys a GET in an or-chain $filter (ChainExpand with sub-forms),
// PerBatch GETs a $batch call.
type Keys struct {
	Send Send
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
// (docs/servers.md, Reading: a filter the server cannot apply is ignored
// silently): every row that came back is one of the keys asked for, with its
// key fields. Otherwise, and when the server refuses the filter, that chain's
// keys are read one GET each, where a 404 is an answer. An answer that ends
// with @odata.nextLink (a server that pages at fewer rows than a chain asks
// for) proves the keys it holds; the chain's others are read one GET each.
func (kr *Keys) ReadKeys(ctx context.Context, keys []string) (map[string]Found, error) {
	out := make(map[string]Found, len(keys))
	var chains [][]string
	var filters []string
	var single []string
	var cur []string
	var parts []string
	size := 0
	limit := Chain
	if len(kr.Expand) > 0 {
		limit = ChainExpand
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
		cond, err := KeyFilter(kr.Type, k)
		if err != nil {
			single = append(single, k)
			continue
		}
		if len(cur) == limit || size+len(cond) > urlMax {
			flush()
		}
		cur = append(cur, k)
		parts = append(parts, cond)
		size += len(cond) + 4
	}
	flush()
	reqs := make([]odata.BatchRequest, len(chains))
	for i, f := range filters {
		q := odata.Query{Filter: f, Select: kr.selected(), Expand: kr.Expand}
		reqs[i] = odata.BatchRequest{ID: strconv.Itoa(i + 1), Method: "GET", URL: kr.Set + "?" + q.Encode()}
	}
	resps, err := kr.send(ctx, reqs)
	if err != nil {
		return nil, err
	}
	for i, resp := range resps {
		rows, more, ok := kr.proven(resp, chains[i])
		if !ok {
			single = append(single, chains[i]...)
			continue
		}
		for _, k := range chains[i] {
			switch row, found := rows[k]; {
			case found:
				out[k] = Found{Status: 200, Body: row}
			case more:
				single = append(single, k) // perhaps on a later page
			default:
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
	if len(kr.Expand) > 0 {
		suffix = "?" + odata.Query{Expand: kr.Expand}.Encode()
	}
	for i, k := range single {
		reqs = append(reqs, odata.BatchRequest{ID: strconv.Itoa(i + 1), Method: "GET", URL: odata.KeySegment(kr.Set, k) + suffix})
	}
	resps, err = kr.send(ctx, reqs)
	if err != nil {
		return nil, err
	}
	for i, resp := range resps {
		out[single[i]] = Found{Status: resp.Status, Body: resp.Body}
	}
	return out, nil
}

// proven maps the rows of a chain's answer by key, or reports that the
// answer does not prove the filter applied; more says that the answer is a
// page with more after it.
func (kr *Keys) proven(resp odata.BatchResponse, chain []string) (rows map[string]json.RawMessage, more, ok bool) {
	if resp.Status != 200 {
		return nil, false, false
	}
	var coll struct {
		Value    []json.RawMessage `json:"value"`
		NextLink string            `json:"@odata.nextLink"`
	}
	if json.Unmarshal(resp.Body, &coll) != nil || len(coll.Value) > len(chain) {
		return nil, false, false
	}
	asked := make(map[string]bool, len(chain))
	for _, k := range chain {
		asked[odata.CanonicalKey(kr.Type, k)] = true
	}
	byKey := make(map[string]json.RawMessage, len(coll.Value))
	for _, raw := range coll.Value {
		e, err := odata.DecodeEntity(raw)
		if err != nil {
			return nil, false, false
		}
		k := odata.EntityKey(kr.Type, e)
		if k == "" || !asked[k] {
			return nil, false, false
		}
		byKey[k] = raw
	}
	rows = make(map[string]json.RawMessage, len(chain))
	for _, k := range chain {
		if raw, ok := byKey[odata.CanonicalKey(kr.Type, k)]; ok {
			rows[k] = raw
		}
	}
	return rows, coll.NextLink != "", true
}

// Window is how many keys fill one call: perBatch GETs of a chain each.
func (kr *Keys) Window() int {
	if len(kr.Expand) > 0 {
		return kr.perBatch() * ChainExpand
	}
	return kr.perBatch() * Chain
}

func (kr *Keys) selected() []string {
	if len(kr.Select) == 0 || kr.Type == nil {
		return nil
	}
	sel := append([]string(nil), kr.Type.Key...)
	for _, f := range kr.Select {
		if !kr.Type.IsKey(f) && kr.Type.Property(f) != nil {
			sel = append(sel, f)
		}
	}
	sort.Strings(sel[len(kr.Type.Key):])
	return sel
}

func (kr *Keys) perBatch() int {
	if kr.PerBatch <= 0 || kr.PerBatch > PerBatch {
		return PerBatch
	}
	return kr.PerBatch
}

// send sends reqs in calls of perBatch GETs.
func (kr *Keys) send(ctx context.Context, reqs []odata.BatchRequest) ([]odata.BatchResponse, error) {
	var out []odata.BatchResponse
	per := kr.perBatch()
	for start := 0; start < len(reqs); start += per {
		end := min(start+per, len(reqs))
		chunk := make([]odata.BatchRequest, end-start)
		for i, r := range reqs[start:end] {
			r.ID = strconv.Itoa(i + 1)
			chunk[i] = r
		}
		kr.Calls++
		got, err := kr.Send(ctx, chunk)
		if err != nil {
			return nil, err
		}
		if len(got) != len(chunk) {
			return nil, fmt.Errorf("reading %s: %d answers to %d reads", kr.Set, len(got), len(chunk))
		}
		out = append(out, got...)
	}
	return out, nil
}

// KeyFilter is the $filter condition that selects the entity of key: a
// single key's field eq its value, a composite key's pairs joined by and.
func KeyFilter(t *odata.EntityType, key string) (string, error) {
	parts, err := odata.KeyParts(t, key)
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

// ChainKeys reads back the key expressions of a $filter that ReadKeys
// wrote (keyFilter's conditions joined by or), through the filter grammar,
// for the dry run's simulated service; ok is false for any other filter.
func ChainKeys(t *odata.EntityType, filter string) (keys []string, ok bool) {
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
		k := odata.EntityKey(t, m)
		if k == "" {
			return nil, false
		}
		keys = append(keys, k)
	}
	return keys, len(keys) > 0
}

// Via is the Send of a client outside a run (Undo, Verify): a
// read changes nothing, so a call whose answer was lost, or that broke
// the $batch protocol, is sent again, up to Attempts times; a call the
// server refuses is not.
func Via(client Batcher) Send {
	return func(ctx context.Context, reqs []odata.BatchRequest) ([]odata.BatchResponse, error) {
		var err error
		for attempt := 0; attempt < Attempts; attempt++ {
			var got []odata.BatchResponse
			got, err = client.Batch(ctx, reqs, batchOptions)
			if err == nil {
				if out, problem := Answers(reqs, got); out != nil {
					return out, nil
				} else {
					err = fmt.Errorf("the server's answer to a read broke the $batch protocol: %s", problem)
				}
				continue
			}
			if _, ok := odata.Refused(err); ok || ctx.Err() != nil {
				break
			}
		}
		return nil, err
	}
}

// Batcher sends a $batch: an odata.Client, or a run's simulated service.
type Batcher interface {
	Batch(ctx context.Context, reqs []odata.BatchRequest, opts odata.BatchOptions) ([]odata.BatchResponse, error)
}

// batchOptions: continue-on-error always, and said explicitly (the two
// formats have opposite defaults), so that one read refused does not stop
// the others.
var batchOptions = odata.BatchOptions{ContinueOnError: true}

// Attempts is how many times a read whose answer was lost, or broke the
// $batch protocol, is sent: a read changes nothing.
const Attempts = 6
