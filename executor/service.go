package executor

import (
	"github.com/migrate-tool/migrate/odata"
)

// service is what a run talks to: the target (Apply's, target) or the dry
// run's simulated service (simService), which answers as the target would
// and changes nothing. The calls go through runOptions.Client either way;
// what the run does otherwise for the one than for the other is said here,
// so that the loop reads the same in both.
type service interface {
	// spawn runs f, a step of a wave or a batch's call and its outcome:
	// beside the others for the target; at once for the simulated
	// service, so that each batch is answered before the next is packed
	// and the dry run's output is the same every time.
	spawn(f func())
	// form is a batch's sub-requests (reqs, of batch's ops) as the
	// service takes them.
	form(batch []*op, reqs []odata.BatchRequest) []odata.BatchRequest
	// timed reports whether the time a call takes is the server's, which
	// the batch size follows (batchSizer).
	timed() bool
	// predicts reports whether the service's 404s are its predictions
	// (or the target's, confirmed already), which the run's reads take as
	// they are; the target's may be a cold form's, asked again
	// (reconcile.Options.Predicted).
	predicts() bool
	// offline reports a service that reads nothing: the dry run's without
	// a target.
	offline() bool
}

// target is the service Apply talks to: the server itself.
type target struct {
	// standard: the server is of the odata dialect (standardSingles).
	standard bool
}

// spawn: the target takes Concurrency calls at once, and the steps of a
// wave load side by side.
func (*target) spawn(f func()) { go f() }

func (t *target) form(batch []*op, reqs []odata.BatchRequest) []odata.BatchRequest {
	if t.standard {
		return standardSingles(batch, reqs)
	}
	return reqs
}

func (*target) timed() bool { return true }

func (*target) predicts() bool { return false }

func (*target) offline() bool { return false }
