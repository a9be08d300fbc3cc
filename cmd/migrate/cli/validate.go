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
	fs.BoolVar(&c.json, "json", false, jsonUsage)
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
	p, diags := a.loadPlan(path)
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
	m, err := a.metadataFor(ctx, f, p, needConn)
	if err != nil {
		return nil, err
	}
	md, file, version := m.md, m.file, m.version
	c.conn, c.mdSource = m.conn, m.source
	if m.unknownVersion {
		diags = append(diags, unknownVersion(p))
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

// against is what a plan is checked against: its metadata, where that
// came from, the system version, and the connection to the target when
// one was made.
type against struct {
	md     *odata.Metadata
	file   string // the metadata file read ("": none)
	source string // for people: the file, the sandbox's demo schema, the target's $metadata
	// version is the target's, else the declared one, else the newest.
	version odata.Version
	conn    *conn // nil offline
	// unknownVersion: the target cannot say its version and none is declared.
	unknownVersion bool
}

// metadataFor finds what validate checks p against: --metadata or the
// plan's target.metadata, else (unless needConn) --sandbox's demo schema,
// else the target, connected to.
func (a *app) metadataFor(ctx context.Context, f checkFlags, p *plan.Plan, needConn bool) (against, error) {
	md, file, err := loadMetadataFile(f.metadata, p)
	if err != nil {
		return against{}, err
	}
	declared, err := a.declaredVersion(f.conn, p)
	if err != nil {
		return against{}, err
	}
	// Offline there is no server to ask: the declared version, else the
	// newest.
	offline := newest
	if declared.Known() {
		offline = declared
	}
	switch {
	case md != nil && !needConn:
		return against{md: md, file: file, source: file, version: offline}, nil
	case f.conn.sandbox && !needConn:
		return against{md: sandbox.DemoMetadata(), source: "the sandbox's demo schema", version: offline}, nil
	}
	cn, version, err := a.connectVersion(ctx, f.conn, p)
	if err != nil {
		return against{}, err
	}
	m := against{md: md, file: file, source: file, version: version, conn: cn, unknownVersion: !version.Known()}
	if md == nil {
		if m.md, _, err = cn.client.Metadata(ctx); err != nil {
			cn.Close()
			return against{}, a.unreachable(cn, err)
		}
		m.source = "the target's $metadata"
	}
	return m, nil
}

type validateJSON struct {
	OK       bool          `json:"ok"`
	Problems []problemJSON `json:"problems"`
}

func (a *app) validate(ctx context.Context, args []string) error {
	var f checkFlags
	fs := checkFlagSet("validate", &f)
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
