package journal

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// A lean State keeps in memory only the records that are not settled:
// failed, pending, in doubt, in flight. Settled ones (committed or skipped,
// nothing in flight) are counted per step (StepState.Settled) and kept in
// the index (index.go), looked up one at a time by Record. Records,
// IDs and Counts of a lean state's steps therefore hold its unsettled
// records; Counts and Size add the settled ones.

// SettledCounts counts a step's settled records.
type SettledCounts struct {
	Committed, Skipped int
	// Children is the committed sub-form children of the committed ones.
	Children int
}

func (c *SettledCounts) add(e *settled, n int) {
	switch e.status {
	case Committed:
		c.Committed += n
		c.Children += n * e.children
	case Skipped:
		c.Skipped += n
	}
}

// SettledRecord is a settled record as the index holds it.
type SettledRecord struct {
	Step, ID     string
	Status       Status
	Key, RowHash string
	Created      bool
	Children     int
}

// Lean reports whether the state keeps its settled records in the index.
func (s *State) Lean() bool { return s.lean }

// Size is the number of records of step, settled or not.
func (s *State) Size(step string) int {
	ss := s.Steps[step]
	if ss == nil {
		return 0
	}
	return len(ss.Records) + ss.Settled.Committed + ss.Settled.Skipped
}

// Children counts the sub-form children of the record: those it was built
// with (Built), or, in a journal that does not say, every sub-request
// path but the entity's ("") the server committed for it.
func (r *RecordState) Children() int {
	if r.Built > 0 {
		return r.Built
	}
	n := r.kids + r.Carried // Carried: the lines a deep insert wrote in its body
	for path, s := range r.Subs {
		if path != "" && s.OK() {
			n++
		}
	}
	return n
}

// EachSettled calls fn with every settled record of a lean state, in the
// order of step and record id.
func (s *State) EachSettled(fn func(SettledRecord) error) error {
	over := s.overEntries()
	i := 0
	emit := func(e *entry) error {
		if e.gone {
			return nil
		}
		return fn(SettledRecord{Step: s.StepNames[e.step], ID: e.id, Status: e.status, Key: e.key,
			RowHash: e.rowHash, Created: e.created, Children: e.children})
	}
	err := s.idx.each(func(e *entry) error {
		for ; i < len(over) && over[i].less(e.tkey); i++ {
			if err := emit(&over[i]); err != nil {
				return err
			}
		}
		if i < len(over) && over[i].tkey == e.tkey {
			return nil
		}
		return emit(e)
	})
	for ; err == nil && i < len(over); i++ {
		err = emit(&over[i])
	}
	return err
}

// HeldKeys says which of keys a record of step holds as its entity's key,
// as of the last Append. A failed deep insert of a document the server
// numbers asks it of the few documents its lookup found (executor's
// readKept), instead of copying the state and collecting the key of every
// record: the records in memory are looked at, and the step's settled
// ones read in place from the overlay and the index, nothing kept.
func (j *Journal) HeldKeys(step string, keys []string) (map[string]bool, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.live.heldKeys(step, keys)
}

func (s *State) heldKeys(step string, keys []string) (map[string]bool, error) {
	held := map[string]bool{}
	see := func(key string) {
		if key != "" && slices.Contains(keys, key) {
			held[key] = true
		}
	}
	if ss := s.Steps[step]; ss != nil {
		for _, rec := range ss.Records {
			see(rec.Key)
		}
	}
	if !s.lean {
		return held, nil
	}
	for k, v := range s.over {
		if st, _, _ := strings.Cut(k, "\x00"); st == step && !v.gone {
			see(v.key)
		}
	}
	no, known := s.stepNo[step]
	if !known {
		return held, nil
	}
	err := s.idx.eachFrom(no, func(e *entry) error {
		switch {
		case e.step > no:
			return errStop
		case e.step == no:
			if _, over := s.over[step+"\x00"+e.id]; !over {
				see(e.key)
			}
		}
		return nil
	})
	if errors.Is(err, errStop) {
		err = nil
	}
	return held, err
}

// errStop ends a walk of the index early.
var errStop = errors.New("stop")

// overEntries is the overlay sorted as the index is.
func (s *State) overEntries() []entry {
	out := make([]entry, 0, len(s.over))
	for k, v := range s.over {
		step, id, _ := strings.Cut(k, "\x00")
		out = append(out, entry{tkey{s.stepNo[step], id}, *v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].less(out[j].tkey) })
	return out
}

// settledOf finds a settled record of a lean state; unreadable is set when
// the index could not be read (the record must then be taken as in doubt).
func (s *State) settledOf(step, id string) (e settled, ok bool) {
	if !s.lean {
		return settled{}, false
	}
	if v, found := s.over[step+"\x00"+id]; found {
		return *v, !v.gone
	}
	no, known := s.stepNo[step]
	if !known || s.idx == nil {
		return settled{}, false
	}
	e, ok, err := s.idx.lookup(no, id)
	if err != nil {
		if s.ioErr == nil {
			s.ioErr = fmt.Errorf("reading the journal's index %s: %w", s.idxPath, err)
		}
		return settled{unreadable: true}, true
	}
	return e, ok
}

// settle moves a record that is committed or skipped with nothing in
// flight out of memory, into the overlay (and with it, later, the index).
func (st *State) settle(rec *RecordState) {
	if !st.lean || rec.final != Committed && rec.final != Skipped || rec.finalSeq < rec.lastSeq || rec.Undone {
		return
	}
	for _, m := range []map[string]*SubState{rec.Subs, rec.Undo} {
		for _, s := range m {
			if s.Status == 0 {
				return
			}
		}
	}
	for _, s := range rec.Extra {
		if s.Status == 0 {
			return
		}
	}
	ss := st.Steps[rec.Step]
	if ss.Records[rec.ID] != rec {
		return
	}
	delete(ss.Records, rec.ID)
	ss.dead++
	e := &settled{status: rec.final, created: rec.Created, children: rec.Children(),
		key: strings.Clone(rec.Key), rowHash: strings.Clone(rec.RowHash), srcHash: strings.Clone(rec.SrcHash),
		wrote: string(rec.Wrote), filled: string(rec.Filled), linesHash: strings.Clone(rec.LinesHash), wroteKids: string(rec.WroteKids)}
	st.over[rec.Step+"\x00"+rec.ID] = e
	ss.Settled.add(e, 1)
	if ss.dead > 1024 && ss.dead*2 > len(ss.IDs) {
		ss.tidy()
	}
}

// unsettle brings a settled record back into memory: work on it started
// again (undo's, or a status written over it). What the index kept of it
// is all it knows: its sub-requests are gone, their count kept.
func (st *State) unsettle(ss *StepState, id string, e settled) *RecordState {
	st.promoted = true
	st.over[ss.Name+"\x00"+id] = &settled{gone: true}
	ss.Settled.add(&e, -1)
	return &RecordState{Step: ss.Name, ID: id, Key: e.key, Created: e.created, RowHash: e.rowHash, SrcHash: e.srcHash,
		Wrote: rawOf(e.wrote), Filled: rawOf(e.filled), LinesHash: e.linesHash, WroteKids: rawOf(e.wroteKids), final: e.status, kids: e.children}
}

// tidy drops from IDs the records that settled (and repeats of ones that
// came back).
func (ss *StepState) tidy() {
	if ss.dead == 0 {
		return
	}
	seen := make(map[string]bool, len(ss.Records))
	ids := ss.IDs[:0]
	for _, id := range ss.IDs {
		if ss.Records[id] != nil && !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	clear(ss.IDs[len(ids):])
	ss.IDs, ss.dead = ids, 0
}

func (st *State) tidy() {
	for _, ss := range st.Steps {
		ss.tidy()
	}
}

// feed notes a line of the valid prefix: the checksums an index carries.
func (st *State) feed(line []byte) {
	if !st.lean {
		return
	}
	if st.ValidSize == 0 || st.Entries == 0 {
		st.headCRC = crc32.Checksum(line, castagnoli)
	}
	st.tail = append(st.tail, line...)
	if len(st.tail) > 2*tailSpan {
		st.tail = append(st.tail[:0], st.tail[len(st.tail)-tailSpan:]...)
	}
}

func (st *State) tailSum() (uint32, int) {
	t := st.tail
	if len(t) > tailSpan {
		t = t[len(t)-tailSpan:]
	}
	return crc32.Checksum(t, castagnoli), len(t)
}

// maybeIndex writes the index once enough records settled since the last.
func (st *State) maybeIndex() {
	if st.lean && st.idxPath != "" && len(st.over) >= overlayMin {
		st.writeIndex()
	}
}

// writeIndex writes the index of the state as it is. A failure (a
// read-only folder, a full disk) is no failure of the run: the state keeps
// its settled records in memory instead, and the log stays the truth.
func (st *State) writeIndex() {
	if !st.lean || st.idxPath == "" {
		return
	}
	next := st.nextRun
	x, dropped, made, err := st.idx.flush(st.idxPath, &next, st.overEntries())
	if err == nil {
		var head []byte
		if head, err = st.encodeHead(x, next); err == nil {
			err = writeHead(st.idxPath, head)
		}
		if err == nil {
			st.idx, st.nextRun, st.over, st.indexed = x, next, map[string]*settled{}, st.Entries
			// No head names them now.
			for _, t := range dropped {
				t.drop()
			}
			return
		}
		// The head was not written: the runs this write made go.
		discard(made)
	}
	st.idxPath = ""
}

// indexHead is the head of an index: the journal prefix it covers and the
// state's unsettled part, in full.
type indexHead struct {
	Covers    int64  `json:"covers"`
	HeaderCRC uint32 `json:"header_crc"`
	TailCRC   uint32 `json:"tail_crc"`
	TailLen   int    `json:"tail_len"`
	Entries   int    `json:"entries"`
	LastBatch int    `json:"last_batch"`
	// Tables are the runs of settled records, oldest first; NextRun
	// numbers the last run written.
	Tables  []runRef          `json:"tables,omitempty"`
	NextRun int               `json:"next_run,omitempty"`
	Mended  []int             `json:"mended,omitempty"`
	Steps   []headStep        `json:"steps"`
	Marks   map[string][]Mark `json:"marks,omitempty"`
	Subs    []headSub         `json:"subs,omitempty"`
	Open    []headOpen        `json:"open,omitempty"`
	Records []headRec         `json:"records,omitempty"`
	// MarksFinish and Finished are State's marks and finished: whether the
	// journal ends its finished applies with a line saying so, and whether
	// the last one did.
	MarksFinish bool `json:"marks_finish,omitempty"`
	Finished    bool `json:"finished,omitempty"`
	// Runs, LastRun and Done are State's: the applies begun, the last
	// one's limit and steps, and the steps read to their end.
	Runs    int             `json:"runs,omitempty"`
	LastRun Run             `json:"last_run"`
	Done    map[string]bool `json:"done,omitempty"`
	// Accepted is State's: the plan and sources a resume accepted last,
	// which the header line alone does not say.
	Accepted *Accepted `json:"accepted,omitempty"`
	// Gone and Conflicts are State's.
	Gone      map[string][]string   `json:"gone,omitempty"`
	Conflicts map[string][]Conflict `json:"conflicts,omitempty"`
}

type headStep struct {
	Name string `json:"name"`
	SettledCounts
	Filled []string `json:"filled,omitempty"`
}

type headOpen struct {
	Batch int   `json:"b"`
	Subs  []int `json:"s"`
}

// headSub is a SubState; its own fields' names differ from Sub's even
// ignoring case, as encoding/json matches them.
type headSub struct {
	Sub
	Batch     int             `json:"xb"`
	Status    int             `json:"xs,omitempty"`
	Unknown   bool            `json:"xu,omitempty"`
	ResultKey string          `json:"xk,omitempty"`
	Location  string          `json:"xl,omitempty"`
	Error     string          `json:"xe,omitempty"`
	Filled    json.RawMessage `json:"xf,omitempty"`
	Over      OpKind          `json:"xo,omitempty"`
}

// headRec is a RecordState in the index's head, its sub-requests by their
// places in the head's list. It leaves out Keyed, which only LoadReport
// keeps and never from the index, and Held, which only verify reads, from
// a full replay. TestHeadKeepsARecord fails on a field added to
// RecordState and to neither this nor its list of those left out.
type headRec struct {
	Step, ID, Key string
	Created       bool            `json:",omitempty"`
	Loc           string          `json:",omitempty"`
	Errors        []Problem       `json:",omitempty"`
	Row           *Row            `json:",omitempty"`
	Rows          []Row           `json:",omitempty"`
	Partly        string          `json:",omitempty"`
	Subs          map[string]int  `json:",omitempty"`
	Undo          map[string]int  `json:",omitempty"`
	Extra         []int           `json:",omitempty"`
	Undone        bool            `json:",omitempty"`
	RowHash       string          `json:",omitempty"`
	Final         Status          `json:",omitempty"`
	FinalSeq      int             `json:",omitempty"`
	LastSeq       int             `json:",omitempty"`
	Kids          int             `json:",omitempty"`
	Carried       int             `json:",omitempty"`
	Built         int             `json:",omitempty"`
	FailedInTrial bool            `json:",omitempty"`
	Reason        string          `json:",omitempty"`
	SrcHash       string          `json:",omitempty"`
	Wrote         json.RawMessage `json:",omitempty"`
	Filled        json.RawMessage `json:",omitempty"`
	LinesHash     string          `json:",omitempty"`
	WroteKids     json.RawMessage `json:",omitempty"`
}

// toHead is r as the index's head keeps it; sub numbers a sub-request.
func toHead(r *RecordState, sub func(*SubState) int) headRec {
	subMap := func(m map[string]*SubState) map[string]int {
		if m == nil {
			return nil
		}
		out := make(map[string]int, len(m))
		for _, k := range slices.Sorted(maps.Keys(m)) {
			out[k] = sub(m[k])
		}
		return out
	}
	hr := headRec{Step: r.Step, ID: r.ID, Key: r.Key, Created: r.Created, Loc: r.Loc, Errors: r.Errors,
		Row: r.Row, Rows: r.Rows, Partly: r.Partly, Subs: subMap(r.Subs), Undo: subMap(r.Undo),
		Undone: r.Undone, RowHash: r.RowHash, Final: r.final, FinalSeq: r.finalSeq, LastSeq: r.lastSeq, Kids: r.kids,
		Carried: r.Carried, Built: r.Built, FailedInTrial: r.FailedInTrial, Reason: r.Reason, SrcHash: r.SrcHash,
		Wrote: r.Wrote, Filled: r.Filled, LinesHash: r.LinesHash, WroteKids: r.WroteKids}
	for _, s := range r.Extra {
		hr.Extra = append(hr.Extra, sub(s))
	}
	return hr
}

// restore gives r what hr holds, at finding a sub-request by its number;
// false when hr names one that is not there.
func (hr headRec) restore(r *RecordState, at func(int) *SubState) bool {
	subMap := func(m map[string]int) (map[string]*SubState, bool) {
		if m == nil {
			return nil, true
		}
		out := make(map[string]*SubState, len(m))
		for k, i := range m {
			if out[k] = at(i); out[k] == nil {
				return nil, false
			}
		}
		return out, true
	}
	var ok1, ok2 bool
	r.Key, r.Created, r.Loc, r.Errors, r.Row, r.Rows, r.Partly = hr.Key, hr.Created, hr.Loc, hr.Errors, hr.Row, hr.Rows, hr.Partly
	r.Undone, r.RowHash, r.final, r.finalSeq, r.lastSeq, r.kids = hr.Undone, hr.RowHash, hr.Final, hr.FinalSeq, hr.LastSeq, hr.Kids
	r.Carried, r.Built, r.FailedInTrial, r.Reason, r.SrcHash = hr.Carried, hr.Built, hr.FailedInTrial, hr.Reason, hr.SrcHash
	r.Wrote, r.Filled, r.LinesHash, r.WroteKids = hr.Wrote, hr.Filled, hr.LinesHash, hr.WroteKids
	r.Subs, ok1 = subMap(hr.Subs)
	r.Undo, ok2 = subMap(hr.Undo)
	if !ok1 || !ok2 {
		return false
	}
	for _, i := range hr.Extra {
		if at(i) == nil {
			return false
		}
		r.Extra = append(r.Extra, at(i))
	}
	return true
}

func (st *State) encodeHead(x *runs, nextRun int) ([]byte, error) {
	st.tidy()
	tc, tl := st.tailSum()
	h := indexHead{Covers: st.ValidSize, HeaderCRC: st.headCRC, TailCRC: tc, TailLen: tl, Entries: st.Entries,
		LastBatch: st.LastBatch, Mended: st.Mended, Marks: st.Marks, Tables: x.refs(), NextRun: nextRun,
		MarksFinish: st.marks, Finished: st.finished, Runs: st.Runs, LastRun: st.LastRun, Done: st.Done, Accepted: st.accepted, Gone: st.Gone, Conflicts: st.Conflicts}
	no := map[*SubState]int{}
	sub := func(s *SubState) int {
		if i, ok := no[s]; ok {
			return i
		}
		no[s] = len(h.Subs)
		h.Subs = append(h.Subs, headSub{Sub: s.Sub, Batch: s.Batch, Status: s.Status, Unknown: s.Unknown,
			ResultKey: s.ResultKey, Location: s.Location, Error: s.Error, Filled: s.Filled, Over: s.Over})
		return no[s]
	}
	batches := make([]int, 0, len(st.open))
	for b := range st.open {
		batches = append(batches, b)
	}
	sort.Ints(batches)
	for _, b := range batches {
		o := headOpen{Batch: b}
		for _, s := range st.open[b].subs {
			o.Subs = append(o.Subs, sub(s))
		}
		h.Open = append(h.Open, o)
	}
	for _, name := range st.StepNames {
		ss := st.Steps[name]
		h.Steps = append(h.Steps, headStep{Name: name, SettledCounts: ss.Settled, Filled: slices.Sorted(maps.Keys(ss.Filled))})
		for _, id := range ss.IDs {
			h.Records = append(h.Records, toHead(ss.Records[id], sub))
		}
	}
	return json.Marshal(&h)
}

// restore makes st the state an index's head describes, once the journal
// f proves to hold the prefix it covers; false when it does not.
func (st *State) restore(f *os.File, path string, head []byte) bool {
	var h indexHead
	if json.Unmarshal(head, &h) != nil || h.Covers <= 0 || h.TailLen > tailSpan || int64(h.TailLen) > h.Covers {
		return false
	}
	if fi, err := f.Stat(); err != nil || fi.Size() < h.Covers {
		return false
	}
	tail := make([]byte, h.TailLen)
	if _, err := f.ReadAt(tail, h.Covers-int64(h.TailLen)); err != nil || crc32.Checksum(tail, castagnoli) != h.TailCRC {
		return false
	}
	if len(tail) > 0 && tail[len(tail)-1] != '\n' {
		return false
	}
	line, err := bufio.NewReaderSize(io.NewSectionReader(f, 0, h.Covers), 64<<10).ReadBytes('\n')
	if err != nil || crc32.Checksum(line, castagnoli) != h.HeaderCRC {
		return false
	}
	// The header, as replay reads it.
	if st.apply(line[:len(line)-1]) != "" {
		return false
	}
	st.headCRC, st.tail = h.HeaderCRC, tail
	st.ValidSize, st.Entries, st.LastBatch, st.Mended = h.Covers, h.Entries, h.LastBatch, h.Mended
	if h.Marks != nil {
		st.Marks = h.Marks
	}
	for _, s := range h.Steps {
		ss := st.step(s.Name)
		ss.Settled = s.SettledCounts
		for _, f := range s.Filled {
			if ss.Filled == nil {
				ss.Filled = map[string]bool{}
			}
			ss.Filled[f] = true
		}
	}
	subs := make([]*SubState, len(h.Subs))
	slab := make([]SubState, len(h.Subs))
	for i, s := range h.Subs {
		slab[i] = SubState(s) // the same fields; a field added to one and not the other will not compile
		subs[i] = &slab[i]
	}
	at := func(i int) *SubState {
		if i < 0 || i >= len(subs) {
			return nil
		}
		return subs[i]
	}
	for _, o := range h.Open {
		ob := &openBatch{}
		for _, i := range o.Subs {
			if at(i) == nil {
				return false
			}
			ob.subs = append(ob.subs, at(i))
		}
		st.open[o.Batch] = ob
	}
	for _, hr := range h.Records {
		if !hr.restore(st.record(hr.Step, hr.ID), at) {
			return false
		}
	}
	x, err := openRuns(filepath.Dir(IndexPath(path)), h.Tables)
	if err != nil {
		return false
	}
	st.idx, st.nextRun, st.indexed = x, h.NextRun, h.Entries
	st.marks, st.finished = st.marks || h.MarksFinish, h.Finished
	st.Runs, st.LastRun = h.Runs, h.LastRun
	if h.Done != nil {
		st.Done = h.Done
	}
	if h.Accepted != nil {
		st.accept(*h.Accepted)
	}
	if h.Gone != nil {
		st.Gone = h.Gone
	}
	if h.Conflicts != nil {
		st.Conflicts = h.Conflicts
	}
	return true
}

// loadLean builds the lean state of the journal f: from its index when the
// index is sound, replaying only the lines after what it covers; else from
// the whole log, writing the index as it goes when write is set. When a
// settled record was worked on again (undo), the state is built in full
// instead, as Replay does: the index keeps too little of such a record.
func loadLean(f *os.File, path string, write bool) (*State, error) {
	fresh := func() *State {
		st := newState()
		st.lean, st.over = true, map[string]*settled{}
		if write {
			st.idxPath = IndexPath(path)
		}
		return st
	}
	st := fresh()
	if head, err := readHead(IndexPath(path)); err == nil {
		if !st.restore(f, path, head) {
			st = fresh()
		}
	}
	if _, err := f.Seek(st.ValidSize, io.SeekStart); err != nil {
		return nil, err
	}
	st, err := st.replay(f, path)
	if err == nil && st.promoted {
		st.idx.release() // read while replaying, dropped now
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return nil, err
		}
		return replay(f, path)
	}
	if err == nil {
		err = st.ioErr
	}
	if err != nil {
		if st != nil {
			st.idx.release()
		}
		return nil, err
	}
	if st.Entries-st.indexed >= 1024 && !st.Torn {
		st.writeIndex()
	}
	st.tidy()
	return st, nil
}

// OpenIndexed is Open with a lean state (see State.Lean): what apply
// needs, in memory flat in the number of records. It keeps the index
// beside the journal up to date as lines are appended and on Close.
func OpenIndexed(path string) (*Journal, *State, error) { return open(path, true) }

// LoadIndexed is Load with a lean state: what status needs. It writes the
// index when it had to read much of the log without one, and no run holds
// the journal.
func LoadIndexed(path string) (*State, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// A run that holds the journal writes its index itself: a status
	// beside it only reads.
	_, busy := InUse(path)
	st, err := loadLean(f, path, !busy)
	if err != nil {
		return nil, err
	}
	st.idxPath = ""
	return st, nil
}

// CreateIndexed is Create for a journal whose state is lean (OpenIndexed).
func CreateIndexed(path string, h Header) (*Journal, error) { return create(path, h, true) }

// Key is the key of the record of step and id as of the last Append ("",
// false when none is known): what ref() gives.
func (j *Journal) Key(step, id string) (string, bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	rec := j.live.Record(step, id)
	if rec == nil || rec.Key == "" {
		return "", false
	}
	return rec.Key, true
}
