package reconcile

import (
	"context"

	"github.com/migrate-tool/migrate/journal"
	"github.com/migrate-tool/migrate/odata"
)

// What undo and resolve read of the server about a journal's work in
// doubt, as apply's reconciliation reads it: Settle settles it for undo;
// Candidates, Get and Claimed are the lookups package resolve lists and
// checks the user's decisions with. Each takes Options' Client, Metadata
// and Warn; the journal alone says the steps.

// Settle settles the work in doubt of journal jr (st its state) by
// reading the server, as apply's reconciliation settles it (found: done;
// absent: never done), and journals what it found: undo's way, since an
// apply would also re-create what undo deletes. It returns the state
// settled.
func Settle(ctx context.Context, jr Journal, st *journal.State, opts Options) (*journal.State, error) {
	r := New(ctx, st, opts)
	if _, err := r.Reconcile(jr); err != nil {
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
// its own, as reconciliation looks them up (Reader.Lookup). The lookups are
// read ahead, up to 100 to a call, not one call per create.
func Candidates(ctx context.Context, st *journal.State, creates []*journal.SubState, opts Options) ([]Found, error) {
	r := New(ctx, st, opts)
	claimed, _, err := claimedKeys(st)
	if err != nil {
		return nil, err
	}
	r.cache = map[string]odata.BatchResponse{}
	var paths []string
	for _, s := range creates {
		if p := r.candidatePath(s); p != "" {
			paths = append(paths, p)
		}
	}
	if err := r.readAhead(paths, creates); err != nil {
		return nil, err
	}
	return r.lookupAll(creates, claimed)
}

// readAhead reads paths into r's cache, up to 100 to a call, then the
// looser lookups of creates (creates the server numbers), which are
// known once their own lookups' answers are in.
func (r *Reader) readAhead(paths []string, creates []*journal.SubState) error {
	if err := r.prefetch(paths); err != nil {
		return err
	}
	var near []string
	for _, s := range creates {
		near = append(near, r.nearAhead(s)...)
	}
	return r.prefetch(near)
}

// lookupAll looks up the candidates of creates (Lookup) in the order
// a level of reconciliation decides them: a create that finds one
// document exactly claims it (in claimed) first; those that find near
// candidates only are looked up again once all have, so that another
// record's own document is never listed as a near candidate.
func (r *Reader) lookupAll(creates []*journal.SubState, claimed map[string]bool) ([]Found, error) {
	out := make([]Found, len(creates))
	var later []int
	for i, s := range creates {
		cands, why, err := r.Lookup(s, claimedIn(claimed))
		if err != nil {
			return nil, err
		}
		out[i] = Found{Candidates: cands, Why: why}
		switch {
		case why == "" && len(cands) == 1:
			claimed[s.Step+"|"+cands[0].Key] = true
		case why != "" && len(cands) > 0:
			later = append(later, i)
		}
	}
	for _, i := range later {
		cands, why, err := r.Lookup(creates[i], claimedIn(claimed))
		if err != nil {
			return nil, err
		}
		out[i] = Found{Candidates: cands, Why: why}
	}
	return out, nil
}

// Get reads one path of the target as reconciliation reads it (tried
// again after a lost answer, a cold form asked again).
func Get(ctx context.Context, path string, opts Options) (odata.BatchResponse, error) {
	return New(ctx, nil, opts).Read(path)
}

// Claimed reports whether a record of st holds key, a document of step's
// entity: then it is that record's, no other's.
func Claimed(st *journal.State, step, key string) (bool, error) {
	claimed, _, err := claimedKeys(st)
	return claimed[step+"|"+key], err
}
