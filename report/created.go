package report

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/migrate-tool/migrate/executor"
	"github.com/migrate-tool/migrate/journal"
)

// createdColumns follow the source's own columns in the created-keys file.
var createdColumns = []string{"step", "location", "record", "key", "sub-form", "line key"}

// CreatedStats says what CreatedKeys wrote.
type CreatedStats struct {
	Rows    int // source rows written
	Records int // committed records
	// NoRows is committed records the journal holds no source row for
	// (written by a version of migrate that did not keep them): each has
	// one line with its location and key only.
	NoRows int
}

// CreatedKeys writes every source row of the committed records of a
// journal beside the keys the server assigned: the record's entity key
// (ORDNAME, IVNUM, an auto-unique number) on each of its rows, and on a
// row that became a sub-form line, that line's key (KLINE). A record built
// from several rows (an order and its lines) gives one line per row, so
// legacy numbers map to the new ones. out ends in .xlsx (one sheet per
// step) or .csv (the union of the steps' columns, formula-like cells
// neutralised as in Report).
func CreatedKeys(journalPath, out string) (CreatedStats, error) {
	var stats CreatedStats
	st, err := journal.LoadReport(journalPath)
	if err != nil {
		return stats, err
	}
	var sheets []*table
	for _, name := range st.StepNames {
		ss := st.Steps[name]
		sh := &table{name: name}
		type line struct {
			row  *journal.Row
			cols []string
		}
		var lines []line
		for _, id := range ss.IDs {
			rec := ss.Records[id]
			if rec.Status() != journal.Committed || rec.Undone {
				continue
			}
			stats.Records++
			key := keyText(rec.Key)
			if len(rec.Keyed) == 0 {
				stats.NoRows++
				lines = append(lines, line{cols: []string{name, rec.Loc, id, key, "", ""}})
				continue
			}
			// One line per source row, in the order the record met them;
			// the rows that became keyed children say which and their key.
			var locs []string
			byLoc := map[string]*line{}
			navs, keys := map[string][]string{}, map[string][]string{}
			var header []string // a row without one has the previous row's
			for _, kr := range rec.Keyed {
				if kr.Header != nil {
					header = kr.Header
				}
				l := byLoc[kr.Loc]
				if l == nil {
					l = &line{}
					if kr.Cells != nil {
						l.row = &journal.Row{Header: header, Cells: kr.Cells}
					}
					byLoc[kr.Loc] = l
					locs = append(locs, kr.Loc)
				}
				if kr.Path != "" && kr.Key != "" {
					navs[kr.Loc] = append(navs[kr.Loc], kr.Nav)
					keys[kr.Loc] = append(keys[kr.Loc], keyText(kr.Key))
				}
			}
			for _, loc := range locs {
				l := byLoc[loc]
				l.cols = []string{name, loc, id, key, strings.Join(navs[loc], "; "), strings.Join(keys[loc], "; ")}
				lines = append(lines, *l)
			}
		}
		if len(lines) == 0 {
			continue
		}
		seen := map[string]bool{}
		for _, l := range lines {
			if l.row == nil {
				continue
			}
			for _, h := range l.row.Header {
				if !seen[h] {
					seen[h] = true
					sh.header = append(sh.header, h)
				}
			}
		}
		for _, l := range lines {
			var cells []string
			if l.row != nil {
				cells = alignRow(sh.header, l.row)
			}
			sh.rows = append(sh.rows, append(cells, l.cols...))
		}
		stats.Rows += len(sh.rows)
		sheets = append(sheets, sh)
	}
	return stats, writeTables(out, sheets, createdColumns)
}

// keyText is a key expression as a person reads it: a single key's value
// (SO26000001, 42), a composite key's NAME=value pairs.
func keyText(key string) string {
	switch v := executor.KeyValue(key).(type) {
	case nil:
		return ""
	case map[string]any:
		return FieldsText(v, ", ")
	default:
		return fmt.Sprint(v)
	}
}

// FieldsText writes fields as NAME=value in name order, joined by sep.
func FieldsText(m map[string]any, sep string) string {
	names := slices.Sorted(maps.Keys(m))
	parts := make([]string, len(names))
	for i, k := range names {
		parts[i] = fmt.Sprintf("%s=%v", k, m[k])
	}
	return strings.Join(parts, sep)
}
