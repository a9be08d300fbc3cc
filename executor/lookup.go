package executor

import (
	"context"

	"github.com/migrate-tool/migrate/journal"
	"github.com/migrate-tool/migrate/odata"
)

// What undo and resolve read of the server about a journal's work in
// doubt, as apply's reconciliation reads it: Settle settles it for undo;
// Candidates, Get and Claimed are the lookups package resolve lists and
// checks the user's decisions with.

// LookupOptions drive Settle, Candidates and Get.
type LookupOptions struct {
	Client   Client
	Metadata *odata.Metadata
	Hook     Hook
}

// resolver is a runner over a journal, for lookups only.
func resolver(ctx context.Context, st *journal.State, opts LookupOptions) *runner {
	h := opts.Hook
	if h == nil {
		h = NopHook{}
	}
	return &runner{opts: &runOptions{Prepared: Prepared{Metadata: opts.Metadata}, Options: Options{Client: opts.Client}}, ctx: ctx, md: opts.Metadata, svc: &target{}, state: st, hook: h}
}

// Settle settles the work in doubt of journal jr (st its state) by
// reading the server, as apply's reconciliation settles it (found: done;
// absent: never done), and journals what it found: undo's way, since an
// apply would also re-create what undo deletes. It returns the state
// settled.
func Settle(ctx context.Context, jr *journal.Journal, st *journal.State, opts LookupOptions) (*journal.State, error) {
	r := resolver(ctx, st, opts)
	r.jr = journalLedger{jr}
	if err := r.reconcile(); err != nil {
		return nil, err
	}
	return r.state, nil
}

// Found is what Candidates found for one create in doubt: the documents
// that may be its own, or Why the lookup cannot decide.
type Found struct {
	Candidates []Candidate
	Why        string
}

// Candidates looks up, for each of creates (the creates in doubt of
// records of st whose key the server assigns), the documents that may be
// its own, as reconciliation looks them up (candidates). The lookups are
// read ahead, up to 100 to a call, not one call per create.
func Candidates(ctx context.Context, st *journal.State, creates []*journal.SubState, opts LookupOptions) ([]Found, error) {
	r := resolver(ctx, st, opts)
	claimed, _, err := claimedKeys(st)
	if err != nil {
		return nil, err
	}
	r.readCache = map[string]odata.BatchResponse{}
	var paths []string
	for _, s := range creates {
		if p := r.candidatePath(s); p != "" {
			paths = append(paths, p)
		}
	}
	if err := r.prefetch(paths); err != nil {
		return nil, err
	}
	out := make([]Found, len(creates))
	for i, s := range creates {
		cands, why, err := r.candidates(s, claimedIn(claimed))
		if err != nil {
			return out[:i], err
		}
		out[i] = Found{Candidates: cands, Why: why}
	}
	return out, nil
}

// Get reads one path of the target as reconciliation reads it (tried
// again after a lost answer, a cold form asked again).
func Get(ctx context.Context, path string, opts LookupOptions) (odata.BatchResponse, error) {
	return resolver(ctx, nil, opts).read(path)
}

// Claimed reports whether a record of st holds key, a document of step's
// entity: then it is that record's, no other's.
func Claimed(st *journal.State, step, key string) (bool, error) {
	claimed, _, err := claimedKeys(st)
	return claimed[step+"|"+key], err
}
