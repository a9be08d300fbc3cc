package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"

	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/plan"
	"github.com/migrate-tool/migrate/sandbox"
	"github.com/migrate-tool/migrate/source"
	"github.com/migrate-tool/migrate/transform"
)

// checkFlags are validate's flags; plan adds its own on top.
type checkFlags struct {
	conn     connFlags
	metadata string
	json     bool
	memory   memoryFlag // plan and apply only (registerMemory)
}

func (c *checkFlags) register(fs *flag.FlagSet) {
	c.conn.register(fs, true)
	fs.StringVar(&c.metadata, "metadata", "", "a saved $metadata file: check offline against it")
	fs.BoolVar(&c.json, "json", false, "print one JSON document on stdout")
}

// checked is a plan with everything validate found out about it.
type checked struct {
	plan     *plan.Plan
	md       *odata.Metadata
	version  odata.Version
	program  *transform.Program
	diags    plan.Diagnostics
	conn     *conn // nil when checked offline
	mdSource string
	// files opens the sources: each workbook once for the whole command
	// (headers, lookups, steps), so its shared strings are read once.
	files *source.Files
	// conns are the plan's connections its sources read (issue 17), by
	// name; none when checked offline.
	conns map[string]*connected
	ctx   context.Context
}

func (c *checked) Close() {
	c.conn.Close()
	c.files.Close()
	closeConnections(c.conns)
}

// opener opens the plan's sources: files relative to the plan's folder,
// and the entities of its connections.
func (c *checked) opener() transform.Opener {
	return func(s *plan.Source) (source.Reader, error) {
		if s.Connection != "" {
			return openService(c.ctx, c.conns, s)
		}
		return c.files.Open(sourceOptions(c.plan, s))
	}
}

// check runs everything validate does. It returns an error only when the
// plan cannot be checked at all (unreadable, or no metadata to be had).
func (a *app) check(ctx context.Context, path string, f checkFlags, needConn bool) (*checked, error) {
	p, diags := plan.Load(path)
	if p == nil || p.Hash == "" {
		// The file could not be read at all: exit 2, not a data problem.
		return &checked{diags: diags}, nil
	}
	c := &checked{plan: p, diags: diags, files: &source.Files{}, ctx: ctx}
	md, file, err := loadMetadataFile(f.metadata, p)
	if err != nil {
		return nil, err
	}
	declared, err := a.declaredVersion(f.conn, p)
	if err != nil {
		return nil, err
	}
	// Offline there is no server to ask: the declared version, else the
	// newest.
	offline := newest
	if declared.Known() {
		offline = declared
	}
	switch {
	case md != nil && !needConn:
		c.md, c.mdSource, c.version = md, file, offline
	case f.conn.sandbox && !needConn:
		c.md, c.mdSource, c.version = sandbox.DemoMetadata(), "the sandbox's demo schema", offline
	default:
		cn, v, err := a.connectVersion(ctx, f.conn, p)
		if err != nil {
			return nil, err
		}
		c.conn, c.version = cn, v
		if !c.version.Known() {
			c.diags = append(c.diags, unknownVersion(p))
		}
		if md != nil {
			c.md, c.mdSource = md, file
		} else {
			if c.md, _, err = cn.client.Metadata(ctx); err != nil {
				cn.Close()
				return nil, a.unreachable(cn, err)
			}
			c.mdSource = "the target's $metadata"
		}
	}
	// The connections are read unless the check is offline (a saved
	// $metadata): a dry run on --sandbox still reads the template company.
	if md == nil || needConn {
		if c.conns, err = a.connections(ctx, f.conn, p); err != nil {
			c.conn.Close()
			return nil, err
		}
	}
	headers := map[string][]string{}
	c.diags = append(c.diags, checkServiceSources(p, c.conns, headers)...)
	for _, s := range p.Sources {
		if s.Connection != "" {
			continue // checked against its connection's metadata, above
		}
		r, err := c.files.Open(sourceOptions(p, s))
		if err != nil {
			c.diags = append(c.diags, plan.Diagnostic{Pos: s.FilePos, Message: fmt.Sprintf("source %q: %v", s.Name, err)})
			continue
		}
		headers[s.Name] = r.Header().Names
		r.Close()
	}
	c.diags = append(c.diags, p.CheckColumns(headers)...)
	prog, tdiags := transform.Compile(p, c.md, transform.Options{Getenv: a.getenv, Memory: f.memory.bytes})
	c.program = prog
	// An expression the plan could not parse is reported once, by the plan.
	seen := map[plan.Pos]bool{}
	for _, d := range c.diags {
		seen[d.Pos] = true
	}
	for _, d := range tdiags {
		if !seen[d.Pos] {
			c.diags = append(c.diags, d)
		}
	}
	c.diags = append(c.diags, p.CheckMetadata(c.md, c.version)...)
	c.diags = dedupe(c.diags)
	return c, nil
}

// sourceOptions turns a plan's source into the reader's options.
func sourceOptions(p *plan.Plan, s *plan.Source) source.Options {
	o := source.Options{
		Name:       s.File,
		Path:       p.File(s.File),
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

type validateJSON struct {
	OK       bool          `json:"ok"`
	Problems []problemJSON `json:"problems"`
}

func (a *app) validate(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("validate", flag.ContinueOnError)
	var f checkFlags
	f.register(fs)
	pos, err := a.parse(fs, args, "PLAN", 1, 1)
	if err != nil {
		return err
	}
	c, err := a.check(ctx, pos[0], f, false)
	if err != nil {
		return err
	}
	defer c.Close()
	if f.json {
		enc := json.NewEncoder(a.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(validateJSON{OK: c.plan != nil && !c.diags.HasErrors(), Problems: problemsJSON(c.plan, c.diags)}); err != nil {
			return err
		}
	} else {
		for _, d := range c.diags {
			fmt.Fprintln(a.stdout, d.String())
		}
		errs := len(c.diags.Errors())
		switch {
		case c.plan != nil && errs == 0:
			fmt.Fprintf(a.stdout, "%s: ok: %s, %s, checked against %s (system version %s)\n",
				c.plan.Path, plural(len(c.plan.Steps), "step", "steps"), plural(len(c.plan.Sources), "source", "sources"), c.mdSource, versionText(c.version))
		default:
			fmt.Fprintf(a.stdout, "%s\n", plural(errs, "problem", "problems"))
		}
	}
	if c.plan == nil {
		return silent(ExitUsage)
	}
	if c.diags.HasErrors() {
		return silent(ExitData)
	}
	return nil
}
