package profile

import (
	"context"
	"fmt"

	"github.com/migrate-tool/migrate/executor"
	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/plan"
	"github.com/migrate-tool/migrate/read"
	"github.com/migrate-tool/migrate/source"
	"github.com/migrate-tool/migrate/transform"
)

// FromPlan is what to profile in a prepared plan: every file source, each
// column with the fields it feeds (from the compiled plan: a field whose
// expression is row.X is the column's directly, any other reads it), the
// key columns (a key field of a step's entity, its id, its group_by), and
// the references its exists: checks and lookups make. A source that reads
// a connection is left out, saying so.
func FromPlan(pr *executor.Prepared) Options {
	p := pr.Plan
	var uses []transform.Use
	var lookups []transform.LookupKey
	if prog := pr.Program(); prog != nil {
		uses, lookups = prog.Uses(), prog.LookupKeys()
	}
	var opts Options
	for _, s := range p.Sources {
		in := Input{Name: s.Name, File: s.File, Decimal: decimal(p, s)}
		if s.Connection != "" {
			in.File = s.Connection + ":" + s.Entity
			in.Skipped = "reads " + s.Entity + " of connection " + s.Connection + ", not a file"
			opts.Sources = append(opts.Sources, in)
			continue
		}
		in.Open = func() (source.Reader, error) { return pr.Open(s) }
		for _, u := range uses {
			if u.Source == s.Name {
				in.Uses = append(in.Uses, use(u))
			}
		}
		opts.Sources = append(opts.Sources, in)
	}
	seen := map[string]bool{}
	addRef := func(r Ref) {
		k := fmt.Sprint(r.Source, "\x00", r.Column, "\x00", r.ToSource, "\x00", r.ToColumn, "\x00", r.ToEntity)
		if r.Source == r.ToSource && r.Column == r.ToColumn || seen[k] {
			return
		}
		seen[k] = true
		opts.Refs = append(opts.Refs, r)
	}
	unloaded := pr.Unloaded()
	for _, u := range uses {
		// A field named as the key of an entity no step loads names a
		// record the company must hold (the dry run's caveat): checked on
		// the target, as an exists: would be.
		if set := unloaded[u.Field]; set != "" && u.Direct && u.Exists == "" && u.Lookup == "" && sourceIsFile(p, u.Source) {
			addRef(Ref{Source: u.Source, Column: u.Column, ToEntity: set,
				Why: fmt.Sprintf("%s is the key of %s, which no step loads (%s)", u.Field, set, u.Pos)})
		}
		if u.Exists != "" {
			why := fmt.Sprintf("exists: %s: %s (%s)", u.Field, u.Exists, u.ExistsPos)
			key := u.Field
			if pr.Metadata != nil {
				if es := pr.Metadata.EntitySet(u.Exists); es != nil && es.Type != nil && len(es.Type.Key) == 1 {
					key = es.Type.Key[0]
				}
			}
			// The steps that create the entity: their key field's column.
			var also [][2]string
			for _, k := range uses {
				if k.Form == u.Exists && k.Field == key && isStepOf(p, k.Step, u.Exists) && sourceIsFile(p, k.Source) {
					addRef(Ref{Source: u.Source, Column: u.Column, ToSource: k.Source, ToColumn: k.Column, Why: why, Offline: true})
					also = append(also, [2]string{k.Source, k.Column})
				}
			}
			addRef(Ref{Source: u.Source, Column: u.Column, ToEntity: u.Exists, AlsoIn: also, Why: why})
		}
		if u.Lookup != "" {
			for _, l := range lookups {
				// A lookup with missing: empty or keep takes a missing key.
				if pl := lookupNamed(p, l.Name); pl != nil && pl.Missing != "" && pl.Missing != "error" {
					continue
				}
				if l.Name == u.Lookup && sourceIsFile(p, l.Source) {
					addRef(Ref{Source: u.Source, Column: u.Column, ToSource: l.Source, ToColumn: l.Column,
						Why: fmt.Sprintf("lookup(%q) (%s)", l.Name, u.Pos)})
				}
			}
		}
	}
	return opts
}

func use(u transform.Use) Use {
	out := Use{Column: u.Column, Step: u.Step, Form: u.Form, Field: u.Field, Direct: u.Direct, Plan: u.Pos.String(), Key: u.Key, Group: u.Group,
		Mandatory: u.Mandatory && u.Direct, When: u.When}
	if !u.Direct {
		out.Expr = u.Expr
	}
	if u.Prop != nil {
		out.Type, out.MaxLength = string(u.Prop.Type), u.Prop.MaxLength
	}
	return out
}

func isStepOf(p *plan.Plan, step, entity string) bool {
	s := p.Step(step)
	return s != nil && s.Entity == entity
}

func lookupNamed(p *plan.Plan, name string) *plan.Lookup {
	for _, l := range p.Lookups {
		if l.Name == name {
			return l
		}
	}
	return nil
}

func sourceIsFile(p *plan.Plan, name string) bool {
	for _, s := range p.Sources {
		if s.Name == name {
			return s.Connection == ""
		}
	}
	return false
}

// decimal is the separator of decimals in a source's text cells.
func decimal(p *plan.Plan, s *plan.Source) byte {
	for _, d := range []string{s.DecimalSeparator, p.Target.DecimalSeparator} {
		if d == "," || d == "." {
			return d[0]
		}
	}
	return '.'
}

// TargetKeys reads the key values of an entity set on the target, page by
// page (package read: a page that repeats rows or ignores the query stops
// the read): the entity must have a key of one field, as exists: requires.
func TargetKeys(c *odata.Client, md *odata.Metadata) func(ctx context.Context, entity string, each func(string)) error {
	return func(ctx context.Context, entity string, each func(string)) error {
		es := md.EntitySet(entity)
		if es == nil || es.Type == nil || len(es.Type.Key) != 1 {
			return fmt.Errorf("%s is not an entity set with a key of one field", entity)
		}
		key := es.Type.Key[0]
		return read.Each(ctx, c, read.Query{Set: entity, Type: es.Type, Select: []string{key}}, func(row map[string]any) error {
			each(executor.CellText(row[key]))
			return nil
		})
	}
}

// FileOptions say how to read one file given alone.
type FileOptions struct {
	Sheet     string // workbooks: default the first
	Delimiter rune   // CSV: default ','
	Decimal   byte   // '.' (default) or ','
	// Keys are columns whose values must be unique.
	Keys []string
}

// FromFile is what to profile in one file, without a plan: its columns,
// and as keys the ones named.
func FromFile(path string, o FileOptions) Options {
	in := Input{Name: path, File: path, Decimal: o.Decimal}
	in.Open = func() (source.Reader, error) {
		return source.Open(source.Options{Name: path, Path: path, Sheet: o.Sheet, Delimiter: o.Delimiter})
	}
	for _, k := range o.Keys {
		in.Uses = append(in.Uses, Use{Column: k, Field: "--key", Key: true, Direct: true})
	}
	return Options{Sources: []Input{in}}
}
