package transform

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"io"

	"github.com/expr-lang/expr/vm"
	"github.com/migrate-tool/migrate/compare"
	"github.com/migrate-tool/migrate/plan"
	"github.com/migrate-tool/migrate/source"
)

// lookupTable is one lookup built in memory: key text → value, stored
// compactly for tables of millions of entries, and without a pointer the
// garbage collector would have to follow on every cycle: keys and text
// values one after another in two buffers with an end offset each, found
// by a 64-bit hash of the key (checked against the key itself; the keys
// of a rare collision go to a small map); other values (numbers, dates)
// on the side; and the line each entry came from.
type lookupTable struct {
	name    string
	missing string
	seed    maphash.Seed
	index   map[uint64]uint32 // hash of the key → entry
	collide map[string]uint32 // keys whose hash an earlier key has
	keys    []byte            // the keys, one after another
	keyEnds []uint32
	text    []byte // the text values, one after another
	ends    []uint32
	other   map[uint32]any // entries whose value is not text
	lines   []uint32       // the line (or sheet row) of each entry
	file    string         // the source's place (every entry comes from one)
	sheet   string
}

func newLookupTable(name, missing string) *lookupTable {
	return &lookupTable{name: name, missing: missing, seed: maphash.MakeSeed(), index: make(map[uint64]uint32)}
}

// find returns the entry of key.
func (t *lookupTable) find(key string) (uint32, bool) {
	if i, ok := t.index[maphash.String(t.seed, key)]; ok && t.key(i) == key {
		return i, true
	}
	i, ok := t.collide[key]
	return i, ok
}

func (t *lookupTable) key(i uint32) string {
	return string(span(t.keys, t.keyEnds, i))
}

// span is item i of buf, where item i ends at ends[i].
func span(buf []byte, ends []uint32, i uint32) []byte {
	start := uint32(0)
	if i > 0 {
		start = ends[i-1]
	}
	return buf[start:ends[i]]
}

// add adds an entry for a key it does not have. A text value past what
// the buffer can address is kept as it is.
func (t *lookupTable) add(key string, v any, loc source.Location) {
	i := uint32(len(t.ends))
	if s, ok := v.(string); ok && len(t.text)+len(s) < 1<<32-1 {
		t.text = append(t.text, s...)
	} else {
		if t.other == nil {
			t.other = make(map[uint32]any)
		}
		t.other[i] = v
	}
	t.ends = append(t.ends, uint32(len(t.text)))
	t.lines = append(t.lines, uint32(loc.Line))
	if i == 0 {
		t.file, t.sheet = loc.File, loc.Sheet
	}
	t.keys = append(t.keys, key...)
	t.keyEnds = append(t.keyEnds, uint32(len(t.keys)))
	h := maphash.String(t.seed, key)
	if _, taken := t.index[h]; !taken {
		t.index[h] = i
		return
	}
	if t.collide == nil {
		t.collide = make(map[string]uint32)
	}
	t.collide[key] = i
}

// get returns the value of key.
func (t *lookupTable) get(key string) (any, bool) {
	i, ok := t.find(key)
	if !ok {
		return nil, false
	}
	return t.value(i), true
}

func (t *lookupTable) value(i uint32) any {
	if v, ok := t.other[i]; ok {
		return v
	}
	return string(span(t.text, t.ends, i))
}

func (t *lookupTable) loc(i uint32) source.Location {
	return source.Location{File: t.file, Sheet: t.sheet, Line: int(t.lines[i])}
}

// BuildLookups reads each lookup's source once and builds its table. Call
// it once, before Records. A key met twice with different values is an
// error naming both rows; rows whose key is empty are ignored. All problems
// are returned together.
func (p *Program) BuildLookups(ctx context.Context, open Opener) error {
	tables := make(map[string]*lookupTable, len(p.lookups))
	var errs []error
	for _, lp := range p.lookups {
		build := p.buildLookup
		if lp.lookup.Entity != "" {
			build = p.buildTargetLookup
		}
		t, err := build(ctx, lp, open)
		if err != nil {
			errs = append(errs, err)
			if ctx.Err() != nil {
				break
			}
		}
		if t != nil {
			tables[lp.lookup.Name] = t
		}
	}
	p.tables.Store(&tables)
	return errors.Join(errs...)
}

func (p *Program) buildLookup(ctx context.Context, lp *lookupProg, open Opener) (*lookupTable, error) {
	l := lp.lookup
	if lp.source == nil || lp.key == nil || lp.value == nil {
		return nil, fmt.Errorf("lookup %s: not compiled (see the plan's diagnostics)", l.Name)
	}
	missing := l.Missing
	if missing == "" {
		missing = "error"
	}
	t := newLookupTable(l.Name, missing)
	rd, err := open(lp.source)
	if err != nil {
		return nil, fmt.Errorf("lookup %s: %w", l.Name, err)
	}
	defer rd.Close()
	if err := p.checkHeader("lookup "+l.Name, lp.source.Name, rd.Header()); err != nil {
		return nil, fmt.Errorf("lookup %s: %w", l.Name, err)
	}
	var machine vm.VM
	rowMap := make(map[string]any)
	env := map[string]any{"row": rowMap, "ref": refFunc(noRef)}
	var errs []error
	var lastHeader *source.Header
	var keys []string
	for n := 0; ; n++ {
		if n%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		row, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("lookup %s: %w", l.Name, err)
		}
		if p.wholeRow {
			fillRow(rowMap, row)
		}
		if row.Header != lastHeader {
			lastHeader, keys = row.Header, colVars(row.Header)
		}
		setRow(env, rowMap, row, keys)
		k, err := evalExpr(&machine, lp.key, env)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: lookup %s key: %s%s", locString(row.Loc), l.Name, evalMessage(err), evalPlace(err, lp.key)))
			continue
		}
		key, ok := asText(k)
		if !ok {
			errs = append(errs, fmt.Errorf("%s: lookup %s key is %s, not text", locString(row.Loc), l.Name, describe(k)))
			continue
		}
		if key == "" {
			continue
		}
		v, err := evalExpr(&machine, lp.value, env)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: lookup %s value: %s%s", locString(row.Loc), l.Name, evalMessage(err), evalPlace(err, lp.value)))
			continue
		}
		if i, ok := t.find(key); ok {
			if old := t.value(i); !sameValue(old, v) {
				errs = append(errs, fmt.Errorf("lookup %s: key %s has two values: %s at %s and %s at %s; keep one",
					l.Name, quote(key), describe(old), locString(t.loc(i)), describe(v), locString(row.Loc)))
			}
			continue
		}
		t.add(key, v, row.Loc)
	}
	return t, errors.Join(errs...)
}

// TargetReader reads the rows of a lookup that reads the target
// (lookups: NAME: {entity: ...}): fn is called with the key and value
// fields of each, as the service's JSON gives them.
type TargetReader func(ctx context.Context, l *plan.Lookup, fn func(key, value any) error) error

// ReadTarget sets how BuildLookups reads the lookups that read the
// target; without it they cannot be built (no target).
func (p *Program) ReadTarget(r TargetReader) { p.target = r }

// buildTargetLookup reads a lookup's entity from the target, once, with
// the missing: policy of source lookups. A key met twice with different
// values is an error, as in a source.
func (p *Program) buildTargetLookup(ctx context.Context, lp *lookupProg, _ Opener) (*lookupTable, error) {
	l := lp.lookup
	if p.target == nil {
		return nil, fmt.Errorf("%s: lookup %s reads %s on the target, and there is none (give --target, or --sandbox)", l.EntityPos, l.Name, l.Entity)
	}
	missing := l.Missing
	if missing == "" {
		missing = "error"
	}
	t := newLookupTable(l.Name, missing)
	loc := source.Location{File: l.Entity}
	var errs []error
	err := p.target(ctx, l, func(k, v any) error {
		if n, ok := v.(json.Number); ok {
			v = string(n)
		}
		key, ok := asText(k)
		if n, isNum := k.(json.Number); isNum {
			key, ok = string(n), true
		}
		if !ok || key == "" {
			return nil
		}
		if old, ok := t.get(key); ok {
			if !sameValue(old, v) {
				errs = append(errs, fmt.Errorf("lookup %s: key %s has two values in %s: %s and %s; give it a filter that keeps one",
					l.Name, quote(key), l.Entity, describe(old), describe(v)))
			}
			return nil
		}
		t.add(key, v, loc)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("lookup %s: reading %s: %w", l.Name, l.Entity, err)
	}
	return t, errors.Join(errs...)
}

// sameValue reports whether a lookup's key met twice has one value: as
// text (a value of a source and of the target alike), by the one rule.
func sameValue(a, b any) bool {
	ta, oka := asText(a)
	tb, okb := asText(b)
	return oka && okb && compare.Value(nil, ta, tb)
}

func noRef(step string, id any) (any, error) {
	return nil, fmt.Errorf("ref() cannot be used in a lookup")
}

// fnLookup implements lookup(name, key). An empty key gives an empty value.
func (p *Program) fnLookup(params ...any) (any, error) {
	if err := arity("lookup", params, 2, 2); err != nil {
		return nil, err
	}
	name, ok := params[0].(string)
	if !ok {
		return nil, argError("lookup", 1, "a lookup name", params[0])
	}
	key, ok := asText(params[1])
	if !ok {
		return nil, argError("lookup", 2, "a key (text or number)", params[1])
	}
	tp := p.tables.Load()
	if tp == nil {
		return nil, fmt.Errorf("lookup: the lookup tables were not built (BuildLookups)")
	}
	t := (*tp)[name]
	if t == nil {
		return nil, fmt.Errorf("lookup: unknown lookup %q", name)
	}
	if key == "" {
		return nil, nil
	}
	if v, ok := t.get(key); ok {
		return v, nil
	}
	switch t.missing {
	case "empty":
		return "", nil
	case "keep":
		return params[1], nil
	}
	return nil, &failError{fmt.Sprintf("no %s for %s", name, quote(key))}
}
