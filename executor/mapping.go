package executor

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/migrate-tool/migrate/internal/didyoumean"
	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/plan"
	"github.com/migrate-tool/migrate/transform"
)

// The notes migrate mapping writes in a mapping file's note column (the
// plan does not read it).
const (
	NoteNew     = "new"                    // not in the file written before
	NoteGone    = "not in the sources now" // in the file before, given by no row now
	NotePlan    = "in the plan"            // an inline map gives it
	NoteUnknown = "no such map in the plan"
)

// MappingColumns are the columns migrate mapping writes: the mapping
// file's, then a note for the person who confirms.
var MappingColumns = append(append([]string(nil), transform.MapFileColumns...), "note")

// MappingRow is one row migrate mapping writes.
type MappingRow struct {
	transform.MapRow
	Note string
	// Unbacked says why a proposed target is no code of the map's target:
	// entity (not among them, or they were not read); "" otherwise.
	Unbacked string
}

// Said is the row's note column: its note and why its proposed target
// is not one of the target's codes, as the person confirming reads them.
func (r MappingRow) Said() string {
	switch {
	case r.Unbacked == "":
		return r.Note
	case r.Note == "":
		return r.Unbacked
	}
	return r.Note + "; " + r.Unbacked
}

// Mapping lists every value of every map of the plan for a person to
// confirm: the values the sources give (values, from MapValues), merged
// with the mapping file written before (old; before says there was one).
// A value the old file has keeps its target and confirmation, with fresh
// counts and cells; a new one is proposed its own value in capitals (an
// inline map's own target, confirmed, when the plan gives it) and noted
// new when there was a file before; an old row no source gives now is
// kept, noted, so that no confirmation is lost. Rows follow the plan's
// maps, each in order of first appearance, then the old rows.
func Mapping(p *plan.Plan, values []MapValue, old []transform.MapRow, before bool, codes map[string][]string) []MappingRow {
	type key struct{ m, v string }
	prev := map[key]transform.MapRow{}
	for _, r := range old {
		if _, ok := prev[key{r.Map, r.Source}]; !ok {
			prev[key{r.Map, r.Source}] = r
		}
	}
	done := map[key]bool{}
	var out []MappingRow
	for _, m := range p.Maps {
		inline := map[string]string{}
		for _, e := range m.Entries {
			inline[e.Source] = e.Target
		}
		for _, mv := range values {
			if mv.Map != m.Name {
				continue
			}
			k := key{m.Name, mv.Value}
			done[k] = true
			r := MappingRow{MapRow: transform.MapRow{Map: m.Name, Source: mv.Value, Count: mv.Count, Cells: strings.Join(mv.Cells, ", ")}}
			// An inline map is what the load uses, whatever a file
			// written before says of the value.
			if t, ok := inline[mv.Value]; ok {
				r.Target, r.Confirmed, r.Note = t, true, NotePlan
			} else if o, ok := prev[k]; ok {
				r.Target, r.Confirmed = o.Target, o.Confirmed
			} else {
				r.Target = propose(mv.Value, codes[m.Name])
				r.Unbacked = unbacked(m, r.Target, codes)
				if before {
					r.Note = NoteNew
				}
			}
			out = append(out, r)
		}
	}
	for _, o := range old {
		k := key{o.Map, o.Source}
		if done[k] {
			continue
		}
		done[k] = true
		r := MappingRow{MapRow: o, Note: NoteGone}
		r.Count, r.Cells = 0, ""
		if p.Map(o.Map) == nil {
			r.Note = NoteUnknown
		}
		out = append(out, r)
	}
	return out
}

// unbacked says why target, proposed for a value of map m, is no code of
// the entity its target: names: the codes were not read (codes nil: no
// target), or it is not among them; "" when it is, or m names none.
func unbacked(m *plan.ValueMap, target string, codes map[string][]string) string {
	switch {
	case m.TargetEntity == "":
		return ""
	case codes == nil:
		return fmt.Sprintf("proposed in capitals: the codes of %s were not read (no target)", m.TargetEntity)
	case !slices.Contains(codes[m.Name], target):
		return fmt.Sprintf("not one of the codes of %s", m.TargetEntity)
	}
	return ""
}

// propose is a new value's proposed target: the nearest of the target's
// codes (the same but for case, else by edit distance) when the map names
// them, else the value itself in capitals.
func propose(v string, codes []string) string {
	if c := didyoumean.Nearest(v, codes); c != "" {
		return c
	}
	return strings.ToUpper(v)
}

// TargetCodes reads, for each file map whose target: names the target's
// codes ({entity: FAMILY_LOG, key: FAMILYNAME}), those codes from target,
// every page of them.
func TargetCodes(ctx context.Context, client *odata.Client, md *odata.Metadata, p *plan.Plan) (map[string][]string, error) {
	read := TargetLookups(client, md)
	out := map[string][]string{}
	for _, m := range p.Maps {
		if m.TargetEntity == "" || m.TargetKey == "" {
			continue
		}
		l := &plan.Lookup{Name: m.Name, Entity: m.TargetEntity, KeyField: m.TargetKey, ValueField: m.TargetKey}
		err := read(ctx, l, func(k, _ any) error {
			if s, ok := transform.MapKey(k); ok && s != "" {
				out[m.Name] = append(out[m.Name], s)
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("map %s: reading %s: %w", m.Name, m.TargetEntity, err)
		}
	}
	return out, nil
}

// ReadMapping reads the mapping file written before at out, if there is
// one (before): migrate mapping merges it into the file it writes again.
func ReadMapping(out string) (old []transform.MapRow, before bool, err error) {
	if _, err := os.Stat(out); errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	rows, err := transform.ReadMapFile(out, filepath.Base(out))
	if err != nil {
		return nil, false, fmt.Errorf("%s is there and cannot be read as a mapping file, so its confirmations would be lost: %w; move it away to begin again", out, err)
	}
	return rows, true, nil
}
