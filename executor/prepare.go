package executor

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/plan"
	"github.com/migrate-tool/migrate/source"
	"github.com/migrate-tool/migrate/source/odatasource"
	"github.com/migrate-tool/migrate/transform"
)

// DefaultMemory is what a run aims to stay under when Setup.Memory is 0.
const DefaultMemory = transform.DefaultMemory

// PageBytes is the size of a page of a service's answer that a run with
// the memory budget memory (0: DefaultMemory) reads at most, and of a
// batch it sends: a thirty-second (a page's rows decoded take a few times
// their JSON, several sources are read at once, and batches are in flight
// while pages are read). Measured: BENCHMARKS.md, CopyBigRows.
func PageBytes(memory int64) int {
	if memory <= 0 {
		memory = DefaultMemory
	}
	return int(memory / 32)
}

// Setup is what the command line hands the engine once it has connected:
// the loaded plan and what it was checked against. Prepare does the rest.
type Setup struct {
	// Plan is plan.Load's; Diagnostics what loading it and connecting
	// found (they are merged with Prepare's own, sorted, said once).
	Plan        *plan.Plan
	Diagnostics plan.Diagnostics
	// Metadata is the target's (its $metadata, a saved file, the sandbox's
	// demo schema); Version decides the batch limit.
	Metadata *odata.Metadata
	Version  odata.Version
	// Services are the plan's connections its sources read, by
	// name; none when the plan is checked offline.
	Services map[string]Service
	Getenv   func(string) string // env() in expressions; nil: none set
	Memory   int64               // 0: DefaultMemory
}

// Service is one connection of the plan: its client and its own metadata.
type Service struct {
	Client   *odata.Client
	Metadata *odata.Metadata
}

// Prepared is a plan made ready to run: compiled against the metadata,
// its sources' headers checked, its workbooks open. Every command that
// reads the plan's rows (DryRun, Diff, Apply, CheckReferences, the
// before-image of an export) runs on one. Close it when done.
type Prepared struct {
	Plan     *plan.Plan
	Metadata *odata.Metadata
	Version  odata.Version

	// records builds each step's records: program, or a test's own.
	records RecordSource
	program *transform.Program
	open    transform.Opener
	// files opens each workbook once for the whole command (headers,
	// lookups, steps), so its shared strings are read once.
	files    *source.Files
	services map[string]Service
	memory   int64 // the run's memory budget
}

// Prepare checks the plan's sources against it and the metadata and
// compiles it: the diagnostics are every problem found, warnings
// included, sorted and each said once. The prepared run is returned even
// when they hold errors (a command shows them and stops); it is nil only
// when s.Plan is.
func Prepare(ctx context.Context, s Setup) (*Prepared, plan.Diagnostics) {
	diags := append(plan.Diagnostics(nil), s.Diagnostics...)
	if s.Plan == nil {
		return nil, dedupe(diags)
	}
	p := s.Plan
	pr := &Prepared{Plan: p, Metadata: s.Metadata, Version: s.Version, files: &source.Files{}, services: s.Services, memory: s.Memory}
	pr.open = pr.opener(ctx)
	headers := map[string][]string{}
	diags = append(diags, checkServiceSources(p, s.Services, headers)...)
	for _, src := range p.Sources {
		if src.Connection != "" {
			continue // checked against its connection's metadata, above
		}
		r, err := pr.files.Open(sourceOptions(p.File(src.File), src))
		if err != nil {
			diags = append(diags, plan.Diagnostic{Pos: src.FilePos, Message: fmt.Sprintf("source %q: %v", src.Name, err)})
			continue
		}
		headers[src.Name] = r.Header().Names
		r.Close()
	}
	diags = append(diags, p.CheckColumns(headers)...)
	prog, tdiags := transform.Compile(p, s.Metadata, transform.Options{Getenv: s.Getenv, Memory: s.Memory})
	pr.program = prog
	if prog != nil {
		pr.records = prog
		diags = append(diags, prog.LoadMapFiles()...)
	}
	// An expression the plan could not parse is reported once, by the plan.
	seen := map[plan.Pos]bool{}
	for _, d := range diags {
		seen[d.Pos] = true
	}
	for _, d := range tdiags {
		if !seen[d.Pos] {
			diags = append(diags, d)
		}
	}
	diags = append(diags, p.CheckMetadata(s.Metadata, s.Version)...)
	return pr, dedupe(diags)
}

// WithRecords is p prepared with records of the caller's own (a test's)
// instead of its sources': nothing is checked or compiled.
func WithRecords(p *plan.Plan, md *odata.Metadata, v odata.Version, records RecordSource) *Prepared {
	return &Prepared{Plan: p, Metadata: md, Version: v, records: records}
}

// Close closes the workbooks the run opened. The services' clients are
// the caller's.
func (p *Prepared) Close() error {
	if p == nil {
		return nil
	}
	return p.files.Close()
}

// opener opens the plan's sources: files relative to the plan's folder,
// each workbook once, and the entities of its connections.
func (p *Prepared) opener(ctx context.Context) transform.Opener {
	return func(s *plan.Source) (source.Reader, error) {
		if s.Connection != "" {
			r, err := openService(ctx, p.services, s, p.memory)
			if err != nil {
				return nil, err // not a nil *odatasource.Reader in a non-nil interface
			}
			return r, nil
		}
		return p.files.Open(sourceOptions(p.Plan.File(s.File), s))
	}
}

// BuildLookups builds the plan's lookup tables once, before the rows are
// read: a source's from its rows, a target lookup's (lookups: NAME:
// {entity: ...}) by reading target, when there is one.
func (p *Prepared) BuildLookups(ctx context.Context, target *odata.Client) error {
	if p.program == nil {
		return nil
	}
	if target != nil {
		p.program.ReadTarget(TargetLookups(target, p.Metadata))
	}
	return p.program.BuildLookups(ctx, p.open)
}

// IsWorkbook reports whether file is read as a workbook (by its ending).
func IsWorkbook(file string) bool { return source.IsWorkbook(file) }

// Columns reads the header of the file s names (relative to the working
// directory, not a plan's folder), as a plan would read it: migrate init
// maps the columns it gives onto an entity's fields.
func Columns(s *plan.Source) ([]string, error) {
	r, err := source.Open(sourceOptions(s.File, s))
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return r.Header().Names, nil
}

// FirstRows reads the header and the first n rows of the file s names
// (relative to the working directory, as Columns), each cell as the
// reports write it: migrate init gives them to the first test it writes.
func FirstRows(s *plan.Source, n int) ([]string, [][]string, error) {
	r, err := source.Open(sourceOptions(s.File, s))
	if err != nil {
		return nil, nil, err
	}
	defer r.Close()
	var rows [][]string
	for len(rows) < n {
		row, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, nil, err
		}
		rows = append(rows, cellTexts(row.Cells))
	}
	return r.Header().Names, rows, nil
}

// sourceOptions turns a plan's source, its file at path, into the
// reader's options.
func sourceOptions(path string, s *plan.Source) source.Options {
	o := source.Options{
		Name:       s.File,
		Path:       path,
		Encoding:   s.Encoding,
		LazyQuotes: s.LazyQuotes,
		Sheet:      s.Sheet,
		HeaderRow:  s.HeaderRow,
	}
	if d := []rune(s.Delimiter); len(d) == 1 {
		o.Delimiter = d[0]
	} else if s.Delimiter == `\t` {
		o.Delimiter = '\t'
	}
	return o
}

// dedupe sorts the diagnostics and drops a repeat of the one before.
func dedupe(ds plan.Diagnostics) plan.Diagnostics {
	ds.Sort()
	out := ds[:0]
	for i, d := range ds {
		if i > 0 && d.Pos == ds[i-1].Pos && d.Message == ds[i-1].Message {
			continue
		}
		out = append(out, d)
	}
	return out
}

// checkServiceSources checks each source that reads a connection against
// that connection's metadata, and gives the columns it will have.
func checkServiceSources(p *plan.Plan, services map[string]Service, headers map[string][]string) plan.Diagnostics {
	var ds plan.Diagnostics
	for _, s := range p.Sources {
		sv, ok := services[s.Connection]
		if s.Connection == "" || !ok {
			continue
		}
		probs := odatasource.Check(sv.Metadata, s.Entity, s.Select, s.Expand, s.Filter)
		for _, pr := range probs {
			ds = append(ds, plan.Diagnostic{Pos: s.Spans.Value(pr.Key, s.Pos), Message: fmt.Sprintf("source %q (connection %s): %s", s.Name, s.Connection, pr.Message)})
		}
		if len(probs) == 0 {
			headers[s.Name] = odatasource.Columns(sv.Metadata.EntitySet(s.Entity).Type, s.Select, s.Expand)
		}
	}
	return ds
}

// openService opens a source that reads a connection's entity, its pages
// within a share of the run's memory budget (several sources are read at
// once: a step's, its linked sub-forms', the steps of a wave).
func openService(ctx context.Context, services map[string]Service, s *plan.Source, memory int64) (*odatasource.Reader, error) {
	sv, ok := services[s.Connection]
	if !ok {
		return nil, fmt.Errorf("source %s reads connection %s, which is not connected (an offline check cannot read it)", s.Name, s.Connection)
	}
	return odatasource.Open(ctx, odatasource.Options{
		Client: sv.Client, Metadata: sv.Metadata, Connection: s.Connection, Entity: s.Entity,
		Select: s.Select, Expand: s.Expand, Filter: s.Filter, PageBytes: PageBytes(memory),
	})
}

// Program is the compiled plan, nil when it did not compile: migrate
// profile asks it which column feeds which field.
func (p *Prepared) Program() *transform.Program {
	if p == nil {
		return nil
	}
	return p.program
}

// Open opens one of the plan's sources as a run reads it: a file relative
// to the plan's folder (each workbook once), or a connection's entity.
func (p *Prepared) Open(s *plan.Source) (source.Reader, error) { return p.open(s) }

// CellText is a source cell as the reports show it: a date cell as its
// day (2026-02-01, with the time when it has one), a number as stored.
func CellText(c source.Cell) string { return cellText(c) }
