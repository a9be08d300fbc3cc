package executor

import (
	"fmt"
	"net/http"

	"github.com/migrate-tool/migrate/journal"
	"github.com/migrate-tool/migrate/plan"
)

// breaker stops a step whose records keep failing with one and the same
// screen error. Real servers answer a user who lacks permission on a form
// with a 400 screen error per record, not a 403 (docs/servers.md, Status
// codes): without it a load of 50,000 orders would file 50,000 failures
// that one permission explains. The records of the run of identical
// errors are left pending, so that apply sends them again once the cause
// is fixed. Its state is guarded by the runner's workMu.
type breaker struct {
	max     int
	msg     string   // the screen error of the current run
	ids     []string // the records of the current run, in completion order
	tripped bool
}

func newBreaker(p *plan.Plan) *breaker {
	n := p.Target.MaxSameErrors
	if n <= 0 {
		n = plan.DefaultMaxSameErrors
	}
	return &breaker{max: n}
}

// screenError is the message of the record's first sub-request the server
// refused with a screen error (400, or 403 for a forbidden screen,
// docs/servers.md, Status codes), or "".
func screenError(w *work) string {
	for _, o := range w.ops {
		if o.status == http.StatusBadRequest || o.status == http.StatusForbidden {
			return o.err
		}
	}
	return ""
}

// observe takes a finished record. It reports whether the record must stay
// pending instead, and, when this record trips the breaker, the earlier
// records of the run, whose failures must be taken back.
func (b *breaker) observe(w *work) (pending bool, earlier []string) {
	msg := ""
	if w.failed {
		msg = screenError(w)
	}
	if b.tripped {
		return msg != "" && msg == b.msg, nil
	}
	if msg == "" {
		b.msg, b.ids = "", nil
		return false, nil
	}
	if msg != b.msg {
		b.msg, b.ids = msg, nil
	}
	b.ids = append(b.ids, w.id)
	if len(b.ids) < b.max {
		return false, nil
	}
	b.tripped = true
	return true, b.ids[:len(b.ids)-1]
}

// pendingEntry takes back a record's failure: with its final status
// pending, the next apply sends it again.
func pendingEntry(step, id, loc string) journal.Entry {
	return journal.Entry{Kind: journal.KindRecord, Record: &journal.RecordEntry{Step: step, ID: id, Status: journal.Pending, Loc: loc}}
}

// SameErrorsError is the breaker's stop: Count records in a row of Step
// (entity Entity) failed with Message. It wraps ErrInterrupted: the run is
// resumable, and apply exits 4.
type SameErrorsError struct {
	Step, Entity, Message string
	Count                 int
}

func (e *SameErrorsError) Error() string {
	return fmt.Sprintf("the same error %d times in %s (step %s): %s; check the API user's permissions on %s (real servers refuse a form the user may not use with this screen error, not a 403), or the data of these records; they stay pending: fix the cause and run apply again (target.max_same_errors sets how many in a row stop a step)",
		e.Count, e.Entity, e.Step, e.Message, e.Entity)
}

func (e *SameErrorsError) Unwrap() error { return ErrInterrupted }
