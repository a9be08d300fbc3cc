package executor

import (
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/migrate-tool/migrate/internal/diag"
	"github.com/migrate-tool/migrate/journal"
)

// Summary is the result of Apply or Plan. docs/cli.md's JSON output is derived
// from it field by field.
type Summary struct {
	Plan  string
	Steps []StepSummary
	// Requests is the number of HTTP calls ($batch posts) made, or for the
	// dry run that apply would make.
	Requests int
	// Subrequests is the number of sub-requests in them.
	Subrequests int
	// Transactions is the API transactions used: each entity and each line
	// counts one (docs/servers.md, Limits of hosted installations: a
	// document with five lines counts six).
	Transactions int
	// Standard: the target is a standard OData service (dialect odata), not
	// the ERP's: it meters no API transactions (Transactions counts the
	// entities and lines written all the same, and no view calls them API
	// transactions) and holds no company (holder).
	Standard bool
	// Unread (dry run) is the reads of upsert and update steps that were
	// not made, for want of a target: their outcome was predicted (upsert
	// inserts, update changes every field).
	Unread int
	// Estimated is the dry run's estimate of apply's duration at the
	// calls-per-minute limit (0 when unlimited).
	Estimated time.Duration
	// Errors lists every problem: row errors and server refusals.
	Errors []RecordError
	// Warnings are what the run read but will load otherwise than the
	// customer sees it: a workbook number a text field gets as its stored
	// digits while the sheet shows it formatted.
	Warnings []diag.Diagnostic
	// Raised (apply) are what the load warned of as it ran, each once:
	// said on stderr then, journaled for the run report (KindWarning), and
	// in the JSON's warnings.
	Raised []diag.Diagnostic
	// Shrank (apply) says the batches were cut when a call came near the
	// server's 3-minute limit: apply then made more calls than the dry run
	// counted. Nil when no call did.
	Shrank *BatchShrink
	// Waived lists the failed records the user closed (resolve --waive),
	// in journal order, each with its reason.
	Waived []WaivedRecord
	// Gone are the failed records whose rows the source no longer gives,
	// as the last run that read their step to its end found: they will
	// never load, and resolve --waive closes them.
	Gone []RecordRef
	// Unsent (status, the run report) are the changes the journal's last
	// delta load (apply --delta) did not send, each for a conflict with a
	// change made on the server since the load: until a delta sends them,
	// the server and the sources differ there.
	Unsent []UnsentChange
	// Undecided names in-doubt work that reconciliation could not decide;
	// it is never guessed: check these on the server.
	Undecided []string
	// Interrupted is set when the run stopped before the end (Stop or ctx).
	Interrupted bool
	// Complete is set when every record is committed or skipped, and
	// every step was read to its end by a run that was no trial.
	Complete bool
	// Trial is the records per step of the last run, when it was a trial
	// (apply --limit): an apply without it loads the rest.
	Trial int
	// Unfinished are the steps no run read to the end (a trial, apply
	// --steps, a stop); none in a journal that does not record runs.
	Unfinished []string
	// Chosen are the steps the last run was limited to (apply --steps).
	Chosen []string
	// Journal (dry run, diff) is the journal apply would resume, when one
	// exists: Loaded counts its records committed already, which apply
	// skips and the dry run leaves out as apply does; InDoubt its records in
	// doubt, which apply reconciles first and the dry run cannot predict.
	Journal         string
	Loaded, InDoubt int
	// Stale (dry run, diff): why apply would refuse to resume Journal (its
	// plan or sources changed); the prediction is then of a new journal.
	Stale string
	// Delta is what changed in the sources of a complete journal since
	// each record was loaded: listed by apply, sent by apply --delta.
	Delta *Delta
	// Unchecked (dry run, diff) counts the values records name by key
	// that no step of the plan creates and nothing checks on the company
	// (unmadeRefs): their records load only if the company has them, which
	// the dry run counts them as doing, with a warning each field.
	Unchecked int
	// UncheckedMore: Unchecked is a lower bound; more distinct values were
	// named than the memory budget keeps apart (a warning says so).
	UncheckedMore bool
	// InsertsUnread (dry run) counts the records of insert steps, with a
	// key of their own, it predicts sent without reading what the company
	// holds: a key it holds already is a conflict apply fails. (A document
	// the server numbers has none: it loads.) diff reads them.
	InsertsUnread int
	// ExistsUnread (a dry run without a target) counts the distinct
	// exists: values no earlier step creates, which were not looked up:
	// apply looks them up before it starts, and (without
	// --allow-missing-references) does not start over one the company
	// lacks.
	ExistsUnread int
	// Refused (dry run, diff) is why apply would not start, "" when it
	// would (RefuseStart): the counts and batches are then of the load
	// were it started as things stand.
	Refused string
}

// LoadText says in a sentence how many of the dry run's records apply
// would load and why the others would not (Total: what the JSON's
// would_load and would_not_load count), then what the count holds only as
// far as (Caveat). The text says it, the page's verdict too.
func (s *Summary) LoadText() string {
	t := s.loadCount()
	if caveat := s.Caveat(); caveat != "" {
		return strings.TrimSuffix(t, ".") + ", " + caveat + "."
	}
	return t
}

// loadCount is LoadText's count.
func (s *Summary) loadCount() string {
	total := s.Total()
	load, not := total.ToLoad(), total.NotLoaded()
	switch {
	case load == 0 && not == 0:
		return "apply has nothing to load."
	case not == 0:
		return fmt.Sprintf("apply would load every record (%d).", load)
	}
	var why []string
	if total.Errors > 0 {
		why = append(why, fmt.Sprintf("%d with row errors", total.Errors))
	}
	if total.Unresolved > 0 {
		why = append(why, fmt.Sprintf("%d giving an exists: value on neither the target nor an earlier step", total.Unresolved))
	}
	if total.Pending > 0 {
		why = append(why, fmt.Sprintf("%d naming what the trial does not load, left pending for the full load", total.Pending))
	}
	if total.Conflicts > 0 {
		who := "apply --delta"
		if s.Delta != nil {
			who = s.Delta.Command()
		}
		why = append(why, fmt.Sprintf("%d with a conflict %s would not send", total.Conflicts, who))
	}
	return fmt.Sprintf("apply would load %d of %s; %d would not (%s).", load, diag.Count(load+not, "record", "records"), not, strings.Join(why, "; "))
}

// Caveat says what the dry run's count of the records apply would load
// holds only as far as ("" when it holds outright): the values records
// name that no step creates and nothing checks (Unchecked), the exists:
// values not looked up for want of a target (ExistsUnread), and the
// records insert steps send without reading the company (InsertsUnread).
// The text and the page say it after the count.
func (s *Summary) Caveat() string {
	var as []string
	if s.Unchecked > 0 {
		what := diag.Count(s.Unchecked, "value records name", "values records name")
		if s.UncheckedMore {
			what = fmt.Sprintf("%d or more values records name", s.Unchecked)
		}
		as = append(as, fmt.Sprintf("has the %s that no step creates and nothing checks (warnings below)", what))
	}
	if s.ExistsUnread > 0 {
		as = append(as, fmt.Sprintf("has the %s of exists: fields that no earlier step creates (not looked up: no target; apply looks them up before it starts)",
			diag.Count(s.ExistsUnread, "value", "values")))
	}
	if s.InsertsUnread > 0 {
		as = append(as, fmt.Sprintf("holds none of the keys of the %s insert steps write (not read: `migrate diff` compares them)",
			diag.Count(s.InsertsUnread, "record", "records")))
	}
	if len(as) == 0 {
		return ""
	}
	return "as far as " + s.holder() + " " + strings.Join(as, " and ")
}

// holder is what holds the records a run loads, as its sentences name
// it (holderOf).
func (s *Summary) holder() string { return holderOf(s.Standard) }

// holderOf names what holds the records a run loads: the company of the
// ERP's installation, or a standard OData service (standard).
func holderOf(standard bool) string {
	if standard {
		return "the service"
	}
	return "the company"
}

// RefuseStart records why apply would not start over what a dry run or
// diff of the same load found, as apply counts it before it sends
// anything: values of exists: fields on neither the target nor an
// earlier step (unless allowMissing, apply --allow-missing-references),
// values of file maps that their mapping files do not confirm, and a load
// that needs more API transactions than the pool's left (-1: no budget).
func (s *Summary) RefuseStart(unresolved, unconfirmed int, allowMissing bool, left int) {
	var why []string
	if unresolved > 0 && !allowMissing {
		why = append(why, fmt.Sprintf("%s of exists: fields on neither the target nor an earlier step (create %s first, correct the source, or give --allow-missing-references)",
			diag.Count(unresolved, "value", "values"), diag.Them(unresolved)))
	}
	if unconfirmed > 0 {
		why = append(why, fmt.Sprintf("%s that a mapping file does not confirm (confirm %s in the file, or run `migrate mapping` to list %[2]s)",
			diag.Count(unconfirmed, "map value", "map values"), diag.Them(unconfirmed)))
	}
	if over := OverBudget(s.Transactions, left); over != "" {
		why = append(why, over+" (load some steps now, --steps, and the rest once the pool is topped up)")
	}
	s.Refused = strings.Join(why, "; ")
}

// OverBudget says that a load needing needs API transactions is more than
// the left the pool has ("" when it is not), as apply refuses it and the
// dry run foresees it.
func OverBudget(needs, left int) string {
	if left < 0 || needs <= left {
		return ""
	}
	return fmt.Sprintf("this load needs %s (each entity and each line, as the service meters them) and the pool has %d left",
		diag.Count(needs, "API transaction", "API transactions"), left)
}

// Resumes says what a dry run or diff of s (Journal set) predicts of the
// journal apply would resume: what it leaves out, what it cannot predict,
// or that apply would refuse it; "" when there is none. The text, the JSON
// and the pages of plan and diff all say this one sentence.
func (s *Summary) Resumes() string {
	switch {
	case s == nil || s.Journal == "":
		return ""
	case s.Stale != "":
		return fmt.Sprintf("apply would refuse to resume %s (%s): this predicts a new journal (apply --allow-plan-change resumes it, leaving out what it holds loaded; --journal NEW loads everything again).", s.Journal, s.Stale)
	}
	one := s.Loaded == 1
	if s.Delta != nil && s.Delta.Sent {
		// A delta goes on from the journal: what it holds loaded is
		// compared with the sources, not left out.
		how := "apply --delta would go on from " + s.Journal
		if s.Delta.GoesOn {
			how = "apply would go on with the delta the last run of " + s.Journal + " left unfinished"
		}
		return fmt.Sprintf("%s: of the %s it holds loaded, it sends only what changed in the sources since.", how,
			diag.Count(s.Loaded, "record", "records"))
	}
	t := fmt.Sprintf("apply would resume %s: %s it holds loaded %s left out, as apply leaves %s alone", s.Journal,
		diag.Count(s.Loaded, "record", "records"), map[bool]string{true: "is", false: "are"}[one], diag.Them(s.Loaded))
	if s.InDoubt > 0 {
		t += fmt.Sprintf("; %s in doubt, which apply reconciles first with the server, cannot be predicted and %s not counted",
			diag.Count(s.InDoubt, "record", "records"), map[bool]string{true: "is", false: "are"}[s.InDoubt == 1])
	}
	return t + "."
}

// Left says what a trial or a choice of steps left to load ("" when
// nothing): the next apply, without --limit or --steps, loads it.
func (s *Summary) Left() string {
	switch {
	case s.Trial > 0:
		t := s.Total()
		if waiting := t.Pending - t.Undone; waiting > 0 {
			// Records that name what the trial did not load (a line's
			// part past the limit): the server would refuse them now.
			verb := "name what it did not load and wait"
			if waiting == 1 {
				verb = "names what it did not load and waits"
			}
			return fmt.Sprintf("trial of %d per step; %s %s for it; run apply without --limit to load the rest",
				s.Trial, diag.Count(waiting, "pending record", "pending records"), verb)
		}
		return fmt.Sprintf("trial of %d per step; run apply without --limit to load the rest", s.Trial)
	case len(s.Unfinished) > 0 && len(s.Chosen) > 0:
		return fmt.Sprintf("not loaded to the end: %s; run apply without --steps to load the rest", strings.Join(s.Unfinished, ", "))
	}
	return "" // a stop: Next says it
}

// Next says what is left to do with a journal that is not complete, as s
// sums it up: status says it after "not complete: ", the run report's
// banner after its counts.
func (s *Summary) Next() string {
	t := s.Total()
	pending := t.Pending+t.InDoubt > 0
	switch {
	case t.Failed > 0 && !pending && !s.Interrupted && s.Conflicted() == t.Failed:
		return s.Conflicts()
	case t.Failed > 0 && !pending && !s.Interrupted:
		if c := s.Conflicts(); c != "" {
			return "failed records remain; correct the rows (`migrate report`), then apply again with --retry-failed; " + c
		}
		return "failed records remain; correct the rows (`migrate report`), then apply again with --retry-failed"
	case t.Undone > 0 && t.InDoubt == 0 && t.Failed == 0:
		if rest := t.Pending - t.Undone; rest > 0 {
			return fmt.Sprintf("undo took back %s; apply again loads %s anew, and %s", diag.Count(t.Undone, "record", "records"),
				diag.Them(t.Undone), diag.Count(rest, "more pending record", "more pending records"))
		}
		return fmt.Sprintf("undo took the load back (%s); apply again loads %s anew", diag.Count(t.Undone, "record", "records"), diag.Them(t.Undone))
	case s.Left() != "" && t.InDoubt == 0:
		// A trial's pending records (those naming what it did not load)
		// are the rest that apply without --limit loads.
		return s.Left()
	case s.Interrupted && !pending:
		return "the last apply stopped before it ran every step; run apply again to go on"
	case t.Failed > 0:
		return "run apply again to resume (add --retry-failed once the failed rows are corrected)"
	}
	return "run apply again to resume"
}

// UnsentChange is a change a delta load did not send, of step (its
// entity Entity).
type UnsentChange struct {
	Step, Entity string
	journal.Conflict
}

// UnsentText says that the last delta left the changes of Unsent unsent
// ("" when it left none): status says it after its complete: line, the run
// report in its banner, each then listing them.
func (s *Summary) UnsentText() string {
	if len(s.Unsent) == 0 {
		return ""
	}
	return fmt.Sprintf("the last delta did not send %s, changed on the server since the load as well; the server and the sources differ there",
		diag.Count(len(s.Unsent), "change", "changes"))
}

// Conflicted counts the failed records the server refused as a POST of a
// key the company holds already (HTTP 409).
func (s *Summary) Conflicted() int {
	seen := map[RecordRef]bool{}
	for _, e := range s.Errors {
		if e.Status == http.StatusConflict {
			seen[RecordRef{Step: e.Step, Record: e.Record}] = true
		}
	}
	return len(seen)
}

// Conflicts says what to do with the failed records whose keys the
// company holds already ("" when none): correcting their rows changes
// nothing, and --retry-failed fails them again.
func (s *Summary) Conflicts() string {
	n := s.Conflicted()
	if n == 0 {
		return ""
	}
	if n == 1 {
		return "1 record failed because " + s.holder() + " holds its key already (HTTP 409), which an insert does not overwrite and a retry fails again: set mode: upsert on its step to update it, or close it with resolve --waive"
	}
	return fmt.Sprintf("%d records failed because %s holds their keys already (HTTP 409), which an insert does not overwrite and a retry fails again: set mode: upsert on their steps to update them, or close them with resolve --waive", n, s.holder())
}

// StepSummary counts one step.
type StepSummary struct {
	Name     string
	Entity   string
	Records  int // records built (dry run) or seen
	Children int // sub-form children of those records
	Skipped  int // rows skipped by when:/skip(), and records already done
	Errors   int // row errors (the record could not be built)
	// Unresolved (dry run) counts the records, built without a row error,
	// that give a value of an exists: field neither on the target nor
	// created by an earlier step (Summary.AddReferences).
	Unresolved int
	// Conflicts (dry run of a delta) counts the changed records apply
	// --delta would leave unsent for a conflict (a field someone changed
	// on the server since the load): records apply would not load.
	Conflicts int
	// Partly counts the failed records whose entity exists although some
	// of its lines failed (partly loaded).
	Partly int
	// Apply and status:
	Committed int
	Failed    int
	Pending   int
	InDoubt   int
	// Waived counts the failed records the user closed (resolve --waive):
	// they count as records, never as failed.
	Waived int
	// Undone (status) counts the pending records undo took back: apply
	// loads them again.
	Undone int
	// Changed (apply) counts the committed records whose source rows
	// changed since they were loaded: apply does not send them again.
	Changed int
}

// Total is the steps' counts added up, named "total".
func (s *Summary) Total() StepSummary { return totalOf(s.Steps) }

func totalOf(steps []StepSummary) StepSummary {
	t := StepSummary{Name: "total"}
	for _, s := range steps {
		t.Records += s.Records
		t.Children += s.Children
		t.Skipped += s.Skipped
		t.Errors += s.Errors
		t.Unresolved += s.Unresolved
		t.Conflicts += s.Conflicts
		t.Committed += s.Committed
		t.Failed += s.Failed
		t.Pending += s.Pending
		t.InDoubt += s.InDoubt
		t.Waived += s.Waived
		t.Undone += s.Undone
	}
	return t
}

// ToLoad (dry run) is how many of the step's records apply would load:
// those built, less those it would not (NotLoaded).
func (s StepSummary) ToLoad() int { return s.Records - s.NotLoaded() }

// NotLoaded (dry run) is how many of the step's records apply would not
// load: row errors, unresolved exists: values, a trial's records that
// wait for the full load (Pending: they name a record the trial does not
// load) and a delta's conflicts.
func (s StepSummary) NotLoaded() int { return s.Errors + s.Unresolved + s.Pending + s.Conflicts }

// countConflicts counts, in a delta's dry run, each step's records that
// apply --delta would leave unsent for a conflict among its records, as
// ones it would not load (StepSummary.Conflicts).
func (s *Summary) countConflicts() {
	for _, d := range s.Delta.Steps {
		ids := map[string]bool{}
		for _, c := range d.unsent() {
			ids[c.ID] = true
		}
		for i := range s.Steps {
			if s.Steps[i].Name == d.Name {
				s.Steps[i].Records += len(ids)
				s.Steps[i].Conflicts += len(ids)
			}
		}
	}
}

// AddReferences makes a dry run's summary the one result every view of
// it renders (text, JSON, the page): the exists: values CheckReferences
// found on neither the target nor an earlier step come first among its
// problems, and their records are counted among those that would not
// load. A run with any is not complete: apply would refuse to start.
// Those it could not look up (no target) are counted in ExistsUnread.
func (s *Summary) AddReferences(refs *References) {
	if refs == nil {
		return
	}
	s.ExistsUnread = refs.Unchecked
	if len(refs.Unresolved) == 0 {
		return
	}
	s.Errors = append(append([]RecordError{}, refs.Unresolved...), s.Errors...)
	for i := range s.Steps {
		s.Steps[i].Unresolved = refs.Records[s.Steps[i].Name]
	}
	s.Complete = false
}

// RecordError is one problem, at its source location.
type RecordError struct {
	Step     string
	Record   string // record id, when known
	Location string // file.csv:17, file.xlsx!Sheet!C17
	Field    string
	Value    string
	// PlanLocation is where the plan writes the field (or expression) the
	// error is about: plan.yaml:31:9.
	PlanLocation string
	Message      string
	// Partly is what exists of the record when it is partly loaded
	// ("ORDERS('SO1') created with 3 of 4 lines").
	Partly string
	// Status is the HTTP status of the server's refusal; 0 for a row error.
	Status int
}

// Diagnostic is the error in the model every command renders: the source
// cell or row its subject, the plan's place its context. The places come
// back from the journal as text; the ranges are points.
func (e RecordError) Diagnostic() diag.Diagnostic {
	d := diag.New(diag.Error, diag.ParseRange(e.Location), e.Message)
	d.Step, d.Record, d.Field, d.Value = e.Step, e.Record, e.Field, e.Value
	d.Context = diag.ParseRange(e.PlanLocation)
	return d
}

// problemErrors are a failed record's journaled problems as the summary
// lists them: a problem that names no cell is at the record's row (loc).
func problemErrors(step, id, loc, partly string, ps []journal.Problem) []RecordError {
	out := make([]RecordError, 0, len(ps))
	for _, p := range ps {
		cell := p.Cell
		if cell == "" {
			cell = loc
		}
		out = append(out, RecordError{Step: step, Record: id, Location: cell, Field: p.Field, Value: p.Value,
			PlanLocation: p.Plan, Message: p.Message, Partly: partly, Status: p.Status})
	}
	return out
}

// serverKey is a key the server quotes in its message: ('B-100') or
// ('SO1', 2).
var serverKey = regexp.MustCompile(`\('[^']*'(, *('[^']*'|[0-9]+))*\)`)

// Cause is what problems of one kind share: the message with the value it
// names, and the keys the server quotes in it, made "…", so that 5,000
// refusals of one rule read as one problem, with one count, in every view
// (the text lists a few of each, the page their cells).
func Cause(message, value string) string {
	cause := message
	if value != "" {
		cause = strings.ReplaceAll(cause, fmt.Sprintf("%q", value), "…")
		cause = strings.ReplaceAll(cause, value, "…")
	}
	return serverKey.ReplaceAllString(cause, "(…)")
}

// RecordRef names a record of a journal: STEP/ID as status and resolve
// list it.
type RecordRef struct{ Step, Record string }

func (r RecordRef) String() string { return r.Step + "/" + r.Record }

// WaivedRecord is a record the user waived (resolve.Waive), with the
// reason given.
type WaivedRecord struct {
	Step, Record, Location, Reason string
}
