// Package verify reads back every record a run committed and compares
// it, field by field, with what the run left (the journal's Sub.Match and
// the values the server filled in), with the comparison undo's change
// check uses (compare.Fields), and adds control totals from both sides.
// It reads the journal and the service; the engine does not import it.
package verify

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/big"
	"slices"
	"sort"
	"strings"

	"github.com/migrate-tool/migrate/compare"
	"github.com/migrate-tool/migrate/executor"
	"github.com/migrate-tool/migrate/journal"
	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/read"
)

// Verify problems.
const (
	Differs     = "differs"
	Gone        = "gone"         // the entity or line the run wrote is not there
	NotReadable = "not readable" // the field is missing from read answers: not a difference
	Unreadable  = "cannot be read"
	// NotVerifiable is a record none of whose fields, lines or texts
	// written could be read back: neither matched nor a difference.
	NotVerifiable = "not verifiable"
)

// Options drive Verify.
type Options struct {
	// Target is the service root the client talks to; a journal written to
	// another service is refused (CheckTarget).
	Target   string
	Metadata *odata.Metadata
	// Plan is the plan the run loaded, prepared: its steps' totals: are
	// computed from its source rows, from the journal and from the target
	// (nil: no totals).
	Plan *executor.Prepared
}

// Result is what Verify found.
type Result struct {
	Target   string
	Steps    []Step
	Findings []Finding
	// Totals are the plan's totals: of its steps, in plan order.
	Totals []journal.TotalRow
	// Calls counts the $batch calls the reads took.
	Calls int
	// Trial is the records per step of the trial (apply --limit) that was
	// the journal's last run, 0 when its last run was not one: the source
	// side of the plan's totals is then of the records the trial took.
	Trial int
	// NotRun are the steps with totals in the plan that the journal has
	// not run yet (notRun): their totals are left out.
	NotRun []string
	// PlanChanged: the plan of the totals (Options.Plan) is not the one the
	// run was made from: their source side is of what it builds now.
	PlanChanged bool
	// SourcesChanged are the plan's source files whose content is not what
	// the run read (the journal's hashes): the source side is of them now.
	SourcesChanged []string
}

// Step is one step's records and control totals.
type Step struct {
	Name, Entity string
	// Records are the committed records read back; Matched hold what the
	// run left; Differ have a difference (or are gone, or unreadable).
	Records, Matched, Differ int
	// NotVerified counts the records the run did not commit (failed,
	// pending, in doubt) or that undo took back: nothing of theirs is
	// checked.
	NotVerified int
	// Partly counts those of NotVerified that failed partly loaded: their
	// entity is on the company, with some of its lines; Undone those undo
	// took back; Left the others by their status (failed, waived,
	// pending, in doubt; a committed one with no key to read it by as
	// committed). NotVerifiedNotes says them.
	Partly, Undone int
	Left           map[journal.Status]int
	// NotVerifiable counts the records read whose every field written the
	// server leaves out of its answers (field-level permissions): nothing
	// could be compared, so they are neither matched nor differ.
	NotVerifiable int
	Totals        []ControlTotal
	// Rejected counts the source's records that the plan's row errors
	// reject, Waived those resolve --waive closed (left out of the
	// totals); both only for a step with totals:.
	Rejected, Waived int
}

// ControlTotal is one total from what the run sent (the journal) and
// from what the target holds of the same records.
type ControlTotal struct {
	What           string // "records", "lines ORDERITEMS_SUBFORM", "sum PRICE", "sum ORDERITEMS_SUBFORM.PRICE"
	Source, Target string
}

// Finding is one field, line or record not as the run left it.
type Finding struct {
	Step, Record, Location string
	// URL is what was read: ENTITY(key), ENTITY(key)/NAV(line).
	URL     string
	Field   string
	Problem string
	// Sent and Found are the values as JSON (Found empty when absent).
	Sent, Found string
	// Detail says more: the server's message of an unreadable record.
	Detail string
}

// Counts adds up the steps' records read back, those that hold what the
// run left and those that differ (a record with three fields changed is
// one): every total of verify a person reads.
func (r *Result) Counts() (records, matched, differ int) {
	for _, s := range r.Steps {
		records += s.Records
		matched += s.Matched
		differ += s.Differ
	}
	return records, matched, differ
}

// Differences counts the findings that are differences, a field each (a
// field that is not readable is not one); Counts counts the records.
func (r *Result) Differences() int {
	n := 0
	for _, f := range r.Findings {
		if difference(f.Problem) {
			n++
		}
	}
	return n
}

// difference reports whether a finding's problem is a difference: what
// could not be read is said, not counted.
func difference(problem string) bool {
	return problem != NotReadable && problem != NotVerifiable
}

// Verify reads back what the run of journalPath committed. Reads go
// through the Reader (or-chains of keys, 100 GETs a call) with their lines
// expanded; a 404 is confirmed as undo's are (read.Warmth.ConfirmAbsent: a cold form's
// first answer is no proof).
func Verify(ctx context.Context, journalPath string, client executor.Client, opts Options) (*Result, error) {
	st, err := journal.Load(journalPath)
	if err != nil {
		return nil, err
	}
	if err := executor.CheckTarget(journalPath, st.Header, opts.Target); err != nil {
		return nil, err
	}
	res := &Result{Target: executor.Redact(opts.Target)}
	if res.Target == "" {
		res.Target = st.Header.Target
	}
	get := read.Via(client)
	var warm read.Warmth
	send := func(ctx context.Context, reqs []odata.BatchRequest) ([]odata.BatchResponse, error) {
		res.Calls++
		got, err := get(ctx, reqs)
		if err != nil {
			return nil, err
		}
		return warm.ConfirmAbsent(reqs, got, func(again []odata.BatchRequest) ([]odata.BatchResponse, error) {
			res.Calls++
			return get(ctx, again)
		})
	}
	named, err := planTotals(ctx, opts, st)
	if err != nil {
		return nil, err
	}
	for _, hs := range st.Header.Steps {
		ss := st.Steps[hs.Name]
		if ss == nil {
			continue
		}
		set := opts.Metadata.EntitySet(hs.Entity)
		if set == nil || set.Type == nil {
			return nil, fmt.Errorf("step %s: the target has no entity set %s", hs.Name, hs.Entity)
		}
		v := &stepVerify{md: opts.Metadata, t: set.Type, step: Step{Name: hs.Name, Entity: hs.Entity}, named: named[hs.Name]}
		if err := v.run(ctx, ss, send); err != nil {
			return nil, err
		}
		if v.named != nil {
			v.step.Rejected, v.step.Waived = v.named.Rejected, v.named.Waived
		}
		res.Steps = append(res.Steps, v.step)
		for i := range v.findings {
			if f := &v.findings[i]; f.Problem == Differs && f.Detail == "" {
				f.Detail = unsentNote(*f, st.Conflicts[hs.Name])
			}
		}
		res.Findings = append(res.Findings, v.findings...)
	}
	res.Trial = st.LastRun.Limit
	if opts.Plan != nil {
		if p := opts.Plan.Plan; p != nil {
			res.PlanChanged = p.Hash != st.Header.PlanHash
			for f, h := range executor.SourceHashes(p) {
				if st.Header.Sources[f] != h {
					res.SourcesChanged = append(res.SourcesChanged, f)
				}
			}
			sort.Strings(res.SourcesChanged)
		}
		for _, s := range opts.Plan.Plan.Steps {
			if len(s.Totals) > 0 && notRun(st, s.Name) {
				res.NotRun = append(res.NotRun, s.Name)
			}
			if named[s.Name] != nil {
				res.Totals = append(res.Totals, named[s.Name].rows()...)
			}
		}
	}
	return res, nil
}

// unsentNote says of difference f that the last delta load left the
// source's change of it unsent, for a conflict (conflicts: its step's, as
// the journal keeps them); "" when it did not.
func unsentNote(f Finding, conflicts []journal.Conflict) string {
	for _, c := range conflicts {
		entity := c.Line == "" && c.Field == f.Field
		line := c.Line != "" && strings.HasSuffix(f.URL, "/"+c.Line) && (c.Field == f.Field || c.Text)
		if c.ID == f.Record && (entity || line) {
			return fmt.Sprintf("changed on the server since the load, and the last delta did not send the source's %s over it (a conflict: apply --delta --overwrite sends it)", c.Now)
		}
	}
	return ""
}

// notRun reports whether the journal has not run step yet: its last run
// chose other steps (apply --steps), and it holds no record of step. The
// step's totals are left out of verify's then.
func notRun(st *journal.State, step string) bool {
	if len(st.LastRun.Steps) == 0 || slices.Contains(st.LastRun.Steps, step) {
		return false
	}
	ss := st.Steps[step]
	return ss == nil || len(ss.IDs) == 0
}

// planTotals are the totals: of the plan's steps with their source side
// computed, by step name; none without a plan.
func planTotals(ctx context.Context, opts Options, st *journal.State) (map[string]*stepTotals, error) {
	named := map[string]*stepTotals{}
	if opts.Plan == nil {
		return named, nil
	}
	for _, s := range opts.Plan.Plan.Steps {
		if len(s.Totals) == 0 {
			continue
		}
		set := opts.Metadata.EntitySet(s.Entity)
		if set == nil || set.Type == nil {
			return nil, fmt.Errorf("step %s: the target has no entity set %s", s.Name, s.Entity)
		}
		if notRun(st, s.Name) {
			continue // its totals are the load's to come, not a difference
		}
		t := newStepTotals(opts.Metadata, set.Type, s)
		if err := t.fromSource(ctx, opts.Plan, st.Steps[s.Name], st.LastRun.Limit > 0); err != nil {
			return nil, fmt.Errorf("step %s: totals from the source: %w", s.Name, err)
		}
		named[s.Name] = t
	}
	return named, nil
}

// stepVerify is the verification of one step.
type stepVerify struct {
	md       *odata.Metadata
	t        *odata.EntityType
	step     Step
	findings []Finding
	// source and target are the totals of each side, by their What.
	source, target totals
	// named are the step's totals: (nil: none).
	named *stepTotals
}

// written is a sub-request whose effect verify checks: the record's
// entity or a line (sub-form child of the first level) it created or
// patched.
func written(s *journal.SubState) bool {
	return s.OK() && journal.Depth(s.Path) <= 1 && len(s.Match) > 0 && (s.Op == journal.OpCreate || s.Op == journal.OpPatch)
}

func (v *stepVerify) run(ctx context.Context, ss *journal.StepState, send read.Send) error {
	var recs []*journal.RecordState
	var wants []Want
	fields, navs := map[string]bool{}, map[string]bool{}
	for _, id := range ss.IDs {
		rec := ss.Records[id]
		if rec.Status() == journal.Skipped {
			continue // a row the plan skips: no record the run was to load
		}
		if rec.Undone || rec.Status() != journal.Committed || rec.Key == "" {
			v.step.NotVerified++
			switch {
			case rec.Undone:
				v.step.Undone++
				continue
			case rec.Partly != "" && rec.Status() == journal.Failed:
				v.step.Partly++
			}
			if v.step.Left == nil {
				v.step.Left = map[journal.Status]int{}
			}
			v.step.Left[rec.Status()]++
			continue
		}
		w := WantOf(rec)
		recs, wants = append(recs, rec), append(wants, w)
		for f := range w.Fields {
			fields[f] = true
		}
		for _, nav := range w.Navs() {
			if v.t.Navigation(nav) != nil {
				navs[nav] = true
			}
		}
	}
	v.step.Records = len(recs)
	if v.named != nil {
		v.named.reads(fields, navs)
	}
	if len(recs) == 0 {
		return nil
	}
	rd := &read.Keys{Send: send, Set: v.step.Entity, Type: v.t, Select: slices.Sorted(maps.Keys(fields)), Expand: slices.Sorted(maps.Keys(navs))}
	if len(rd.Select) == 0 {
		rd.Select = v.t.Key // nothing written but the key: read no more
	}
	keys := make([]string, len(recs))
	for i, rec := range recs {
		keys[i] = rec.Key
	}
	found, err := rd.ReadKeys(ctx, keys)
	if err != nil {
		return fmt.Errorf("step %s: reading %s: %w", v.step.Name, v.step.Entity, err)
	}
	for i, rec := range recs {
		before := len(v.findings)
		verifiable := v.record(rec, wants[i], found[rec.Key])
		switch {
		case len(v.findings) > before && !v.onlyNotReadable(before):
			v.step.Differ++
		case !verifiable:
			v.step.NotVerifiable++
		default:
			v.step.Matched++
		}
	}
	v.step.Totals = v.source.merge(v.target)
	return nil
}

// onlyNotReadable reports whether the findings from from on are none
// of them a difference.
func (v *stepVerify) onlyNotReadable(from int) bool {
	for _, f := range v.findings[from:] {
		if difference(f.Problem) {
			return false
		}
	}
	return true
}

// record compares one record with what the target answered for its key.
// It reports false when nothing the run wrote could be read back to be
// compared (every field hidden from the reader): not verifiable.
func (v *stepVerify) record(rec *journal.RecordState, w Want, f read.Found) bool {
	url := odata.KeySegment(v.step.Entity, rec.Key)
	add := func(url, field, problem string, sent, got any, detail string) {
		fd := Finding{Step: rec.Step, Record: rec.ID, Location: rec.Loc, URL: url, Field: field, Problem: problem, Detail: detail}
		if sent != nil {
			fd.Sent = jsonString(sent)
		}
		if got != nil {
			fd.Found = jsonString(got)
		}
		v.findings = append(v.findings, fd)
	}
	v.source.add("records", "1")
	v.source.addFields("", v.t, w.Sent)
	if v.named != nil {
		v.named.fromSent(w)
	}
	for _, nav := range w.Navs() {
		if n := v.t.Navigation(nav); n != nil && n.Collection {
			for _, k := range w.Kids[nav] {
				v.source.add("lines "+nav, "1")
				v.source.addFields(nav+".", v.md.Type(n.Type), k.Sent)
			}
		}
	}
	switch {
	case f.Status == 404:
		add(url, "", Gone, nil, nil, "")
		return true
	case f.Status != 200:
		add(url, "", Unreadable, nil, nil, odata.ParseError(f.Status, nil, f.Body).Error())
		return true
	}
	c, err := CheckRecord(v.md, v.t, w, f.Body)
	if err != nil {
		add(url, "", Unreadable, nil, nil, err.Error())
		return true
	}
	v.target.add("records", "1")
	v.target.addFields("", v.t, pick(c.Entity, w.Sent))
	if v.named != nil {
		v.named.fromTarget(c.Entity)
	}
	for _, nav := range slices.Sorted(maps.Keys(c.Lines)) {
		n := v.t.Navigation(nav)
		for _, l := range c.Lines[nav] {
			v.target.add("lines "+nav, "1")
			v.target.addFields(nav+".", v.md.Type(n.Type), l)
		}
	}
	for _, fd := range c.Findings {
		add(url+fd.URL, fd.Field, fd.Problem, fd.Sent, fd.Found, fd.Detail)
	}
	if c.Compared == 0 && len(c.Findings) > 0 {
		add(url, "", NotVerifiable, nil, nil, "nothing the run wrote is returned on read (field-level permissions)")
		return false
	}
	return true
}

func problemOf(d compare.Diff) string {
	if d.Absent {
		return NotReadable
	}
	return Differs
}

// Left is leftBy decoded: the fields sub-request s left on the server.
func Left(s *journal.SubState) map[string]any {
	m, _ := odata.DecodeEntity(leftBy(s))
	return m
}

// sentBy is what sub-request s sent of its scalar fields: the source
// side of the control totals.
func sentBy(s *journal.SubState) map[string]any {
	m, _ := odata.DecodeEntity(s.Match)
	return m
}

// pick is the fields of e that left names.
func pick(e, left map[string]any) map[string]any {
	out := make(map[string]any, len(left))
	for k := range left {
		if v, ok := e[k]; ok {
			out[k] = v
		}
	}
	return out
}

// pathLess orders sub-form paths as numbers ("2" before "10").
func pathLess(a, b string) bool {
	if len(a) != len(b) {
		return len(a) < len(b)
	}
	return a < b
}

func jsonString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// totals are control totals by their What: counts and sums of decimal
// fields, exact (big.Rat), with the most digits after the point seen.
type totals struct {
	order []string
	sum   map[string]*big.Rat
	scale map[string]int
}

func (t *totals) add(what, value string) {
	r, ok := new(big.Rat).SetString(value)
	if !ok {
		return
	}
	if t.sum == nil {
		t.sum, t.scale = map[string]*big.Rat{}, map[string]int{}
	}
	if t.sum[what] == nil {
		t.sum[what] = new(big.Rat)
		t.order = append(t.order, what)
	}
	t.sum[what].Add(t.sum[what], r)
	if _, frac, ok := strings.Cut(value, "."); ok && len(frac) > t.scale[what] {
		t.scale[what] = len(frac)
	}
}

// addFields adds the decimal fields of fields (of type ft) to the sums,
// named prefix+FIELD.
func (t *totals) addFields(prefix string, ft *odata.EntityType, fields map[string]any) {
	if ft == nil {
		return
	}
	names := make([]string, 0, len(fields))
	for k := range fields {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		p := ft.Property(k)
		if p == nil || p.Type != odata.EdmDecimal {
			continue
		}
		// A number answered as a string (IEEE754Compatible) counts; each
		// value as the field stores it (compare.Number: its Scale).
		if n, ok := compare.Number(p, fields[k]); ok {
			t.add("sum "+prefix+k, n.String())
		}
	}
}

// merge lists the totals of both sides: the records, the lines of each
// sub-form, then the sums, by name; a total one side lacks is 0 there.
func (t totals) merge(o totals) []ControlTotal {
	order := append([]string(nil), t.order...)
	for _, w := range o.order {
		if t.sum[w] == nil {
			order = append(order, w)
		}
	}
	rank := func(w string) int {
		switch {
		case w == "records":
			return 0
		case strings.HasPrefix(w, "lines "):
			return 1
		}
		return 2
	}
	sort.SliceStable(order, func(i, j int) bool {
		if rank(order[i]) != rank(order[j]) {
			return rank(order[i]) < rank(order[j])
		}
		return order[i] < order[j]
	})
	out := make([]ControlTotal, len(order))
	for i, w := range order {
		sc := max(t.scale[w], o.scale[w])
		out[i] = ControlTotal{What: w, Source: t.text(w, sc), Target: o.text(w, sc)}
	}
	return out
}

func (t totals) text(what string, scale int) string {
	if t.sum[what] == nil {
		return new(big.Rat).FloatString(scale)
	}
	return t.sum[what].FloatString(scale)
}

// TotalsDiffer reports whether a control total of some step is not the
// same on both sides, or a total of the plan's on all three: a line too
// many is a difference, whatever else.
func (r *Result) TotalsDiffer() bool {
	for _, t := range r.Totals {
		if t.Differs() {
			return true
		}
	}
	for _, s := range r.Steps {
		for _, t := range s.Totals {
			if t.Source != t.Target {
				return true
			}
		}
	}
	return false
}
