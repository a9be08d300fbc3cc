package sandbox

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math/big"
	"os"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/migrate-tool/migrate/internal/atomicfile"
	"github.com/migrate-tool/migrate/odata"
)

// record is one row of a form: its field values (string, int64,
// json.Number for decimals, bool, or nil) and its sub-forms.
type record struct {
	vals map[string]any
	subs map[string]*subform
}

// subform holds the lines of a collection sub-form, in key order, or the one
// object of a single sub-form.
type subform struct {
	lines []*record
	one   *record
}

type table struct {
	typ  *odata.EntityType
	rows map[string]*record
}

func newRecord() *record { return &record{vals: map[string]any{}, subs: map[string]*subform{}} }

func (r *record) sub(name string) *subform {
	sf := r.subs[name]
	if sf == nil {
		sf = &subform{}
		r.subs[name] = sf
	}
	return sf
}

// keyString identifies a record by its key values.
func keyString(t *odata.EntityType, vals map[string]any) string {
	var b strings.Builder
	for i, k := range t.Key {
		if i > 0 {
			b.WriteByte(0x1f)
		}
		fmt.Fprint(&b, vals[k])
	}
	return b.String()
}

// refuseKeyString is the key as Options.RefuseKey receives it.
func refuseKeyString(t *odata.EntityType, vals map[string]any) string {
	parts := make([]string, len(t.Key))
	for i, k := range t.Key {
		parts[i] = fmt.Sprint(vals[k])
	}
	return strings.Join(parts, ",")
}

func keyValues(t *odata.EntityType, vals map[string]any) []any {
	out := make([]any, len(t.Key))
	for i, k := range t.Key {
		out[i] = vals[k]
	}
	return out
}

func compareKeys(t *odata.EntityType, a, b *record) int {
	for _, k := range t.Key {
		if c := odata.CompareValues(a.vals[k], b.vals[k]); c != 0 {
			return c
		}
	}
	return 0
}

func (tb *table) sorted() []*record { return tb.sortedWhere(nil) }

// sortedWhere is sorted of the rows f keeps (nil: all): filtering before
// sorting keeps a keyed read of a large table fast.
func (tb *table) sortedWhere(f odata.Filter) []*record {
	if out, ok := tb.byKeys(f); ok {
		return out
	}
	out := make([]*record, 0, len(tb.rows))
	for _, r := range tb.rows {
		if f == nil || f.Match(r.vals) {
			out = append(out, r)
		}
	}
	sort.Slice(out, func(i, j int) bool { return compareKeys(tb.typ, out[i], out[j]) < 0 })
	return out
}

// byKeys answers a filter that is an or-chain of key equalities (a keyed
// read of many records) by looking each key up, as a server's
// index does, instead of matching every row: a read of 40 keys from
// 100,000 customers costs 40 lookups. ok is false for any other filter.
func (tb *table) byKeys(f odata.Filter) ([]*record, bool) {
	if f == nil || len(tb.typ.Key) != 1 {
		return nil, false
	}
	p := tb.typ.Property(tb.typ.Key[0])
	lits, ok := odata.Equalities(f, p.Name)
	if !ok {
		return nil, false
	}
	var out []*record
	seen := map[*record]bool{}
	for _, lit := range lits {
		v, ok := normalize(p, lit)
		if !ok {
			return nil, false
		}
		if r := tb.rows[keyString(tb.typ, map[string]any{p.Name: v})]; r != nil && !seen[r] && f.Match(r.vals) {
			seen[r] = true
			out = append(out, r)
		}
	}
	sort.Slice(out, func(i, j int) bool { return compareKeys(tb.typ, out[i], out[j]) < 0 })
	return out, true
}

// insertLine puts rec into the lines in key order.
func insertLine(t *odata.EntityType, sf *subform, rec *record) {
	i := sort.Search(len(sf.lines), func(i int) bool { return compareKeys(t, sf.lines[i], rec) > 0 })
	sf.lines = append(sf.lines, nil)
	copy(sf.lines[i+1:], sf.lines[i:])
	sf.lines[i] = rec
}

// normalize converts a JSON value (decoded with UseNumber) to the stored
// form of p's type, or says why it cannot.
func normalize(p *odata.Property, v any) (any, bool) {
	if v == nil {
		return nil, true
	}
	switch p.Type {
	case odata.EdmString:
		s, ok := v.(string)
		return s, ok
	case odata.EdmInt64:
		switch x := v.(type) {
		case json.Number:
			n, err := x.Int64()
			return n, err == nil
		case int64:
			return x, true
		case float64:
			if x == float64(int64(x)) {
				return int64(x), true
			}
		}
		return nil, false
	case odata.EdmDecimal:
		switch x := v.(type) {
		case json.Number:
			if r, ok := new(big.Rat).SetString(string(x)); ok && !strings.ContainsAny(string(x), "eE") {
				if p.HasScale && scaleOf(string(x)) > p.Scale {
					// Real servers round to the field's Scale (quirk real-metadata).
					return json.Number(r.FloatString(p.Scale)), true
				}
				return x, true
			}
			if f, err := x.Float64(); err == nil {
				return json.Number(big.NewFloat(f).Text('f', -1)), true
			}
		case float64:
			return json.Number(big.NewFloat(x).Text('f', -1)), true
		case int64:
			return json.Number(fmt.Sprint(x)), true
		}
		return nil, false
	case odata.EdmDateTimeOffset:
		s, ok := v.(string)
		if !ok {
			return nil, false
		}
		t, err := time.Parse(time.RFC3339, s)
		if err != nil {
			return nil, false
		}
		if p.DateOnly {
			// A date-only field keeps the day of the moment in the server's
			// time zone (UTC here), as a server with TZSERVER does in its
			// own: a midnight sent with +14:00 lands on the day before.
			y, m, d := t.UTC().Date()
			return odata.FormatDateTime(time.Date(y, m, d, 0, 0, 0, 0, time.UTC)), true
		}
		return s, true
	case odata.EdmBoolean:
		b, ok := v.(bool)
		return b, ok
	}
	return v, true
}

// scaleOf counts the digits after the point of a JSON number's text.
func scaleOf(num string) int {
	_, frac, _ := strings.Cut(num, ".")
	return len(frac)
}

func runeLen(s string) int { return utf8.RuneCountInString(s) }

// jsonValue is a stored value as encoding/json writes it.
func jsonValue(v any) any { return v }

// snapshotRecord renders a record with every sub-form nested under its
// name: collections as []map[string]any, single objects as map[string]any.
// asJSON turns numbers into float64, as encoding/json shows them.
func snapshotRecord(m *odata.Metadata, t *odata.EntityType, r *record, asJSON bool) map[string]any {
	out := make(map[string]any, len(r.vals)+len(r.subs))
	for _, p := range t.Properties {
		v := r.vals[p.Name]
		if asJSON {
			switch x := v.(type) {
			case int64:
				v = float64(x)
			case json.Number:
				v, _ = x.Float64()
			}
		}
		out[p.Name] = v
	}
	for _, n := range t.Navigations {
		sf := r.subs[n.Name]
		if sf == nil {
			continue
		}
		nt := m.Type(n.Type)
		if nt == nil {
			continue
		}
		if n.Collection {
			lines := make([]map[string]any, 0, len(sf.lines))
			for _, l := range sf.lines {
				lines = append(lines, snapshotRecord(m, nt, l, asJSON))
			}
			if len(lines) > 0 {
				out[n.Name] = lines
			}
		} else if sf.one != nil {
			out[n.Name] = snapshotRecord(m, nt, sf.one, asJSON)
		}
	}
	return out
}

// stateFile is the persisted form of the sandbox's data. Version 1 held
// one company's Counters and Data (demo's); version 2 holds Companies.
type stateFile struct {
	Version   int                      `json:"version"`
	Companies map[string]*companyState `json:"companies,omitempty"`
	companyState
}

type companyState struct {
	Counters map[string]int64            `json:"counters,omitempty"`
	Data     map[string][]map[string]any `json:"data,omitempty"`
}

// snapshotLocked returns every set's records of co; the caller holds s.mu.
func (s *Server) snapshotLocked(co *company, asJSON bool) map[string][]map[string]any {
	out := make(map[string][]map[string]any, len(co.data))
	for _, set := range s.meta.Sets {
		tb := co.data[set.Name]
		rows := tb.sorted()
		list := make([]map[string]any, 0, len(rows))
		for _, r := range rows {
			list = append(list, snapshotRecord(s.meta, tb.typ, r, asJSON))
		}
		out[set.Name] = list
	}
	return out
}

// saveLocked writes the state atomically: a temporary file renamed over the
// old one. The caller holds s.mu.
func (s *Server) saveLocked() error {
	if s.opts.StatePath == "" || !s.dirty {
		return nil
	}
	st := stateFile{Version: 2, Companies: map[string]*companyState{}}
	for name, co := range s.companies {
		st.Companies[name] = &companyState{Counters: co.counters, Data: s.snapshotLocked(co, false)}
	}
	b, err := json.MarshalIndent(st, "", " ")
	if err != nil {
		return fmt.Errorf("sandbox state: %w", err)
	}
	if err := atomicfile.WriteFile(s.opts.StatePath, b, 0o600); err != nil {
		return fmt.Errorf("sandbox state: %w", err)
	}
	s.dirty = false
	return nil
}

// load reads the state file, when there is one.
func (s *Server) load() error {
	b, err := os.ReadFile(s.opts.StatePath)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("sandbox state: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var st stateFile
	if err := dec.Decode(&st); err != nil {
		return fmt.Errorf("sandbox state %s: %v (delete the file to start empty)", s.opts.StatePath, err)
	}
	if st.Version < 2 {
		st.Companies = map[string]*companyState{DefaultCompany: &st.companyState}
	}
	names := slices.Sorted(maps.Keys(st.Companies))
	if err := checkCompanies(names); err != nil {
		return fmt.Errorf("sandbox state %s: %v", s.opts.StatePath, err)
	}
	for _, name := range names {
		co := s.companies[name]
		if co == nil {
			co = s.newCompany(name)
		}
		if err := s.loadCompany(co, st.Companies[name]); err != nil {
			return err
		}
	}
	return nil
}

// loadCompany replaces co's data with what the state file holds of it.
func (s *Server) loadCompany(co *company, st *companyState) error {
	for name, c := range st.Counters {
		co.counters[name] = c
	}
	for set, rows := range st.Data {
		tb := co.data[set]
		if tb == nil {
			return fmt.Errorf("sandbox state %s: entity set %s is not in the schema", s.opts.StatePath, set)
		}
		tb.rows = make(map[string]*record, len(rows))
		for i, row := range rows {
			rec, err := s.loadRecord(tb.typ, row)
			if err != nil {
				return fmt.Errorf("sandbox state %s: company %s: %s record %d: %v", s.opts.StatePath, co.name, set, i+1, err)
			}
			tb.rows[keyString(tb.typ, rec.vals)] = rec
		}
		// A state written by hand may lack counters: never hand out an
		// auto-unique value a record already holds.
		for _, p := range tb.typ.Properties {
			if !p.Computed || p.Type != odata.EdmInt64 {
				continue
			}
			key := tb.typ.Name + "." + p.Name
			for _, r := range tb.rows {
				if n, _ := r.vals[p.Name].(int64); n > co.counters[key] {
					co.counters[key] = n
				}
			}
		}
	}
	return nil
}

func (s *Server) loadRecord(t *odata.EntityType, row map[string]any) (*record, error) {
	rec := newRecord()
	for name, v := range row {
		if p := t.Property(name); p != nil {
			nv, ok := normalize(p, v)
			if !ok {
				return nil, fmt.Errorf("field %s: %v is not a %s", name, v, p.Type)
			}
			if nv != nil {
				rec.vals[name] = nv
			}
			continue
		}
		n := t.Navigation(name)
		if n == nil {
			return nil, fmt.Errorf("%s is neither a field nor a sub-form of %s", name, t.Name)
		}
		nt := s.meta.Type(n.Type)
		if nt == nil {
			return nil, fmt.Errorf("sub-form %s has no type", name)
		}
		if n.Collection {
			list, _ := v.([]any)
			for _, l := range list {
				m, _ := l.(map[string]any)
				child, err := s.loadRecord(nt, m)
				if err != nil {
					return nil, err
				}
				insertLine(nt, rec.sub(name), child)
			}
		} else if m, ok := v.(map[string]any); ok {
			child, err := s.loadRecord(nt, m)
			if err != nil {
				return nil, err
			}
			rec.sub(name).one = child
		}
	}
	return rec, nil
}
