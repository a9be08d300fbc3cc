package executor

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net/http"
	"os"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/migrate-tool/migrate/internal/diag"
	"github.com/migrate-tool/migrate/journal"
	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/plan"
	"github.com/migrate-tool/migrate/reconcile"
	"github.com/migrate-tool/migrate/source"
	"github.com/migrate-tool/migrate/transform"
)

// errHalt stops a step's record stream once the run is halting.
var errHalt = errors.New("halt")

// runner is one run of the plan: Apply's, or the dry run's over a
// simulated service (Plan). Both walk the same steps with the same loop;
// what differs is said by the run's ledger (jr: the journal, or the dry
// run's tally) and its service (svc: the target, or the simulated one).
type runner struct {
	opts  *runOptions
	sizer *batchSizer // the batches' size now: calls near the server's budget shrink it
	ctx   context.Context
	md    *odata.Metadata
	jr    ledger
	svc   service
	// workMu serialises the bookkeeping of records: the units of one
	// record can be in several batches that complete concurrently. A
	// run's own: the loads of several companies at once do not share it.
	workMu sync.Mutex
	hook   Hook
	limit  int
	sem    chan struct{}
	// settling holds the answers that gave their call's slot back before
	// they were journaled (answeredWhole): no more than sem's size.
	settling chan struct{}
	// rd reads the server as reconciliation does (package reconcile):
	// the run's reads, its lookups, and the reconciliation itself.
	rd *reconcile.Reader
	// unchanged: the journal was begun from this very plan and sources.
	unchanged bool
	// accept is the plan and sources a resume goes on with although the
	// journal began from others (allowed): journaled once the rows are
	// known not to have shifted, so that later runs do not ask again.
	accept *journal.Accepted
	// changed is each step's stepRun.changed, once the step ended.
	changed map[string]int
	// delta, when set, is a delta load's (delta.go): listed only, or sent
	// (apply --delta).
	delta *deltaRun

	stopping atomic.Bool
	calls    atomic.Int64 // HTTP calls made (counted)
	subs     atomic.Int64
	txns     atomic.Int64 // API transactions: entities and lines written

	mu      sync.Mutex
	err     error           // first fatal error
	pending []journal.Entry // record entries to write with the next append
	undec   []string
	// warned are the warnings of the run, each once: of a prediction (the
	// dry run, diff), part of its result, which every view renders; of a
	// load, journaled for the run report (warn).
	warned []string
}

// warn tells the user what a run cannot know or do as it should: a load
// as it goes (the hook) and in its journal, for the run report (each
// warning once); a prediction in its result (Summary.Warnings).
func (r *runner) warn(msg string) {
	if r.jr == nil { // before the journal is open: said, not kept
		r.hook.Warn(msg)
		return
	}
	r.mu.Lock()
	seen := slices.Contains(r.warned, msg)
	if !seen {
		r.warned = append(r.warned, msg)
	}
	r.mu.Unlock()
	if seen || !r.jr.reconciles() {
		return
	}
	r.hook.Warn(msg)
	r.queue(journal.Entry{Kind: journal.KindWarning, Warning: msg})
}

// ledger is where a run writes ahead: the journal file (Apply), or a tally
// that keeps only what the dry run's summary needs (Plan), so that a dry
// run of a million rows stays in flat memory.
type ledger interface {
	NextBatch() int
	Append(es ...journal.Entry) error
	AppendUnsynced(es ...journal.Entry) error
	Sync() error
	Counts(step string) journal.Counts
	Snapshot() *journal.State
	Close() error
	// ref is the key of the record of step and id as the ledger knows it
	// now, as ref() gives it (KeyValue): from this run or an earlier one.
	ref(step, id string) (any, bool)
	// keep is told the key of each record settled with one, for ref():
	// the journal's index holds them already.
	keep(step, id, key string)
	// placeholders reports whether a key ref() gives may be a stand-in for
	// one the server numbers (transform.Placeholders).
	placeholders() bool
	// loadedBefore is told of each record the journal the run resumes
	// holds loaded (or closed), which the run does not send again.
	loadedBefore()
	// diffs is where each record's classification is kept (Diff's), nil
	// when it is not: every step then reads, an insert step's keys too.
	diffs() *differ
	// reconciles reports whether the ledger keeps what each sub-request of
	// a batch was and writes (journal.Sub, what the op leaves on the
	// server) and the watermarks that bound its lookups: what
	// reconciliation and undo read. The dry run's tally keeps counts only.
	reconciles() bool
	// committed is told of each record committed, with its sub-form
	// children (a deep insert's too, which have no sub-request of their own).
	committed(step string, children int)
	// held says which of keys a record of step holds as its entity's key
	// (the claims a failed deep insert's lookup checks, deep.go).
	held(step string, keys []string) (map[string]bool, error)
	summary(p *plan.Plan) *Summary
}

// journalLedger is the journal file: its state says what was committed.
type journalLedger struct{ *journal.Journal }

func (journalLedger) committed(string, int) {}

func (l journalLedger) ref(step, id string) (any, bool) {
	k, ok := l.Key(step, id)
	if !ok {
		return nil, false
	}
	return KeyValue(k), true
}

func (journalLedger) keep(string, string, string) {}

// placeholders: every key the journal holds is the server's own.
func (journalLedger) placeholders() bool { return false }

func (journalLedger) loadedBefore() {}

func (journalLedger) diffs() *differ { return nil }

func (journalLedger) reconciles() bool { return true }

func (l journalLedger) held(step string, keys []string) (map[string]bool, error) {
	return l.HeldKeys(step, keys)
}

func (l journalLedger) summary(p *plan.Plan) *Summary { return summarize(l.State(), p) }

func newRunner(ctx context.Context, opts *runOptions, svc service) *runner {
	r := &runner{opts: opts, ctx: ctx, md: opts.Metadata, svc: svc, hook: opts.hook(), limit: opts.limit(),
		sem: make(chan struct{}, opts.concurrency()), settling: make(chan struct{}, opts.concurrency()), changed: map[string]int{}}
	r.sizer = newBatchSizer(r.limit)
	if opts.Client != nil {
		opts.Client = counted{inner: opts.Client, n: &r.calls, reads: r.journalReads}
	}
	r.rd = r.newReader()
	return r
}

// summary is what the run's ledger counts, of its target's dialect (a
// standard OData service: Summary.Standard).
func (r *runner) summary() *Summary {
	sum := r.jr.summary(r.opts.Plan)
	sum.Standard = r.opts.Version.Standard
	return sum
}

// journalReads journals a call of reads (KindReads) so that the run
// report counts it as apply did; the watermark's read is journaled with
// the watermark it found.
func (r *runner) journalReads(reqs []odata.BatchRequest, c *odata.CallStats) {
	if r.jr == nil || len(reqs) == 1 && isWatermarkRead(reqs[0].URL) {
		return
	}
	r.subs.Add(int64(len(reqs))) // the run report counts them from this entry
	if err := r.appendUnsynced(StampCalls(journal.Entry{Kind: journal.KindReads, Gets: len(reqs)}, r.opts.now().UTC(), c)); err != nil {
		r.halt(err) // the journal failed (a full disk): the run stops, resumable
	}
}

// counted is a run's client: it counts every HTTP call the run makes,
// writes and reads, retries and the warm-ups of cold forms included, so
// that the calls a summary shows are the calls the server saw (and the
// run report, which counts them from the journal, says the same).
type counted struct {
	inner Client
	n     *atomic.Int64
	// reads journals a call of reads only (nil: none).
	reads func(reqs []odata.BatchRequest, c *odata.CallStats)
}

func (c counted) Batch(ctx context.Context, reqs []odata.BatchRequest, opts odata.BatchOptions) ([]odata.BatchResponse, error) {
	s := odata.CallStatsOf(ctx)
	own := s == nil // a write batch brings its own, journaled with its outcome
	if own {
		s = &odata.CallStats{}
		ctx = odata.WithCallStats(ctx, s)
	}
	before := s.Attempts
	resps, err := c.inner.Batch(ctx, reqs, opts)
	c.n.Add(int64(s.Attempts - before))
	if own && c.reads != nil && s.Attempts > before && !writes(reqs) {
		c.reads(reqs, s)
	}
	return resps, err
}

// writes reports whether a batch holds a sub-request that writes.
func writes(reqs []odata.BatchRequest) bool {
	return slices.ContainsFunc(reqs, func(q odata.BatchRequest) bool { return q.Method != http.MethodGet })
}

// Apply loads the plan: it creates the journal, or resumes it (reconciling
// what is in doubt first), and sends every step's records in dependency
// order. The summary is the journal's state at the end.
func Apply(ctx context.Context, run *Prepared, o Options) (*Summary, error) {
	if run == nil || run.Plan == nil || run.records == nil || run.Metadata == nil || o.Client == nil || o.Journal == "" {
		return nil, errors.New("executor: Apply needs a prepared run, a Client and a Journal")
	}
	opts := newRunOptions(run, o)
	waves, err := opts.Plan.Order()
	if err != nil {
		return nil, err
	}
	r := newRunner(ctx, opts, &target{standard: opts.Version.Standard})
	if err := r.openJournal(waves); err != nil {
		return nil, err
	}
	if r.delta != nil && !r.delta.send {
		return r.listDelta(waves)
	}
	waves, err = r.chooseSteps(waves)
	if err == nil {
		err = r.jr.Append(r.runEntry())
	}
	if err != nil {
		r.jr.Close()
		return nil, err
	}
	return r.run(waves)
}

// run sends every step's records, wave after wave, and sums up.
func (r *runner) run(waves [][]*plan.Step) (*Summary, error) {
	opts := r.opts
	defer r.rd.Release() // after the journal closes
	defer r.jr.Close()
	if opts.Stop != nil {
		done := make(chan struct{})
		defer close(done)
		go func() {
			select {
			case <-opts.Stop:
				r.stopping.Store(true)
			case <-done:
			}
		}()
	}
	if err := r.refuseShifted(); err != nil {
		return nil, err
	}
	if r.accept != nil {
		// Journaled, so that --allow-plan-change is not asked for again
		// on every later run of the same plan.
		if err := r.jr.Append(journal.Entry{Kind: journal.KindAccept, Accept: r.accept}); err != nil {
			return nil, err
		}
	}
	if err := r.reconcile(); err != nil {
		r.halt(err)
	}
	if r.nothingLeft() {
		// The journal's last run ended complete and nothing changed since:
		// every row would be read again only to be skipped (at a million
		// rows, most of a resume's time). Each step is reported as it is.
		for _, wave := range waves {
			for _, s := range wave {
				r.hook.StepStarted(s.Name, s.Entity)
				r.stepFinished(s)
			}
		}
		waves = nil
	}
	for _, wave := range waves {
		if r.halted() {
			break
		}
		var wg sync.WaitGroup
		for _, s := range wave {
			wg.Add(1)
			r.svc.spawn(func() {
				defer wg.Done()
				if err := r.runStep(s); err != nil {
					r.halt(err)
				}
			})
		}
		wg.Wait()
	}
	if err := r.flushPending(); err != nil {
		r.halt(err)
	}
	if !r.halted() && opts.Limit == 0 && len(opts.Steps) == 0 {
		// Every step ran to its end: status tells this run from one
		// stopped between steps by this line (a trial or a choice of
		// steps did not).
		if err := r.jr.Append(journal.Entry{Kind: journal.KindFinished, At: new(opts.now().UTC())}); err != nil {
			r.halt(err)
		}
	}
	r.jr.Close()
	// The ledger's own state has every line appended folded in: no replay.
	sum := r.summary()
	sum.Requests = int(r.calls.Load())
	sum.Subrequests = int(r.subs.Load())
	sum.Transactions = int(r.txns.Load())
	sum.Undecided = append(sum.Undecided, r.undec...)
	sum.Warnings = append(r.opts.formattedWarnings(), r.opts.unmade.warnings()...)
	r.mu.Lock()
	for _, w := range r.warned {
		d := diag.New(diag.Warning, diag.Range{}, w)
		if r.jr.reconciles() {
			sum.Raised = append(sum.Raised, d)
		} else {
			sum.Warnings = append(sum.Warnings, d)
		}
	}
	r.mu.Unlock()
	sum.Unchecked, sum.UncheckedMore = r.opts.unmade.count()
	sum.Shrank = r.sizer.shrink()
	r.mu.Lock()
	for i := range sum.Steps {
		sum.Steps[i].Changed = r.changed[sum.Steps[i].Name]
	}
	if r.delta != nil {
		sum.Delta = r.delta.result(opts.Plan)
		if r.delta.predicted && r.delta.send {
			sum.countConflicts()
		}
	}
	err := r.err
	r.mu.Unlock()
	switch {
	case err != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)):
		sum.Interrupted = true
		return sum, fmt.Errorf("%w (%v)", ErrInterrupted, err)
	case err != nil:
		sum.Interrupted = true
		return sum, err
	case r.stopping.Load():
		sum.Interrupted = true
		return sum, ErrInterrupted
	case r.ctx.Err() != nil:
		// Cancelled between two steps: no batch failed for it, but the
		// steps after were never begun.
		sum.Interrupted = true
		return sum, fmt.Errorf("%w (%v)", ErrInterrupted, r.ctx.Err())
	}
	return sum, nil
}

func (r *runner) openJournal(waves [][]*plan.Step) error {
	hdr := journal.Header{Plan: r.opts.Plan.Name, PlanPath: r.opts.Plan.Path, PlanHash: r.opts.Plan.Hash,
		Sources: sourceHashes(r.opts.Plan), Target: Redact(r.opts.Target), SystemVersion: r.opts.Version.Raw,
		ToolVersion: r.opts.ToolVersion, User: r.opts.User, Created: r.opts.now().UTC(), MarksFinish: true}
	if hdr.SystemVersion == "" && r.opts.Version.Major > 0 {
		hdr.SystemVersion = r.opts.Version.String()
	}
	if r.opts.Version.Standard {
		hdr.Dialect = string(odata.DialectOData)
	}
	for i, w := range waves {
		for _, s := range w {
			hdr.Steps = append(hdr.Steps, journal.Step{Name: s.Name, Entity: s.Entity, Wave: i, Match: s.Match})
		}
	}
	// Open takes the journal's lock before reading it, and Create before
	// looking whether it exists: of two runs started at once on one
	// journal, one runs and the other is refused (*journal.LockedError).
	// The state is lean: settled records stay in the journal's index.
	jr, st, err := journal.OpenIndexed(r.opts.Journal)
	if errors.Is(err, fs.ErrNotExist) && r.opts.Delta {
		return &DeltaError{Journal: r.opts.Journal, Reason: "there is no journal to load a delta against: apply without --delta loads the plan first"}
	}
	if errors.Is(err, fs.ErrNotExist) {
		jr, err = journal.CreateIndexed(r.opts.Journal, hdr)
		if errors.Is(err, journal.ErrExists) {
			// Another run created it between the two calls.
			jr, st, err = journal.OpenIndexed(r.opts.Journal)
		} else if err == nil {
			r.jr = journalLedger{jr}
			r.setState(jr.Snapshot())
			return nil
		}
	}
	if err != nil {
		return err
	}
	listing := r.opts.deltaListing(st, hdr)
	if r.opts.goesOnWithDelta(st, listing) {
		r.opts.Delta = true
	}
	if r.opts.Delta {
		if err := deltaStart(r.opts.Journal, st); err != nil {
			jr.Close()
			return err
		}
	}
	// A delta expects the sources to have changed; the plan may not.
	err = checkHeader(st.Header, hdr, r.opts.AllowPlanChange || listing, r.opts.RetryFailed || r.opts.Delta)
	var se *StaleError
	if errors.As(err, &se) {
		se.Journal = r.opts.Journal
	}
	if err == nil {
		err = CheckTarget(r.opts.Journal, st.Header, r.opts.Target)
	}
	if err == nil && st.Header.Dialect != hdr.Dialect {
		err = &DialectError{Journal: r.opts.Journal, Was: dialectName(st.Header.Dialect), Now: dialectName(hdr.Dialect)}
	}
	if err != nil {
		jr.Close()
		return err
	}
	r.jr = journalLedger{jr}
	r.setState(st)
	r.unchanged = st.Header.PlanHash == hdr.PlanHash && maps.Equal(st.Header.Sources, hdr.Sources)
	if !r.unchanged {
		r.accept = &journal.Accepted{PlanHash: hdr.PlanHash, Sources: hdr.Sources}
	}
	switch {
	case r.opts.Delta:
		r.delta = newDeltaRun(true, r.opts.Overwrite)
	case listing:
		r.delta = newDeltaRun(false, false)
	}
	return nil
}

// DialectError refuses to resume a journal in another dialect than its run
// spoke: the same service spoken to otherwise (its keys, its ETags) would
// not be found holding what the journal says.
type DialectError struct {
	Journal  string
	Was, Now string // as --dialect names them
}

func (e *DialectError) Error() string {
	return fmt.Sprintf("%s was written to a target of dialect %s, and this run speaks %s: nothing was sent; give --dialect %s (docs/other-services.md)", e.Journal, e.Was, e.Now, e.Was)
}

// dialectName is a journal header's Dialect as --dialect names it.
func dialectName(d string) string {
	if d == "" {
		return string(odata.DialectPriority)
	}
	return d
}

// StaleError is a resume refused because the plan or a source changed.
type StaleError struct {
	Journal string
	Changes []string
}

func (e *StaleError) Error() string {
	return fmt.Sprintf("%s was made from something else: %s; run with the original files, or allow the change (--allow-plan-change) after checking it", e.Journal, strings.Join(e.Changes, "; "))
}

// TargetError refuses a journal against a service other than the one its
// run wrote to: a resume, a retry or an undo there would write into, or
// delete from, another company. No flag lets it through.
type TargetError struct {
	Journal  string
	Was, Now string // service roots without credentials
}

func (e *TargetError) Error() string {
	return fmt.Sprintf("%s was written to %s, not %s: nothing was sent; give --target %s (or set MIGRATE_TARGET to it) to use this journal", e.Journal, e.Was, e.Now, e.Was)
}

// CheckTarget refuses target when it is not the service whose run hdr
// heads. Both are compared as service roots: credentials, a trailing slash
// and the language code after tabula.ini (docs/service.md, Service root) do
// not make another company. A journal that names no target (written before
// targets were journaled) is let through.
func CheckTarget(journalPath string, hdr journal.Header, target string) error {
	was, now := Redact(hdr.Target), Redact(target)
	if was == "" || now == "" || serviceRoot(was) == serviceRoot(now) {
		return nil
	}
	return &TargetError{Journal: journalPath, Was: was, Now: now}
}

func serviceRoot(target string) string {
	if root, err := odata.ServiceRoot(target, 0); err == nil {
		return root
	}
	return target
}

// checkHeader refuses to resume a journal made from another plan or other
// sources (the target is CheckTarget's). With retryFailed a source whose content changed
// is expected (the failed rows were corrected), so only that is let through.
func checkHeader(old, now journal.Header, allow, retryFailed bool) error {
	var ch []string
	if old.PlanHash != now.PlanHash {
		ch = append(ch, fmt.Sprintf("the plan changed (hash %.12s, now %.12s)", old.PlanHash, now.PlanHash))
	}
	for f, h := range now.Sources {
		if oh, ok := old.Sources[f]; ok && oh != h {
			if !retryFailed {
				ch = append(ch, "source "+f+" changed")
			}
		} else if !ok {
			ch = append(ch, "source "+f+" is new")
		}
	}
	for f := range old.Sources {
		if _, ok := now.Sources[f]; !ok {
			ch = append(ch, "source "+f+" is no longer used")
		}
	}
	if len(ch) == 0 || allow {
		return nil
	}
	sortStrings(ch)
	return &StaleError{Changes: ch}
}

func (r *runner) halt(err error) {
	r.mu.Lock()
	if r.err == nil {
		r.err = err
	}
	r.mu.Unlock()
}

func (r *runner) halted() bool {
	if r.stopping.Load() || r.ctx.Err() != nil {
		return true
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err != nil
}

// Ref implements transform.Refs: the key of what step created or found for
// id, from this run or an earlier one, as the ledger knows it. Steps run in
// waves, so a referenced step has finished before a step that refers to it
// starts.
func (r *runner) Ref(step, id string) (any, bool) { return r.jr.ref(step, id) }

// Placeholders implements transform.Placeholders: in the dry run a key
// that ref() gives may be the simulated service's stand-in for one the
// server numbers ({key}), which no field's type or length can check.
func (r *runner) Placeholders() bool { return r.jr != nil && r.jr.placeholders() }

// queue holds record entries until the next append, so that skipped rows
// and row errors cost no fsync of their own.
func (r *runner) queue(e journal.Entry) {
	r.mu.Lock()
	r.pending = append(r.pending, e)
	n := len(r.pending)
	r.mu.Unlock()
	if n >= 1000 {
		if err := r.flushPending(); err != nil {
			r.halt(err)
		}
	}
}

func (r *runner) flushPending() error {
	r.mu.Lock()
	p := r.pending
	r.pending = nil
	r.mu.Unlock()
	if len(p) == 0 {
		return nil
	}
	return r.jr.Append(p...)
}

// appendUnsynced writes entries after the queued ones without waiting for
// an fsync (journal.AppendUnsynced): the next Append, Sync or Close makes
// them durable.
func (r *runner) appendUnsynced(es ...journal.Entry) error {
	r.mu.Lock()
	p := r.pending
	r.pending = nil
	r.mu.Unlock()
	return r.jr.AppendUnsynced(append(p, es...)...)
}

// appendWith writes entries after the queued ones, in one fsync.
func (r *runner) appendWith(es ...journal.Entry) error {
	r.mu.Lock()
	p := r.pending
	r.pending = nil
	r.mu.Unlock()
	return r.jr.Append(append(p, es...)...)
}

// stepRun is one step being applied.
type stepRun struct {
	r      *runner
	ctx    context.Context // the run's, naming the step (batchStep)
	step   *plan.Step
	entity string
	b      *builder
	pk     *packer
	brk    *breaker

	mu       sync.Mutex
	queued   []unit
	inflight sync.WaitGroup
	reads    []*work // upsert/update: records waiting for their read
	// deepReads: resumed deep inserts waiting for their read back.
	deepReads []*work
	mark      markOnce
	// unseen are the records an earlier run left pending that the source
	// has not given again in this run (settleUnseen).
	unseen map[string]bool
	// sending counts the step's batches sent and not yet accounted for
	// (complete), and flying those of their documents the server numbers:
	// a failed deep insert is looked up by its fields only when none of
	// them looks like it (deep.go). Both change under lookMu.
	sending atomic.Int32
	flying  map[*op]int // the batch of each
	// made are the keys the server gave documents of batches answered and
	// not yet journaled (answered): a failed deep insert's lookup leaves
	// them out, as it leaves out what the journal holds.
	made   map[*op]string
	lookMu sync.Mutex
	// changed counts the committed records whose source rows changed
	// since they were loaded: skipped, for apply does not update what it
	// loaded. gone holds the failed records the source has
	// not given yet: those it never gives are gone.
	changed int
	gone    map[string]bool
	// deltas are the changed records a delta load patches, waiting for the
	// read of what the server holds (deltaPending).
	deltas []deltaWork
}

func (r *runner) runStep(s *plan.Step) error {
	sr := &stepRun{r: r, ctx: context.WithValue(r.ctx, stepKey{}, s.Name), step: s, entity: s.Entity, b: &builder{md: r.md, deep: s.DeepInsert}, brk: newBreaker(r.opts.Plan)}
	sr.pk = &packer{limit: r.limit, sizer: r.sizer, maxBytes: PageBytes(r.opts.memory), emit: sr.emit}
	sr.unseen = r.pendingRecords(s.Name)
	sr.gone = failedIDs(r.state(), s.Name)
	ctx := r.ctx
	wanted := r.opts.Hook != nil
	if w, ok := r.hook.(TotalsWanted); ok {
		wanted = w.WantsTotals()
	}
	if wanted {
		if n, ok := r.expectedRows(s); ok {
			sr.tellTotal(n) // before the start, so that it shows the total
		}
		ctx = transform.WithTotal(r.ctx, sr.tellTotal)
	}
	r.hook.StepStarted(s.Name, s.Entity)
	err := r.opts.records.Records(ctx, s.Name, r.opts.open, r, func(res transform.Result) error {
		if r.halted() {
			return errHalt
		}
		if err := sr.drain(); err != nil {
			return err
		}
		return sr.handle(res)
	})
	if err != nil && !errors.Is(err, errHalt) {
		r.halt(err)
	}
	if err == nil {
		err = sr.readPending()
		if err == nil {
			err = sr.readDeepPending()
		}
		if err == nil && r.delta != nil {
			err = sr.deltaPending()
			if err == nil {
				err = r.delta.gone(r.state(), s.Name, s.Entity)
			}
		}
		if err != nil && !errors.Is(err, errHalt) {
			r.halt(err)
		}
		if err == nil && r.opts.Limit == 0 && !r.halted() {
			sr.settleUnseen()
		}
	}
	// Wait for what is in flight before sending a last, partial batch: its
	// answers may release continuation units that fill it.
	for {
		sr.inflight.Wait()
		if r.halted() {
			break
		}
		sr.mu.Lock()
		n := len(sr.queued)
		sr.mu.Unlock()
		if n > 0 {
			if err := sr.drain(); err != nil && !errors.Is(err, errHalt) {
				r.halt(err)
			}
			continue
		}
		if len(sr.pk.cur) == 0 {
			break
		}
		if err := sr.pk.flush(); err != nil && !errors.Is(err, errHalt) {
			r.halt(err)
		}
	}
	sr.pk.cur, sr.pk.later = nil, nil
	if err := r.flushPending(); err != nil {
		return err
	}
	// Outcomes written without their own fsync are durable before the step
	// is reported finished; so is, when its source was read to the end
	// (no trial, no stop), that the step was.
	r.mu.Lock()
	r.changed[s.Name] = sr.changed
	r.mu.Unlock()
	if read := err == nil && r.opts.Limit == 0 && !r.halted(); read {
		done := journal.Entry{Kind: journal.KindDone, Done: s.Name, Gone: slices.Sorted(maps.Keys(sr.gone))}
		if r.delta != nil && r.delta.send {
			done.Conflicts = r.delta.unsent(s.Name)
		}
		if err := r.appendWith(done); err != nil {
			return err
		}
	}
	if err := r.jr.Sync(); err != nil {
		return err
	}
	r.stepFinished(s)
	return nil
}

func (r *runner) stepFinished(s *plan.Step) {
	c := r.stepCounts(s.Name)
	r.hook.StepFinished(s.Name, StepSummary{Name: s.Name, Entity: s.Entity, Committed: c.Committed,
		Failed: c.Failed, Skipped: c.Skipped, Pending: c.Pending, InDoubt: c.InDoubt, Waived: c.Waived})
}

// nothingLeft reports a resume with nothing to do: the journal's last run
// walked every step and ended complete (its finished line, which journals
// written before it lack), and the plan and every source are byte for byte
// the ones it began from. A plan that calls env() or now() may give other
// records from the same files, and a source that reads a connection is a
// live company that may hold rows added since: they are read again (what
// was copied is known by its identity, and skipped). A delta reads them
// again: what an earlier delta left unsent (a conflict) is listed again,
// and a source unchanged sends nothing.
func (r *runner) nothingLeft() bool {
	st := r.state()
	if r.delta != nil || !r.unchanged || !st.Header.MarksFinish || !st.Complete() || r.opts.Plan.Path == "" {
		return false
	}
	for _, src := range r.opts.Plan.Sources {
		if src.Connection != "" {
			return false
		}
	}
	text, err := os.ReadFile(r.opts.Plan.Path)
	return err == nil && !callsEnvOrNow.Match(text)
}

var callsEnvOrNow = regexp.MustCompile(`\b(env|now)\s*\(`)

func (r *runner) stepCounts(step string) journal.Counts {
	if err := r.flushPending(); err != nil {
		return journal.Counts{}
	}
	return r.jr.Counts(step)
}

// drain feeds units whose parents now exist to the packer.
func (sr *stepRun) drain() error {
	sr.mu.Lock()
	q := sr.queued
	sr.queued = nil
	sr.mu.Unlock()
	for _, u := range q {
		if err := sr.pk.add(u); err != nil {
			return err
		}
	}
	return nil
}

// handle takes one result of the record stream.
func (sr *stepRun) handle(res transform.Result) error {
	switch {
	case res.Skipped:
		return sr.skipped(res)
	case len(res.Errors) > 0 || res.Record == nil:
		return sr.rejected(res)
	}
	return sr.record(res.Record)
}

// skipped journals a row the step skips (its when: is false), once.
func (sr *stepRun) skipped(res transform.Result) error {
	r := sr.r
	name := sr.step.Name
	id := res.Loc.String()
	if r.delta != nil {
		r.delta.see(name, id)
	}
	delete(sr.unseen, id)
	delete(sr.gone, id)
	if prev := r.state().Record(name, id); prev != nil && prev.Status() == journal.Skipped {
		return nil
	}
	r.queue(journal.Entry{Kind: journal.KindRecord, Record: &journal.RecordEntry{Step: name, ID: id, Status: journal.Skipped, Loc: id}})
	r.hook.RecordDone(name, Outcome{ID: id, Status: string(journal.Skipped), Location: id})
	return nil
}

// rejected journals a row the plan's checks reject (a row error) failed,
// with its rows and problems; a record the user waived stays waived, and
// a delta lists a loaded record's row error and leaves the record as it is.
func (sr *stepRun) rejected(res transform.Result) error {
	r := sr.r
	name := sr.step.Name
	id := RejectedID(res)
	delete(sr.unseen, id)
	delete(sr.gone, id)
	prev := r.state().Record(name, id)
	if prev != nil && prev.Status() == journal.Waived {
		return nil // closed by the user: it fails as it did, and stays waived
	}
	if r.delta != nil {
		r.delta.see(name, id)
		if r.delta.rowError(name, sr.entity, id, prev, res) {
			return nil // loaded, and left as it is: listed
		}
	}
	re := &journal.RecordEntry{Step: name, ID: id, Status: journal.Failed, Loc: res.Loc.String()}
	setRows(re, res.Rows)
	for _, e := range res.Errors {
		re.Errors = append(re.Errors, journal.Problem{Cell: e.Cell, Field: e.Field, Value: e.Value, Plan: e.Plan, Message: e.Message})
	}
	if len(re.Errors) == 0 {
		re.Errors = []journal.Problem{{Cell: re.Loc, Message: "the row gave no record"}}
	}
	r.queue(journal.Entry{Kind: journal.KindRecord, Record: re})
	r.hook.RecordDone(name, Outcome{ID: id, Status: string(journal.Failed), Location: re.Loc, Message: re.Errors[0].Message})
	return nil
}

// record sends record rec, or leaves it as the journal has it: loaded
// (committed, skipped, waived), in doubt, failed without --retry-failed,
// naming what a trial does not load, or changed since a complete load
// (a delta's).
func (sr *stepRun) record(rec *transform.Record) error {
	r := sr.r
	name := sr.step.Name
	id := rec.ID
	if id == "" {
		id = rec.Loc.String()
	}
	delete(sr.unseen, id)
	delete(sr.gone, id)
	delete(sr.gone, rec.Loc.String()) // a failure filed under the row's location (supersede)
	r.supersede(name, rec.Loc.String(), id)
	prev := r.state().Record(name, id)
	if r.delta != nil {
		r.delta.see(name, id)
		if loaded(prev) {
			return sr.deltaCommitted(prev, rec, id)
		}
		if prev == nil {
			ds := r.delta.step(name, sr.entity)
			r.delta.add(func() { ds.New = append(ds.New, DeltaRecord{ID: id, Loc: rec.Loc.String()}) })
		}
	}
	if prev != nil {
		switch prev.Status() {
		case journal.Committed, journal.Skipped, journal.Waived:
			r.jr.loadedBefore()
			if prev.Status() == journal.Committed {
				sr.classifyLoaded(rec, id, prev.Key)
			}
			if prev.Status() == journal.Committed && prev.SrcHash != "" && prev.SrcHash != srcHash(rec) {
				sr.changed++
			}
			return nil
		case journal.InDoubt:
			return nil // reconciliation could not decide: listed, never guessed
		case journal.Failed:
			// A trial's failure may be its own incompleteness (a line of
			// a part the trial did not load): the full load sends it again.
			if !r.opts.RetryFailed && !(prev.FailedInTrial && r.opts.Limit == 0) {
				return nil
			}
		}
	}
	if what := r.opts.trialPast.names(name, rec); what != "" {
		// It names a record the trial did not load: the server would
		// refuse it now, and the full load sends it once that is there.
		r.queue(pendingEntry(name, id, rec.Loc.String()))
		r.hook.RecordDone(name, Outcome{ID: id, Status: string(journal.Pending), Location: rec.Loc.String(),
			Message: "names " + what + ", which the trial did not load: left for the full load"})
		return nil
	}
	r.opts.unmade.note(name, rec)
	if c := r.opts.insertsUnread; c != nil && !r.readsAll(sr.step.Mode) && odata.EntityKey(sr.entityType(), rec.Fields) != "" {
		// Sent as it is, the company unread: a key it holds conflicts. (A
		// document the server numbers has no key to conflict: it loads.)
		c.Add(1)
	}
	w := &work{step: sr, rec: rec, id: id, prev: prev}
	if sr.r.readsAll(sr.step.Mode) {
		if prev != nil && prev.Key != "" && prev.Subs[""] != nil && prev.Subs[""].OK() {
			// The entity was written by an earlier attempt: go on from there.
			return sr.resumeWork(w)
		}
		sr.reads = append(sr.reads, w)
		if len(sr.reads) >= sr.r.readWindow() {
			return sr.readPending()
		}
		return nil
	}
	root, err := sr.b.insertOps(w)
	if err != nil {
		return sr.buildFailed(w, err)
	}
	w.root = root
	if prev != nil && prev.Subs[""] != nil && prev.Subs[""].OK() {
		return sr.resumeWork(w)
	}
	return sr.start(w, []unit{flatten(root, nil)})
}

// pendingRecords are the records of step an earlier run left pending:
// written ahead, or sent and reconciled (one the server did not take has
// no sub-request left), without a final status.
func (r *runner) pendingRecords(step string) map[string]bool {
	out := map[string]bool{}
	if r.state() == nil || r.state().Steps[step] == nil {
		return out
	}
	for id, rec := range r.state().Steps[step].Records {
		if rec.Status() == journal.Pending {
			out[id] = true
		}
	}
	return out
}

// settleUnseen settles the records an earlier run left pending that the
// source, read to its end, no longer gives: a row deleted since from a
// company read as a source. What the journal knows of them is
// all there is, and without this they would stay pending for ever, no
// apply complete. A record whose every write committed is committed (undo
// deletes what it created); one of which nothing was written is skipped;
// one written in part failed, saying what exists and why.
func (sr *stepRun) settleUnseen() {
	ids := make([]string, 0, len(sr.unseen))
	for id := range sr.unseen {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	name := sr.step.Name
	for _, id := range ids {
		prev := sr.r.state().Record(name, id)
		if prev == nil || prev.Status() != journal.Pending {
			continue
		}
		written, all, kids := false, true, 0
		for path, sub := range prev.Subs {
			if !sub.OK() {
				all = false
				continue
			}
			written = true
			if path != "" {
				kids++
			}
		}
		loc := prev.Loc
		if loc == "" {
			loc = id
		}
		re := &journal.RecordEntry{Step: name, ID: id, Loc: loc, Key: prev.Key, Carried: prev.Carried}
		switch {
		case written && all:
			re.Status = journal.Committed
			sr.r.jr.committed(name, kids)
		case !written:
			re.Status = journal.Skipped
		default:
			re.Status = journal.Failed
			re.Partly = fmt.Sprintf("%s(%s) written in part", sr.entity, prev.Key)
			re.Errors = []journal.Problem{{Cell: loc, Message: "the source no longer gives this row: the rest of the record cannot be written"}}
		}
		sr.r.queue(journal.Entry{Kind: journal.KindRecord, Record: re})
		o := Outcome{ID: id, Status: string(re.Status), Location: loc}
		if len(re.Errors) > 0 {
			o.Message = re.Errors[0].Message
		}
		sr.r.hook.RecordDone(name, o)
	}
}

// supersede closes a failure that an earlier run filed under this row's
// location because it could not identify the row (a second row with one
// key, a key field in error): the row now gives a record of its own, so
// that failure is over and must not keep the run from completing.
func (r *runner) supersede(step, loc, id string) {
	if loc == id {
		return
	}
	prev := r.state().Record(step, loc)
	if prev == nil || prev.Status() != journal.Failed || len(prev.Subs) > 0 {
		return
	}
	r.queue(journal.Entry{Kind: journal.KindRecord, Record: &journal.RecordEntry{Step: step, ID: loc, Status: journal.Skipped, Loc: loc}})
}

// resumeWork continues a record whose entity exists from an earlier
// attempt (w.prev): only the children without a committed outcome are
// sent.
func (sr *stepRun) resumeWork(w *work) error {
	prev := w.prev
	if w.root == nil {
		root, err := sr.b.insertOps(w)
		if err != nil {
			return sr.buildFailed(w, err)
		}
		w.root = root
	}
	root := w.root
	root.done, root.status, root.key = true, 200, prev.Key
	root.abs = odata.KeySegment(sr.entity, prev.Key)
	w.held = prev.Subs[""].Held // what the read before its PATCH found held
	if root.carries() {
		if s := prev.Subs[""]; s.Op == journal.OpCreate {
			// Which of its lines the server holds is read back, not
			// taken from the journal: a deep insert journals none.
			return sr.resumeDeep(w)
		}
		root.carry(false) // an existing document, updated: lines on their own
	}
	var rest unit
	var mark func(o *op)
	mark = func(o *op) {
		for _, k := range o.kids {
			if s := prev.Subs[k.path]; s != nil && s.OK() {
				k.done, k.status, k.key = true, s.Status, s.ResultKey
				k.abs = childAbs(o, k)
				if k.abs == "" && len(k.kids) > 0 {
					// Its children cannot be addressed: resend none of them.
					continue
				}
				mark(k)
				continue
			}
			rest = flatten(k, rest)
		}
	}
	mark(root)
	sr.classifyResumed(w, rest)
	if len(rest) == 0 {
		sr.finalize(w)
		return nil
	}
	return sr.start(w, splitUnits(rest))
}

func (sr *stepRun) buildFailed(w *work, err error) error {
	re := &journal.RecordEntry{Step: sr.step.Name, ID: w.id, Status: journal.Failed, Loc: w.rec.Loc.String(),
		Errors: []journal.Problem{{Cell: w.rec.Loc.String(), Message: err.Error()}}}
	setRows(re, w.rec.SourceRows())
	sr.r.queue(journal.Entry{Kind: journal.KindRecord, Record: re})
	sr.r.hook.RecordDone(sr.step.Name, Outcome{ID: w.id, Status: string(journal.Failed), Location: re.Loc, Message: err.Error()})
	return nil
}

// start counts a record's ops and hands its units to the packer.
func (sr *stepRun) start(w *work, units []unit) error {
	for _, u := range units {
		for _, o := range u {
			if !o.done {
				w.ops = append(w.ops, o)
				w.left++
			}
		}
	}
	if w.left == 0 {
		sr.finalize(w)
		return nil
	}
	for _, u := range units {
		if err := sr.pk.add(u); err != nil {
			return err
		}
	}
	return nil
}

// emit journals a batch's intent and sends it (at most Concurrency at once).
func (sr *stepRun) emit(batch []*op, later []unit) error {
	r := sr.r
	if r.halted() {
		return errHalt
	}
	if err := sr.takeWatermark(batch); err != nil {
		return err
	}
	seq := r.jr.NextBatch()
	reqs := assemble(batch, seq)
	var subs []journal.Sub
	if r.jr.reconciles() {
		subs = make([]journal.Sub, len(batch))
		for i, o := range batch {
			o.matched = o.match()
			subs[i] = journal.Sub{ID: o.id, Step: sr.step.Name, Rec: o.work.id, Path: o.path, Op: o.kind, Meth: o.method,
				URL: reqs[i].URL, Hash: bodyHash(o.body), Key: o.key, Nav: o.nav, Line: o.line, Before: o.before, Match: o.matched, RowHash: o.rowHash(),
				Lines: o.linesMatch(), Nested: o.nested, Texts: o.textsMatch(), Above: o.above}
			if o.parent == nil {
				subs[i].Held = o.work.held
			}
		}
	}
	reqs = r.svc.form(batch, reqs)
	// The intent is made durable before waiting for a slot, so that its
	// fsync overlaps the batches in flight instead of delaying each call.
	if err := r.appendWith(journal.Entry{Kind: journal.KindIntent, Batch: seq, Subs: subs, At: new(r.opts.now().UTC())}); err != nil {
		return err
	}
	acquired := false
	select {
	case r.sem <- struct{}{}:
		acquired = true
	case <-r.ctx.Done():
	}
	if !acquired || r.halted() {
		if acquired {
			<-r.sem
		}
		// Journaled but never sent: say so, so that a resume has nothing
		// of it to reconcile (a negative status: it never took effect).
		if err := r.appendWith(journal.Entry{Kind: journal.KindOutcome, Batch: seq, Results: untaken(batch, "not sent: the run stopped first")}); err != nil {
			return err
		}
		return errHalt
	}
	txns := 0
	for _, o := range batch {
		txns += 1 + o.nested
	}
	send := func() {
		defer sr.inflight.Done()
		defer sr.landed(batch)
		slot := true // the call's slot in r.sem
		defer func() {
			if slot {
				<-r.sem
			}
		}()
		r.subs.Add(int64(len(reqs)))
		r.txns.Add(int64(txns))
		var calls odata.CallStats
		start := r.opts.now()
		resps, err := r.opts.Client.Batch(odata.WithCallStats(sr.traced(), &calls), reqs, BatchOptions)
		var ns *odata.NotSentError
		if errors.As(err, &ns) {
			// What had to come first failed: none of it was sent.
			r.subs.Add(-int64(len(reqs)))
			r.txns.Add(-int64(txns))
		}
		if r.svc.timed() {
			r.sizer.observe(len(reqs), attemptTime(r.opts.now().Sub(start), &calls))
		}
		r.hook.BatchSent(len(reqs))
		var ans answer
		if err == nil {
			ans.matched, ans.problem = odata.MatchResponses(reqs, resps)
			sr.answered(batch, ans.matched)
		}
		if err == nil && r.answeredWhole(batch, ans) {
			// Nothing of this answer can stop the run (but the
			// journal failing), so the next call need not wait for it to
			// be journaled; at most Concurrency answers wait to be.
			select {
			case r.settling <- struct{}{}:
				<-r.sem
				slot = false
				defer func() { <-r.settling }()
				// The batch waiting for the slot goes out first; this
				// goroutine would otherwise keep the processor it was
				// woken on until complete is done.
				runtime.Gosched()
			default:
			}
		}
		if err := sr.complete(seq, batch, later, ans, err, &calls); err != nil {
			r.halt(err)
		}
	}
	sr.inflight.Add(1)
	sr.takeOff(seq, batch)
	r.svc.spawn(send)
	return nil
}

// answer is a batch's answer paired with its sub-requests, in their order
// (odata.MatchResponses), once per call: matched[i] is nil where the
// answer leaves sub-request i unclear, and problem says why.
type answer struct {
	matched []*odata.BatchResponse
	problem string
}

// answeredWhole reports whether an answer settles its batch with nothing
// left to decide: every sub-request answered once, with a 2xx, and no
// record of the batch failed before. complete then finishes records that
// all committed (the breaker sees no failure), reads nothing back and
// leaves nothing in doubt.
func (r *runner) answeredWhole(batch []*op, ans answer) bool {
	if ans.problem != "" {
		return false
	}
	r.workMu.Lock()
	defer r.workMu.Unlock()
	for i, o := range batch {
		if m := ans.matched[i]; m == nil || m.Status/100 != 2 || o.work.failed {
			return false
		}
	}
	return true
}

// untaken are the outcomes of a batch of which nothing took effect (not
// sent, or refused whole): a negative status, which leaves its records
// pending, and why.
func untaken(batch []*op, why string) []journal.SubResult {
	res := make([]journal.SubResult, len(batch))
	for i, o := range batch {
		res[i] = journal.SubResult{ID: o.id, Status: -1, Error: why}
	}
	return res
}

// stepKey is the context key of the step a batch belongs to.
type stepKey struct{}

// batchStep names the step a batch was sent for ("" outside a step).
func batchStep(ctx context.Context) string {
	s, _ := ctx.Value(stepKey{}).(string)
	return s
}

// traced is the run's context with the client's pauses reported to the
// hook as the step's.
func (sr *stepRun) traced() context.Context {
	return odata.WithWaitTrace(sr.ctx, func(w odata.Wait) { sr.r.hook.Waiting(sr.step.Name, w) })
}

// complete records a batch's outcome: per sub-request status and key,
// records finished, and the units that may now follow. reqs are the
// sub-requests as sent, in the order of batch; calls is what the call cost.
func (sr *stepRun) complete(seq int, batch []*op, later []unit, ans answer, sendErr error, calls *odata.CallStats) error {
	r := sr.r
	answered := r.opts.now().UTC()
	outcome := func(e journal.Entry) journal.Entry { return StampCalls(e, answered, calls) }
	if sendErr != nil {
		return sr.unanswered(seq, batch, sendErr, outcome)
	}
	// An answer that breaks the protocol decides nothing about the
	// sub-requests it leaves unclear: they are in doubt, and the next
	// apply reconciles them with the server.
	matched, problem := ans.matched, ans.problem
	// A deep insert the screens refused (400), or that failed on the
	// server (5xx), may have left part of its document: read back before
	// deciding anything of it (deep.go). Any other status stored nothing:
	// 409 says the key existed before (someone else's document).
	var readBack map[*op]kept
	for i, o := range batch {
		if resp := matched[i]; resp != nil && o.carries() && (resp.Status == http.StatusBadRequest || resp.Status >= 500) {
			if readBack == nil {
				readBack = map[*op]kept{}
			}
			readBack[o] = sr.readKept(o, seq, batch, matched)
		}
	}
	r.workMu.Lock()
	res := make([]journal.SubResult, 0, len(batch))
	var missing []*op
	var unclear []string
	var next []unit // units that follow
	for i, o := range batch {
		resp := matched[i]
		if resp == nil {
			missing = append(missing, o)
			continue
		}
		ent := sr.outcome(o, resp)
		if k, ok := readBack[o]; ok {
			switch {
			case k.unclear != "":
				// Neither kept nor absent for sure: in doubt, for the
				// next apply to reconcile.
				o.status, o.err = 0, ""
				missing = append(missing, o)
				unclear = append(unclear, fmt.Sprintf("%s %s: what a failed deep insert left is unclear: %s", sr.step.Name, o.work.id, k.unclear))
				continue
			case !k.absent:
				next = append(next, sr.keepAnswer(o, k)...)
			}
		}
		out := journal.SubResult{ID: o.id, Status: o.status, Key: o.key, Location: resp.Header("Location"), Error: o.err}
		if _, read := readBack[o]; o.ok() && !read { // the answer to a refusal holds no entity
			out.Filled, out.Fills = o.filled(ent, resp.Body)
			o.got = out.Filled
			r.rd.NoteFilled(sr.step.Name, o.nav, out.Fills)
		}
		res = append(res, out)
	}
	entries := []journal.Entry{outcome(journal.Entry{Kind: journal.KindOutcome, Batch: seq, Results: res})}
	if len(unclear) > 0 {
		entries[0].InDoubt = strings.Join(unclear, "; ")
		if len(missing) > len(unclear) {
			entries[0].InDoubt += fmt.Sprintf("; the $batch answer leaves %d sub-request(s) unclear: %s", len(missing)-len(unclear), problem)
		}
	} else if len(missing) > 0 {
		entries[0].InDoubt = fmt.Sprintf("the $batch answer leaves %d sub-request(s) unclear: %s", len(missing), problem)
	} else if problem != "" {
		// Every sub-request has its one answer; the rest is noise, but
		// a server that sends it is worth a look.
		r.warn(fmt.Sprintf("step %s, batch %d: the server's $batch answer is not as the protocol says: %s", sr.step.Name, seq, problem))
	}
	follow, done := sr.finished(seq, batch, later, missing)
	next = append(next, follow...)
	var reported []*work
	var stop *SameErrorsError
	for _, w := range done {
		pending, earlier := sr.brk.observe(w)
		if pending {
			if earlier != nil {
				for _, id := range earlier {
					entries = append(entries, pendingEntry(sr.step.Name, id, ""))
				}
				stop = &SameErrorsError{Step: sr.step.Name, Entity: sr.entity, Message: screenError(w), Count: sr.brk.max}
			}
			entries = append(entries, pendingEntry(sr.step.Name, w.id, w.rec.Loc.String()))
			continue
		}
		entries = append(entries, sr.finalEntry(w))
		reported = append(reported, w)
		if w.root != nil && w.root.ok() && w.root.key != "" {
			r.jr.keep(sr.step.Name, w.id, w.root.key)
		}
	}
	r.workMu.Unlock()
	appendOutcome := r.appendWith
	if len(missing) == 0 {
		// The outcome need not wait for its own fsync: the next intent's
		// fsync covers it (lines stay in file order), so nothing is ever
		// sent on the strength of an outcome that is not on disk; a crash
		// before then only leaves this batch to reconcile on resume.
		appendOutcome = r.appendUnsynced
	}
	if err := appendOutcome(entries...); err != nil {
		return err
	}
	for _, w := range reported {
		sr.report(w)
	}
	if stop != nil {
		return stop
	}
	if len(missing) > 0 {
		return fmt.Errorf("%w: step %s, batch %d: %s", ErrInDoubt, sr.step.Name, seq, entries[0].InDoubt)
	}
	sr.mu.Lock()
	sr.queued = append(sr.queued, next...)
	sr.mu.Unlock()
	return nil
}

// unanswered journals a batch whose call brought no answer (sendErr):
// not sent, or refused whole, its records stay pending; otherwise it may
// have reached the server, and is journaled in doubt for the next apply
// to reconcile. It returns why the run stops.
func (sr *stepRun) unanswered(seq int, batch []*op, sendErr error, outcome func(journal.Entry) journal.Entry) error {
	r := sr.r
	var ns *odata.NotSentError
	if errors.As(sendErr, &ns) {
		// Nothing was sent (a cold form's warm-up failed): the records
		// are pending, and a later apply sends them.
		if err := r.appendWith(outcome(journal.Entry{Kind: journal.KindOutcome, Batch: seq, Results: untaken(batch, ns.Error()), Unsent: true})); err != nil {
			return err
		}
		return fmt.Errorf("%w: step %s, batch %d: %v", ErrInterrupted, sr.step.Name, seq, sendErr)
	}
	if oe, ok := odata.Refused(sendErr); ok {
		// The server refused the batch whole: nothing took effect.
		if err := r.appendWith(outcome(journal.Entry{Kind: journal.KindOutcome, Batch: seq, Results: untaken(batch, oe.Error())})); err != nil {
			return err
		}
		if oe.Status == http.StatusTooManyRequests {
			// Throttled past the client's retries: nothing failed, the
			// records are pending and a later apply sends them.
			return fmt.Errorf("%w: the server throttled a batch of step %s past every retry: %v", ErrInterrupted, sr.step.Name, sendErr)
		}
		return fmt.Errorf("the server refused a batch of step %s: %w", sr.step.Name, sendErr)
	}
	// Never resend what may have reached the server: journal it in
	// doubt and stop; the next apply reconciles it first.
	if err := r.appendWith(outcome(journal.Entry{Kind: journal.KindOutcome, Batch: seq, InDoubt: sendErr.Error()})); err != nil {
		return err
	}
	if r.ctx.Err() != nil {
		return r.ctx.Err()
	}
	return fmt.Errorf("%w: step %s, batch %d: %v", ErrInDoubt, sr.step.Name, seq, sendErr)
}

// finished counts the outcomes batch (numbered seq) brought to its
// records: the units of later that may follow (a unit whose parent failed
// is not sent), the units a record held back until its first ones were
// done (lines: replace adds after its deletes), and the records that are
// now finished, those with sub-requests in missing (in doubt) excepted.
// The caller holds workMu.
func (sr *stepRun) finished(seq int, batch []*op, later []unit, missing []*op) (follow []unit, done []*work) {
	// The records of the batch in order of appearance (so that their
	// entries are written in the same order every run), each with the
	// number of its ops that have an outcome now.
	var touched []*work
	for _, o := range batch {
		w := o.work
		if w.mark != seq {
			w.mark, w.answered = seq, 0
			touched = append(touched, w)
		}
		if o.status != 0 {
			w.answered++
		}
	}
	for _, u := range later {
		root := u[0]
		if root.parent != nil && !root.parent.ok() {
			sr.notSent(u)
			continue
		}
		follow = append(follow, u)
	}
	for _, w := range touched {
		w.left -= w.answered
		if w.left <= 0 && len(w.then) > 0 && !w.failed {
			follow = append(follow, w.then...)
			for _, u := range w.then {
				w.ops = append(w.ops, u...)
				w.left += len(u)
			}
			w.then = nil
		}
		if w.left <= 0 && !w.final && !w.inDoubt(missing) {
			w.final = true
			done = append(done, w)
		}
	}
	return follow, done
}

// StampCalls puts on an outcome when it came and what its call cost, for
// the run report's chart.
func StampCalls(e journal.Entry, at time.Time, c *odata.CallStats) journal.Entry {
	e.At = &at
	if c != nil {
		e.Calls, e.Throttled, e.WaitMS = c.Attempts, c.Throttled, c.Waited.Milliseconds()
	}
	return e
}

func (w *work) inDoubt(missing []*op) bool {
	for _, o := range missing {
		if o.work == w {
			return true
		}
	}
	return false
}

// notSent accounts for a unit whose parent failed: its ops are never sent.
// r.workMu is held.
func (sr *stepRun) notSent(u unit) {
	for _, o := range u {
		o.status = 424
		o.err = "not sent: its parent failed"
		o.work.failed = true
		o.work.left--
	}
}

// outcome reads one sub-request's response; it returns the entity the
// server answered with, when it decoded it.
func (sr *stepRun) outcome(o *op, resp *odata.BatchResponse) (ent map[string]any) {
	o.status = resp.Status
	if !o.ok() {
		o.work.failed = true
		if o.status == 404 && (o.kind == journal.OpDelete || o.kind == journal.OpRead) {
			o.work.failed = o.kind != journal.OpDelete // a line already gone is fine
		}
		if o.status == 424 {
			o.err = "not processed: a sub-request it depends on failed"
			return nil
		}
		o.err = odata.ParseError(resp.Status, nil, resp.Body).Error()
		return nil
	}
	o.done = true
	switch o.kind {
	case journal.OpCreate:
		if o.single {
			break
		}
		if len(resp.Body) > 0 && o.typ != nil {
			var err error
			if ent, err = odata.DecodeEntityOnly(resp.Body, o.answerKeeps()); err == nil {
				if k := odata.EntityKey(o.typ, ent); k != "" {
					o.key = k
				}
			}
		}
		if o.key == "" {
			o.key = keyFromLocation(resp.Header("Location"))
		}
	}
	if o.carries() {
		o.takeLines(ent) // created whole: its lines with it
	}
	if o.parent == nil {
		if o.abs == "" && o.key != "" {
			o.abs = odata.KeySegment(sr.entity, o.key)
		}
	} else if o.abs == "" {
		o.abs = childAbs(o.parent, o)
	}
	return ent
}

// finalEntry is a finished record's journal entry: committed, or failed
// with every problem at its source location and the source row.
func (sr *stepRun) finalEntry(w *work) journal.Entry {
	re := &journal.RecordEntry{Step: sr.step.Name, ID: w.id, Status: journal.Committed, Loc: w.rec.Loc.String()}
	if w.root != nil {
		re.Key = w.root.key
		re.RowHash = w.root.rowHash()
		re.Carried = w.root.carriedOK()
	}
	re.Held = w.held
	re.Built = w.lines()
	if !w.failed {
		sr.r.jr.committed(sr.step.Name, re.Built)
		re.Keyed = keyedRows(w)
		w.journaled(re)
		return journal.Entry{Kind: journal.KindRecord, Record: re}
	}
	re.Status = journal.Failed
	var parentMsg string
	for _, o := range w.ops {
		if o.ok() || o.status == 0 {
			continue
		}
		if o.status == 404 && o.kind == journal.OpDelete {
			continue
		}
		if o.status == 424 {
			if parentMsg == "" {
				parentMsg = failedAncestor(o)
			}
			continue
		}
		if re.Row == nil && w.rec.Rows == nil {
			re.Row = rowOf(w.rec.Row)
			if o.parent != nil && o.loc != w.rec.Loc {
				if r := childRow(w.rec, o.path); r != nil {
					re.Row = r
				}
			}
		}
		re.Errors = append(re.Errors, journal.Problem{Cell: o.loc.String(), Field: o.nav, Message: o.err, Status: o.status})
	}
	if len(re.Errors) == 0 {
		msg := parentMsg
		if msg == "" {
			msg = "not committed"
		}
		re.Errors = []journal.Problem{{Cell: re.Loc, Message: msg}}
		re.Row = rowOf(w.rec.Row)
	}
	if w.rec.Rows != nil {
		// A group: the report gives back every row, to correct and load again.
		setRows(re, w.rec.Rows)
	}
	re.Partly = w.partly(sr.entity)
	return journal.Entry{Kind: journal.KindRecord, Record: re}
}

// keptCellMax is the most of a source cell the journal keeps for report
// --created: the rows are there to find a record's new key by its old
// values, and a 100 KB text kept whole would make the journal (and the
// journal's pending entries, in memory) as large as the source.
const keptCellMax = 1024

// keptCell is a cell as the journal keeps it for report --created: whole
// up to keptCellMax bytes, else its head (cut at a character) and a mark
// of how long it was.
func keptCell(c string) string {
	if len(c) <= keptCellMax {
		return c
	}
	head := c[:keptCellMax]
	for len(head) > 0 && !utf8.ValidString(head) {
		head = head[:len(head)-1]
	}
	return head + fmt.Sprintf("… [%d bytes in the source]", len(c))
}

// keyedRows are a committed record's source rows with what each became:
// its own row the entity, each child's row that child with its key, every
// row written once. report --created maps legacy numbers with them.
func keyedRows(w *work) []journal.KeyedRow {
	seen := map[string]bool{}
	var header []string // the last header written
	add := func(out []journal.KeyedRow, kr journal.KeyedRow, row source.Row) []journal.KeyedRow {
		// As rowOf gives it, without copying the header the rows share
		// (the entry is encoded, not kept).
		if row.Header != nil && !seen[kr.Loc] {
			seen[kr.Loc] = true
			kr.Cells = cellTexts(row.Cells)
			for i, c := range kr.Cells {
				kr.Cells[i] = keptCell(c)
			}
			if !slices.Equal(row.Header.Names, header) {
				kr.Header, header = row.Header.Names, row.Header.Names
			}
		}
		return append(out, kr)
	}
	loc := w.rec.Loc.String()
	out := add(nil, journal.KeyedRow{Loc: loc}, w.rec.Row)
	// The tree, not w.ops: children committed by an earlier attempt of a
	// resumed record are in it too, with their keys.
	var walk func(o *op)
	walk = func(o *op) {
		for _, k := range o.kids {
			if k.kind != journal.OpCreate || !k.ok() {
				continue
			}
			row, kloc := w.rec.Row, loc
			if c := childOf(w.rec, k.path); c != nil && c.Loc != (source.Location{}) {
				row, kloc = c.Row, c.Loc.String()
			}
			out = add(out, journal.KeyedRow{Loc: kloc, Path: k.path, Nav: k.nav, Key: k.key}, row)
			walk(k)
		}
	}
	if w.root != nil {
		walk(w.root)
	}
	return out
}

// lines is what the journal keeps of the lines the company holds of a
// finished record (RecordEntry.Built): of a committed one, every line it
// was built with (held already or written; after a delta, those it had
// and those the delta created); of a failed one, those written or held.
func (w *work) lines() int {
	switch {
	case w.delta != nil:
		return w.delta.built(w.root)
	case !w.failed:
		return countChildren(w.rec.Children)
	case w.root == nil:
		return 0
	}
	return w.root.below((*op).ok)
}

// partly says what exists of a failed record whose entity was written (or
// existed) although some of its lines failed: "ORDERS('SO1') created with
// 3 of 4 lines", or a delta's whose PATCH the server refused; "" when its
// entity is not there.
func (w *work) partly(entity string) string {
	root := w.root
	if root != nil && !root.ok() && w.delta != nil && root.key != "" {
		// A delta's PATCH refused: the record stays as loaded before.
		return fmt.Sprintf("%s(%s) exists as loaded before; the delta's change was not taken", entity, root.key)
	}
	if root == nil || !root.ok() {
		return ""
	}
	verb := "exists"
	for _, o := range w.ops {
		if o == root {
			verb = "created"
			if o.kind == journal.OpPatch {
				verb = "updated"
			}
			break
		}
	}
	ok, all := root.below((*op).ok), len(subtree(root, nil))-1
	what := entity
	if root.key != "" {
		what += "(" + root.key + ")"
	}
	if all == 0 {
		return what + " " + verb
	}
	return fmt.Sprintf("%s %s with %d of %d lines", what, verb, ok, all)
}

func failedAncestor(o *op) string {
	for p := o.parent; p != nil; p = p.parent {
		if p.err != "" && p.status != 424 {
			return p.err
		}
	}
	return ""
}

func (sr *stepRun) report(w *work) {
	o := Outcome{ID: w.id, Status: string(journal.Committed), Location: w.rec.Loc.String()}
	if w.failed {
		o.Status = string(journal.Failed)
		for _, op := range w.ops {
			if op.err != "" && op.status != 424 {
				o.Message = op.err
				break
			}
		}
	}
	sr.r.hook.RecordDone(sr.step.Name, o)
}

// finalize journals a record that needed no sub-request.
func (sr *stepRun) finalize(w *work) {
	w.final = true
	if w.root != nil && w.root.key != "" {
		sr.r.jr.keep(sr.step.Name, w.id, w.root.key)
	}
	sr.r.queue(sr.finalEntry(w))
	sr.report(w)
}
