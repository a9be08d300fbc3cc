package executor

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/plan"
	"github.com/migrate-tool/migrate/read"
	"github.com/migrate-tool/migrate/source"
	"github.com/migrate-tool/migrate/transform"
)

// A step's or sub-form's exists: {PARTNAME: LOGPART}. Every value
// must be a key of the entity on the target or be created by an earlier
// step, and this is known before anything is sent: an order line for a
// part that is nowhere fails on the server one record at a time, after
// the orders before it were loaded.

// References is what CheckReferences found.
type References struct {
	// Unresolved are the values neither on the target nor created by an
	// earlier step: one each, at the first cell that gives it (Message
	// says how many more do), sorted by step and location.
	Unresolved []RecordError
	// Records counts, per step, the records that give an unresolved value
	// (anywhere, not only at its first cell): apply refuses to start over
	// them, and with --allow-missing-references the server refuses them.
	Records map[string]int
	// Checked counts the distinct values looked up on the target.
	Checked int
	// Unchecked (offline) counts the distinct values that no earlier step
	// creates and that could not be looked up for want of a target.
	Unchecked int
}

// columnFinder is implemented by *transform.Program: the column a field
// reads, to name the cell of a value.
type columnFinder interface {
	FieldColumn(step string, navs []string, name string) string
}

// refUse is where a value of an exists: field is first given, how often,
// and by which records (indexes into CheckReferences' givers).
type refUse struct {
	err   RecordError
	count int
	by    []int
}

// giver is a record that gives a value of an exists: field.
type giver struct{ step, id string }

// CheckReferences reads every record of the plan's steps that have
// exists: checks (or feed a step that does: its keys), in apply's order,
// and looks the values no earlier step creates up on target; without one
// (nil) only the earlier steps are checked and Unchecked says how many
// values were not. It writes nothing.
func CheckReferences(ctx context.Context, run *Prepared, target Client) (*References, error) {
	p := run.Plan
	res := &References{}
	targets := map[string]bool{}
	for _, s := range p.Steps {
		for _, x := range allExists(s.Exists, s.Subforms) {
			targets[x.Entity] = true
		}
	}
	if len(targets) == 0 {
		return res, nil
	}
	waves, err := p.Order()
	if err != nil {
		return nil, err
	}
	sc := &refScan{run: run, targets: targets, created: map[string]map[string]bool{}, uses: map[string]map[string]*refUse{}}
	sc.cols, _ = run.records.(columnFinder)
	for _, wave := range waves {
		made := map[string][]string{}
		for _, s := range wave {
			if err := sc.step(ctx, s, made); err != nil {
				return nil, fmt.Errorf("step %s: checking its references: %w", s.Name, err)
			}
		}
		for ent, keys := range made {
			if sc.created[ent] == nil {
				sc.created[ent] = map[string]bool{}
			}
			for _, k := range keys {
				sc.created[ent][k] = true
			}
		}
	}
	if target == nil {
		res.Unchecked = len(sc.order)
		return res, nil
	}
	absent, err := readAbsent(ctx, run, target, sc.order)
	if err != nil {
		return nil, err
	}
	res.Checked = len(sc.order)
	sc.unresolved(res, absent)
	return res, nil
}

// refScan is CheckReferences' pass over the records, a wave at a time:
// the keys the earlier waves create (created), and each value of an
// exists: field none of them creates, by entity and key, with its first
// use (uses), in the order first used (order), and the records that give
// them (givers).
type refScan struct {
	run     *Prepared
	cols    columnFinder    // the cells of fields, when the records know them
	targets map[string]bool // the entities exists: fields name
	created map[string]map[string]bool
	uses    map[string]map[string]*refUse
	order   []string // entity|key
	givers  []giver
}

// step reads the records of step s: the keys it creates of an entity an
// exists: field names (into made, for the waves after), and the values of
// its exists: fields.
func (sc *refScan) step(ctx context.Context, s *plan.Step, made map[string][]string) error {
	checks := len(allExists(s.Exists, s.Subforms)) > 0
	if !checks && !sc.targets[s.Entity] {
		return nil
	}
	var typ *odata.EntityType
	if es := sc.run.Metadata.EntitySet(s.Entity); es != nil {
		typ = es.Type
	}
	return sc.run.StandInRecords(ctx, s.Name, func(r transform.Result) error {
		rec := r.Record
		if rec == nil || len(r.Errors) > 0 {
			return nil // a row error: the run reports it
		}
		if sc.targets[s.Entity] {
			if k := odata.EntityKey(typ, rec.Fields); k != "" {
				made[s.Entity] = append(made[s.Entity], k)
			}
		}
		if !checks {
			return nil
		}
		me := -1 // this record's index in givers, once it gives a value
		visit := func(ex []*plan.Exists, navs []string, fields map[string]any, row source.Row) {
			for _, x := range ex {
				sc.use(s, rec, &me, x, navs, fields[x.Field], row)
			}
		}
		visit(s.Exists, nil, rec.Fields, rec.Row)
		walkExists(s.Subforms, rec.Children, nil, visit)
		return nil
	})
}

// use notes value v of exists: field x, given by record rec of step s
// (me: its index in givers, -1 until it gives one; navs: the sub-form it
// is in, row its source row), unless an earlier wave creates it.
func (sc *refScan) use(s *plan.Step, rec *transform.Record, me *int, x *plan.Exists, navs []string, v any, row source.Row) {
	es := sc.run.Metadata.EntitySet(x.Entity)
	if es == nil || es.Type == nil || len(es.Type.Key) != 1 {
		return // validate says so
	}
	k := odata.EntityKey(es.Type, map[string]any{es.Type.Key[0]: v})
	if k == "" || standIn("("+k+")") || sc.created[x.Entity][k] {
		return
	}
	if sc.uses[x.Entity] == nil {
		sc.uses[x.Entity] = map[string]*refUse{}
	}
	if *me < 0 {
		*me = len(sc.givers)
		sc.givers = append(sc.givers, giver{s.Name, rec.ID})
	}
	if u := sc.uses[x.Entity][k]; u != nil {
		u.count++
		if u.by[len(u.by)-1] != *me {
			u.by = append(u.by, *me)
		}
		return
	}
	cell := row.Loc.String()
	if sc.cols != nil {
		if c := sc.cols.FieldColumn(s.Name, navs, x.Field); c != "" {
			cell = row.CellRef(c)
		}
	}
	sc.uses[x.Entity][k] = &refUse{count: 1, by: []int{*me}, err: RecordError{Step: s.Name, Record: rec.ID, Location: cell,
		Field: x.Field, Value: fmt.Sprint(v), PlanLocation: x.Pos.String()}}
	sc.order = append(sc.order, x.Entity+"|"+k)
}

// unresolved puts into res the values the target does not hold either
// (absent, by entity|key), each at its first use, and counts by step the
// records that give one.
func (sc *refScan) unresolved(res *References, absent map[string]bool) {
	blocked := map[int]bool{}
	for _, ek := range sc.order {
		if !absent[ek] {
			continue
		}
		ent, k, _ := strings.Cut(ek, "|")
		u := sc.uses[ent][k]
		for _, g := range u.by {
			blocked[g] = true
		}
		e := u.err
		e.Message = fmt.Sprintf("%s %q is not in %s on the target, and no earlier step creates it", e.Field, e.Value, ent)
		if u.count > 1 {
			e.Message += fmt.Sprintf(" (given %d times in all)", u.count)
		}
		res.Unresolved = append(res.Unresolved, e)
	}
	sort.SliceStable(res.Unresolved, func(i, j int) bool { return res.Unresolved[i].Step < res.Unresolved[j].Step })
	for g := range blocked {
		if res.Records == nil {
			res.Records = map[string]int{}
		}
		res.Records[sc.givers[g].step]++
	}
}

// readAbsent looks each "ENTITY|key" up on the target, in batches of GETs
// that select the key alone; a 404 is absent once confirmed (a cold form's
// is not: confirmAbsent), any other refusal an error.
func readAbsent(ctx context.Context, run *Prepared, target Client, order []string) (map[string]bool, error) {
	absent := map[string]bool{}
	var warm read.Warmth
	send := read.Via(target)
	get := func(reqs []odata.BatchRequest) ([]odata.BatchResponse, error) { return send(ctx, reqs) }
	limit := min(newRunOptions(run, Options{}).limit(), read.PerBatch) // GETs a call: at most 100, whatever a call takes of writes
	for start := 0; start < len(order); start += limit {
		chunk := order[start:min(start+limit, len(order))]
		reqs := make([]odata.BatchRequest, len(chunk))
		for i, ek := range chunk {
			ent, k, _ := strings.Cut(ek, "|")
			sel := ""
			if es := run.Metadata.EntitySet(ent); es != nil && es.Type != nil {
				sel = "?$select=" + es.Type.Key[0]
			}
			reqs[i] = odata.BatchRequest{ID: strconv.Itoa(i + 1), Method: "GET", URL: odata.KeySegment(ent, k) + sel}
		}
		got, err := get(reqs)
		if err == nil {
			got, err = warm.ConfirmAbsent(reqs, got, get)
		}
		if err != nil {
			return nil, fmt.Errorf("%w: checking references: %w", ErrTargetRead, err)
		}
		for i, m := range got {
			switch {
			case m.Status == 404:
				absent[chunk[i]] = true
			case m.Status != 200:
				return nil, fmt.Errorf("checking references: GET %s: %s", reqs[i].URL, odata.ParseError(m.Status, nil, m.Body).Error())
			}
		}
	}
	return absent, nil
}

// walkExists calls visit for the exists: of each sub-form that has
// children, depth first.
func walkExists(subs []*plan.Subform, kids []*transform.Child, navs []string, visit func([]*plan.Exists, []string, map[string]any, source.Row)) {
	for _, sf := range subs {
		path := append(append([]string(nil), navs...), sf.Name)
		for _, c := range kids {
			if c.Nav != sf.Name {
				continue
			}
			visit(sf.Exists, path, c.Fields, c.Row)
			walkExists(sf.Subforms, c.Children, path, visit)
		}
	}
}

// allExists is every check of a step and its sub-forms.
func allExists(own []*plan.Exists, subs []*plan.Subform) []*plan.Exists {
	out := append([]*plan.Exists(nil), own...)
	for _, sf := range subs {
		out = append(out, allExists(sf.Exists, sf.Subforms)...)
	}
	return out
}

// standInRefs answers every ref() with a stand-in: the check reads the
// records before any is created, and a stand-in is no value to check.
type standInRefs struct{}

func (standInRefs) Ref(step, id string) (any, bool) { return "{" + step + ":" + id + "}", true }
func (standInRefs) Placeholders() bool              { return true }

// StandInRecords builds step's records from its source rows as every
// command does, each ref() a stand-in: for what reads the values the plan
// writes and not its keys (the reference check, verify's totals).
func (p *Prepared) StandInRecords(ctx context.Context, step string, fn func(transform.Result) error) error {
	return p.records.Records(ctx, step, p.open, standInRefs{}, fn)
}
