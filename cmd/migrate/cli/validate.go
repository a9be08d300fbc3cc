package cli

import (
	"context"
	"flag"

	"github.com/migrate-tool/migrate/executor"
	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/plan"
	"github.com/migrate-tool/migrate/sandbox"
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

// checked is a plan with everything validate found out about it: the
// engine's prepared run, and what the command line connected to.
type checked struct {
	plan     *plan.Plan
	run      *executor.Prepared // nil when the plan could not be read
	diags    plan.Diagnostics
	conn     *conn // nil when checked offline
	mdSource string
	// conns are the plan's connections its sources read, by
	// name; none when checked offline.
	conns map[string]*connected
}

func (c *checked) Close() {
	c.conn.Close()
	c.run.Close()
	closeConnections(c.conns)
}

// check connects as validate does and has the engine prepare the plan. It
// returns an error only when the plan cannot be checked at all
// (unreadable, or no metadata to be had).
func (a *app) check(ctx context.Context, path string, f checkFlags, needConn bool) (*checked, error) {
	p, diags := plan.Load(path)
	if p == nil || p.Hash == "" {
		// The file could not be read at all: exit 2, not a data problem.
		return &checked{diags: diags}, nil
	}
	if p.ConnectionsRefused() {
		// A connection whose name or variables are wrong could log in
		// with another's credentials: nothing connects, exit 2.
		return &checked{diags: diags}, nil
	}
	if err := a.checkConnections(p); err != nil {
		return nil, err
	}
	c := &checked{plan: p}
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
	var version odata.Version
	switch {
	case md != nil && !needConn:
		c.mdSource, version = file, offline
	case f.conn.sandbox && !needConn:
		md, c.mdSource, version = sandbox.DemoMetadata(), "the sandbox's demo schema", offline
	default:
		cn, v, err := a.connectVersion(ctx, f.conn, p)
		if err != nil {
			return nil, err
		}
		c.conn, version = cn, v
		if !version.Known() {
			diags = append(diags, unknownVersion(p))
		}
		if md != nil {
			c.mdSource = file
		} else {
			if md, _, err = cn.client.Metadata(ctx); err != nil {
				cn.Close()
				return nil, a.unreachable(cn, err)
			}
			c.mdSource = "the target's $metadata"
		}
	}
	// The connections are read unless the check is offline (a saved
	// $metadata): a dry run on --sandbox still reads the template company.
	if file == "" || needConn {
		if c.conns, err = a.connections(ctx, f.conn, p); err != nil {
			c.conn.Close()
			return nil, err
		}
	}
	services := map[string]executor.Service{}
	for name, cn := range c.conns {
		services[name] = executor.Service{Client: cn.conn.client, Metadata: cn.md}
	}
	c.run, c.diags = executor.Prepare(ctx, executor.Setup{Plan: p, Diagnostics: diags, Metadata: md, Version: version,
		Services: services, Getenv: a.getenv, Memory: f.memory.bytes})
	return c, nil
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
	if err := a.validateView(f.json).Results(c); err != nil {
		return err
	}
	if c.plan == nil {
		return silent(ExitUsage)
	}
	if c.diags.HasErrors() {
		return silent(ExitData)
	}
	return nil
}
