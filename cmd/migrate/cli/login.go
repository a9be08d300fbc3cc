package cli

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/migrate-tool/migrate/odata/auth"
	"github.com/migrate-tool/migrate/plan"
)

// login runs the authorization code flow with PKCE (docs/service.md,
// Authentication) and caches the
// token for the target.
func (a *app) login(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("login", flag.ContinueOnError)
	target := fs.String("target", "", "service root URL (default MIGRATE_TARGET, else the plan's target.url)")
	authURL := fs.String("auth-url", "", "the authorization server's base address or discovery document (default MIGRATE_AUTH_URL, else discovery on the target's host, else scheme://host/oauth2)")
	redirect := fs.String("redirect-uri", "", "a registered HTTPS redirect URI: paste the code back instead of a loopback listener")
	caCert := fs.String("ca-cert", "", "PEM file of a CA to trust besides the system's")
	noBrowser := fs.Bool("no-browser", false, "print the address instead of opening a browser")
	connection := fs.String("connection", "", "log in to this connection of the plan instead of its target (its variables are MIGRATE_<NAME>_*)")
	var trust []string
	registerTrust(fs, &trust)
	url, env, from, err := a.loginTarget(fs, args, target, connection)
	if err != nil {
		return err
	}
	// The client secret goes to the target's authorization server.
	ap := approval{from: from, instead: "give the address with --target or MIGRATE_TARGET", trust: trust,
		named: a.userTarget(connFlags{target: *target, targetGiven: *target != ""})}
	if *connection != "" {
		ap.instead = "set " + connPrefix(*connection) + "TARGET to its address"
	}
	if err := a.approveHost(url, ap); err != nil {
		return err
	}
	hc, err := auth.HTTPClient(*caCert, time.Minute)
	if err != nil {
		return withCode(ExitUsage, err)
	}
	opts := auth.LoginOptions{
		Target: url, AuthURL: *authURL, RedirectURI: *redirect, Env: env,
		HTTPClient: hc, Stdin: a.stdin, Stdout: a.stderr,
	}
	switch {
	case *noBrowser:
		opts.OpenBrowser = func(string) error { return nil }
	case a.openBrowser != nil:
		opts.OpenBrowser = a.openBrowser
	}
	tok, err := auth.Login(ctx, opts)
	if err != nil {
		return withCode(ExitUnreachable, err)
	}
	fmt.Fprintf(a.stdout, "logged in to %s; the token is valid until %s\n", url, tok.Expiry.Format(time.RFC3339))
	return nil
}

func (a *app) logout(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("logout", flag.ContinueOnError)
	target := fs.String("target", "", "service root URL (default MIGRATE_TARGET, else the plan's target.url)")
	connection := fs.String("connection", "", "log out of this connection of the plan instead of its target")
	url, _, _, err := a.loginTarget(fs, args, target, connection)
	if err != nil {
		return err
	}
	removed, err := auth.Logout(url, "")
	if err != nil {
		return withCode(ExitUsage, err)
	}
	if removed {
		fmt.Fprintf(a.stdout, "logged out of %s: the cached token was removed\n", url)
	} else {
		fmt.Fprintf(a.stdout, "no cached token for %s\n", url)
	}
	return nil
}

// loginTarget parses login's and logout's arguments ([PLAN]) and returns the
// service they are about, with the environment as it reads it: --target,
// MIGRATE_TARGET, or the plan's target.url; with --connection NAME, the
// plan's connection: MIGRATE_<NAME>_TARGET or its url, and its variables.
// from is what named the address when the user did not (approveHost).
func (a *app) loginTarget(fs *flag.FlagSet, args []string, target, connection *string) (url string, env func(string) string, from string, err error) {
	pos, err := a.parse(fs, args, "[PLAN]", 0, 1)
	if err != nil {
		return "", nil, "", err
	}
	if err := connectionFlag(fs, *connection); err != nil {
		return "", nil, "", err
	}
	p, err := optionalPlan(pos)
	if err != nil {
		return "", nil, "", err
	}
	if *connection != "" {
		if p == nil {
			return "", nil, "", usageErr("--connection %s names a connection of a plan: give the plan", *connection)
		}
		c := p.Connection(*connection)
		if c == nil {
			return "", nil, "", usageErr("the plan has no connection %q (connections: %s)", *connection, strings.Join(connectionNames(p), ", "))
		}
		url, err := a.connectionURL(c, false)
		if err != nil {
			return "", nil, "", err
		}
		return url, connEnv(a.getenv, c.Name), a.connectionOrigin(c, p), nil
	}
	url, _ = a.targetURL(*target, p)
	if url == "" {
		return "", nil, "", usageErr("no target: give --target URL, set MIGRATE_TARGET, or name a plan with target.url")
	}
	return url, a.getenv, a.targetOrigin(connFlags{target: *target, targetGiven: *target != ""}, p), nil
}

func connectionNames(p *plan.Plan) []string {
	out := make([]string, len(p.Connections))
	for i, c := range p.Connections {
		out[i] = c.Name
	}
	return out
}
