package executor

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/migrate-tool/migrate/internal/atomicfile"
	"github.com/migrate-tool/migrate/journal"
	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/plan"
	"github.com/migrate-tool/migrate/read"
	"github.com/migrate-tool/migrate/transform"
)

// DryRun is the dry run: Apply's own loop over a simulated service. Every
// record, sub-request and batch is built and packed as Apply would (for
// opts.Version's limit); writes are answered as the service would answer
// them and change nothing; reads (upsert and update read the current
// entity, lines: replace its lines) go to opts.Client when there is one, so
// the PATCHes carry only the fields that differ and the DELETEs are the
// lines the target holds. Without a client nothing is read: upsert is
// predicted as inserts, update as changes of every field, and
// Summary.Unread counts the reads that were not made.
//
// It counts per step records, children, skipped rows and row errors, plus
// the HTTP calls, sub-requests and API transactions Apply would use and how
// long that takes at the calls-per-minute limit. With OutDir it writes each
// batch's JSON body there, exactly as sent.
func DryRun(ctx context.Context, run *Prepared, o Options) (*Summary, error) {
	return dryRun(ctx, run, o, nil)
}

// dryRun is DryRun, and with d Diff.
func dryRun(ctx context.Context, run *Prepared, o Options, d *differ) (*Summary, error) {
	if run == nil || run.Plan == nil || run.records == nil || run.Metadata == nil {
		return nil, errors.New("executor: the dry run needs a prepared run")
	}
	opts := newRunOptions(run, o)
	if opts.Limit == 0 {
		// A trial's own look at what it leaves out is trialPast's.
		if opts.unmade = newUnmadeRefs(&opts.Prepared); opts.unmade != nil {
			opts.records = collecting{inner: opts.records, look: opts.unmade}
		}
	}
	if !o.Fresh {
		opts.insertsUnread = new(atomic.Int64)
	}
	waves, err := opts.Plan.Order()
	if err != nil {
		return nil, err
	}
	sim := newSimService(opts, d != nil)
	var client Client = sim
	if opts.OutDir != "" {
		if err := os.MkdirAll(opts.OutDir, 0o755); err != nil {
			return nil, err
		}
		client = &recorder{inner: sim, dir: opts.OutDir}
	}
	opts.Client = client
	opts.Concurrency = 1
	opts.open = prefetch(opts.open)
	r := newRunner(ctx, opts, sim)
	t := newTally(opts.Plan, waves, d)
	r.jr = t
	r.setState(t.Snapshot())
	stale, err := r.resumeDry(t, o)
	if err != nil {
		return nil, err
	}
	if r.delta != nil && !r.delta.send {
		// apply lists the delta and sends nothing: so does its dry run.
		sum, err := r.listDelta(waves)
		if sum != nil {
			sum.Journal, sum.Loaded = o.Journal, int(t.loaded.Load())
		}
		return sum, err
	}
	if waves, err = r.chooseSteps(waves); err != nil {
		return nil, err // as apply with the same --steps refuses
	}
	sum, err := r.run(waves)
	if sum == nil {
		return nil, err
	}
	if stale != "" {
		sum.Journal, sum.Stale = o.Journal, stale
	} else if o.Journal != "" && r.state() != nil && r.state().Steps != nil {
		sum.Journal = o.Journal
		sum.Loaded = int(t.loaded.Load())
		for _, st := range r.state().Steps {
			for _, rec := range st.Records {
				if rec.Status() == journal.InDoubt {
					sum.InDoubt++
				}
			}
		}
	}
	sum.Unread = int(sim.unread.Load())
	if opts.insertsUnread != nil {
		sum.InsertsUnread = int(opts.insertsUnread.Load())
	}
	sum.Subrequests += int(sim.confirmSubs.Load())
	cpm := opts.CallsPerMinute
	if cpm == 0 {
		cpm = opts.Plan.Target.CallsPerMinute
	}
	if cpm > 0 {
		sum.Estimated = time.Duration(float64(sum.Requests) / float64(cpm) * float64(time.Minute))
	}
	return sum, err
}

// newSimService is the simulated service of a dry run of opts (a diff's,
// with diff): it reads the target (opts.Client, nil offline) for what the
// run's upsert and update steps read, and a diff's insert steps too.
func newSimService(opts *runOptions, diff bool) *simService {
	sim := &simService{md: opts.Metadata, read: opts.Client, updates: map[string]bool{}, reads: map[string]bool{}, made: map[string]map[string]json.RawMessage{},
		standard: opts.Version.Standard}
	for _, s := range opts.Plan.Steps {
		switch s.Mode {
		case plan.ModeUpdate:
			sim.updates[s.Entity] = true
			sim.reads[s.Entity] = true
		case plan.ModeUpsert:
			sim.reads[s.Entity] = true
		default:
			// A diff reads inserts' keys: what the run inserted first
			// is recalled, a second record with its key a conflict.
			sim.reads[s.Entity] = sim.reads[s.Entity] || diff
		}
	}
	return sim
}

// resumeDry takes, for the dry run r (its ledger t), the journal apply
// would resume (o.Journal): its state, whose committed records are skipped
// as apply skips them, and a delta's run. It returns why apply would
// refuse to resume it (its plan or sources changed: the dry run then
// predicts a new one), "" when it would not.
func (r *runner) resumeDry(t *tally, o Options) (stale string, err error) {
	if o.Journal == "" {
		return "", nil
	}
	st, err := journal.Load(o.Journal)
	switch {
	case err != nil && !errors.Is(err, os.ErrNotExist):
		return "", err
	case st == nil && o.Delta:
		return "", &DeltaError{Journal: o.Journal, Reason: "there is no journal to load a delta against: apply without --delta loads the plan first"}
	case st == nil:
		return "", nil
	}
	if err := CheckTarget(o.Journal, st.Header, o.Target); err != nil {
		return "", err // as apply refuses it
	}
	now := journal.Header{PlanHash: r.opts.Plan.Hash, Sources: sourceHashes(r.opts.Plan)}
	listing := r.opts.deltaListing(st, now)
	goesOn := r.opts.goesOnWithDelta(st, listing)
	if goesOn {
		r.opts.Delta = true // as apply goes on with it
	}
	if r.opts.Delta {
		if err := deltaStart(o.Journal, st); err != nil {
			return "", err
		}
	}
	var se *StaleError
	if err := checkHeader(st.Header, now, o.AllowPlanChange || listing, o.RetryFailed || r.opts.Delta); errors.As(err, &se) {
		return strings.Join(se.Changes, "; "), nil
	}
	r.setState(st)
	t.resumed = st
	switch {
	case r.opts.Delta:
		r.delta = newDeltaRun(true, o.Overwrite)
	case listing:
		r.delta = newDeltaRun(false, false)
	}
	if r.delta != nil {
		r.delta.predicted, r.delta.goesOn = true, goesOn
	}
	return "", nil
}

// simService answers batches as the service would, changing nothing. A
// write succeeds: a POST with 201, the entity as sent and a Location whose
// key is the one the body gives, or {key} where the server numbers it; a
// PATCH with 204, a DELETE with 204. Reads (apply sends them in batches of
// their own) find what the run itself wrote before (so an upsert after an
// insert of the same entity patches it, as apply would), else go to the
// target when there is one; without one an entity is absent (upsert
// inserts it) unless an update step loads its set (then it exists with no
// values, so the PATCH carries every field), and a collection of lines is
// empty.
type simService struct {
	md      *odata.Metadata
	read    Client
	updates map[string]bool // entity sets of update steps
	// reads are the entity sets an upsert or update step reads: what the
	// run writes in them is kept in made ("SET(key)" → field → value),
	// and in no other set, so that memory stays flat.
	reads  map[string]bool
	mu     sync.Mutex
	made   map[string]map[string]json.RawMessage
	unread atomic.Int64
	warm   read.Warmth // the target's forms known warm
	forms  odata.Forms // the forms apply's client would know warm
	// sure is what apply's reader would know warm (a 404 from those sets
	// the truth, not asked again), by the answers apply would get;
	// confirmSubs the sub-requests of the calls that confirm a 404, which
	// apply's summary and run report count.
	sure        read.Warmth
	confirmSubs atomic.Int64
	// standard: the target is of the odata dialect, whose client warms
	// no form up (docs/other-services.md).
	standard bool
}

// spawn: the simulated service answers at once, and the run waits for
// each answer: one step at a time, each batch answered before the next is
// packed.
func (*simService) spawn(f func()) { f() }

// form: the simulated service takes a batch as it was built, a
// single-object sub-form as the POST to PARENT/NAV the journal keeps
// (standardSingles is the target's form of it).
func (*simService) form(_ []*op, reqs []odata.BatchRequest) []odata.BatchRequest { return reqs }

// timed: how long a simulated answer takes says nothing of the server.
func (*simService) timed() bool { return false }

// predicts: the simulated service's 404s are its predictions, or the
// target's confirmed already (answer), so the dry run counts the calls a
// warm server would cost.
func (*simService) predicts() bool { return true }

// offline: without a target the simulated service reads nothing.
func (s *simService) offline() bool { return s.read == nil }

// ErrTargetRead is returned (wrapped) when the dry run could not read the
// target: it is unreachable or refused the credentials, not a plan problem.
var ErrTargetRead = errors.New("the dry run could not read the target")

// placeholderKey stands for a key the server assigns.
const placeholderKey = "{key}"

// simLocation is the Location header of what the simulated service
// creates: only its key part is read (keyFromLocation). Shared: read-only.
var simLocation = map[string]string{"Location": "(" + placeholderKey + ")"}

func (s *simService) Batch(ctx context.Context, reqs []odata.BatchRequest, opts odata.BatchOptions) ([]odata.BatchResponse, error) {
	// The calls apply's client would make: this one, and before a batch
	// that writes to a form not known warm, its warm-up (the client's
	// rule, odata.Forms); after reads, the two that confirm a 404 from a
	// form apply's reader does not know warm. A retry the server asks for
	// cannot be predicted.
	outer := ctx
	if st := odata.CallStatsOf(ctx); st != nil {
		st.Attempts++
		if cold := s.forms.ColdWrites(reqs); len(cold) > 0 && !s.standard {
			st.Attempts++
			s.forms.Warmed(cold...)
		}
		// The target's own answers to the reads forwarded below are not
		// calls of the predicted run.
		ctx = odata.WithCallStats(ctx, &odata.CallStats{})
	}
	resps, err := s.answer(ctx, reqs, opts)
	if err == nil {
		s.forms.Answered(reqs, resps)
		// apply's reader would ask a 404 again, warming its set up first
		// (read.Warmth.ConfirmAbsent): two calls, after which apply's
		// client knows the sets warm too.
		if again, warmUps := s.sure.ToConfirm(reqs, resps); len(again) > 0 {
			if st := odata.CallStatsOf(outer); st != nil {
				st.Attempts += 2
			}
			s.confirmSubs.Add(int64(len(warmUps) + len(again)))
			s.sure.Warmed(warmUps)
			for _, q := range warmUps {
				s.forms.Warmed(odata.EntitySetOf(q.URL))
			}
		}
	}
	return resps, err
}

// answer answers a batch as the service would (Batch).
func (s *simService) answer(ctx context.Context, reqs []odata.BatchRequest, opts odata.BatchOptions) ([]odata.BatchResponse, error) {
	resps := make([]odata.BatchResponse, len(reqs))
	var reads []odata.BatchRequest
	var at []int
	var chains []*simChain
	for i, q := range reqs {
		resp := odata.BatchResponse{ID: q.ID}
		switch q.Method {
		case "GET":
			reads = append(reads, q)
			at = append(at, i)
			continue
		case "POST":
			if refusal := s.missing(q); refusal != nil {
				resp.Status, resp.Body = 400, refusal
				break
			}
			s.remember(q, false)
			resp.Status = 201
			if strings.Contains(q.URL, "/") {
				// A line: its key is in the body, or the server numbers it.
				resp.Body = q.Body
			}
			// An entity's key is its body's (the executor knows it); a
			// key the server numbers is a placeholder.
			resp.Headers = simLocation
		default: // PATCH, PUT, DELETE
			s.remember(q, q.Method == "DELETE")
			resp.Status = 204
		}
		resps[i] = resp
	}
	if len(reads) == 0 {
		return resps, nil
	}
	// What the run wrote is answered from memory, and so is what a stand-in
	// key names (the run creates it, the server numbers it): it exists, its
	// values unknown. The rest is read.
	n := 0
	for j, q := range reads {
		if c := s.chainOf(q); c != nil {
			if s.read == nil {
				s.unread.Add(int64(c.unread))
				resps[at[j]] = c.answer(q, nil)
				continue
			}
			chains = append(chains, c)
			reads[n], at[n] = q, at[j]
			n++
			continue
		}
		if standIn(q.URL) {
			resps[at[j]] = s.made0(q)
			continue
		}
		if isWatermarkRead(q.URL) {
			// apply's read of a step's watermark: a call the dry run counts,
			// whose value it does not need.
			resps[at[j]] = odata.BatchResponse{ID: q.ID, Status: http.StatusOK, Body: json.RawMessage(`{"value":[]}`)}
			continue
		}
		if r, ok := s.recall(q); ok {
			resps[at[j]] = r
			continue
		}
		reads[n], at[n] = q, at[j]
		n++
	}
	reads, at = reads[:n], at[:n]
	if len(reads) == 0 {
		return resps, nil
	}
	if s.read != nil {
		got, err := s.read.Batch(ctx, reads, opts)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrTargetRead, err)
		}
		// Before 22.1 the answers' ids take other forms (read.Answers).
		ordered, problem := read.Answers(reads, got)
		if ordered == nil {
			return nil, fmt.Errorf("%w: the target's answer to the reads broke the $batch protocol: %s", ErrTargetRead, problem)
		}
		// A cold form of the target answers 404 where apply, which warms
		// its forms (and reads its watermark first), reads the truth: the
		// dry run warms them too, outside the calls it predicts.
		ordered, err = s.warm.ConfirmAbsent(reads, ordered, func(again []odata.BatchRequest) ([]odata.BatchResponse, error) {
			got, err := s.read.Batch(ctx, again, opts)
			if err != nil {
				return nil, err
			}
			out, problem := read.Answers(again, got)
			if out == nil {
				return nil, errors.New(problem)
			}
			return out, nil
		})
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrTargetRead, err)
		}
		for j := range reads {
			resps[at[j]] = ordered[j]
		}
		for _, c := range chains {
			for j, q := range reads {
				if q.ID == c.id {
					resps[at[j]] = c.answer(q, &resps[at[j]])
				}
			}
		}
		return resps, nil
	}
	s.unread.Add(int64(len(reads)))
	for j, q := range reads {
		resps[at[j]] = s.offlineRead(q)
	}
	return resps, nil
}

// missing is the server's refusal (a screen error, as the server words it)
// of an entity created without a field the metadata marks Mandatory: an
// upsert that inserts what it did not give (transform refuses the blanks
// it can tell at their cells). nil when nothing is missing.
func (s *simService) missing(q odata.BatchRequest) json.RawMessage {
	set := q.URL
	if strings.ContainsAny(set, "/(") {
		return nil // a line: its blanks are row errors already
	}
	es := s.md.EntitySet(set)
	if es == nil || es.Type == nil {
		return nil
	}
	var body map[string]json.RawMessage
	if json.Unmarshal(q.Body, &body) != nil {
		return nil
	}
	for _, p := range es.Type.Properties {
		if !p.Mandatory || !p.Writable() || plan.ServerNumbered(set, p.Name) {
			continue
		}
		if v, ok := body[p.Name]; !ok || string(v) == "null" || string(v) == `""` {
			return odata.ScreenErrorJSON(es.Type.Name, []string{p.Name + ": a value is required."})
		}
	}
	return nil
}

// remember keeps what a write does to an entity of a set that is read
// later: a POST of an entity with its key, a PATCH of one, a DELETE.
func (s *simService) remember(q odata.BatchRequest, del bool) {
	set, _, _ := strings.Cut(q.URL, "(")
	if !s.reads[set] || strings.Contains(q.URL, "/") {
		return
	}
	var fields map[string]json.RawMessage
	if !del && json.Unmarshal(q.Body, &fields) != nil {
		return
	}
	path := q.URL
	if q.Method == "POST" {
		es := s.md.EntitySet(set)
		if es == nil || es.Type == nil {
			return
		}
		ent, err := odata.DecodeEntity(q.Body)
		if err != nil {
			return
		}
		key := odata.EntityKey(es.Type, ent)
		if key == "" {
			return // numbered by the server: no later read can name it
		}
		path = odata.KeySegment(set, key)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case del:
		delete(s.made, path)
	case q.Method == "POST":
		s.made[path] = fields
	default:
		if cur, ok := s.made[path]; ok {
			for k, v := range fields {
				cur[k] = v
			}
		}
	}
}

// recall answers a read of what the run wrote: the entity as written, and
// its lines as none (the target never saw the entity).
func (s *simService) recall(q odata.BatchRequest) (odata.BatchResponse, bool) {
	path, nav, lines := strings.Cut(q.URL, ")/")
	if lines {
		path += ")"
	}
	s.mu.Lock()
	fields, ok := s.made[path]
	var body []byte
	if ok && !lines {
		body, _ = json.Marshal(fields)
	}
	s.mu.Unlock()
	switch {
	case !ok:
		return odata.BatchResponse{}, false
	case lines && !strings.Contains(nav, "("):
		return odata.BatchResponse{ID: q.ID, Status: 200, Body: json.RawMessage(`{"value":[]}`)}, true
	case lines:
		return odata.BatchResponse{}, false
	}
	return odata.BatchResponse{ID: q.ID, Status: 200, Body: body}, true
}

// standIn reports a URL whose key is a stand-in for one the server would
// number: {key}, or ref()'s {step:id} (escaped in a key: %7B, %7D).
func standIn(url string) bool {
	i := strings.IndexByte(url, '(')
	if i < 0 {
		return false
	}
	k := url[i:]
	return (strings.Contains(k, "{") || strings.Contains(k, "%7B")) && (strings.Contains(k, "}") || strings.Contains(k, "%7D"))
}

// made0 answers a read of an entity the run creates but cannot name: it
// exists with no values known (a PATCH then carries every field), and
// holds no lines.
func (s *simService) made0(q odata.BatchRequest) odata.BatchResponse {
	if strings.Contains(q.URL, ")/") {
		return odata.BatchResponse{ID: q.ID, Status: 200, Body: json.RawMessage(`{"value":[]}`)}
	}
	return odata.BatchResponse{ID: q.ID, Status: 200, Body: json.RawMessage(`{}`)}
}

func (s *simService) offlineRead(q odata.BatchRequest) odata.BatchResponse {
	set, rest, _ := strings.Cut(q.URL, "(")
	if strings.Contains(rest, ")/") { // the lines of an entity
		return odata.BatchResponse{ID: q.ID, Status: 200, Body: json.RawMessage(`{"value":[]}`)}
	}
	if s.updates[set] {
		return odata.BatchResponse{ID: q.ID, Status: 200, Body: json.RawMessage(`{}`)}
	}
	return odata.BatchResponse{ID: q.ID, Status: 404, Body: json.RawMessage(`{"error":{"code":"404","message":"not read: the dry run had no target"}}`)}
}

// recorder writes each batch's JSON body, exactly as sent, to dir as
// NNNN-step.json, before passing it on.
type recorder struct {
	inner Client
	dir   string
	mu    sync.Mutex
	n     int
}

func (c *recorder) Batch(ctx context.Context, reqs []odata.BatchRequest, opts odata.BatchOptions) ([]odata.BatchResponse, error) {
	var buf bytes.Buffer
	if err := odata.EncodeJSONBatch(&buf, reqs); err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.n++
	name := filepath.Join(c.dir, fmt.Sprintf("%04d-%s.json", c.n, batchStep(ctx)))
	c.mu.Unlock()
	if err := atomicfile.WriteFile(name, buf.Bytes(), 0o600); err != nil {
		return nil, err
	}
	return c.inner.Batch(ctx, reqs, opts)
}

// tally is the dry run's ledger: the counts and problems of each step,
// and the keys ref() may ask for, nothing else per record, so that memory
// stays flat however many rows.
type tally struct {
	mu     sync.Mutex
	batch  int
	order  []string
	steps  map[string]*StepSummary
	counts map[string]*journal.Counts
	errs   map[string][]RecordError
	// keys are what ref() gives: step → record id → key expression, of
	// the steps ref() may ask for (refd) and no others. A real run asks
	// the journal, whose index holds them (no map of every record).
	keys map[string]map[string]string
	refd map[string]bool
	// resumed is the journal the dry run resumes, as replayed (else
	// nothing done): the keys of what it holds are there, as apply finds
	// them (journal.Journal.Key: a record partly loaded too).
	resumed *journal.State
	// loaded counts the records resumed holds committed or closed, which
	// apply would not send again.
	loaded atomic.Int64
	// diff, when set, is Diff's: each record's classification is kept.
	diff *differ
}

// newTally is the ledger of a dry run of p in waves; d is Diff's, nil for
// Plan's.
func newTally(p *plan.Plan, waves [][]*plan.Step, d *differ) *tally {
	t := &tally{steps: map[string]*StepSummary{}, counts: map[string]*journal.Counts{}, errs: map[string][]RecordError{},
		keys: map[string]map[string]string{}, refd: map[string]bool{}, resumed: &journal.State{}, diff: d}
	for _, s := range p.Steps {
		for _, name := range s.Refs {
			t.refd[name] = true
		}
	}
	for _, w := range waves {
		for _, s := range w {
			t.order = append(t.order, s.Name)
			t.steps[s.Name] = &StepSummary{Name: s.Name, Entity: s.Entity}
			t.counts[s.Name] = &journal.Counts{}
		}
	}
	return t
}

func (t *tally) NextBatch() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.batch++
	return t.batch
}

func (t *tally) Append(es ...journal.Entry) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, e := range es {
		re := e.Record
		if e.Kind != journal.KindRecord || re == nil || t.steps[re.Step] == nil {
			continue
		}
		ss, c := t.steps[re.Step], t.counts[re.Step]
		switch re.Status {
		case journal.Skipped:
			ss.Skipped++
			c.Skipped++
		case journal.Committed:
			ss.Records++
			c.Committed++
		case journal.Failed:
			// A rejected row is still a record of the step: the counts
			// read "7 records, 6 with errors", as apply's do.
			ss.Records++
			ss.Errors++
			c.Failed++
			if re.Partly != "" {
				ss.Partly++
			}
			t.errs[re.Step] = append(t.errs[re.Step], problemErrors(re.Step, re.ID, re.Loc, re.Partly, re.Errors)...)
		case journal.Pending:
			// A trial's record that names one the trial does not load:
			// left for the full load, as apply leaves it.
			ss.Records++
			ss.Pending++
			c.Pending++
		}
	}
	return nil
}

func (t *tally) AppendUnsynced(es ...journal.Entry) error { return t.Append(es...) }
func (t *tally) Sync() error                              { return nil }
func (t *tally) Close() error                             { return nil }

// Snapshot is the state a dry run starts from: nothing done yet.
func (t *tally) Snapshot() *journal.State { return &journal.State{} }

// ref is the key the run gave the record of step and id, else the one the
// journal it resumes holds. A key the server would number is a stand-in of
// its own per record, which names it (and no two records share).
func (t *tally) ref(step, id string) (any, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	k, ok := t.keys[step][id]
	switch {
	case !ok:
		if rec := t.resumed.Record(step, id); rec != nil && rec.Key != "" {
			return KeyValue(rec.Key), true
		}
		return nil, false
	case k == placeholderKey:
		return "{" + step + ":" + id + "}", true
	}
	return KeyValue(k), true
}

// keep keeps the keys of the steps ref() may ask for only.
func (t *tally) keep(step, id, key string) {
	if !t.refd[step] {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	m := t.keys[step]
	if m == nil {
		m = map[string]string{}
		t.keys[step] = m
	}
	m[id] = key
}

func (t *tally) loadedBefore() { t.loaded.Add(1) }

func (t *tally) diffs() *differ { return t.diff }

// reconciles: the dry run leaves nothing in doubt, and nothing to undo.
func (t *tally) reconciles() bool { return false }

// placeholders: a key ref() gives may be the simulated service's stand-in
// for one the server numbers ({key}), which no field's type or length can
// check.
func (t *tally) placeholders() bool { return true }

// held: the dry run keeps no records, so it holds no key.
func (t *tally) held(string, []string) (map[string]bool, error) { return map[string]bool{}, nil }

func (t *tally) Counts(step string) journal.Counts {
	t.mu.Lock()
	defer t.mu.Unlock()
	if c := t.counts[step]; c != nil {
		return *c
	}
	return journal.Counts{}
}

func (t *tally) committed(step string, children int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if ss := t.steps[step]; ss != nil {
		ss.Children += children
	}
}

func (t *tally) summary(p *plan.Plan) *Summary {
	t.mu.Lock()
	defer t.mu.Unlock()
	sum := &Summary{Plan: p.Name}
	for _, name := range t.order {
		sum.Steps = append(sum.Steps, *t.steps[name])
		sum.Errors = append(sum.Errors, t.errs[name]...)
	}
	sum.Complete = len(sum.Errors) == 0
	return sum
}

func countChildren(kids []*transform.Child) int {
	n := len(kids)
	for _, k := range kids {
		n += countChildren(k.Children)
	}
	return n
}

// simChain is a keyed read of many entities (Reader.ReadKeys): the rows
// of what the run wrote come from memory, the rest from the target or,
// without one, as a read of one entity would be answered offline.
type simChain struct {
	id     string
	t      *odata.EntityType
	expand []string
	made   map[string]json.RawMessage // canonical key → row
	others []string                   // keys not written by the run
	// standIns are keys the server will number: what the run creates
	// exists, its values unknown (as made0 answers).
	standIns []string
	unread   int
	exists   bool // offline: the set is an update step's, its entities exist
}

// chainOf reads a chain GET, or returns nil for any other read.
func (s *simService) chainOf(q odata.BatchRequest) *simChain {
	set, query, ok := strings.Cut(q.URL, "?")
	if !ok || strings.ContainsAny(set, "(/") {
		return nil
	}
	es := s.md.EntitySet(set)
	vals, err := url.ParseQuery(query)
	if es == nil || es.Type == nil || err != nil || vals.Get("$filter") == "" {
		return nil
	}
	keys, ok := read.ChainKeys(es.Type, vals.Get("$filter"))
	if !ok {
		return nil
	}
	c := &simChain{id: q.ID, t: es.Type, made: map[string]json.RawMessage{}, exists: s.updates[set]}
	if e := vals.Get("$expand"); e != "" {
		c.expand = strings.Split(e, ",")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, k := range keys {
		k = odata.CanonicalKey(es.Type, k)
		fields, ok := s.made[odata.KeySegment(set, k)]
		switch {
		case !ok && standIn("("+k+")"):
			c.standIns = append(c.standIns, k)
			continue
		case !ok:
			c.others = append(c.others, k)
			continue
		}
		row := map[string]json.RawMessage{}
		for f, v := range fields {
			row[f] = v
		}
		c.made[k] = c.withLines(row)
	}
	c.unread = len(c.others)
	return c
}

// withLines adds the expanded sub-forms as empty: the target never saw
// the entity, or the dry run does not know its lines.
func (c *simChain) withLines(row map[string]json.RawMessage) json.RawMessage {
	for _, nav := range c.expand {
		row[nav] = json.RawMessage(`[]`)
	}
	b, _ := json.Marshal(row)
	return b
}

// answer is the chain's answer: the target's (got) without the rows the
// run rewrote, plus those as the run wrote them; offline (got nil) the
// rows the run wrote, and for an update step's set the others with their
// key alone (a PATCH then carries every field).
func (c *simChain) answer(q odata.BatchRequest, got *odata.BatchResponse) odata.BatchResponse {
	var rows []json.RawMessage
	if got != nil {
		if got.Status != 200 || len(c.made)+len(c.standIns) == 0 {
			return *got
		}
		var coll struct {
			Value []json.RawMessage `json:"value"`
		}
		if json.Unmarshal(got.Body, &coll) != nil {
			return *got
		}
		for _, raw := range coll.Value {
			if e, err := odata.DecodeEntity(raw); err != nil || c.made[odata.EntityKey(c.t, e)] == nil {
				rows = append(rows, raw)
			}
		}
	}
	keyOnly := c.standIns
	if got == nil && c.exists {
		keyOnly = append(keyOnly, c.others...)
	}
	for _, k := range keyOnly {
		parts, err := odata.KeyParts(c.t, k)
		if err != nil {
			continue
		}
		row := map[string]json.RawMessage{}
		for _, p := range parts {
			row[p.Name], _ = json.Marshal(p.Value)
		}
		rows = append(rows, c.withLines(row))
	}
	keys := make([]string, 0, len(c.made))
	for k := range c.made {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		rows = append(rows, c.made[k])
	}
	if rows == nil {
		rows = []json.RawMessage{}
	}
	body, _ := json.Marshal(map[string]any{"value": rows})
	return odata.BatchResponse{ID: q.ID, Status: 200, Body: body}
}
