package transform

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/migrate-tool/migrate/plan"
	"github.com/migrate-tool/migrate/source"
)

// A mapping file holds the values of the plan's file maps
// (units: {file: mapping.xlsx}): one row per map and source value, with
// the target value it becomes and whether a person confirmed it. migrate
// mapping writes it; the plan reads it. Its columns, in this order:
const (
	ColMap       = "map"
	ColSource    = "source"
	ColCount     = "count"
	ColCells     = "cells"
	ColTarget    = "target"
	ColConfirmed = "confirmed"
)

// MapFileColumns are a mapping file's columns, in the order migrate mapping
// writes them. count and cells are for the person who confirms; the plan
// reads map, source, target and confirmed.
var MapFileColumns = []string{ColMap, ColSource, ColCount, ColCells, ColTarget, ColConfirmed}

var mapFileNeeds = []string{ColMap, ColSource, ColTarget, ColConfirmed}

// MapRow is one row of a mapping file.
type MapRow struct {
	Map, Source string
	Count       int    // 0 when blank
	Cells       string // the first cells that give the value, as written
	Target      string
	Confirmed   bool
	Loc         source.Location
}

// Confirmed reads a confirmed cell: yes, y, true, x or 1 in any case
// (a ticked box as spreadsheets and people write it) confirm the row;
// anything else, a blank cell included, does not.
func Confirmed(s string) bool {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "yes", "y", "true", "x", "1":
		return true
	}
	return false
}

// ReadMapFile reads every row of the mapping file at path (name is how the
// plan writes it, for locations): a .csv (UTF-8) or the first sheet of an
// .xlsx, whose header holds at least map, source, target and confirmed.
func ReadMapFile(path, name string) ([]MapRow, error) {
	rd, err := source.Open(source.Options{Name: name, Path: path})
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	h := rd.Header()
	var missing []string
	col := map[string]int{}
	for _, c := range MapFileColumns {
		if i, ok := h.Index(c); ok {
			col[c] = i
		} else if slices.Contains(mapFileNeeds, c) {
			missing = append(missing, c)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("%s is no mapping file: it has no column %s (a mapping file has the columns %s; migrate mapping writes one)",
			name, strings.Join(missing, ", "), strings.Join(MapFileColumns, ", "))
	}
	var rows []MapRow
	for {
		row, err := rd.Next()
		if errors.Is(err, io.EOF) {
			return rows, nil
		}
		if err != nil {
			return nil, err
		}
		cell := func(c string) string {
			i, ok := col[c]
			if !ok || i >= len(row.Cells) {
				return ""
			}
			s, _ := asText(row.Cells[i])
			return s
		}
		r := MapRow{Map: strings.TrimSpace(cell(ColMap)), Source: cell(ColSource), Cells: cell(ColCells),
			Target: cell(ColTarget), Confirmed: Confirmed(cell(ColConfirmed)), Loc: row.Loc}
		if !source.IsWorkbook(path) {
			r.Source, r.Target = unquoteFormula(r.Source), unquoteFormula(r.Target)
		}
		if r.Map == "" && r.Source == "" && r.Target == "" {
			continue // a blank line
		}
		r.Count, _ = strconv.Atoi(strings.TrimSpace(cell(ColCount)))
		rows = append(rows, r)
	}
}

// unquoteFormula undoes what the tool's CSV writer does to a cell that a
// spreadsheet program would run as a formula ("-" is written "'-"), so that
// the value migrate mapping wrote is the value the plan reads back.
func unquoteFormula(s string) string {
	if len(s) > 1 && s[0] == '\'' && strings.ContainsRune("=+-@\t\r", rune(s[1])) {
		return s[1:]
	}
	return s
}

// LoadMapFiles reads the mapping file of each file map of the plan and
// checks its shape: its columns, and one row per source value of a map.
// Which values are confirmed is the data's business (a value the file
// lacks or has unconfirmed is refused where rows are read).
func (p *Program) LoadMapFiles() plan.Diagnostics {
	var ds plan.Diagnostics
	for _, m := range p.plan.Maps {
		if m.File == "" {
			continue
		}
		vm := p.maps[m.Name]
		rows, err := ReadMapFile(p.plan.File(m.File), m.File)
		if err != nil {
			ds = append(ds, plan.Diagnostic{Pos: m.FilePos, Message: fmt.Sprintf("map %s: %v", quote(m.Name), err)})
			continue
		}
		seen := map[string]source.Location{}
		for _, r := range rows {
			if r.Map != m.Name {
				continue
			}
			if at, ok := seen[r.Source]; ok {
				ds = append(ds, plan.Diagnostic{Pos: m.FilePos, Message: fmt.Sprintf("map %s: %s gives the value %s twice, at %s and %s; keep one row",
					quote(m.Name), m.File, quote(r.Source), at, r.Loc)})
				continue
			}
			seen[r.Source] = r.Loc
			vm.keys = append(vm.keys, r.Source)
			if r.Confirmed && r.Target != "" {
				vm.values[r.Source] = r.Target
			} else {
				vm.pending[r.Source] = r
			}
		}
		if len(seen) == 0 {
			ds = append(ds, plan.Diagnostic{Pos: m.FilePos, Severity: plan.SeverityWarning,
				Message: fmt.Sprintf("map %s: %s has no row for it; run migrate mapping to list its values", quote(m.Name), m.File)})
		}
	}
	return ds
}
