package cli

import (
	"context"
	"flag"
	"fmt"
	"time"

	"github.com/migrate-tool/migrate/odata/auth"
)

// login runs spec 5.2's authorization code flow with PKCE and caches the
// token for the target.
func (a *app) login(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("login", flag.ContinueOnError)
	target := fs.String("target", "", "service root URL (default MIGRATE_TARGET, else the plan's target.url)")
	authURL := fs.String("auth-url", "", "the authorization server's base address or discovery document (default MIGRATE_AUTH_URL, else discovery on the target's host, else scheme://host/oauth2)")
	redirect := fs.String("redirect-uri", "", "a registered HTTPS redirect URI: paste the code back instead of a loopback listener")
	caCert := fs.String("ca-cert", "", "PEM file of a CA to trust besides the system's")
	noBrowser := fs.Bool("no-browser", false, "print the address instead of opening a browser")
	url, err := a.loginTarget(fs, args, target)
	if err != nil {
		return err
	}
	hc, err := auth.HTTPClient(*caCert, time.Minute)
	if err != nil {
		return withCode(ExitUsage, err)
	}
	opts := auth.LoginOptions{
		Target: url, AuthURL: *authURL, RedirectURI: *redirect, Env: a.getenv,
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
	url, err := a.loginTarget(fs, args, target)
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
// target they are about: --target, MIGRATE_TARGET, or the plan's target.url.
func (a *app) loginTarget(fs *flag.FlagSet, args []string, target *string) (string, error) {
	pos, err := a.parse(fs, args, "[PLAN]", 0, 1)
	if err != nil {
		return "", err
	}
	p, err := optionalPlan(pos)
	if err != nil {
		return "", err
	}
	url, _ := a.targetURL(*target, p)
	if url == "" {
		return "", usageErr("no target: give --target URL, set MIGRATE_TARGET, or name a plan with target.url")
	}
	return url, nil
}
