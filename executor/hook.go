package executor

import "github.com/migrate-tool/migrate/odata"

// Outcome is what became of one record.
type Outcome struct {
	ID       string
	Status   string // committed, failed, skipped, in_doubt, pending
	Location string
	Message  string // the first problem of a failed record
}

// Hook receives progress, Terraform-style: the engine never prints; the
// command line implements Hook for its human, JSON and progress-bar views.
// Calls may come from several goroutines at once.
type Hook interface {
	StepStarted(step, entity string)
	// StepTotal says how many records step will report (RecordDone) this
	// run, where it can be known: at its start from a count of its rows,
	// or, with group_by, once its rows are grouped. A resume leaves out
	// what the journal settled before; a trial is capped at its limit.
	StepTotal(step string, records int)
	RecordDone(step string, o Outcome)
	BatchSent(subrequests int)
	StepFinished(step string, s StepSummary)
	// Waiting says a call of step is about to pause: the rate limit (the
	// plan's calls per minute or the server's 429) or a retry's backoff.
	// Nothing moves meanwhile; this is what the user is told instead.
	Waiting(step string, w odata.Wait)
	Warn(msg string)
}

// TotalsWanted is a Hook that says whether it shows StepTotal at all: the
// counts cost a read of each file source (a CSV's lines) or a call to a
// connection ($count), which a run whose hook shows no total need not pay.
// A Hook without the method is given the totals; a run without a Hook
// counts nothing.
type TotalsWanted interface {
	WantsTotals() bool
}

// NopHook does nothing; embed it to implement only some methods.
type NopHook struct{}

func (NopHook) StepStarted(string, string)       {}
func (NopHook) StepTotal(string, int)            {}
func (NopHook) RecordDone(string, Outcome)       {}
func (NopHook) BatchSent(int)                    {}
func (NopHook) StepFinished(string, StepSummary) {}
func (NopHook) Waiting(string, odata.Wait)       {}
func (NopHook) Warn(string)                      {}
