package executor

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/migrate-tool/migrate/journal"
	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/plan"
	"github.com/migrate-tool/migrate/transform"
)

// dryRefs answers ref() in a dry run, where nothing was created: a
// placeholder that names the reference.
type dryRefs struct{}

func (dryRefs) Ref(step, id string) (any, bool) { return "{" + step + ":" + id + "}", true }

// Placeholders tells transform that what Ref gives stands in for a key,
// and is not checked against a field's length or type.
func (dryRefs) Placeholders() bool { return true }

// Plan is the dry run: it builds every record and every sub-request and
// packs every batch exactly as Apply would (for opts.Version's limit),
// sends nothing, and counts per step records, children, skipped rows and
// row errors, plus the HTTP calls, sub-requests and API transactions apply
// would use and how long that takes at the calls-per-minute limit. With
// OutDir it writes each batch's JSON body (as apply would POST it) there.
//
// Upsert and update steps are counted as if every entity existed: one read
// per record, then the writes; what the server holds can change that.
func Plan(ctx context.Context, opts Options) (*Summary, error) {
	if opts.Plan == nil || opts.Records == nil || opts.Metadata == nil {
		return nil, errors.New("executor: Plan needs Plan, Records and Metadata")
	}
	waves, err := opts.Plan.Order()
	if err != nil {
		return nil, err
	}
	if opts.OutDir != "" {
		if err := os.MkdirAll(opts.OutDir, 0o755); err != nil {
			return nil, err
		}
	}
	limit := opts.limit()
	sum := &Summary{Plan: opts.Plan.Name}
	hook := opts.hook()
	batchNo := 0
	for _, wave := range waves {
		for _, s := range wave {
			ss := StepSummary{Name: s.Name, Entity: s.Entity}
			hook.StepStarted(s.Name, s.Entity)
			b := &builder{md: opts.Metadata, deep: s.DeepInsert}
			var emitErr error
			pk := &packer{limit: limit}
			var queued []unit
			pk.emit = func(batch []*op, later []unit) error {
				batchNo++
				reqs := assemble(batch, batchNo)
				for _, o := range batch {
					// As if the server answered 201 with a key.
					o.status, o.done = 201, true
					if o.key == "" {
						o.key = "{key}"
					}
					if o.parent == nil {
						o.abs = s.Entity + "(" + o.key + ")"
					} else {
						o.abs = childAbs(o.parent, o)
					}
				}
				queued = append(queued, later...)
				sum.Requests++
				sum.Subrequests += len(reqs)
				hook.BatchSent(len(reqs))
				if opts.OutDir != "" {
					var buf bytes.Buffer
					if err := odata.EncodeJSONBatch(&buf, reqs); err != nil {
						return err
					}
					name := filepath.Join(opts.OutDir, fmt.Sprintf("%04d-%s.json", batchNo, s.Name))
					if err := os.WriteFile(name, buf.Bytes(), 0o644); err != nil {
						return err
					}
				}
				return nil
			}
			reads := 0
			err := opts.Records.Records(ctx, s.Name, prefetch(opts.Open), dryRefs{}, func(res transform.Result) error {
				switch {
				case res.Skipped:
					ss.Skipped++
					return nil
				case len(res.Errors) > 0 || res.Record == nil:
					// A rejected row is still a record of the step: the
					// counts read "7 records, 6 with errors", as apply's do.
					ss.Records++
					ss.Errors++
					for _, e := range res.Errors {
						sum.Errors = append(sum.Errors, RecordError{Step: s.Name, Location: e.Cell, Field: e.Field, Value: e.Value, PlanLocation: e.Plan, Message: e.Message})
					}
					return nil
				}
				ss.Records++
				ss.Children += countChildren(res.Record.Children)
				w := &work{rec: res.Record, id: res.Record.ID}
				root, err := b.insertOps(w)
				if err != nil {
					ss.Errors++
					sum.Errors = append(sum.Errors, RecordError{Step: s.Name, Record: w.id, Location: res.Record.Loc.String(), Message: err.Error()})
					return nil
				}
				if s.Mode == plan.ModeUpsert || s.Mode == plan.ModeUpdate {
					reads++
					if root.key != "" {
						root.kind, root.method = journal.OpPatch, "PATCH"
						root.url = s.Entity + "(" + root.key + ")"
						root.abs = root.url
					}
				}
				u := flatten(root, nil)
				sum.Transactions += len(u)
				for _, q := range queued {
					if err := pk.add(q); err != nil {
						return err
					}
				}
				queued = nil
				return pk.add(u)
			})
			if err != nil {
				return sum, err
			}
			for {
				if err := pk.flush(); err != nil {
					return sum, err
				}
				if len(queued) == 0 {
					break
				}
				q := queued
				queued = nil
				for _, u := range q {
					if err := pk.add(u); err != nil {
						return sum, err
					}
				}
			}
			if emitErr != nil {
				return sum, emitErr
			}
			// Reads go in batches of their own before the writes.
			sum.Requests += (reads + limit - 1) / limit
			sum.Subrequests += reads
			sum.Steps = append(sum.Steps, ss)
			hook.StepFinished(s.Name, ss)
		}
	}
	cpm := opts.CallsPerMinute
	if cpm == 0 {
		cpm = opts.Plan.Target.CallsPerMinute
	}
	if cpm > 0 {
		sum.Estimated = time.Duration(float64(sum.Requests) / float64(cpm) * float64(time.Minute))
	}
	sum.Complete = len(sum.Errors) == 0
	return sum, nil
}

func countChildren(kids []*transform.Child) int {
	n := len(kids)
	for _, k := range kids {
		n += countChildren(k.Children)
	}
	return n
}
