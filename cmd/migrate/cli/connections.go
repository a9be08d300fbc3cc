package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"

	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/plan"
)

// connEnv is the environment as connection name sees it: each
// MIGRATE_X is read as MIGRATE_<NAME>_X, so a connection never logs in
// with the target's secrets, and a message about MIGRATE_TOKEN can be
// told to name MIGRATE_TEMPLATE_TOKEN (connError).
func connEnv(getenv func(string) string, name string) func(string) string {
	prefix := connPrefix(name)
	return func(k string) string {
		if rest, ok := strings.CutPrefix(k, "MIGRATE_"); ok {
			return getenv(prefix + rest)
		}
		return getenv(k)
	}
}

// connPrefix is the start of a connection's variables: MIGRATE_TEMPLATE_.
func connPrefix(name string) string { return odata.ConnectionPrefix(name) }

// connError is an error about a connection, its variables named as the
// connection reads them.
type connError struct {
	name string
	err  error
}

func (e *connError) Error() string {
	msg := e.err.Error()
	// Only the variable names change: MIGRATE_TOKEN → MIGRATE_TEMPLATE_TOKEN.
	msg = strings.ReplaceAll(msg, "MIGRATE_", connPrefix(e.name))
	return "connection " + e.name + ": " + msg
}
func (e *connError) Unwrap() error { return e.err }

// connectTo builds the client of one of the plan's connections (p may be
// nil: export --connection without a plan), as the
// target's is built (dial): its URL from MIGRATE_<NAME>_TARGET or the plan,
// its secrets from MIGRATE_<NAME>_TOKEN, _USER and _PASSWORD or the token
// `migrate login --connection NAME` cached for its URL.
func (a *app) connectTo(f connFlags, p *plan.Plan, c *plan.Connection) (*conn, error) {
	url, err := a.connectionURL(c, true)
	if err != nil {
		return nil, err
	}
	env := connEnv(a.getenv, c.Name)
	cfg := odata.Config{Timeout: f.timeout}
	// A connection is a service of the target's kind unless it says.
	if cfg.Dialect, err = a.dialectOf(f, p); err != nil {
		return nil, err
	}
	if c.Dialect != "" {
		if cfg.Dialect, err = odata.ParseDialect(c.Dialect); err != nil {
			return nil, usageErr("connection %s: %v", c.Name, err)
		}
	}
	if cfg.Dialect.Standard() && c.Language != 0 {
		return nil, usageErr("connection %s: \"language\" is the ERP's segment of the service root; a service of dialect odata has none: remove it", c.Name)
	}
	if p != nil { // the plan's rate budget holds for every call it makes
		cfg.CallsPerMinute, cfg.MaxConcurrent = p.Target.CallsPerMinute, p.Target.Concurrency
	}
	from := "connection " + c.Name + "'s token_url"
	if p != nil && p.Path != "" {
		from += " in " + p.Path
	}
	cn, err := a.dial(cfg, service{url: url, language: c.Language, planAuth: c.Auth, planTokenURL: c.TokenURL, planScopes: c.Scopes,
		tokenURLFrom: from, getenv: env, caCert: f.caCert,
		approval: approval{from: a.connectionOrigin(c, p), instead: "set MIGRATE_TARGET to its address", named: a.userTarget(f), trust: f.trustHosts}})
	if err != nil {
		return nil, connFail(c.Name, err)
	}
	return cn, nil
}

// connectionURL is the address of connection c: MIGRATE_<NAME>_TARGET, else
// the plan's url, without a user name and password (noted once, when note
// is set). A name that is no identifier, or an address that is not an
// absolute http(s) URL, is a command-line error (exit 2), found before
// anything connects (checkConnections).
func (a *app) connectionURL(c *plan.Connection, note bool) (string, error) {
	if !plan.IsConnectionName(c.Name) {
		return "", usageErr("connection name %q: give the name of one of the plan's connections: letters, digits and \"_\", starting with a letter", c.Name)
	}
	env := connEnv(a.getenv, c.Name)
	url := c.URL
	if u := env("MIGRATE_TARGET"); u != "" {
		url = u
	}
	if stripped := odata.StripUserinfo(url); stripped != url {
		if note {
			fmt.Fprintf(a.stderr, "note: the credentials in connection %s's URL are ignored and never shown: use %sTOKEN, or %sUSER and %sPASSWORD\n",
				c.Name, connPrefix(c.Name), connPrefix(c.Name), connPrefix(c.Name))
		}
		url = stripped
	}
	if url == "" {
		return "", usageErr("connection %s has no URL: write connections.%s.url in the plan, or set %sTARGET", c.Name, c.Name, connPrefix(c.Name))
	}
	if _, err := odata.ServiceRoot(url, 0); err != nil {
		return "", usageErr("connection %s: %v", c.Name, err)
	}
	return url, nil
}

// connectionFlag refuses a --connection given empty (which would have
// meant the target) or with a name no connection can have, before
// anything connects.
func connectionFlag(fs *flag.FlagSet, name string) error {
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == "connection" })
	switch {
	case given && name == "":
		return usageErr("--connection is empty: name a connection, or leave the flag out to use the target")
	case name != "" && !plan.IsConnectionName(name):
		return usageErr("--connection %q: a connection's name is letters, digits and \"_\", starting with a letter", name)
	}
	return nil
}

// checkConnections finds what is wrong with the addresses of the plan's
// connections before anything connects, the target included.
func (a *app) checkConnections(p *plan.Plan) error {
	for _, c := range p.Connections {
		if _, err := a.connectionURL(c, false); err != nil {
			return err
		}
	}
	return nil
}

// connFail is err, with its exit code, said of connection name.
func connFail(name string, err error) error {
	inner := err
	var ee *exitError
	if errors.As(err, &ee) && ee.err != nil {
		inner = ee.err
	}
	return &exitError{code: codeOf(err), err: &connError{name: name, err: inner}}
}

// connected is a connection of the plan, with its own metadata.
type connected struct {
	conn *conn
	md   *odata.Metadata
}

// connections connects to each connection the plan's sources read and
// reads its $metadata: their entities are checked against their own.
func (a *app) connections(ctx context.Context, f connFlags, p *plan.Plan) (map[string]*connected, error) {
	out := map[string]*connected{}
	for _, s := range p.Sources {
		if s.Connection == "" || out[s.Connection] != nil {
			continue
		}
		pc := p.Connection(s.Connection)
		if pc == nil {
			continue // plan.Check reports it
		}
		cn, err := a.connectTo(f, p, pc)
		if err != nil {
			closeConnections(out)
			return nil, err
		}
		md, _, err := cn.client.Metadata(ctx)
		if err != nil {
			cn.Close()
			closeConnections(out)
			return nil, connFail(pc.Name, a.unreachable(cn, err))
		}
		out[s.Connection] = &connected{conn: cn, md: md}
	}
	return out, nil
}

func closeConnections(m map[string]*connected) {
	for _, c := range m {
		c.conn.Close()
	}
}
