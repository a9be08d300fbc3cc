package journal

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	json "github.com/segmentio/encoding/json"
)

// State is a journal replayed: what the run did so far.
type State struct {
	// Header is the journal's first line, its PlanHash and Sources those
	// the last KindAccept entry accepted, if any: what a resume compares
	// the plan and sources with.
	Header Header
	// Steps holds every step seen, by name; StepNames is their order (the
	// header's order, then first appearance).
	Steps     map[string]*StepState
	StepNames []string
	// LastBatch is the highest batch number used.
	LastBatch int
	// Entries is the number of valid lines.
	Entries int
	// ValidSize is the length of the file up to the last valid line.
	ValidSize int64
	// Torn is set when a damaged last line was ignored.
	Torn bool
	// Marks holds each step's watermarks in journal order.
	Marks map[string][]Mark
	// Runs counts the applies that began (KindRun; journals before it
	// was recorded have none); LastRun is the last one's.
	Runs    int
	LastRun Run
	// Done holds the steps whose source a run read to its end (KindDone).
	Done map[string]bool
	// Gone holds, by step, the failed records the last run that read the
	// step to its end found no row of (KindDone's Gone).
	Gone map[string][]string
	// Conflicts holds, by step, the changes the last delta load of the
	// step did not send (KindDone's Conflicts): until a delta sends them,
	// the server and the sources differ there.
	Conflicts map[string][]Conflict
	// Mended lists the lines (1-based) that began with the torn start of
	// a line before a whole one: a short write that older versions
	// appended after instead of cutting back. The torn bytes are
	// ignored, as a torn last line is.
	Mended []int
	// Batches is every batch sent, in the order of the journal, with when
	// and how it was answered: kept by LoadReport only.
	Batches []BatchCall
	// Totals is the last KindTotals entry's, and TotalsAt when verify read
	// them; nil when verify never recorded any.
	Totals   *Totals
	TotalsAt time.Time
	// Undone (LoadReport only) holds, per step, the records undo took
	// back, also those a later apply loaded again (whose Undone is unset).
	Undone map[string]map[string]bool
	// RunTimes (LoadReport only) is each apply of the journal (KindRun), in
	// order, with when it began and its last line's time.
	RunTimes []RunTime
	// Warnings (LoadReport only) is what the runs warned of as they ran
	// (KindWarning), each once, in order.
	Warnings []string

	// accepted is the last KindAccept's, nil when none.
	accepted *Accepted
	// bases holds, for a PATCH that stands over an earlier sub-request of
	// its record (patchOver), that sub-request.
	bases map[*SubState]*patchBase

	// marks: the journal ends its finished applies with KindFinished (the
	// header says so, or one was seen); finished: the last apply did.
	marks, finished bool

	open map[int]*openBatch
	// lean: settled records are in the index (lean.go, index.go).
	lean     bool
	idxPath  string              // where the index is written; "" not at all
	idx      *runs               // the index's settled records
	nextRun  int                 // the number of the last run written
	over     map[string]*settled // settled since, by step NUL id
	stepNo   map[string]int      // step name → its place in StepNames
	indexed  int                 // Entries when the index was last written
	promoted bool                // a settled record was worked on again
	headCRC  uint32              // of the journal's first line
	tail     []byte              // the valid prefix's last bytes
	ioErr    error               // the index could not be read
	// report: keep Batches and the committed records' Keyed rows (LoadReport).
	report  bool
	batchAt map[int]int // batch number → index in Batches
}

// RunTime is one apply as the journal saw it: its run entry, when it
// began (its run entry's time; in journals before it was recorded, its
// first timed line's) and when its last timed line was written, undo's
// lines left out. Zero times: none recorded.
type RunTime struct {
	Run
	Start, End time.Time
}

// BatchCall is one $batch as the journal saw it, for the run report.
type BatchCall struct {
	Batch int
	// Sent and Answered are zero in journals that did not record times.
	Sent, Answered time.Time
	Subs           int
	Undo           bool // sent by undo
	// Calls is the HTTP attempts it took (0: not recorded), Throttled how
	// many were answered 429, Waited the time spent before retrying.
	Calls, Throttled int
	Waited           time.Duration
	Read             bool // a read journaled by what it found (a watermark), not a batch
	InDoubt          bool // its outcome was lost
	NotSent          bool // journaled, then never sent or refused whole
	// Unsent: never sent, though calls were made before it (a cold
	// form's warm-up that failed): its sub-requests were not sent.
	Unsent bool
	// Metered is what its sub-requests would write, answered or not: the
	// API transactions apply counts as sent.
	Metered int
	// Written is what the sub-requests answered 2xx wrote (not reads):
	// the API transactions the service meters, each entity and each line
	// (Sub.Entities), a deep insert's lines too.
	Written int
}

// Made is the HTTP calls the batch took, as every count of the run report
// takes them: its attempts, at least one once it was sent; none when it
// was journaled and never sent.
func (b BatchCall) Made() int {
	if b.NotSent && b.Calls == 0 {
		return 0
	}
	return max(b.Calls, 1)
}

// Mark is a watermark and where it stands: it bounds the batches numbered
// above After (the highest batch number when it was journaled).
type Mark struct {
	Watermark
	After int
}

// WatermarkFor is the watermark that bounds batch of step: the latest one
// journaled before that batch; false when none was (a journal written
// before watermarks existed, or an entity without an auto-unique key).
func (s *State) WatermarkFor(step string, batch int) (Watermark, bool) {
	var (
		w  Watermark
		ok bool
	)
	for _, m := range s.Marks[step] {
		if m.After < batch {
			w, ok = m.Watermark, true
		}
	}
	return w, ok
}

// StepState is the records of one step.
type StepState struct {
	Name    string
	Records map[string]*RecordState
	IDs     []string // record ids in first-seen order
	// Settled counts, in a lean state, the records kept in the index
	// rather than in Records.
	Settled SettledCounts
	// Filled are the fields of the step's entity (FIELD) and of its
	// sub-forms (NAV/FIELD) the server answered a write of with another
	// value than the one sent (SubResult.Fills: a name it fills from a
	// reference): a document or line in doubt is not looked up by them.
	Filled map[string]bool
	dead   int // ids of IDs no longer in Records
}

// FilledFields are the fields the server has answered a write of step's
// entity (nav "") or of its sub-form nav with another value than the one
// sent, sorted.
func (s *State) FilledFields(step, nav string) []string {
	ss := s.Steps[step]
	if ss == nil {
		return nil
	}
	var out []string
	for k := range ss.Filled {
		of, field, ok := strings.Cut(k, "/") // filledKey's NAV/FIELD
		if !ok {
			of, field = "", k
		}
		if of == nav {
			out = append(out, field)
		}
	}
	slices.Sort(out)
	return out
}

// RecordState is the replayed state of one record (step name + record id).
type RecordState struct {
	Step, ID string
	// Key is the key expression of the record's entity on the server, once
	// known (given, or assigned by the server).
	Key string
	// Created is set when this run created the entity (undo deletes it);
	// otherwise it existed and was at most patched.
	Created bool
	Loc     string
	Errors  []Problem
	Row     *Row
	Rows    []Row  // every row of a failed group
	Partly  string // what exists of a partly loaded record
	// Subs is the latest sub-request per path ("" the entity, "0.1" a child);
	// Undo is the same for undo's sub-requests.
	Subs map[string]*SubState
	Undo map[string]*SubState
	// Undone is set when undo finished this record.
	Undone bool
	// FailedInTrial: the record failed in a trial (a run with a limit),
	// where what it refers to may not have been loaded yet; the full load
	// sends it again.
	FailedInTrial bool
	// RowHash is the hash of the source row the record was sent from, when
	// its identity is its location (Sub.RowHash).
	RowHash string
	// Keyed are the source rows of a committed record with their keys;
	// kept by LoadReport only.
	Keyed []KeyedRow
	// Carried: RecordEntry.Carried, of the latest record entry.
	Carried int
	// Built: RecordEntry.Built, of the latest record entry.
	Built int
	// Reason is why the record was waived (Status Waived).
	Reason string
	// SrcHash: RecordEntry.SrcHash, of the record as committed.
	SrcHash string
	// Wrote and Filled: RecordEntry's, of the record as committed.
	Wrote, Filled json.RawMessage
	LinesHash     string
	// WroteKids: RecordEntry.WroteKids, of the record as committed.
	WroteKids json.RawMessage
	// Held: RecordEntry.Held, of the latest record entry.
	Held json.RawMessage
	// Extra holds sub-requests that have no path of their own (reads and
	// deletes of existing lines), latest first-seen order.
	Extra []*SubState

	final    Status
	finalSeq int
	lastSeq  int
	// kids is the committed children of a record brought back from the
	// index, whose sub-requests it does not keep.
	kids       int
	unreadable bool
}

// SubState is one sub-request and what became of it.
type SubState struct {
	Sub
	Batch int
	// Status is the HTTP status; 0 while no outcome is known.
	Status int
	// Unknown is set when the batch's outcome was lost (timeout, dropped
	// connection, 5xx on the batch): the sub-request must be reconciled.
	Unknown   bool
	ResultKey string
	Location  string
	Error     string
	// Filled: Result.Filled.
	Filled json.RawMessage
	// Over is, for a PATCH that stands over an earlier sub-request of its
	// path (a delta's PATCH of a line the run created), that sub-request's
	// kind: undo deletes a line created and patched, and restores one only
	// patched.
	Over OpKind
}

// Done reports whether the sub-request has an outcome.
func (s *SubState) Done() bool { return s.Status != 0 }

// OK reports a 2xx outcome.
func (s *SubState) OK() bool { return s.Status >= 200 && s.Status < 300 }

// InDoubt reports a sub-request sent whose outcome is not known.
func (s *SubState) InDoubt() bool { return s.Status == 0 }

// Status derives the record's status: in doubt when any sub-request lacks
// an outcome; else the status last decided, unless work started after it
// (pending: a retry or continuation that did not finish).
func (r *RecordState) Status() Status {
	if r.unreadable {
		return InDoubt
	}
	for _, s := range r.Subs {
		if s.InDoubt() {
			return InDoubt
		}
	}
	for _, s := range r.Extra {
		if s.InDoubt() {
			return InDoubt
		}
	}
	if r.final != "" && r.finalSeq >= r.lastSeq {
		return r.final
	}
	return Pending
}

// Final is the status the executor last wrote for the record ("" if none).
func (r *RecordState) Final() Status { return r.final }

// Record returns the record of step and id, or nil.
func (s *State) Record(step, id string) *RecordState {
	st := s.Steps[step]
	if st == nil {
		return nil
	}
	if r := st.Records[id]; r != nil || !s.lean {
		return r
	}
	e, ok := s.settledOf(step, id)
	if !ok {
		return nil
	}
	return &RecordState{Step: step, ID: id, Key: e.key, Created: e.created, RowHash: e.rowHash, SrcHash: e.srcHash,
		Wrote: rawOf(e.wrote), Filled: rawOf(e.filled), LinesHash: e.linesHash, WroteKids: rawOf(e.wroteKids), final: e.status, kids: e.children, unreadable: e.unreadable}
}

// Counts per status of one step.
type Counts struct {
	Committed, Failed, Skipped, Pending, InDoubt, Waived int
}

// Counts tallies the records of step by status.
func (s *State) Counts(step string) Counts {
	var c Counts
	st := s.Steps[step]
	if st == nil {
		return c
	}
	c.Committed, c.Skipped = st.Settled.Committed, st.Settled.Skipped
	for _, rec := range st.Records {
		switch rec.Status() {
		case Committed:
			c.Committed++
		case Failed:
			c.Failed++
		case Skipped:
			c.Skipped++
		case Waived:
			c.Waived++
		case InDoubt:
			c.InDoubt++
		default:
			c.Pending++
		}
	}
	return c
}

// InDoubtSubs lists every sub-request without an outcome, in batch order.
func (s *State) InDoubtSubs() []*SubState {
	var out []*SubState
	for _, ob := range s.open {
		for _, sub := range ob.subs {
			if sub.InDoubt() {
				out = append(out, sub)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Batch != out[j].Batch {
			return out[i].Batch < out[j].Batch
		}
		return out[i].ID < out[j].ID
	})
	return out
}

type openBatch struct {
	subs []*SubState
	byID map[string]*SubState
}

func (ob *openBatch) find(i int, id string) *SubState {
	if i < len(ob.subs) && ob.subs[i].ID == id {
		return ob.subs[i]
	}
	if ob.byID == nil {
		ob.byID = make(map[string]*SubState, len(ob.subs))
		for _, s := range ob.subs {
			ob.byID[s.ID] = s
		}
	}
	return ob.byID[id]
}

// Replay reads a journal. A damaged last line is ignored (State.Torn); a
// damaged line before it is a *CorruptError.
func Replay(r io.Reader) (*State, error) { return replay(r, "") }

// LoadReport is Load keeping what only reports need, which a run would
// hold in memory for nothing: every batch's times (State.Batches) and the
// source rows of committed records (Record.Rows).
func LoadReport(path string) (*State, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st := newState()
	st.report, st.batchAt = true, map[int]int{}
	return st.replay(f, path)
}

// lineReader reads a journal's lines, a line longer than its buffer too.
type lineReader struct {
	br   *bufio.Reader
	long []byte
}

func newLineReader(r io.Reader) *lineReader {
	return &lineReader{br: bufio.NewReaderSize(r, 64<<10)}
}

// next is the next line with its newline (without it, a torn last line;
// empty at the end), valid until the next call, as bufio.Reader.ReadSlice
// gives it.
func (l *lineReader) next() ([]byte, error) {
	line, err := l.br.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		l.long = append(l.long[:0], line...)
		for errors.Is(err, bufio.ErrBufferFull) {
			line, err = l.br.ReadSlice('\n')
			l.long = append(l.long, line...)
		}
		line = l.long
	}
	return line, err
}

func replay(r io.Reader, path string) (*State, error) { return newState().replay(r, path) }

func (st *State) replay(r io.Reader, path string) (*State, error) {
	lr := newLineReader(r)
	var (
		lineNo  = st.Entries // a lean state restored from its index goes on from there
		off     = st.ValidSize
		pending error // a damaged line: fatal unless it turns out to be the last
	)
	for {
		line, err := lr.next()
		if len(line) == 0 && err == io.EOF {
			break
		}
		if err != nil && err != io.EOF {
			return nil, err
		}
		lineNo++
		if pending != nil {
			return nil, pending
		}
		complete := len(line) > 0 && line[len(line)-1] == '\n'
		if !complete {
			// A last line without its newline was torn by a crash.
			st.Torn = true
			break
		}
		if reason := st.apply(line[:len(line)-1]); reason != "" {
			if k := tornPrefix(line[:len(line)-1]); k > 0 && lineNo > 1 && st.apply(line[k:len(line)-1]) == "" {
				// A write cut short by a full disk, and the next line
				// appended right after it, as older versions (before
				// short writes were cut back) did: the torn bytes never
				// counted (their Append failed), the whole line after them
				// did.
				st.Mended = append(st.Mended, lineNo)
				st.feed(line)
				off += int64(len(line))
				st.ValidSize = off
				st.Entries++
				continue
			}
			if lineNo == 1 {
				// A file not named as a journal whose first line has
				// neither a journal line's start nor its header is some
				// other file (a plan given for a journal), not a damaged
				// journal.
				other := path != "" && !strings.EqualFold(filepath.Ext(path), ".journal") && !linePrefix(line) && !bytes.Contains(line, []byte(`"t":"header"`))
				return nil, &CorruptError{Path: path, Line: 1, Reason: reason, NotJournal: other}
			}
			pending = &CorruptError{Path: path, Line: lineNo, Reason: reason}
			st.Torn = true
			continue
		}
		st.feed(line)
		off += int64(len(line))
		st.ValidSize = off
		st.Entries++
		st.maybeIndex()
		if err == io.EOF {
			break
		}
	}
	if st.Entries == 0 {
		if st.Torn {
			return nil, &CorruptError{Path: path, Line: 1, Reason: "no complete header line"}
		}
		return nil, &CorruptError{Path: path, Line: 1, Reason: "empty journal: no header"}
	}
	return st, nil
}

// tornPrefix finds, in a damaged line, a whole journal line after the
// start of a torn one: it returns where the whole line starts, or 0. The
// bytes before it must begin as a journal line does (its checksum, a space,
// a brace) and the line after it must carry its own valid checksum, so
// damage of any other kind is not mistaken for it.
func tornPrefix(b []byte) int {
	for k := 1; k+10 <= len(b); k++ {
		if b[k+8] != ' ' || b[k+9] != '{' || !isHex(b[k:k+8]) || !linePrefix(b[:k]) {
			continue
		}
		want, err := strconv.ParseUint(string(b[k:k+8]), 16, 32)
		if err == nil && uint32(want) == crc32.Checksum(b[k+9:], castagnoli) {
			return k
		}
	}
	return 0
}

// linePrefix reports whether b begins as a journal line does, as far as it goes.
func linePrefix(b []byte) bool {
	n := min(len(b), 8)
	if !isHex(b[:n]) {
		return false
	}
	return len(b) <= 8 || b[8] == ' ' && (len(b) == 9 || b[9] == '{')
}

func isHex(b []byte) bool {
	for _, c := range b {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// apply decodes one line and folds it into the state; it returns why the
// line is damaged, or "".
func (st *State) apply(line []byte) string {
	if len(line) < 10 || line[8] != ' ' {
		return "not a journal line"
	}
	want, err := strconv.ParseUint(string(line[:8]), 16, 32)
	if err != nil {
		return "not a journal line"
	}
	js := line[9:]
	if uint32(want) != crc32.Checksum(js, castagnoli) {
		return "checksum mismatch"
	}
	var e Entry
	if err := decodeLine(js, &e); err != nil {
		return "undecodable entry: " + err.Error()
	}
	if st.Entries == 0 {
		if e.Kind != KindHeader || e.Header == nil {
			return "the first line is not a journal header"
		}
		st.Header = *e.Header
		st.marks = e.Header.MarksFinish
		for _, s := range e.Header.Steps {
			st.step(s.Name)
		}
		return ""
	}
	seq := st.Entries
	if st.report {
		st.timeRun(&e)
	}
	switch e.Kind {
	case KindIntent:
		return st.applyIntent(&e, seq)
	case KindOutcome:
		return st.applyOutcome(&e)
	case KindRecord:
		return st.applyRecord(e.Record, seq)
	case KindWatermark:
		if e.Mark == nil || e.Mark.Step == "" || e.Mark.Field == "" {
			return "watermark entry without a step or field"
		}
		st.finished = false
		st.Marks[e.Mark.Step] = append(st.Marks[e.Mark.Step], Mark{Watermark: *e.Mark, After: st.LastBatch})
		if st.report && e.Calls > 0 {
			// The read that found the watermark: a call of the run.
			st.Batches = append(st.Batches, BatchCall{Sent: e.When(), Answered: e.When(), Read: true})
			st.Batches[len(st.Batches)-1].note(&e)
		}
	case KindRun:
		if e.Run == nil {
			return "run entry without its run"
		}
		st.Runs++
		st.LastRun = *e.Run
		if e.Run.Delta {
			// What the last delta left unsent stands until this one says
			// what it left (its steps' done lines).
			if len(e.Run.Steps) == 0 {
				clear(st.Conflicts)
			}
			for _, s := range e.Run.Steps {
				delete(st.Conflicts, s)
			}
		}
	case KindDone:
		if e.Done == "" {
			return "done entry without a step"
		}
		st.Done[e.Done] = true
		setList(st.Gone, e.Done, e.Gone)
		if st.LastRun.Delta {
			setList(st.Conflicts, e.Done, e.Conflicts)
		}
	case KindFinished:
		st.marks, st.finished = true, true
	case KindAccept:
		if e.Accept == nil || e.Accept.PlanHash == "" {
			return "accept entry without a plan hash"
		}
		st.accept(*e.Accept)
	case KindReads:
		if st.report {
			st.Batches = append(st.Batches, BatchCall{Sent: e.When(), Subs: e.Gets, Read: true})
			st.Batches[len(st.Batches)-1].note(&e)
		}
	case KindTotals:
		if e.Totals == nil {
			return "totals entry without totals"
		}
		st.Totals, st.TotalsAt = e.Totals, e.When()
	case KindWarning:
		if st.report && e.Warning != "" && !slices.Contains(st.Warnings, e.Warning) {
			st.Warnings = append(st.Warnings, e.Warning)
		}
	case KindHeader:
		return "a second header"
	default:
		return fmt.Sprintf("unknown entry kind %q", e.Kind)
	}
	return ""
}

// setList sets m's list of step to list, or drops step from m where the
// list is empty: a step with nothing to say has no entry.
func setList[T any](m map[string][]T, step string, list []T) {
	if len(list) > 0 {
		m[step] = list
	} else {
		delete(m, step)
	}
}

// deltaHeld is what the server holds of a record's fields that no
// sub-request sent, once a delta load committed it again: what it held
// before (held, of the record written as wrote), but for the fields the
// sources changed since (the delta sent those, or found them held), and
// what the delta found held (nowHeld, of the record written as nowWrote).
func deltaHeld(held, wrote, nowHeld, nowWrote json.RawMessage) json.RawMessage {
	var was, now, h map[string]json.RawMessage
	if json.Unmarshal(held, &h) != nil || json.Unmarshal(wrote, &was) != nil || json.Unmarshal(nowWrote, &now) != nil {
		return nowHeld
	}
	var changed []string
	for f := range h {
		if !bytes.Equal(was[f], now[f]) {
			changed = append(changed, f)
		}
	}
	return Overlay(Without(held, changed...), nowHeld)
}

// applyIntent replays intent e, the seq-th entry: the sub-requests of a
// batch about to be sent, open until their outcomes come.
func (st *State) applyIntent(e *Entry, seq int) string {
	if e.Batch <= 0 {
		return "intent without a batch number"
	}
	if e.Batch > st.LastBatch {
		st.LastBatch = e.Batch
	}
	ob := st.open[e.Batch]
	if ob == nil {
		ob = &openBatch{subs: make([]*SubState, 0, len(e.Subs))}
		st.open[e.Batch] = ob
	}
	if st.report {
		st.batchAt[e.Batch] = len(st.Batches)
		bc := BatchCall{Batch: e.Batch, Sent: e.When(), Subs: len(e.Subs),
			Undo: len(e.Subs) > 0 && e.Subs[0].Op.Undo()}
		for i := range e.Subs {
			if e.Subs[i].Op != OpRead {
				bc.Metered += e.Subs[i].Entities()
			}
		}
		st.Batches = append(st.Batches, bc)
	}
	if len(e.Subs) > 0 && !e.Subs[0].Op.Undo() {
		st.finished = false // an apply began again
	}
	slab := make([]SubState, len(e.Subs))
	for i := range e.Subs {
		s := &slab[i]
		*s = SubState{Sub: e.Subs[i], Batch: e.Batch}
		ob.subs = append(ob.subs, s)
		rec := st.record(s.Step, s.Rec)
		rec.lastSeq = seq
		if !s.Op.Undo() {
			rec.Undone = false
		}
		switch {
		case s.Op.Undo():
			if rec.Undo == nil {
				rec.Undo = map[string]*SubState{}
			}
			rec.Undo[s.UndoKey()] = s
		case s.Op == OpRead || s.Op == OpDelete:
			rec.Extra = append(rec.Extra, s)
		default:
			if rec.Subs == nil {
				rec.Subs = map[string]*SubState{}
			}
			if was := rec.Subs[s.Path]; was != nil && was.OK() && s.Op == OpPatch && (was.Op == OpPatch || was.Op == OpCreate) {
				st.patchOver(s, was)
			}
			rec.Subs[s.Path] = s
			if s.RowHash != "" {
				rec.RowHash = s.RowHash
			}
		}
	}
	return ""
}

// applyOutcome replays outcome e: each sub-request's status and key
// (a negative status forgets it: reconciliation proved it never took
// effect), and what the batch leaves in doubt.
func (st *State) applyOutcome(e *Entry) string {
	ob := st.open[e.Batch]
	if ob == nil {
		return fmt.Sprintf("outcome of batch %d, which has no intent", e.Batch)
	}
	bi, noted := st.batchAt[e.Batch]
	if noted && st.report {
		st.Batches[bi].note(e)
	}
	for i := range e.Results {
		res := &e.Results[i]
		s := ob.find(i, res.ID)
		if s == nil {
			return fmt.Sprintf("outcome of sub-request %q, not in batch %d", res.ID, e.Batch)
		}
		s.Status, s.ResultKey, s.Location, s.Error, s.Filled = res.Status, res.Key, res.Location, res.Error, Overlay(st.filledLeft(s), res.Filled)
		if noted && st.report && s.OK() && s.Op != OpRead {
			st.Batches[bi].Written += s.Entities()
		}
		if res.Status < 0 {
			// Reconciliation proved it never took effect: forget it.
			st.forget(s)
			continue
		}
		if res.Status >= 200 && res.Status < 300 && s.Path == "" && !s.Op.Undo() {
			rec := st.record(s.Step, s.Rec)
			if res.Key != "" {
				rec.Key = res.Key
			} else if s.Key != "" {
				rec.Key = s.Key
			}
			if s.Op == OpCreate {
				rec.Created = true
			}
		}
		if res.Status >= 200 && res.Status < 300 && len(res.Fills) > 0 && !s.Op.Undo() {
			st.noteFilled(s.Step, s.Nav, res.Fills)
		}
	}
	if e.InDoubt != "" {
		for _, s := range ob.subs {
			if s.Status == 0 {
				s.Unknown = true
				if s.Error == "" {
					s.Error = e.InDoubt
				}
			}
		}
	}
	done := true
	for _, s := range ob.subs {
		if s.Status == 0 {
			done = false
			break
		}
	}
	if done {
		delete(st.open, e.Batch)
	}
	if st.lean {
		for i := range e.Results {
			if s := ob.find(i, e.Results[i].ID); s != nil {
				if rec := st.Steps[s.Step].Records[s.Rec]; rec != nil {
					st.settle(rec)
				}
			}
		}
	}
	return ""
}

// applyRecord replays record entry re, the seq-th entry: a record
// finished (committed, failed, pending), waived, or undone.
func (st *State) applyRecord(re *RecordEntry, seq int) string {
	if re == nil {
		return "record entry without a record"
	}
	rec := st.record(re.Step, re.ID)
	if re.Undo {
		// Undo removed the record's effects: it is as if never sent.
		if re.Status == Committed {
			rec.Undone = true
			if st.report {
				if st.Undone == nil {
					st.Undone = map[string]map[string]bool{}
				}
				if st.Undone[re.Step] == nil {
					st.Undone[re.Step] = map[string]bool{}
				}
				st.Undone[re.Step][re.ID] = true
			}
			rec.Subs, rec.Extra, rec.Undo, rec.Keyed, rec.Carried, rec.Built, rec.Held = nil, nil, nil, nil, 0, 0, nil
			rec.Key, rec.Created, rec.final = "", false, ""
			rec.finalSeq, rec.lastSeq = 0, 0
			// What a delta left unsent of it is no difference any more.
			// (A new slice: a clone of the state shares the old one.)
			var left []Conflict
			for _, c := range st.Conflicts[re.Step] {
				if c.ID != re.ID {
					left = append(left, c)
				}
			}
			setList(st.Conflicts, re.Step, left)
		}
		return ""
	}
	if re.Status == Waived {
		// A decision about the record, not a run's work: the failed
		// record keeps its rows and problems, and a finished run stays
		// finished.
		rec.final, rec.finalSeq, rec.Reason = Waived, seq, re.Reason
		return ""
	}
	st.finished = false
	held := re.Held
	if re.Status == Committed && rec.final == Committed {
		// A delta load committed the record again (nothing else does).
		held = deltaHeld(rec.Held, rec.Wrote, re.Held, re.Wrote)
	}
	rec.final, rec.finalSeq, rec.Reason = re.Status, seq, ""
	rec.FailedInTrial = re.Status == Failed && st.LastRun.Limit > 0
	if re.Loc != "" {
		rec.Loc = re.Loc
	}
	if re.Key != "" {
		rec.Key = re.Key
	}
	if re.RowHash != "" {
		rec.RowHash = re.RowHash
	}
	rec.Errors, rec.Row, rec.Rows, rec.Partly, rec.Carried, rec.Built, rec.Held = re.Errors, re.Row, re.Rows, re.Partly, re.Carried, re.Built, held
	if re.Status == Committed {
		rec.SrcHash, rec.Wrote, rec.Filled, rec.LinesHash, rec.WroteKids = re.SrcHash, re.Wrote, re.Filled, re.LinesHash, re.WroteKids
	}
	if st.report {
		switch {
		case len(re.Keyed) > 0 && re.Status == Committed && re.Keyed[0].Path != "" && len(rec.Keyed) > 0:
			// A delta's rows of the lines it added to a record loaded
			// before (a load's rows begin with the entity's own).
			rec.Keyed = append(rec.Keyed, re.Keyed...)
		case len(re.Keyed) > 0 && re.Status == Committed:
			rec.Keyed = re.Keyed
		case rec.SrcHash == "":
			rec.Keyed = nil
			// A record committed before keeps its rows when a delta
			// patched it (an entry without rows) or failed to.
		}
	}
	st.settle(rec)
	return ""
}

// accept makes a the plan and sources the journal's runs are made from.
func (st *State) accept(a Accepted) {
	st.Header.PlanHash, st.Header.Sources = a.PlanHash, maps.Clone(a.Sources)
	st.accepted = &a
}

// note folds an outcome into the batch's call: the first outcome is its
// answer; a later one (reconciliation) adds only the calls it counted.
func (b *BatchCall) note(e *Entry) {
	if b.Answered.IsZero() {
		b.Answered = e.When()
	}
	b.Calls += e.Calls
	b.Throttled += e.Throttled
	b.Waited += time.Duration(e.WaitMS) * time.Millisecond
	if e.InDoubt != "" {
		b.InDoubt = true
	}
	if len(e.Results) > 0 && e.Results[0].Status < 0 {
		b.NotSent = true
	}
	if e.Unsent {
		b.Unsent = true
	}
}

// forget drops a sub-request that reconciliation proved absent, so the
// record looks as if it had never been sent.
func (st *State) forget(s *SubState) {
	rec := st.record(s.Step, s.Rec)
	switch {
	case s.Op.Undo():
		if rec.Undo[s.UndoKey()] == s {
			delete(rec.Undo, s.UndoKey())
		}
	case s.Op == OpRead || s.Op == OpDelete:
		for i, x := range rec.Extra {
			if x == s {
				rec.Extra = append(rec.Extra[:i:i], rec.Extra[i+1:]...)
				break
			}
		}
	default:
		if rec.Subs[s.Path] == s {
			delete(rec.Subs, s.Path)
			if b := st.bases[s]; b != nil {
				rec.Subs[s.Path] = b.sub // the PATCH never took: what was before stands
			}
		}
	}
}

// patchOver makes s, a later PATCH (a delta load's) of what was created or
// patched before (was), stand for both, as undo and verify read a
// record's latest sub-request: undo restores the values before the first
// PATCH, and compares with what they left together; verify compares what
// the create and the PATCH left, the lines a deep insert carried too.
func (st *State) patchOver(s, was *SubState) {
	if st.bases == nil {
		st.bases = map[*SubState]*patchBase{}
	}
	st.bases[s] = &patchBase{sub: was, own: s.Match}
	s.Over = was.Op
	if was.Op == OpPatch && was.Over != "" {
		s.Over = was.Over
	}
	if was.Op == OpPatch {
		s.Before = Overlay(s.Before, was.Before)
	}
	s.Match = Overlay(was.Match, s.Match)
	if len(s.Lines) == 0 && len(s.Texts) == 0 && s.Nested == 0 {
		s.Lines, s.Texts, s.Nested = was.Lines, was.Texts, was.Nested
	}
}

// patchBase is the sub-request a later PATCH stands over (patchOver), and
// the PATCH's own new values.
type patchBase struct {
	sub *SubState
	own json.RawMessage
}

// filledLeft is what the server filled of the fields written by the
// sub-request PATCH p stands over, but for those p writes again; nil when
// p stands over none.
func (st *State) filledLeft(p *SubState) json.RawMessage {
	b := st.bases[p]
	if b == nil {
		return nil
	}
	var own map[string]json.RawMessage
	_ = json.Unmarshal(b.own, &own)
	return Without(b.sub.Filled, slices.Collect(maps.Keys(own))...)
}

// Without is the JSON object obj without the members named; nil when none
// is left, or obj is no object.
func Without(obj json.RawMessage, names ...string) json.RawMessage {
	var m map[string]json.RawMessage
	if len(obj) == 0 || json.Unmarshal(obj, &m) != nil {
		return nil
	}
	for _, k := range names {
		delete(m, k)
	}
	if len(m) == 0 {
		return nil
	}
	out, _ := json.Marshal(m)
	return out
}

// decodeLine decodes a line's JSON (without its checksum).
func decodeLine(js []byte, e *Entry) error { return json.Unmarshal(js, e) }

func newState() *State {
	return &State{Steps: map[string]*StepState{}, open: map[int]*openBatch{}, Marks: map[string][]Mark{}, Done: map[string]bool{}, Gone: map[string][]string{}, Conflicts: map[string][]Conflict{}}
}

// Clone is a deep copy of the state: folding more lines into one leaves
// the other as it was.
func (s *State) Clone() *State {
	c := &State{Header: s.Header, Steps: make(map[string]*StepState, len(s.Steps)),
		StepNames: append([]string(nil), s.StepNames...), LastBatch: s.LastBatch, Entries: s.Entries,
		ValidSize: s.ValidSize, Torn: s.Torn, Mended: append([]int(nil), s.Mended...), open: make(map[int]*openBatch, len(s.open)),
		Marks: make(map[string][]Mark, len(s.Marks)), Runs: s.Runs, LastRun: s.LastRun, Done: maps.Clone(s.Done), Gone: maps.Clone(s.Gone), Conflicts: maps.Clone(s.Conflicts),
		marks: s.marks, finished: s.finished, accepted: s.accepted, Totals: s.Totals, TotalsAt: s.TotalsAt}
	c.LastRun.Steps = slices.Clone(s.LastRun.Steps)
	for step, ms := range s.Marks {
		c.Marks[step] = append([]Mark(nil), ms...)
	}
	// A sub-request changes only while its batch is open (its outcome, the
	// in-doubt mark); a closed batch's never change again, so the copy
	// shares them. Open batches are few (in doubt or in flight): their
	// sub-requests are copied, and the records point at the copies.
	subs := map[*SubState]*SubState{}
	for b, ob := range s.open {
		co := &openBatch{subs: make([]*SubState, len(ob.subs))}
		slab := make([]SubState, len(ob.subs))
		for i, x := range ob.subs {
			slab[i] = *x
			co.subs[i] = &slab[i]
			subs[x] = &slab[i]
		}
		c.open[b] = co
	}
	dup := func(x *SubState) *SubState {
		if y, ok := subs[x]; ok {
			return y
		}
		return x
	}
	dupMap := func(m map[string]*SubState) map[string]*SubState {
		if m == nil {
			return nil
		}
		out := maps.Clone(m)
		if len(subs) > 0 {
			for k, v := range out {
				if y, ok := subs[v]; ok {
					out[k] = y
				}
			}
		}
		return out
	}
	for k, v := range s.bases {
		if c.bases == nil {
			c.bases = map[*SubState]*patchBase{}
		}
		c.bases[dup(k)] = v
	}
	if s.lean {
		s.tidy()
		s.idx.share()
		c.lean, c.idxPath, c.idx, c.nextRun, c.over = true, s.idxPath, s.idx, s.nextRun, maps.Clone(s.over)
		c.indexed, c.promoted, c.headCRC, c.tail, c.ioErr = s.indexed, s.promoted, s.headCRC, append([]byte(nil), s.tail...), s.ioErr
	}
	c.stepNo = maps.Clone(s.stepNo)
	for name, ss := range s.Steps {
		cs := &StepState{Name: ss.Name, Records: make(map[string]*RecordState, len(ss.Records)), IDs: append([]string(nil), ss.IDs...), Settled: ss.Settled, Filled: maps.Clone(ss.Filled)}
		for id, r := range ss.Records {
			cr := new(RecordState)
			*cr = *r
			cr.Subs, cr.Undo = dupMap(r.Subs), dupMap(r.Undo)
			if r.Extra != nil {
				cr.Extra = make([]*SubState, len(r.Extra))
				for i, x := range r.Extra {
					cr.Extra[i] = dup(x)
				}
			}
			cs.Records[id] = cr
		}
		c.Steps[name] = cs
	}
	return c
}

func (st *State) step(name string) *StepState {
	s := st.Steps[name]
	if s == nil {
		s = &StepState{Name: name, Records: map[string]*RecordState{}}
		st.Steps[name] = s
		if st.stepNo == nil {
			st.stepNo = map[string]int{}
		}
		st.stepNo[name] = len(st.StepNames)
		st.StepNames = append(st.StepNames, name)
	}
	return s
}

func (st *State) record(step, id string) *RecordState {
	s := st.step(step)
	r := s.Records[id]
	if r == nil {
		if e, ok := st.settledOf(step, id); ok {
			r = st.unsettle(s, id, e)
		} else {
			r = &RecordState{Step: step, ID: id}
		}
		s.Records[id] = r
		s.IDs = append(s.IDs, id)
	}
	return r
}

// Unfinished are the header's steps that no run read to the end, in the
// header's order: none in a journal that records no runs (written before
// runs were journaled), where it cannot be known.
func (s *State) Unfinished() []string {
	if s.Runs == 0 {
		return nil
	}
	var out []string
	for _, st := range s.Header.Steps {
		if !s.Done[st.Name] {
			out = append(out, st.Name)
		}
	}
	return out
}

// Finished reports whether the journal's runs read every step to its end.
// A journal that records its runs (KindRun) knows it step by step, so
// steps loaded by separate runs (apply --steps) count and a trial does
// not; when its last run was a full one, that run's KindFinished must
// close it too. One written before runs were recorded knows it only from
// the last apply's KindFinished; one written before that
// (Header.MarksFinish unset) cannot tell, and is taken as finished.
func (s *State) Finished() bool {
	full := s.LastRun.Limit == 0 && len(s.LastRun.Steps) == 0
	switch {
	case s.Runs > 0 && len(s.Unfinished()) > 0:
		return false
	case s.Runs > 0 && !full:
		return true
	}
	return !s.marks || s.finished
}

// Complete reports whether the runs finished and every record is
// committed or skipped (nothing is in doubt or pending).
func (s *State) Complete() bool {
	if !s.Finished() {
		return false
	}
	for _, name := range s.StepNames {
		c := s.Counts(name)
		if c.Failed+c.Pending+c.InDoubt > 0 {
			return false
		}
	}
	return true
}

// timeRun notes e in the runs' times (RunTimes).
func (st *State) timeRun(e *Entry) {
	if e.Kind == KindRun && e.Run != nil {
		st.RunTimes = append(st.RunTimes, RunTime{Run: *e.Run, Start: e.When(), End: e.When()})
		return
	}
	at := e.When()
	if len(st.RunTimes) == 0 || at.IsZero() || len(e.Subs) > 0 && e.Subs[0].Op.Undo() {
		return
	}
	if e.Kind == KindOutcome && st.open[e.Batch] != nil && len(st.open[e.Batch].subs) > 0 && st.open[e.Batch].subs[0].Op.Undo() {
		return
	}
	rt := &st.RunTimes[len(st.RunTimes)-1]
	if rt.Start.IsZero() {
		rt.Start = at
	}
	if at.After(rt.End) {
		rt.End = at
	}
}

// Overlay is the JSON object base with top's members written over it;
// either alone when the other is empty or not an object (what a PATCH left
// over what was written before).
func Overlay(base, top json.RawMessage) json.RawMessage {
	if len(base) == 0 {
		return top
	}
	if len(top) == 0 {
		return base
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(base, &m) != nil || json.Unmarshal(top, &m) != nil {
		return top
	}
	b, err := json.Marshal(m)
	if err != nil {
		return top
	}
	return b
}

// noteFilled records fields (SubResult.Fills) as those step's entity
// (nav "") or its sub-form nav does not keep as sent.
func (st *State) noteFilled(step, nav string, fields []string) {
	ss := st.step(step)
	for _, k := range fields {
		if ss.Filled == nil {
			ss.Filled = map[string]bool{}
		}
		ss.Filled[filledKey(nav, k)] = true
	}
}

// filledKey is how StepState.Filled names field of sub-form nav ("" the
// entity): NAV/FIELD, or FIELD.
func filledKey(nav, field string) string {
	if nav == "" {
		return field
	}
	return nav + "/" + field
}
