package executor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/migrate-tool/migrate/plan"
	"github.com/migrate-tool/migrate/source"
	"github.com/migrate-tool/migrate/transform"
)

// MaxMapCells is how many cells a map value names: the first ones that
// give it.
const MaxMapCells = 3

// MapValue is one distinct value a map("NAME", row.X) call is given by
// the plan's sources: how many rows give it and the first
// cells that do.
type MapValue struct {
	Map   string
	Value string
	Count int
	Cells []string // the first MaxMapCells cells: parts.csv:4, book.xlsx!Parts!C17
	// Step, Field and Pos say where the plan first maps it.
	Step, Field string
	Pos         plan.Pos
}

// MapValues reads the source columns that map("NAME", row.X) calls read
// (a map whose value is computed, map("x", trim(row.X)), is not listed)
// and gives each distinct value of each map, in the order of the maps in
// the plan and of first appearance. Every row is read, whatever a step's
// when: says. Each source is read once.
func MapValues(ctx context.Context, run *Prepared) ([]MapValue, error) {
	if run.program == nil {
		return nil, nil
	}
	type col struct{ source, column string }
	uses := map[col][]transform.Use{}
	var order []col
	for _, u := range run.program.Uses() {
		if u.Map == "" {
			continue
		}
		k := col{u.Source, u.Column}
		if _, ok := uses[k]; !ok {
			order = append(order, k)
		}
		uses[k] = append(uses[k], u)
	}
	byMap := map[string]map[string]*MapValue{}
	seq := map[string][]*MapValue{}
	for _, src := range run.Plan.Sources {
		var columns []string
		for _, k := range order {
			if k.source == src.Name {
				columns = append(columns, k.column)
			}
		}
		if len(columns) == 0 {
			continue
		}
		if err := readMapColumns(ctx, run, src, columns, func(column, v, cell string) {
			for _, u := range uses[col{src.Name, column}] {
				if byMap[u.Map] == nil {
					byMap[u.Map] = map[string]*MapValue{}
				}
				mv := byMap[u.Map][v]
				if mv == nil {
					mv = &MapValue{Map: u.Map, Value: v, Step: u.Step, Field: u.Field, Pos: u.Pos}
					byMap[u.Map][v] = mv
					seq[u.Map] = append(seq[u.Map], mv)
				}
				mv.Count++
				if len(mv.Cells) < MaxMapCells && (len(mv.Cells) == 0 || mv.Cells[len(mv.Cells)-1] != cell) {
					mv.Cells = append(mv.Cells, cell)
				}
			}
		}); err != nil {
			return nil, err
		}
	}
	var out []MapValue
	for _, m := range run.Plan.Maps {
		for _, mv := range seq[m.Name] {
			out = append(out, *mv)
		}
	}
	return out, nil
}

// readMapColumns reads src's rows and gives fn each non-empty value of
// the columns with its cell.
func readMapColumns(ctx context.Context, run *Prepared, src *plan.Source, columns []string, fn func(column, v, cell string)) error {
	rd, err := run.open(src)
	if err != nil {
		return fmt.Errorf("source %s: %w", src.Name, err)
	}
	defer rd.Close()
	for n := 0; ; n++ {
		if n%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		row, err := rd.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			var se *source.Error
			if errors.As(err, &se) && se.RowOnly {
				continue // the run reports it as the row's error
			}
			return fmt.Errorf("source %s: %w", src.Name, err)
		}
		for _, column := range columns {
			i, ok := row.Header.Index(column)
			if !ok || i >= len(row.Cells) {
				continue
			}
			v, ok := transform.MapKey(row.Cells[i])
			if !ok || v == "" {
				continue
			}
			fn(column, v, row.CellRef(column))
		}
	}
}

// CheckMaps lists each value of a file map (units: {file: mapping.xlsx})
// that its mapping file does not give a confirmed target: once, at the
// first cell that gives it, with how many rows do. apply refuses to start
// over them; plan reports each row as an error.
func CheckMaps(ctx context.Context, run *Prepared) ([]RecordError, error) {
	file := false
	for _, m := range run.Plan.Maps {
		file = file || m.File != ""
	}
	if !file {
		return nil, nil
	}
	values, err := MapValues(ctx, run)
	if err != nil {
		return nil, err
	}
	var out []RecordError
	for _, mv := range values {
		msg := run.program.MapRefusal(mv.Map, mv.Value)
		if msg == "" {
			continue
		}
		if mv.Count > 1 {
			msg += fmt.Sprintf(" (given %d times: %s)", mv.Count, strings.Join(mv.Cells, ", "))
		}
		out = append(out, RecordError{Step: mv.Step, Location: mv.Cells[0], Field: mv.Field, Value: mv.Value, PlanLocation: mv.Pos.String(), Message: msg})
	}
	return out, nil
}
