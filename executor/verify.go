package executor

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"sort"
	"strings"

	"github.com/migrate-tool/migrate/compare"
	"github.com/migrate-tool/migrate/journal"
	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/read"
)

// Issue 16: verify reads back every record a run committed and compares
// it, field by field, with what the run left (the journal's Sub.Match and
// the values the server filled in), with the comparison undo's change
// check uses (compare.Fields), and adds control totals from both sides.

// Verify problems.
const (
	VerifyDiffers     = "differs"
	VerifyGone        = "gone"         // the entity or line the run wrote is not there
	VerifyNotReadable = "not readable" // the field is missing from read answers: not a difference
	VerifyUnreadable  = "cannot be read"
)

// VerifyOptions drive Verify.
type VerifyOptions struct {
	// Target is the service root the client talks to; a journal written to
	// another service is refused (CheckTarget).
	Target   string
	Metadata *odata.Metadata
}

// VerifyResult is what Verify found.
type VerifyResult struct {
	Target   string
	Steps    []VerifyStep
	Findings []VerifyFinding
	// Calls counts the $batch calls the reads took.
	Calls int
}

// VerifyStep is one step's records and control totals.
type VerifyStep struct {
	Name, Entity string
	// Records are the committed records read back; Matched hold what the
	// run left; Differ have a difference (or are gone, or unreadable).
	Records, Matched, Differ int
	// NotVerified counts the records the run did not commit (failed,
	// pending, in doubt) or that undo took back: nothing of theirs is
	// checked.
	NotVerified int
	Totals      []ControlTotal
}

// ControlTotal is one total from what the run sent (the journal) and
// from what the target holds of the same records.
type ControlTotal struct {
	What           string // "records", "lines ORDERITEMS_SUBFORM", "sum PRICE", "sum ORDERITEMS_SUBFORM.PRICE"
	Source, Target string
}

// VerifyFinding is one field, line or record not as the run left it.
type VerifyFinding struct {
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

// Differences counts the findings that are differences (a field that is
// not readable is not one).
func (r *VerifyResult) Differences() int {
	n := 0
	for _, f := range r.Findings {
		if f.Problem != VerifyNotReadable {
			n++
		}
	}
	return n
}

// Verify reads back what the run of journalPath committed. Reads go
// through the Reader (or-chains of keys, 100 GETs a call) with their lines
// expanded; a 404 is confirmed as undo's are (confirmAbsent: a cold form's
// first answer is no proof).
func Verify(ctx context.Context, journalPath string, client Client, opts VerifyOptions) (*VerifyResult, error) {
	st, err := journal.Load(journalPath)
	if err != nil {
		return nil, err
	}
	if err := CheckTarget(journalPath, st.Header, opts.Target); err != nil {
		return nil, err
	}
	res := &VerifyResult{Target: redact(opts.Target)}
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
	for _, hs := range st.Header.Steps {
		ss := st.Steps[hs.Name]
		if ss == nil {
			continue
		}
		set := opts.Metadata.EntitySet(hs.Entity)
		if set == nil || set.Type == nil {
			return nil, fmt.Errorf("step %s: the target has no entity set %s", hs.Name, hs.Entity)
		}
		v := &stepVerify{md: opts.Metadata, t: set.Type, step: VerifyStep{Name: hs.Name, Entity: hs.Entity}}
		if err := v.run(ctx, ss, send); err != nil {
			return nil, err
		}
		res.Steps = append(res.Steps, v.step)
		res.Findings = append(res.Findings, v.findings...)
	}
	return res, nil
}

// stepVerify is the verification of one step.
type stepVerify struct {
	md       *odata.Metadata
	t        *odata.EntityType
	step     VerifyStep
	findings []VerifyFinding
	// source and target are the totals of each side, by their What.
	source, target totals
}

// written is a sub-request whose effect verify checks: the record's
// entity or a line (sub-form child of the first level) it created or
// patched.
func written(s *journal.SubState) bool {
	return s.OK() && depth(s.Path) <= 1 && len(s.Match) > 0 && (s.Op == journal.OpCreate || s.Op == journal.OpPatch)
}

func (v *stepVerify) run(ctx context.Context, ss *journal.StepState, send read.Send) error {
	var recs []*journal.RecordState
	fields, navs := map[string]bool{}, map[string]bool{}
	for _, id := range ss.IDs {
		rec := ss.Records[id]
		if rec.Undone || rec.Status() != journal.Committed || rec.Key == "" {
			v.step.NotVerified++
			continue
		}
		recs = append(recs, rec)
		for _, s := range rec.Subs {
			if !written(s) {
				continue
			}
			if s.Path == "" {
				var m map[string]json.RawMessage
				_ = json.Unmarshal(s.Match, &m)
				for f := range m {
					fields[f] = true
				}
				for nav := range carriedLines(s) {
					if v.t.Navigation(nav) != nil {
						navs[nav] = true
					}
				}
			} else if v.t.Navigation(s.Nav) != nil {
				navs[s.Nav] = true
			}
		}
	}
	v.step.Records = len(recs)
	if len(recs) == 0 {
		return nil
	}
	rd := &read.Keys{Send: send, Set: v.step.Entity, Type: v.t, Select: sortedKeys(fields), Expand: sortedKeys(navs)}
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
	for _, rec := range recs {
		before := len(v.findings)
		v.record(rec, found[rec.Key])
		if len(v.findings) == before || v.onlyNotReadable(before) {
			v.step.Matched++
		} else {
			v.step.Differ++
		}
	}
	v.step.Totals = v.source.merge(v.target)
	return nil
}

func (v *stepVerify) onlyNotReadable(from int) bool {
	for _, f := range v.findings[from:] {
		if f.Problem != VerifyNotReadable {
			return false
		}
	}
	return true
}

// record compares one record with what the target answered for its key.
func (v *stepVerify) record(rec *journal.RecordState, f read.Found) {
	url := v.step.Entity + "(" + rec.Key + ")"
	add := func(url, field, problem string, sent, got any, detail string) {
		fd := VerifyFinding{Step: rec.Step, Record: rec.ID, Location: rec.Loc, URL: url, Field: field, Problem: problem, Detail: detail}
		if sent != nil {
			fd.Sent = jsonString(sent)
		}
		if got != nil {
			fd.Found = jsonString(got)
		}
		v.findings = append(v.findings, fd)
	}
	paths := make([]string, 0, len(rec.Subs))
	for p, s := range rec.Subs {
		if written(s) {
			paths = append(paths, p)
		}
	}
	sort.Slice(paths, func(i, j int) bool { return pathLess(paths[i], paths[j]) })
	v.source.add("records", "1")
	for _, p := range paths {
		s := rec.Subs[p]
		if s.Path == "" {
			v.source.addFields("", v.t, sentBy(s))
			for nav, lines := range carriedLines(s) {
				if n := v.t.Navigation(nav); n != nil && n.Collection {
					for _, l := range lines {
						m, _ := odata.DecodeEntity(l)
						v.source.add("lines "+nav, "1")
						v.source.addFields(nav+".", v.md.Type(n.Type), m)
					}
				}
			}
		} else if n := v.t.Navigation(s.Nav); n != nil && n.Collection {
			v.source.add("lines "+s.Nav, "1")
			v.source.addFields(s.Nav+".", v.md.Type(n.Type), sentBy(s))
		}
	}
	switch {
	case f.Status == 404:
		add(url, "", VerifyGone, nil, nil, "")
		return
	case f.Status != 200:
		add(url, "", VerifyUnreadable, nil, nil, odata.ParseError(f.Status, nil, f.Body).Error())
		return
	}
	got, err := odata.DecodeEntity(f.Body)
	var raw map[string]json.RawMessage
	if err == nil {
		err = json.Unmarshal(f.Body, &raw)
	}
	if err != nil {
		add(url, "", VerifyUnreadable, nil, nil, err.Error())
		return
	}
	v.target.add("records", "1")
	for _, p := range paths {
		s := rec.Subs[p]
		if s.Path == "" {
			left := leftOf(s)
			v.target.addFields("", v.t, pick(got, left))
			for _, d := range compare.Fields(v.t, got, left) {
				add(url, d.Field, problemOf(d), d.Left, d.Found, "")
			}
			v.carried(s, url, raw, add)
			continue
		}
		v.line(rec, s, url, raw[s.Nav], add)
	}
}

// line compares a line (or a single sub-form, such as a text) the run
// wrote with the entity's expanded sub-form.
func (v *stepVerify) line(rec *journal.RecordState, s *journal.SubState, url string, body json.RawMessage, add func(url, field, problem string, sent, got any, detail string)) {
	n := v.t.Navigation(s.Nav)
	if n == nil {
		return
	}
	if !n.Collection {
		// A text sub-form is read back normalised (tags stripped,
		// whitespace collapsed) and holds every text appended to it.
		if !compare.TextInJSON(body, s.Match) {
			var want, have struct{ TEXT string }
			_ = json.Unmarshal(s.Match, &want)
			_ = json.Unmarshal(body, &have)
			add(url+"/"+s.Nav, "TEXT", VerifyDiffers, odata.TextContent(want.TEXT), odata.TextContent(have.TEXT), "")
		}
		return
	}
	lt := v.md.Type(n.Type)
	key := s.ResultKey
	if key == "" {
		key = s.Line
	}
	var lines []json.RawMessage
	_ = json.Unmarshal(body, &lines)
	left := leftOf(s)
	lineURL := url + "/" + s.Nav
	if key != "" {
		lineURL += "(" + key + ")"
	}
	for _, raw := range lines {
		e, err := odata.DecodeEntity(raw)
		if err != nil {
			continue
		}
		switch {
		case key != "" && lt != nil:
			if odata.EntityKey(lt, e) != odata.CanonicalKey(lt, key) {
				continue
			}
		case !compare.SameJSON(lt, raw, s.Match):
			continue
		}
		v.target.add("lines "+s.Nav, "1")
		v.target.addFields(s.Nav+".", lt, pick(e, left))
		for _, d := range compare.Fields(lt, e, left) {
			add(lineURL, d.Field, problemOf(d), d.Left, d.Found, "")
		}
		return
	}
	add(lineURL, "", VerifyGone, nil, nil, "")
}

// carried compares the lines a deep insert wrote inside its own body
// (journal.Sub.Lines: they have no sub-request of their own, nor a key in
// the journal) with the entity's expanded sub-forms: each is paired by
// content with a distinct line that holds what it wrote (compare.Lines),
// else it is the line in its place if no other took that (a deep insert's lines are stored in the order sent), whose
// fields are then named; with neither, it is gone.
func (v *stepVerify) carried(s *journal.SubState, url string, raw map[string]json.RawMessage, add func(url, field, problem string, sent, got any, detail string)) {
	navs := carriedLines(s)
	names := sortedKeys(navs)
	for _, nav := range names {
		n := v.t.Navigation(nav)
		if n == nil || !n.Collection {
			continue
		}
		lt := v.md.Type(n.Type)
		var lines []json.RawMessage
		_ = json.Unmarshal(raw[nav], &lines)
		m := compare.LinesJSON(lt, lines, navs[nav])
		taken := make([]bool, len(lines))
		for _, j := range m.Held {
			if j >= 0 {
				taken[j] = true
			}
		}
		for i, want := range navs[nav] {
			at := m.Held[i]
			if at < 0 && i < len(lines) && !taken[i] {
				at = i
				taken[i] = true
			}
			lineURL := url + "/" + nav
			if at < 0 {
				add(lineURL, "", VerifyGone, nil, nil, fmt.Sprintf("line %d of the deep insert", i+1))
				continue
			}
			e, err := odata.DecodeEntity(lines[at])
			if err != nil {
				continue
			}
			if lt != nil {
				if k := odata.EntityKey(lt, e); k != "" {
					lineURL += "(" + k + ")"
				}
			}
			left, _ := odata.DecodeEntity(want)
			v.target.add("lines "+nav, "1")
			v.target.addFields(nav+".", lt, pick(e, left))
			for _, d := range compare.Fields(lt, e, left) {
				add(lineURL, d.Field, problemOf(d), d.Left, d.Found, "")
			}
		}
	}
}

func problemOf(d compare.Diff) string {
	if d.Absent {
		return VerifyNotReadable
	}
	return VerifyDiffers
}

// leftOf is leftBy decoded: the fields sub-request s left on the server.
func leftOf(s *journal.SubState) map[string]any {
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

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
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
