package journal

import (
	"strings"
	"time"

	json "github.com/segmentio/encoding/json"
)

// Kind says what an entry records.
type Kind string

const (
	KindHeader  Kind = "header"  // first line: what the run was made from
	KindIntent  Kind = "intent"  // a batch about to be sent
	KindOutcome Kind = "outcome" // the responses of a batch, or that its outcome is unknown
	KindRecord  Kind = "record"  // a record's final status (committed, failed, skipped)
	// KindWatermark is the highest auto-unique key of a step's entity read
	// before the step's first write: reconciliation claims only documents
	// above it.
	KindWatermark Kind = "watermark"
	// KindRun begins each apply: whether it was a trial (--limit) or ran
	// some steps only (--steps), so that status says what is left.
	KindRun Kind = "run"
	// KindDone says a step's source was read to its end by a run that was
	// no trial: every record of it has a status (--steps checks it). A
	// delta load's (apply --delta) also names the changes it did not send
	// for a conflict (Conflicts).
	KindDone Kind = "done"
	// KindFinished is apply's last line when it ran every step to its end:
	// without it a run stopped between steps (step 2 never began) would
	// look complete, for nothing of step 2 is pending.
	KindFinished Kind = "finished"
	// KindAccept records that a resume accepted a changed plan or changed
	// sources (apply --allow-plan-change, or --retry-failed over corrected
	// rows): the runs after it are made from those, and the same plan and
	// sources are not refused again: a change is accepted once, not on every
	// run.
	KindAccept Kind = "accept"
	// KindReads is a call of reads a run made that nothing else journals
	// (an upsert's or update's reads, a deep insert's read-back, the reads
	// of reconciliation): a call the run report counts, as apply counted it.
	KindReads Kind = "reads"
	// KindTotals is what verify found of the plan's totals: (each from the
	// source, what was sent and the target), so that the run report shows
	// them; the last one is the one shown.
	KindTotals Kind = "totals"
	// KindWarning is what a run warned of as it ran (Warning), which the
	// run report shows: a reconciliation that cannot bound the documents
	// it matches, a $batch answer not as the protocol says.
	KindWarning Kind = "warning"
)

// Totals is what an entry of KindTotals records; the entry's At is when
// verify read them.
type Totals struct {
	Rows []TotalRow `json:"rows"`
	// Trial is the records per step of the trial (apply --limit) that was
	// the journal's last run, whose source side is of what it took; NotRun
	// the steps not run yet, whose totals are left out (0 and none: older
	// journals).
	Trial  int      `json:"trial,omitempty"`
	NotRun []string `json:"not_run,omitempty"`
	// PlanChanged: the plan the source side was built from is not the one
	// the run was made from (edited since): its totals are of what it
	// builds now.
	PlanChanged bool `json:"plan_changed,omitempty"`
	// SourcesChanged are the source files (as the plan names them) whose
	// content is not what the run read: the source side is of them as
	// they are now.
	SourcesChanged []string `json:"sources_changed,omitempty"`
}

// TotalRow is one total of a step as verify found it: one row for each
// value of a by field (By and Group).
type TotalRow struct {
	Step, Name string
	Expr       string // as the plan writes it
	By, Group  string
	// Source, Sent and Target are the three sides, as text.
	Source, Sent, Target string
}

// Differs reports whether the three sides are not the same.
func (r TotalRow) Differs() bool { return r.Source != r.Sent || r.Sent != r.Target }

// Accepted is what an entry of KindAccept records: the plan and sources a
// resume went on with, hashed as the header hashes them.
type Accepted struct {
	PlanHash string            `json:"plan_hash"`
	Sources  map[string]string `json:"sources,omitempty"`
}

// Run is what an entry of KindRun records.
type Run struct {
	// Limit is a trial's records per step (apply --limit); 0: all.
	Limit int `json:"limit,omitempty"`
	// Steps are the steps run (apply --steps); none: every step.
	Steps []string `json:"steps,omitempty"`
	// Delta: a delta load (apply --delta) of what changed in the sources
	// since the run before.
	Delta bool `json:"delta,omitempty"`
}

// Conflict is a field a delta load (apply --delta) did not send: the
// sources changed it since the journal wrote it, and so did someone on
// the server. Ours is what the journal wrote, Theirs what the server
// held, Now what the sources gave (JSON as sent).
type Conflict struct {
	ID    string `json:"id"`
	Key   string `json:"key"`
	Field string `json:"field"`
	// Line names the line the field is of (NAV(KEY)), or its single-object
	// sub-form (NAV); "" the entity's.
	Line string `json:"line,omitempty"`
	// Text is set for a text's content (Field TEXT, Line its sub-form).
	Text   bool            `json:"text,omitempty"`
	Ours   json.RawMessage `json:"ours,omitempty"`
	Theirs json.RawMessage `json:"theirs,omitempty"`
	Now    json.RawMessage `json:"now,omitempty"`
}

// What names the conflict's field where it stands: FIELD of the entity,
// "line NAV(KEY) FIELD", "sub-form NAV FIELD" of a single object, or
// "text NAV".
func (c Conflict) What() string {
	switch {
	case c.Text:
		return "text " + c.Line // a text sub-form: no key
	case c.Line != "" && !strings.Contains(c.Line, "("):
		return "sub-form " + c.Line + " " + c.Field // a single object: no key
	case c.Line != "":
		return "line " + c.Line + " " + c.Field
	}
	return c.Field
}

// OpKind is what a sub-request does. The undo ones are written by Undo.
type OpKind string

// The kinds of sub-requests.
const (
	OpCreate     OpKind = "create"      // POST of a new entity or line
	OpPatch      OpKind = "patch"       // PATCH of changed fields (Before holds the old values)
	OpRead       OpKind = "read"        // GET before an update or during reconciliation
	OpDelete     OpKind = "delete"      // DELETE of an existing line (lines: replace)
	OpUndoDelete OpKind = "undo-delete" // DELETE of something the run created
	OpUndoPatch  OpKind = "undo-patch"  // PATCH restoring a before-image
	OpUndoCreate OpKind = "undo-create" // POST re-creating a line that lines: replace deleted
)

// Undo reports whether the sub-request was written by Undo.
func (k OpKind) Undo() bool { return strings.HasPrefix(string(k), "undo-") }

// Header is the first entry: what the run was made from, so that a resume
// with something else is refused (Terraform's "saved plan is stale").
type Header struct {
	Plan          string            `json:"plan,omitempty"`      // plan name
	PlanPath      string            `json:"plan_path,omitempty"` // as given
	PlanHash      string            `json:"plan_hash"`           // sha256 hex of the plan file
	Sources       map[string]string `json:"sources,omitempty"`   // file as the plan wrote it → sha256 hex
	Target        string            `json:"target,omitempty"`    // base URL without credentials
	SystemVersion string            `json:"system_version,omitempty"`
	ToolVersion   string            `json:"tool_version,omitempty"`
	// User is the name the service gave for the credentials (GetLoginName),
	// for the run report; journals before it was recorded have none.
	User    string    `json:"user,omitempty"`
	Created time.Time `json:"created"`
	Steps   []Step    `json:"steps,omitempty"` // in dependency order
	// MarksFinish says that the journal's writer ends each apply that
	// runs every step with a KindFinished entry; journals written before
	// it have no such entries, and their runs are taken as finished.
	MarksFinish bool `json:"marks_finish,omitempty"`
	// Chained says that every later line carries its number and the hash
	// of the line before it (Entry.Seq, Entry.Prev). Journals written
	// before the chain have neither: they are read as before, and
	// CheckChain says they are not chained.
	Chained bool `json:"chained,omitempty"`
	// Dialect is the target's kind when it is not the ERP's own ("odata":
	// docs/other-services.md), so that undo, verify and resolve speak to it
	// as apply did; "" for the ERP.
	Dialect string `json:"dialect,omitempty"`
}

// Step names a step and its entity, in dependency order.
type Step struct {
	Name   string `json:"name"`
	Entity string `json:"entity"`
	Wave   int    `json:"wave"`
	// Match is the step's match: (the fields that identify a document),
	// so that resolve looks candidates up as apply does.
	Match []string `json:"match,omitempty"`
}

// Sub is one sub-request of an intent.
type Sub struct {
	ID   string `json:"id"`          // the sub-request id in its batch
	Step string `json:"st"`          // record identity: step name
	Rec  string `json:"rec"`         // record identity: record id
	Path string `json:"p,omitempty"` // "" for the record's entity, "0", "0.2" for sub-form children
	Op   OpKind `json:"op"`          // OpCreate, OpPatch, ...
	Meth string `json:"m"`           // HTTP method
	URL  string `json:"u"`           // as sent ($<id>/<nav> for references)
	Hash string `json:"h,omitempty"` // sha256 prefix of the body, never the body
	Key  string `json:"k,omitempty"` // the target's key expression when known before sending
	Nav  string `json:"n,omitempty"` // navigation property of a child
	Line string `json:"l,omitempty"` // line key of an existing line (delete, undo)
	// Before is the before-image of a PATCH: the old values of the fields it
	// changes, as JSON, so that undo can restore them; of a DELETE (lines:
	// replace), the line's fields as the server had them, without the ones
	// it computes, so that undo can re-create it.
	Before json.RawMessage `json:"bf,omitempty"`
	// Match is what the run left: the written scalar fields of a create as
	// JSON, for a PATCH the new values. Reconciliation looks for them when
	// the key is not known before sending (server-assigned keys, lines);
	// undo compares them with the current state to see a record changed
	// since.
	Match json.RawMessage `json:"mt,omitempty"`
	// Held, on the record's entity PATCH of an upsert or update, is what
	// the entity held already of the fields the plan writes, as the read
	// before it found them (RecordEntry.Held): a resume that finds the
	// PATCH committed journals them with the record, so verify compares
	// them as it does after a run that was not interrupted.
	Held json.RawMessage `json:"hd,omitempty"`
	// Above, on a line added to a document that existed, is the highest
	// key its sub-form held when the run read the document: a line with a
	// higher one was added since, so reconciliation may take it for this
	// one when the server filled a field of it (not one that was there).
	Above string `json:"ab,omitempty"`
	// RowHash is a hash of the record's source row, on the record's entity
	// sub-request when its identity is its location (no id:): a resume
	// refuses a source whose rows shifted under those locations.
	RowHash string `json:"rh,omitempty"`
	// Lines, on a deep insert (lines inside its body, no sub-request of
	// their own), are the match fields of the lines it carries, by
	// sub-form: {"ORDERITEMS_SUBFORM":[{...},...]}. Reconciliation tells
	// documents with the same header apart by them.
	Lines json.RawMessage `json:"ln,omitempty"`
	// Texts, on a deep insert, are the single sub-forms (texts) it
	// carries, by path, each by its sub-form: {"2":{"ORDERSTEXT_SUBFORM":
	// {"TEXT":"..."}}}. Verify and undo compare them with what the
	// document holds (without them, a text inside a deep insert was never
	// compared); with Lines they give each carried child its path.
	Texts json.RawMessage `json:"tx,omitempty"`
	// Nested, on a deep insert, counts the entities its body carries
	// besides its own (lines, their texts, at every depth): the service
	// meters each as an API transaction, as it meters the sub-request.
	Nested int `json:"nx,omitempty"`
}

// Entities is what the sub-request writes, as the service meters it: its
// own entity and every one its body carries. A journal written before
// Nested was recorded counts the lines of Lines.
func (s *Sub) Entities() int {
	if s.Nested > 0 || len(s.Lines) == 0 {
		return 1 + s.Nested
	}
	var lines map[string][]json.RawMessage
	if json.Unmarshal(s.Lines, &lines) != nil {
		return 1
	}
	n := 1
	for _, l := range lines {
		n += len(l)
	}
	return n
}

// Watermark is what an entry of KindWatermark records.
type Watermark struct {
	Step  string `json:"st"`
	Field string `json:"f"` // the auto-unique field, e.g. ORD, or a time the server sets (odata dialect)
	// Value is the field's highest value when read, as a literal; "" when
	// the entity held nothing.
	Value string `json:"v,omitempty"`
}

// UndoKey names what an undo sub-request acts on within its record, so
// that a second undo knows what the first already did.
func (s Sub) UndoKey() string {
	if s.Op == OpUndoCreate {
		return s.Path + "|" + s.Nav + "(" + s.Line + ")"
	}
	return s.Path + "|" + s.Line
}

// SubResult is the outcome of one sub-request.
type SubResult struct {
	ID     string `json:"id"`
	Status int    `json:"s"`
	// Key is the key expression of what the sub-request created or found:
	// the entity's ('SO001', IVNUM='1',IVTYPE='A') or a line's (3).
	Key      string `json:"k,omitempty"`
	Location string `json:"loc,omitempty"`
	Error    string `json:"e,omitempty"`
	// By is "user" for an outcome the user decided with migrate resolve.
	By string `json:"by,omitempty"`
	// Filled is what the server answered for written fields whose value it
	// did not take as sent (filled from a reference, normalised), as JSON:
	// with the Sub's Match, what the run left. Usually absent.
	Filled json.RawMessage `json:"fl,omitempty"`
	// Fills are the fields of Filled the server holds another value of by
	// the field's type, not another form of the value sent (a name it
	// fills from a reference, not a date written another way): documents
	// in doubt are not matched on them (State.FilledFields).
	Fills []string `json:"fs,omitempty"`
}

// Problem is one message about a record.
type Problem struct {
	Cell    string `json:"cell,omitempty"` // file!Sheet!C17 or file.csv:42
	Field   string `json:"field,omitempty"`
	Value   string `json:"value,omitempty"`
	Plan    string `json:"plan,omitempty"` // plan.yaml:31:9, where the plan writes the field
	Message string `json:"msg"`
	// Status is the HTTP status of the server's refusal (409: a POST of a
	// key the company holds already); 0 for a problem of the row.
	Status int `json:"status,omitempty"`
}

// Row is a source row as it was, kept for failed records only.
type Row struct {
	Header []string `json:"h"`
	Cells  []string `json:"c"`
	Loc    string   `json:"l,omitempty"` // file.csv:17, file.xlsx!Sheet!17
}

// RecordEntry is a record's status once the executor decided it.
type RecordEntry struct {
	Step   string    `json:"st"`
	ID     string    `json:"rec"`
	Status Status    `json:"status"`
	Loc    string    `json:"loc,omitempty"`
	Key    string    `json:"k,omitempty"`
	Errors []Problem `json:"err,omitempty"`
	Row    *Row      `json:"row,omitempty"`
	// Rows are every source row of a failed record made of several (a
	// group), so that the report gives the whole record back.
	Rows []Row `json:"rows,omitempty"`
	// Partly says what exists of a failed record whose entity was written
	// ("ORDERS('SO1') created with 3 of 4 lines"): it is partly loaded.
	Partly string `json:"partly,omitempty"`
	// Undo marks an entry written by Undo (Status committed: the record's
	// effects were removed).
	Undo bool `json:"undo,omitempty"`
	// RowHash: as Sub.RowHash, for a record identified by its location.
	RowHash string `json:"rh,omitempty"`
	// Keyed are the source rows of a committed record with the keys the
	// server gave what they became, for report --created. Older journals
	// have none.
	Keyed []KeyedRow `json:"kr,omitempty"`
	// Carried counts the sub-form children a committed deep insert wrote
	// inside its own sub-request (they have none of their own).
	Carried int `json:"ch,omitempty"`
	// Built counts the sub-form children the company holds of the record,
	// nested ones too (its lines, texts and theirs): of a committed one,
	// every child it was built with, as the dry run counts them (a line
	// the document held already counts, as the record does); of a failed
	// one, those written or held. A delta adds the lines it created to
	// those the record had (a line it patched counts once, a line gone
	// from the sources stays: a delta never deletes). Journals before it
	// have none: RecordState.Children counts what they wrote.
	Built int `json:"bk,omitempty"`
	// Reason is why the user waived a failed record (Status Waived,
	// migrate resolve --waive): it will never load, and the run is
	// complete without it. The failed record's rows and problems stay as
	// they were, for the report.
	Reason string `json:"why,omitempty"`
	// SrcHash is a hash of a committed record's source rows as they were
	// loaded (its own, its group's, its lines'), whatever identifies it: a
	// resume counts the committed records whose rows changed since, which
	// it does not send again, so the user knows what the change left behind.
	// Older journals have none.
	SrcHash string `json:"sh,omitempty"`
	// Held is what an upsert or update found the entity holding already of
	// the fields the plan writes, and so did not send: the plan wants them
	// as much as those it sent, so verify compares them too (otherwise an
	// unchanged record changed behind the run's back was "matched").
	Held json.RawMessage `json:"hd,omitempty"`
	// Wrote is what a committed record's entity was written with, its
	// fields as sent (long texts and file contents left out), as JSON;
	// Filled what the server answered for those it did not take as sent.
	// A delta load (apply --delta) patches the fields whose value in the
	// source changed since, and refuses one the server no longer holds as
	// written. Older journals have none: their records are "unknown".
	Wrote  json.RawMessage `json:"wr,omitempty"`
	Filled json.RawMessage `json:"wf,omitempty"`
	// LinesHash is a hash of the sub-form children a committed record was
	// built with (their fields, as sent): a delta load tells a record whose
	// lines changed by it. Older journals have none.
	LinesHash string `json:"lh,omitempty"`
	// WroteKids is what each first-level sub-form child of a committed
	// record was written with (a JSON list of WroteKid, in path order): a
	// line's key as the server gave it and its fields as sent, a text's
	// hash. A delta load patches a line's changed fields by its key and
	// adds the new lines. Older journals have none: a change of their
	// lines is listed, not sent.
	WroteKids json.RawMessage `json:"wl,omitempty"`
}

// WroteKid is one first-level sub-form child of a committed record, as
// RecordEntry.WroteKids keeps it.
type WroteKid struct {
	Path   string `json:"p"`
	Nav    string `json:"n"`
	Single bool   `json:"one,omitempty"` // a single-object sub-form (a text)
	// Key is a line's key expression as the server gave it (KLINE: "3");
	// "" when the server's answer gave none.
	Key string `json:"k,omitempty"`
	// Wrote is a line's fields as sent (long texts and file contents left
	// out); Filled what the server answered for those it did not take as
	// sent, when its answer said.
	Wrote  json.RawMessage `json:"wr,omitempty"`
	Filled json.RawMessage `json:"wf,omitempty"`
	// Held is what a delta load found the server holding already as the
	// sources gave it (the same change made there), and so did not send:
	// verify takes it as sent. Fields sent since are left out of it.
	Held json.RawMessage `json:"hd,omitempty"`
	// Hash is a hash of what it was written with that is not compared
	// field by field (of a line: its long texts and own sub-forms but
	// those Kids keeps; of a single object: all of it).
	Hash string `json:"h,omitempty"`
	// TextHash, of a text, is a hash of its TEXT's content as a reader
	// compares it (markup stripped, spaces collapsed): a delta load finds
	// by it a text someone changed on the server since. Older journals
	// have none.
	TextHash string `json:"th,omitempty"`
	// Kids, of a line, are its own single-object sub-forms (its text), as
	// a record's are kept, their paths below the line's ("0.1"); its Hash
	// then leaves them out. Older journals have none, and their Hash
	// covers them.
	Kids []WroteKid `json:"l,omitempty"`
}

// EncodeKids is kids as RecordEntry.WroteKids keeps them, as json.Marshal
// writes them; nil for none.
func EncodeKids(kids []WroteKid) json.RawMessage {
	if len(kids) == 0 {
		return nil
	}
	out, _ := json.Marshal(kids)
	return out
}

// DecodeKids reads RecordEntry.WroteKids; nil when there are none.
func DecodeKids(raw json.RawMessage) ([]WroteKid, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	var out []WroteKid
	err := json.Unmarshal(raw, &out)
	return out, err
}

// KeyedRow is one source row of a committed record and what it became: the
// record's own row its entity (whose key is the RecordEntry's), a sub-form
// child's row that child, with the line key the server assigned (KLINE).
type KeyedRow struct {
	Loc  string `json:"loc"`
	Path string `json:"p,omitempty"` // "" the record's entity; "0", "0.2" a sub-form child
	Nav  string `json:"n,omitempty"` // the child's navigation property
	Key  string `json:"k,omitempty"` // the child's key expression, when it has one
	// Header is the row's column names, left out when they are the previous
	// KeyedRow's of the record (a record's rows mostly share one source).
	Header []string `json:"h,omitempty"`
	// Cells are the row as it was, left out when an earlier KeyedRow of the
	// record has the same Loc: a row is written once.
	Cells []string `json:"c,omitempty"`
}

// Entry is one line of the journal.
type Entry struct {
	// Seq is the line's number in the file as it was written (the header
	// is line 1) and Prev the hex SHA-256 of the line before it (its bytes
	// without the newline), on every line after the header of a journal
	// whose Header.Chained is set: the lines form a hash chain, so a line
	// changed, inserted, removed or moved afterwards is found (CheckChain).
	// They come first in the line, so that the chain is read without
	// decoding the rest.
	Seq     int         `json:"seq,omitempty"`
	Prev    string      `json:"prev,omitempty"`
	Kind    Kind        `json:"t"`
	Header  *Header     `json:"hdr,omitempty"`
	Batch   int         `json:"b,omitempty"`
	Subs    []Sub       `json:"s,omitempty"`
	Results []SubResult `json:"r,omitempty"`
	InDoubt string      `json:"d,omitempty"` // outcome unknown, and why
	// Unsent (an outcome) says the batch never left the client: what had
	// to come before it (a cold form's warm-up) failed, so none of its
	// sub-requests was sent, though the calls that failed were made.
	Unsent bool         `json:"unsent,omitempty"`
	Record *RecordEntry `json:"rec,omitempty"`
	Mark   *Watermark   `json:"wm,omitempty"`
	Run    *Run         `json:"run,omitempty"`
	Done   string       `json:"done,omitempty"` // KindDone: the step
	Accept *Accepted    `json:"acc,omitempty"`
	// Gone (KindDone) are the step's failed records whose rows the source
	// no longer gives (an export's total line, a dropped duplicate): they
	// will never load, and status names resolve --waive for them.
	Gone []string `json:"gone,omitempty"`
	// Conflicts (KindDone of a delta load) are the step's changes the
	// delta did not send, each changed on the server since the load.
	Conflicts []Conflict `json:"conflicts,omitempty"`
	// At is when an intent's batch was about to be sent, or its outcome
	// came; nil in journals written before it was recorded. (A pointer:
	// the journal's JSON codec leaves out a nil one, but not a zero
	// time.Time.)
	At *time.Time `json:"at,omitempty"`
	// Calls (outcomes) is the HTTP attempts the batch took, Throttled how
	// many of them the server answered 429, WaitMS the milliseconds spent
	// waiting before retrying (Retry-After, backoff): the run report's chart.
	Calls     int   `json:"calls,omitempty"`
	Throttled int   `json:"429,omitempty"`
	WaitMS    int64 `json:"wait_ms,omitempty"`
	// Gets (KindReads) is the GET sub-requests of the call.
	Gets int `json:"gets,omitempty"`
	// Totals (KindTotals) is what verify found of the plan's totals.
	Totals *Totals `json:"tot,omitempty"`
	// Warning (KindWarning) is the warning, as the run said it.
	Warning string `json:"warn,omitempty"`
}

// When is e.At, or the zero time when e has none.
func (e *Entry) When() time.Time {
	if e.At == nil {
		return time.Time{}
	}
	return *e.At
}

// Status of a record.
type Status string

const (
	Committed Status = "committed"
	Failed    Status = "failed"
	Skipped   Status = "skipped"
	InDoubt   Status = "in_doubt"
	Pending   Status = "pending"
	// Waived is a failed record the user closed (it will never load): nothing
	// of it exists on the target, no apply sends it, and it keeps no run from
	// being complete.
	Waived Status = "waived"
)

// checkTimes refuses the times json.Marshal refuses (a year outside 0-9999):
// the journal's codec would write them, and no decoder would read the
// line back.
func (e *Entry) checkTimes() error {
	if e.At != nil {
		if _, err := e.At.MarshalJSON(); err != nil {
			return err
		}
	}
	if e.Header != nil {
		if _, err := e.Header.Created.MarshalJSON(); err != nil {
			return err
		}
	}
	return nil
}
