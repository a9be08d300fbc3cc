package executor

import (
	"context"
	"fmt"
	"sync"

	"github.com/migrate-tool/migrate/internal/diag"
	"github.com/migrate-tool/migrate/transform"
)

// unmadeRefs is the dry run's look at what a record names by key: a field
// named as another step's entity's one key field (an order line's PARTNAME
// names a part of LOGPART), as trialPast finds them. A value that no
// record of that step makes, and that no exists: check or lookup() reads
// from the target, is one the dry run cannot judge: the server takes its
// record only if the company holds it. The dry run counts the record
// loaded, and says so, one warning per field and step named (unmadeRefs
// warnings), so that its "every record" is not a promise it cannot keep.
type unmadeRefs struct {
	keys *trialPast // every key each step's records make
	// skip are the fields (step, field) the run checks or reads from the
	// target already: an exists: check, a lookup().
	skip   map[[2]string]bool
	entity map[string]string // step → its entity
	makers map[string]int    // entity → how many steps make keys of it
	mu     sync.Mutex
	found  map[[3]string]*unmade // (step, field, a step of the entity named)
	order  [][3]string
}

// unmade is what one field of one step names that no step makes.
type unmade struct {
	count       int
	value, loc  string
	namedEntity string
}

// newUnmadeRefs is the look of a dry run of p (nil when no step names
// another's key).
func newUnmadeRefs(p *Prepared) *unmadeRefs {
	keys := newTrialPast(p.Plan, p.Metadata)
	if len(keys.keyOf) == 0 {
		return nil
	}
	u := &unmadeRefs{keys: keys, skip: map[[2]string]bool{}, entity: map[string]string{}, makers: map[string]int{}, found: map[[3]string]*unmade{}}
	for _, s := range p.Plan.Steps {
		u.entity[s.Name] = s.Entity
		if keys.keyOf[s.Name] != "" {
			u.makers[s.Entity]++
		}
	}
	for _, use := range p.program.Uses() {
		if use.Exists != "" || use.Lookup != "" {
			u.skip[[2]string{use.Step, use.Field}] = true
		}
	}
	return u
}

// collecting reads a step's records through inner and keeps the keys they
// make (records built without a row error) once the step is read to its
// end.
type collecting struct {
	inner RecordSource
	keys  *trialPast
}

func (c collecting) Records(ctx context.Context, step string, open transform.Opener, refs transform.Refs, fn func(transform.Result) error) error {
	keys := c.keys.collector(step)
	err := c.inner.Records(ctx, step, open, refs, func(r transform.Result) error {
		if len(r.Errors) == 0 && !r.Skipped {
			keys.add(r.Record)
		}
		return fn(r)
	})
	if err == nil {
		c.keys.done(keys)
	}
	return err
}

// note looks at a record of step that apply would send: each value it
// names that no step of the entity it names makes, once every such step
// is read to its end (before that, nothing can be told).
func (u *unmadeRefs) note(step string, rec *transform.Record) {
	if u == nil || rec == nil {
		return
	}
	u.keys.mu.Lock()
	sets := u.keys.finished
	u.keys.mu.Unlock()
	type named struct {
		field, step string
		sets        []*pastKeys
	}
	byEntity := map[string]*named{}
	for _, k := range sets {
		e := u.entity[k.step]
		if e == u.entity[step] || u.skip[[2]string{step, k.field}] {
			continue
		}
		if byEntity[e] == nil {
			byEntity[e] = &named{field: k.field, step: k.step}
		}
		byEntity[e].sets = append(byEntity[e].sets, k)
	}
	for e, n := range byEntity {
		if len(n.sets) < u.makers[e] {
			delete(byEntity, e) // a step of it is not read to its end yet
		}
	}
	var look func(fields map[string]any, kids []*transform.Child)
	look = func(fields map[string]any, kids []*transform.Child) {
		for _, n := range byEntity {
			v, ok := fields[n.field]
			if !ok || v == nil {
				continue
			}
			key := fmt.Sprint(v)
			made := false
			for _, k := range n.sets {
				made = made || k.keys[key]
			}
			if !made {
				u.add([3]string{step, n.field, n.step}, key, rec)
			}
		}
		for _, c := range kids {
			look(c.Fields, c.Children)
		}
	}
	look(rec.Fields, rec.Children)
}

func (u *unmadeRefs) add(at [3]string, value string, rec *transform.Record) {
	u.mu.Lock()
	defer u.mu.Unlock()
	m := u.found[at]
	if m == nil {
		m = &unmade{value: value, loc: rec.Loc.String(), namedEntity: u.entity[at[2]]}
		u.found[at] = m
		u.order = append(u.order, at)
	}
	m.count++
}

// count is how many values the look found.
func (u *unmadeRefs) count() int {
	if u == nil {
		return 0
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	n := 0
	for _, m := range u.found {
		n += m.count
	}
	return n
}

// warnings are what the look found, a warning per field and step named,
// at the first record that names such a value.
func (u *unmadeRefs) warnings() []diag.Diagnostic {
	if u == nil {
		return nil
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	var out []diag.Diagnostic
	for _, at := range u.order {
		m := u.found[at]
		step, field := at[0], at[1]
		more := ""
		if m.count > 1 {
			more = fmt.Sprintf(" (and %d more values)", m.count-1)
		}
		d := diag.New(diag.Warning, diag.ParseRange(m.loc), fmt.Sprintf(
			"%s %q names a %s that no step of the plan creates%s, and nothing checks the company for it: its record is counted as loading, which holds only if the company has it (add exists: {%s: %s} to step %s to check before anything is sent)",
			field, m.value, m.namedEntity, more, field, m.namedEntity, step))
		d.Step, d.Field, d.Value = step, field, m.value
		out = append(out, d)
	}
	return out
}
