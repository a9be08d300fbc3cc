package export

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/migrate-tool/migrate/executor"
	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/plan"
	"github.com/migrate-tool/migrate/read"
	"github.com/migrate-tool/migrate/source"
	"github.com/migrate-tool/migrate/source/odatasource"
)

// Query is what an export reads: an entity of a service (the target
// or one of the plan's connections), the fields, sub-forms and rows.
type Query struct {
	Client   *odata.Client
	Metadata *odata.Metadata // the service's own
	// Service names it in locations and messages: a connection's name,
	// "" for the target.
	Service string
	Entity  string
	Select  []string // the fields; empty: every field
	Expand  []string // the sub-forms, each on a sheet of its own
	Filter  string   // a $filter, "" for every row
	// Memory is the budget the pages are read within (executor.PageBytes); 0:
	// executor.DefaultMemory.
	Memory int64
}

// QueryError is an export asked for what the service does not have: an
// entity, field or sub-form, or a filter it cannot read.
type QueryError struct {
	Service  string // "target", or the connection's name
	Problems []string
}

func (e *QueryError) Error() string { return e.Service + ": " + strings.Join(e.Problems, "; ") }

// ReadError is a service that failed an export's reading (unreachable,
// credentials refused, an answer that breaks the protocol), as opposed to
// a file that cannot be written.
type ReadError struct{ Err error }

func (e *ReadError) Error() string { return e.Err.Error() }
func (e *ReadError) Unwrap() error { return e.Err }

// Open opens the rows of q for Write. The key is always read,
// so that the sub-forms' sheets can name their parent. A query the
// metadata refuses is a *QueryError, a service that cannot be read a
// *ReadError.
func Open(ctx context.Context, q Query) (Export, error) {
	where := q.Service
	if where == "" {
		where = "target"
	}
	if probs := odatasource.Check(q.Metadata, q.Entity, q.Select, q.Expand, q.Filter); len(probs) > 0 {
		msgs := make([]string, len(probs))
		for i, p := range probs {
			msgs[i] = p.Message
		}
		return Export{}, &QueryError{Service: where, Problems: msgs}
	}
	t := q.Metadata.EntitySet(q.Entity).Type
	sel := q.Select
	if len(sel) > 0 {
		for i := len(t.Key) - 1; i >= 0; i-- {
			if !slices.Contains(sel, t.Key[i]) {
				sel = append([]string{t.Key[i]}, sel...)
			}
		}
	}
	rd, err := odatasource.Open(ctx, odatasource.Options{Client: q.Client, Metadata: q.Metadata, Connection: where, Entity: q.Entity, Select: sel, Expand: q.Expand, Filter: q.Filter, PageBytes: executor.PageBytes(q.Memory)})
	if err != nil {
		return Export{}, &ReadError{Err: err}
	}
	return Export{Rows: rd, Key: t.Key, Entity: Sheet{Name: q.Entity, Columns: odatasource.Columns(t, sel, nil)}, Subs: subSheets(q.Metadata, t, q.Expand)}, nil
}

// subSheets are the sheets of t's sub-forms expand: each line's fields.
func subSheets(md *odata.Metadata, t *odata.EntityType, expand []string) []Sheet {
	var out []Sheet
	for _, n := range expand {
		var cols []string
		if lt := md.Type(t.Navigation(n).Type); lt != nil {
			for _, p := range lt.Properties {
				cols = append(cols, p.Name)
			}
		}
		out = append(out, Sheet{Name: n, Columns: cols})
	}
	return out
}

// StepRowsError is a before-image that could not read the plan's own rows
// for the keys of a step's records: a data problem.
type StepRowsError struct{ Err error }

func (e *StepRowsError) Error() string { return e.Err.Error() }
func (e *StepRowsError) Unwrap() error { return e.Err }

// BeforeImage is what to export to keep the target's state before run is
// applied: for each step, the records it would write whose key it knows,
// as the target (client) holds them now, with the sub-forms the step
// writes. Records not on the target are not in it (there is nothing to
// keep of them); none at all is an empty list. The steps that name none
// of their records by key (documents the server numbers) are left out,
// named in left as "STEP (ENTITY)". A step's rows that cannot be read are
// a *StepRowsError.
func BeforeImage(ctx context.Context, run *executor.Prepared, client *odata.Client) (es []Export, left []string, err error) {
	for _, st := range run.Plan.Steps {
		e, ok, err := stepBeforeImage(ctx, run, client, st)
		if err != nil {
			for _, done := range es {
				done.Rows.Close()
			}
			return nil, nil, err
		}
		if ok {
			es = append(es, e)
		} else {
			left = append(left, st.Name+" ("+st.Entity+")")
		}
	}
	return es, left, nil
}

func stepBeforeImage(ctx context.Context, run *executor.Prepared, client *odata.Client, st *plan.Step) (Export, bool, error) {
	keys, err := run.StepKeys(ctx, st)
	if err != nil {
		return Export{}, false, &StepRowsError{Err: err}
	}
	t := run.Metadata.EntitySet(st.Entity).Type
	// Every sub-form the step writes, a text (one object) as much as lines.
	var expand []string
	for _, sf := range st.Subforms {
		if t.Navigation(sf.Name) != nil {
			expand = append(expand, sf.Name)
		}
	}
	exprs := make([]string, 0, len(keys))
	for _, vals := range keys {
		if k, err := odata.PathKey(t.Key, vals); err == nil {
			exprs = append(exprs, k)
		}
	}
	if len(exprs) == 0 {
		return Export{}, false, nil
	}
	rd := &read.Keys{Send: read.Via(client), Set: st.Entity, Type: t, Expand: expand}
	rows := &keyedExport{ctx: ctx, rd: rd, md: run.Metadata, header: source.NewHeader(odatasource.Columns(t, nil, expand)), keys: exprs, window: rd.Window()}
	return Export{Rows: rows, Key: t.Key, Entity: Sheet{Name: st.Entity, Columns: odatasource.Columns(t, nil, nil)}, Subs: subSheets(run.Metadata, t, expand)}, true, nil
}

// IsReadError reports whether err (from Write) is a service that
// failed the reading of the rows, rather than a file that could not be
// written.
func IsReadError(err error) bool {
	var re *ReadError
	var se *source.Error
	return errors.As(err, &re) || errors.As(err, &se)
}
