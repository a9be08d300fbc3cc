// Package reconcile reads the server about a journal's work in doubt and
// matches a record to the documents the server holds: apply's
// reconciliation before it sends anything (Reader.Reconcile), undo's
// (Settle), and the lookups migrate resolve lists and checks the user's
// decisions with (Candidates, Get, Claimed). The run loop reads through
// the same Reader (its deep inserts, diff, watermark and update reads), so
// that a read is tried again, and a cold form asked again, one way.
//
// It writes nothing but the outcomes it decides, through the journal it is
// given.
package reconcile

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"

	"github.com/migrate-tool/migrate/journal"
	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/read"
)

// Client sends a $batch: the product's odata client, or a test's.
type Client interface {
	Batch(ctx context.Context, reqs []odata.BatchRequest, opts odata.BatchOptions) ([]odata.BatchResponse, error)
}

// BatchOptions are continue-on-error always, and said explicitly (the two
// formats have opposite defaults, and the documented example sends false),
// so that one bad record does not stop the others.
var BatchOptions = odata.BatchOptions{ContinueOnError: true}

// ErrInterrupted is returned (wrapped) when the run stopped before its
// end (the engine's Options.Stop, a cancelled context, a read whose answer
// broke the $batch protocol): in-flight batches were finished and
// journaled; run apply again to resume.
var ErrInterrupted = errors.New("interrupted: run apply again to resume")

// ErrInDoubt is returned (wrapped) when a batch's outcome could not be
// known (timeout, dropped connection, 5xx on the batch). Nothing more was
// sent; run apply again: it reconciles what is in doubt before sending.
var ErrInDoubt = errors.New("a batch's outcome is unknown: run apply again to reconcile it")

// Options make a Reader.
type Options struct {
	Client   Client
	Metadata *odata.Metadata
	// Warn is told each warning (a lookup that may take an older document
	// for the one in doubt, a field the server does not return); nil says
	// nothing.
	Warn func(msg string)
	// Plan is the steps (name, entity, match:) of the plan a run goes by,
	// for what the journal's header does not say; none for undo and
	// resolve, which have the journal alone.
	Plan []journal.Step
	// PerCall is the most reads one call carries (the run's batch size);
	// 0 or more than read.PerBatch is read.PerBatch.
	PerCall int
	// Standard says the target is of the odata dialect (MarkField); a
	// journal written against one says so itself.
	Standard bool
	// Predicted says the client is the dry run's simulated service: its
	// 404s are its predictions, or the target's confirmed already, and
	// none is asked again. Otherwise a 404 a cold form may have answered
	// is asked again (read.Warmth.ConfirmAbsent).
	Predicted bool
}

// Reader reads the server about a journal's work in doubt: the journal's
// state (its header's steps, records and watermarks), the plan's steps,
// and the answers read ahead (prefetch). A run holds one; Settle,
// Candidates and Get make their own.
type Reader struct {
	ctx   context.Context
	opts  Options
	md    *odata.Metadata
	state *journal.State
	warm  read.Warmth // entity sets whose 404 is the truth

	// cache holds the answers Reconcile and Candidates read ahead
	// (prefetch), by path; nil outside them.
	cache map[string]odata.BatchResponse

	mu sync.Mutex
	// unread holds, by entity set, the fields its read answers leave out
	// (unreadFields).
	unread map[string]map[string]bool
	warned map[string]bool              // WarnOnce
	marks  map[string]journal.Watermark // step → this run's watermark
	// filled holds, by step|nav, the fields the server answered this run's
	// writes with another value than sent (NoteFilled), besides those the
	// journal's state knew when the run began.
	filled map[string]map[string]bool
	held   []*journal.State // every state it read by (Release)
}

// NoteFilled records the fields the server answered a write of a record
// of step's entity (nav "") or of its sub-form nav with its own value of
// (journal.SubResult.Fills): from then on, documents or lines of the step
// in doubt are not matched on them.
func (r *Reader) NoteFilled(step, nav string, fields []string) {
	if len(fields) == 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.filled == nil {
		r.filled = map[string]map[string]bool{}
	}
	key := step + "|" + nav
	if r.filled[key] == nil {
		r.filled[key] = map[string]bool{}
	}
	for _, k := range fields {
		r.filled[key][k] = true
	}
}

// filledFields are the fields of step's entity (nav "") or sub-form nav
// the server does not keep as sent: the journal's and this run's
// (NoteFilled).
func (r *Reader) filledFields(step, nav string) map[string]bool {
	out := map[string]bool{}
	if r.state != nil {
		for _, f := range r.state.FilledFields(step, nav) {
			out[f] = true
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for f := range r.filled[step+"|"+nav] {
		out[f] = true
	}
	return out
}

// New is a Reader of the state st (nil for a read that needs no journal,
// Get's) under ctx.
func New(ctx context.Context, st *journal.State, o Options) *Reader {
	return &Reader{ctx: ctx, opts: o, md: o.Metadata, state: st}
}

// Release releases every state of the journal the Reader was given or
// took (journal.State.Release): call it once the run that holds it is
// over.
func (r *Reader) Release() {
	for _, st := range r.held {
		st.Release()
	}
	r.held = nil
}

// SetState is the journal's state as the run holds it now: replayed at
// its start, or as a dry run predicts it.
func (r *Reader) SetState(st *journal.State) {
	r.state = st
	r.held = append(r.held, st)
}

// State is the journal's state the Reader reads by: Reconcile's once it
// settled the work in doubt.
func (r *Reader) State() *journal.State { return r.state }

// Read GETs one path through a batch of one (reads are idempotent), or
// takes its answer from what prefetch read ahead.
func (r *Reader) Read(path string) (odata.BatchResponse, error) {
	if resp, ok := r.cache[path]; ok {
		return resp, nil
	}
	return r.ReadCtx(r.ctx, path)
}

// ReadCtx is Read with a context of its own (odata.WithCallStats), never
// from the cache.
func (r *Reader) ReadCtx(ctx context.Context, path string) (odata.BatchResponse, error) {
	resps, err := r.ReadBatch(ctx, []odata.BatchRequest{{ID: "1", Method: "GET", URL: path}})
	if err != nil {
		return odata.BatchResponse{}, reconcileErr(path, err)
	}
	return resps[0], nil
}

// prefetch reads paths ahead, at most PerCall to a call, into the cache
// that Read answers from (while Reconcile or Candidates has one).
func (r *Reader) prefetch(paths []string) error {
	if r.cache == nil {
		return nil
	}
	return r.readInto(r.cache, paths)
}

// readInto reads the paths into has does not hold, at most PerCall to a
// call.
func (r *Reader) readInto(has map[string]odata.BatchResponse, paths []string) error {
	var reqs []odata.BatchRequest
	asked := map[string]bool{}
	for _, p := range paths {
		if _, ok := has[p]; ok || asked[p] {
			continue
		}
		asked[p] = true
		reqs = append(reqs, odata.BatchRequest{Method: http.MethodGet, URL: p})
	}
	per := r.PerCall()
	for start := 0; start < len(reqs); start += per {
		chunk := reqs[start:min(start+per, len(reqs))]
		for i := range chunk {
			chunk[i].ID = strconv.Itoa(i + 1)
		}
		resps, err := r.ReadBatch(r.ctx, chunk)
		if err != nil {
			return reconcileErr(chunk[0].URL, err)
		}
		for i, resp := range resps {
			has[chunk[i].URL] = resp
		}
	}
	return nil
}

// PerCall is how many GETs go in one call: the batch size, at most
// 100, not one call per read (a server before 21.0 takes 1,000 writes a call,
// but a read answers up to 2,000 rows each).
func (r *Reader) PerCall() int {
	if r.opts.PerCall > 0 && r.opts.PerCall < read.PerBatch {
		return r.opts.PerCall
	}
	return read.PerBatch
}

// reconcileErr is a failed read of reconciliation: the server cannot be
// read just now (lost connections, 5xx, throttling), so the work stays in
// doubt for the next apply, which is the CLI's exit 4, not a target that
// cannot be reached; a refusal or an interruption is what it is.
func reconcileErr(path string, err error) error {
	if oe, ok := odata.Refused(err); ok && oe.Status != http.StatusTooManyRequests || errors.Is(err, ErrInterrupted) {
		return fmt.Errorf("reconciling %s: %w", path, err)
	}
	return fmt.Errorf("%w: reconciling %s: %w", ErrInDoubt, path, err)
}

// ReadBatch is readBatchOnce whose 404s are confirmed (unless
// Options.Predicted).
func (r *Reader) ReadBatch(ctx context.Context, reqs []odata.BatchRequest) ([]odata.BatchResponse, error) {
	out, err := r.readBatchOnce(ctx, reqs)
	if err != nil {
		return out, err
	}
	if r.opts.Predicted {
		return out, nil
	}
	return r.warm.ConfirmAbsent(reqs, out, func(again []odata.BatchRequest) ([]odata.BatchResponse, error) {
		return r.readBatchOnce(ctx, again)
	})
}

// readBatchOnce sends reads and returns their answers in the order of reqs
// (ReadBatch also asks again what a cold form denied).
// A read changes nothing: unlike a write, it is safe to try again after a
// lost answer, a 5xx or an answer that breaks the $batch protocol (an id
// twice, missing or never asked for), up to read.Attempts times. A batch the
// server refuses is not tried again.
//
// ctx is the run's, or a step's naming it.
func (r *Reader) readBatchOnce(ctx context.Context, reqs []odata.BatchRequest) ([]odata.BatchResponse, error) {
	var err error
	for attempt := 0; attempt < read.Attempts; attempt++ {
		var got []odata.BatchResponse
		got, err = r.opts.Client.Batch(ctx, reqs, BatchOptions)
		if err == nil {
			out, problem := read.Answers(reqs, got)
			if out != nil {
				return out, nil
			}
			// Nothing was written: the run stops, and apply run again
			// reads again.
			err = fmt.Errorf("%w: the server's answer to a read broke the $batch protocol: %s", ErrInterrupted, problem)
			continue
		}
		if _, ok := odata.Refused(err); ok || ctx.Err() != nil {
			break
		}
	}
	return nil, err
}

// WarnOnce gives a warning once per key and Reader.
func (r *Reader) WarnOnce(key, msg string) {
	r.mu.Lock()
	if r.warned == nil {
		r.warned = map[string]bool{}
	}
	seen := r.warned[key]
	r.warned[key] = true
	r.mu.Unlock()
	if !seen {
		r.warn(msg)
	}
}

// warn tells Options.Warn, if any.
func (r *Reader) warn(msg string) {
	if r.opts.Warn != nil {
		r.opts.Warn(msg)
	}
}
