package executor

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/migrate-tool/migrate/transform"
)

// RecordSource builds the records of a step; *transform.Program is one.
type RecordSource interface {
	Records(ctx context.Context, step string, open transform.Opener, refs transform.Refs, fn func(transform.Result) error) error
}

// Options are one command's own settings for a prepared run (Apply,
// DryRun, Diff); what the plan, its sources and the metadata are is the
// Prepared's.
type Options struct {
	// Client is the target: Apply writes to it, the dry run and Diff read
	// it (nil: the dry run predicts without reading).
	Client  Client
	Journal string // Apply: the journal file, created or resumed
	// Target is the service root, for the journal header (credentials are
	// stripped before it is written).
	Target      string
	ToolVersion string
	// User is the name the service knows the credentials by
	// (GetLoginName), for the journal header and the run report.
	User string

	Concurrency int // batches in flight; 0: plan's target.concurrency, else 2
	BatchSize   int // 0: plan's target.batch_size, else the server's limit
	// CallsPerMinute is the limit the dry run's estimate assumes (0: plan's,
	// else unlimited).
	CallsPerMinute int

	// Limit, when > 0, reads at most Limit records of each step: in the
	// dry run a sample (plan --limit), in Apply a trial that the journal
	// records, which an Apply without Limit completes (apply --limit).
	Limit int
	// Steps, when set, are the only steps Apply runs; the steps they depend
	// on must be complete in the journal (*StepsError).
	Steps []string

	RetryFailed bool // resend failed records, rebuilt from the current source
	// Delta (apply --delta) loads what changed in the sources since a
	// finished run: new records created, changed fields patched
	// (delta.go). Overwrite patches a field someone changed on the server
	// since the journal wrote it too.
	Delta, Overwrite bool
	AllowPlanChange  bool // resume even though the plan or a source changed

	// Stop is the first Ctrl-C: start no new batch, finish and journal the
	// ones in flight, return ErrInterrupted. Cancelling ctx stops at once.
	Stop <-chan struct{}
	Hook Hook

	// OutDir (dry run): write each batch's JSON body there.
	OutDir string
	// Fresh (dry run): the target is a fresh, empty company (a sandbox
	// started for the run), whose keys no insert can conflict with.
	Fresh bool

	Now func() time.Time
}

// runOptions is a prepared run with one command's options: what the
// engine's loops read. It holds a copy of the Prepared, so that what one
// command wraps around the records (--limit) or the opener (the dry run's
// prefetch) stays its own.
type runOptions struct {
	Prepared
	Options
	// trialPast (apply --limit) is what the trial leaves for the full
	// load, which records naming it wait for.
	trialPast *trialPast
	// unmade (the dry run) is what records name by key that no step of
	// the plan makes, which the dry run cannot judge (unmadeRefs).
	unmade *unmadeRefs
	// insertsUnread (the dry run) counts the records of insert steps, with
	// a key of their own, it predicts sent without reading the company
	// (Summary.InsertsUnread).
	insertsUnread *atomic.Int64
}

func newRunOptions(p *Prepared, o Options) *runOptions {
	opts := &runOptions{Prepared: *p, Options: o}
	if opts.Limit > 0 {
		// A trial (apply --limit), and its dry run (plan --limit) alike.
		opts.trialPast = newTrialPast(opts.Plan, opts.Metadata)
		opts.records = limited{inner: opts.records, n: opts.Limit, trial: true, past: opts.trialPast}
	}
	return opts
}

func (o *Options) hook() Hook {
	if o.Hook == nil {
		return NopHook{}
	}
	return o.Hook
}

func (o *Options) now() time.Time {
	if o.Now != nil {
		return o.Now()
	}
	return time.Now()
}

// limit is the most sub-requests per batch: the server's (docs/service.md,
// Limits), or the plan's or the command line's smaller cap.
func (o *runOptions) limit() int {
	n := o.Version.BatchLimit()
	if o.Version.Major == 0 && o.Version.Minor == 0 {
		n = 100
	}
	cap := o.BatchSize
	if cap == 0 && o.Plan != nil {
		cap = o.Plan.Target.BatchSize
	}
	if cap > 0 && cap < n {
		n = cap
	}
	return n
}

func (o *runOptions) concurrency() int {
	if o.Concurrency > 0 {
		return o.Concurrency
	}
	if o.Plan != nil && o.Plan.Target.Concurrency > 0 {
		return o.Plan.Target.Concurrency
	}
	return 2
}
