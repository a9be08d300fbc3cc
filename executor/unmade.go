package executor

import (
	"context"
	"fmt"
	"hash/maphash"
	"maps"
	"slices"
	"sync"

	"github.com/migrate-tool/migrate/internal/diag"
	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/plan"
	"github.com/migrate-tool/migrate/source"
	"github.com/migrate-tool/migrate/transform"
)

// unmadeRefs is the dry run's look at what a record names by key: a field
// named as another step's entity's one key field (an order line's PARTNAME
// names a part of LOGPART), as trialPast finds them, or as the one key
// field of an entity no step makes (a part's FAMILYNAME names a part
// family of FAMILY_LOG; a name that keys several entity sets names none
// for sure, and is left alone). A value that no
// step of that entity makes, and that no exists: check or lookup() reads
// from the target, is one the dry run cannot judge: the server takes its
// record only if the company holds it. The dry run counts the record
// loaded, and says so, one warning per field and entity named (warnings),
// so that its "every record" is not a promise it cannot keep.
//
// The keys are kept as 64-bit hashes, within a share of the memory budget
// (cap): past it, the entity's values are not looked at, and the warnings
// say so.
type unmadeRefs struct {
	seed   maphash.Seed
	keyOf  map[string]string // step → the key field later steps name it by
	entity map[string]string // step → its entity
	makers map[string]int    // entity → how many steps make keys of it
	// unmade are the entities no step makes, with their one key field:
	// every value of that field names one.
	unmade []unmadeSet
	// skip are the fields (step, field) the run checks or reads from the
	// target already: an exists: check, a lookup().
	skip map[[2]string]bool
	cap  int // keys kept in all
	// standard: the target is a standard OData service, which the
	// warnings name as what must hold the values no step makes (holderOf).
	standard bool

	mu       sync.Mutex
	kept     int
	finished map[string][]*madeKeys // entity → its steps read to their end
	tooMany  map[string]bool        // entity → its keys passed cap
	more     bool                   // values no step makes passed cap: not all counted
	found    map[[3]string]*unmade  // (step, field, entity named)
	order    [][3]string
	// version counts the steps done; looked is, per step whose records
	// are looked at, the key sets they are looked up in as of a version.
	version int
	looked  map[string]lookedAt
}

// lookedAt is the key sets a step's records are looked up in, one slice
// per entity named, as of version.
type lookedAt struct {
	version int
	sets    [][]*madeKeys
}

// madeKeys are the keys one step's records make.
type madeKeys struct {
	step, field string
	keys        map[uint64]struct{}
}

// unmade is what one field of one step names that no step makes: the
// distinct values (their hashes), and the first with its record's place.
type unmade struct {
	values     map[uint64]struct{}
	value, loc string
}

// keyShare is the bytes of the memory budget a kept key is allowed: a
// 64-bit hash in a Go map takes some 20-40.
const keyShare = 256

// newUnmadeRefs is the look of a dry run of p (nil when no step names
// another's key).
func newUnmadeRefs(p *Prepared) *unmadeRefs {
	if p.program == nil {
		return nil
	}
	named := newTrialPast(p.Plan, p.Metadata)
	unmade := madeByNoStep(p.Plan, p.Metadata)
	if len(named.keyOf) == 0 && len(unmade) == 0 {
		return nil
	}
	memory := p.memory
	if memory <= 0 {
		memory = DefaultMemory
	}
	entity := map[string]string{}
	for _, s := range p.Plan.Steps {
		entity[s.Name] = s.Entity
	}
	u := newLook(named.keyOf, entity, int(memory/keyShare))
	u.unmade = unmade
	u.standard = p.Version.Standard
	for _, use := range p.program.Uses() {
		if use.Exists != "" || use.Lookup != "" {
			u.skip[[2]string{use.Step, use.Field}] = true
		}
	}
	return u
}

// Unloaded are the entity sets of the metadata that no step of the plan
// loads, by their one key field (where no other set has that key): a
// step's field of that name names a record the company must hold, as the
// dry run's look at values no step makes takes it (a part's FAMILYNAME
// names a FAMILY_LOG). migrate profile checks those against the target.
func (p *Prepared) Unloaded() map[string]string {
	out := map[string]string{}
	for _, us := range madeByNoStep(p.Plan, p.Metadata) {
		out[us.key] = us.set
	}
	return out
}

// unmadeSet is an entity set no step makes, and its one key field.
type unmadeSet struct{ set, key string }

// madeByNoStep are the entity sets of md that no step of p makes, with
// their one key field where no other set (made or not) has that key, in
// the order of the keys' names.
func madeByNoStep(p *plan.Plan, md *odata.Metadata) []unmadeSet {
	if md == nil {
		return nil
	}
	made := map[string]bool{}
	for _, s := range p.Steps {
		made[s.Entity] = true
	}
	sets := map[string][]string{} // key field → the sets it keys
	for _, es := range md.Sets {
		if es.Type != nil && len(es.Type.Key) == 1 {
			k := es.Type.Key[0]
			sets[k] = append(sets[k], es.Name)
		}
	}
	var out []unmadeSet
	for _, k := range slices.Sorted(maps.Keys(sets)) {
		if names := sets[k]; len(names) == 1 && !made[names[0]] {
			out = append(out, unmadeSet{set: names[0], key: k})
		}
	}
	return out
}

// newLook is an empty look at the keys keyOf names (step → key field),
// of steps of entity (step → entity), keeping at most cap keys.
func newLook(keyOf, entity map[string]string, cap int) *unmadeRefs {
	u := &unmadeRefs{seed: maphash.MakeSeed(), keyOf: keyOf, entity: entity, makers: map[string]int{},
		skip: map[[2]string]bool{}, cap: cap, finished: map[string][]*madeKeys{}, tooMany: map[string]bool{},
		found: map[[3]string]*unmade{}, looked: map[string]lookedAt{}}
	for step := range keyOf {
		u.makers[entity[step]]++
	}
	return u
}

func (u *unmadeRefs) hash(v any) uint64 { return maphash.String(u.seed, fmt.Sprint(v)) }

// collecting reads a step's records through inner and keeps the keys they
// make (records built without a row error) once the step is read to its
// end.
type collecting struct {
	inner RecordSource
	look  *unmadeRefs
}

func (c collecting) Records(ctx context.Context, step string, open transform.Opener, refs transform.Refs, fn func(transform.Result) error) error {
	u := c.look
	field := u.keyOf[step]
	if field == "" {
		return c.inner.Records(ctx, step, open, refs, fn)
	}
	made := &madeKeys{step: step, field: field, keys: map[uint64]struct{}{}}
	err := c.inner.Records(ctx, step, open, refs, func(r transform.Result) error {
		if len(r.Errors) == 0 && !r.Skipped && r.Record != nil {
			if v, ok := r.Record.Fields[field]; ok && v != nil {
				made.keys[u.hash(v)] = struct{}{}
			}
		}
		return fn(r)
	})
	if err == nil {
		u.done(made)
	}
	return err
}

// done makes a step's keys count: its records are all read. Past the cap,
// its entity is not looked at.
func (u *unmadeRefs) done(m *madeKeys) {
	u.mu.Lock()
	defer u.mu.Unlock()
	e := u.entity[m.step]
	u.version++
	u.kept += len(m.keys)
	if u.kept > u.cap {
		u.tooMany[e] = true
		delete(u.finished, e)
		u.kept -= len(m.keys)
		return
	}
	if !u.tooMany[e] {
		u.finished[e] = append(u.finished[e], m)
	}
}

// note looks at a record of step that apply would send: each value it
// names that no step of the entity it names makes, once every such step
// is read to its end (before that, nothing can be told).
func (u *unmadeRefs) note(step string, rec *transform.Record) {
	if u == nil || rec == nil {
		return
	}
	u.mu.Lock()
	at, ok := u.looked[step]
	if !ok || at.version != u.version {
		at = lookedAt{version: u.version}
		for e, ms := range u.finished {
			if e != u.entity[step] && len(ms) == u.makers[e] && !u.skip[[2]string{step, ms[0].field}] {
				at.sets = append(at.sets, ms)
			}
		}
		u.looked[step] = at
	}
	sets := at.sets
	u.mu.Unlock()
	if len(sets) == 0 && len(u.unmade) == 0 {
		return
	}
	// loc is where the fields are: the record's row, or a line's own (a
	// sub-form read from a source of its own).
	var look func(fields map[string]any, kids []*transform.Child, loc source.Location)
	look = func(fields map[string]any, kids []*transform.Child, loc source.Location) {
		for _, us := range u.unmade {
			if v, ok := fields[us.key]; ok && v != nil && !u.skip[[2]string{step, us.key}] {
				u.add([3]string{step, us.key, us.set}, u.hash(v), v, loc)
			}
		}
		for _, ms := range sets {
			v, ok := fields[ms[0].field]
			if !ok || v == nil {
				continue
			}
			h := u.hash(v)
			if !slices.ContainsFunc(ms, func(m *madeKeys) bool { _, ok := m.keys[h]; return ok }) {
				u.add([3]string{step, ms[0].field, u.entity[ms[0].step]}, h, v, loc)
			}
		}
		for _, c := range kids {
			at := c.Loc
			if at.File == "" {
				at = loc
			}
			look(c.Fields, c.Children, at)
		}
	}
	look(rec.Fields, rec.Children, rec.Loc)
}

// add files a value v (its hash h) that no step makes. Its distinct
// values are kept apart within the cap, with the keys the steps make;
// past it, a new one is not counted, and the count says it is a lower
// bound (more).
func (u *unmadeRefs) add(at [3]string, h uint64, v any, loc source.Location) {
	u.mu.Lock()
	defer u.mu.Unlock()
	m := u.found[at]
	if m == nil {
		m = &unmade{values: map[uint64]struct{}{}, value: fmt.Sprint(v), loc: loc.String()}
		u.found[at] = m
		u.order = append(u.order, at)
	}
	if _, ok := m.values[h]; ok {
		return
	}
	if u.kept >= u.cap && len(m.values) > 0 {
		u.more = true
		return
	}
	m.values[h] = struct{}{}
	u.kept++
}

// count is how many distinct values the look found for each field, added
// up; more: there were others, past the cap, not counted.
func (u *unmadeRefs) count() (n int, more bool) {
	if u == nil {
		return 0, false
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	for _, m := range u.found {
		n += len(m.values)
	}
	return n, u.more
}

// warnings are what the look found, a warning per field and entity named,
// at the first record that names such a value; and a note of each entity
// whose keys were too many to look at.
func (u *unmadeRefs) warnings() []diag.Diagnostic {
	if u == nil {
		return nil
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	var out []diag.Diagnostic
	for _, at := range u.order {
		m := u.found[at]
		step, field, entity := at[0], at[1], at[2]
		more := ""
		switch n := len(m.values) - 1; {
		case u.more:
			// Some field's values passed the cap: this one's may have.
			more = fmt.Sprintf(" (and %d or more other values: more than --memory keeps apart were named)", n)
		case n > 0:
			more = fmt.Sprintf(" (and %s)", diag.Count(n, "other value", "other values"))
		}
		d := diag.New(diag.Warning, diag.ParseRange(m.loc), fmt.Sprintf(
			"%s %q names a %s that no step of the plan creates%s, and nothing checks %[5]s for it: its record is counted as loading, which holds only if %[5]s has it (add exists: {%[1]s: %[3]s} to step %[6]s to check before anything is sent)",
			field, m.value, entity, more, holderOf(u.standard), step))
		d.Step, d.Field, d.Value = step, field, m.value
		out = append(out, d)
	}
	for _, e := range slices.Sorted(maps.Keys(u.tooMany)) {
		out = append(out, diag.New(diag.Warning, diag.Range{}, fmt.Sprintf(
			"the values records name of %s were not looked at: its steps make more keys than the memory budget keeps for the look (--memory); a value no step creates is counted as loading all the same (exists: checks them)", e)))
	}
	return out
}
