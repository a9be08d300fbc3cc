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
	mu     sync.Mutex
	found  map[[3]string]*unmade // (step, field, step named)
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
	u := &unmadeRefs{keys: keys, skip: map[[2]string]bool{}, entity: map[string]string{}, found: map[[3]string]*unmade{}}
	for _, s := range p.Plan.Steps {
		u.entity[s.Name] = s.Entity
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
// names of a step read to its end that that step does not make.
func (u *unmadeRefs) note(step string, rec *transform.Record) {
	if u == nil || rec == nil {
		return
	}
	u.keys.mu.Lock()
	sets := u.keys.finished
	u.keys.mu.Unlock()
	var look func(fields map[string]any, kids []*transform.Child)
	look = func(fields map[string]any, kids []*transform.Child) {
		for _, k := range sets {
			if k.step == step || u.entity[k.step] == u.entity[step] || u.skip[[2]string{step, k.field}] {
				continue
			}
			v, ok := fields[k.field]
			if !ok || v == nil || k.keys[fmt.Sprint(v)] {
				continue
			}
			u.add([3]string{step, k.field, k.step}, fmt.Sprint(v), rec)
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
		step, field, named := at[0], at[1], at[2]
		more := ""
		if m.count > 1 {
			more = fmt.Sprintf(" (and %d more values)", m.count-1)
		}
		d := diag.New(diag.Warning, diag.ParseRange(m.loc), fmt.Sprintf(
			"%s %q names a %s that step %s does not create%s, and nothing checks the company for it: the dry run counts its record loaded, which holds only if the company has it (add exists: {%s: %s} to step %s to check before anything is sent)",
			field, m.value, m.namedEntity, named, more, field, m.namedEntity, step))
		d.Step, d.Field, d.Value = step, field, m.value
		out = append(out, d)
	}
	return out
}
