package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http/httptest"
	"os"
	"strings"
	"time"

	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/odata/auth"
	"github.com/migrate-tool/migrate/plan"
	"github.com/migrate-tool/migrate/sandbox"
)

// connFlags are the flags every command that talks to a target shares.
type connFlags struct {
	target        string
	targetGiven   bool // --target was given (target may be the journal's)
	trustHosts    []string
	auth          string
	caCert        string
	sandbox       bool
	systemVersion string
	timeout       time.Duration
	// dialect is --dialect; journalDialect is the dialect of the journal a
	// command works on, used where neither --dialect nor the environment
	// gives one.
	dialect, journalDialect string
	// companies are the sandbox's (apply of several companies); shared,
	// when set, is the connection whose pace every company's client shares,
	// and company the one this command addresses.
	companies []string
	shared    *conn
	company   string
}

func (c *connFlags) register(fs *flag.FlagSet, withSandbox bool) {
	fs.Var(targetFlag{c}, "target", "service root `URL` (overrides MIGRATE_TARGET and the plan's target.url)")
	registerTrust(fs, &c.trustHosts)
	fs.StringVar(&c.auth, "auth", "", "basic | pat | oidc | client_credentials (overrides MIGRATE_AUTH and the plan's target.auth)")
	fs.StringVar(&c.dialect, "dialect", "", "priority | odata: the kind of service, the ERP's own (default) or any standard OData 4.0 service (overrides "+envDialect+" and the plan's target.dialect; docs/other-services.md)")
	fs.StringVar(&c.caCert, "ca-cert", "", "PEM file of a CA to trust besides the system's (on-premise servers)")
	c.timeout = 3 * time.Minute
	fs.Var(durationFlag{&c.timeout}, "timeout", "the longest one call may take, a `duration` such as 90s (hosted servers drop calls past 3 minutes)")
	fs.StringVar(&c.systemVersion, "system-version", "", "the target's system version MAJOR.MINOR, for servers before 22.0 that cannot say (overrides "+envSystemVersion+" and the plan's target.system_version); with --sandbox, the version it emulates (default 25.1)")
	if withSandbox {
		fs.BoolVar(&c.sandbox, "sandbox", false, "run against a fresh in-process sandbox with the demo schema")
	}
}

// envSystemVersion declares the target's system version (docs/cli.md).
const envSystemVersion = "MIGRATE_SYSTEM_VERSION"

// envDialect says the kind of service the target is (docs/cli.md).
const envDialect = "MIGRATE_DIALECT"

// dialectOf is the target's dialect by docs/cli.md's precedence: flag,
// environment, plan; priority when none says.
func (a *app) dialectOf(f connFlags, p *plan.Plan) (odata.Dialect, error) {
	for _, d := range []struct{ value, from string }{
		{f.dialect, "--dialect"},
		{a.getenv(envDialect), envDialect},
	} {
		if d.value == "" {
			continue
		}
		v, err := odata.ParseDialect(d.value)
		if err != nil {
			return v, usageErr("%s: %v", d.from, err)
		}
		return v, nil
	}
	switch {
	case p != nil:
		return odata.ParseDialect(p.Target.Dialect)
	case f.journalDialect != "":
		return odata.ParseDialect(f.journalDialect)
	}
	return odata.DialectPriority, nil
}

// declaredVersion is the system version the user declared, by docs/cli.md's
// precedence: flag, environment, plan. Version{} when none was; its From
// says where it was declared.
func (a *app) declaredVersion(f connFlags, p *plan.Plan) (odata.Version, error) {
	for _, d := range []struct{ value, from string }{
		{f.systemVersion, "--system-version"},
		{a.getenv(envSystemVersion), envSystemVersion},
	} {
		if d.value == "" {
			continue
		}
		v, err := odata.ParseVersion(d.value)
		if err != nil {
			return v, usageErr("%s: %v", d.from, err)
		}
		v.From = "declared by " + d.from
		return v, nil
	}
	if p != nil && p.Target.SystemVersion.Known() {
		v := p.Target.SystemVersion
		v.From = "declared by target.system_version at " + p.Target.SystemVersionPos.String()
		return v, nil
	}
	return odata.Version{}, nil
}

// targetVersion is the version a connected command works to: the one the
// target reports, else the declared one (given to the client, which checks
// its batches against it). A declaration the target contradicts is wrong
// about the server, and every gate would follow it: exit 2. Version{} when
// the target has no version function and none was declared.
func (a *app) targetVersion(ctx context.Context, c *conn, declared odata.Version) (odata.Version, error) {
	reported, err := c.client.Version(ctx)
	if err != nil {
		return reported, a.unreachable(c, err)
	}
	switch {
	case reported.Standard && declared.Known():
		return reported, usageErr("system version %s %s, but the target is of dialect odata, which has no system version: remove the declaration", declared, declared.From)
	case reported.Standard:
		return reported, nil
	case reported.Known() && declared.Known() && (reported.Major != declared.Major || reported.Minor != declared.Minor):
		return reported, usageErr("system version %s %s, but the target reports %s (%s): correct the declaration or remove it",
			declared, declared.From, reported, reported.From)
	case reported.Known():
		return reported, nil
	case declared.Known():
		c.client.SetVersion(declared)
		return declared, nil
	}
	return reported, nil
}

// connectVersion connects and settles the target's version.
func (a *app) connectVersion(ctx context.Context, f connFlags, p *plan.Plan) (*conn, odata.Version, error) {
	declared, err := a.declaredVersion(f, p)
	if err != nil {
		return nil, declared, err
	}
	c, err := a.connect(ctx, f, p)
	if err != nil {
		return nil, declared, err
	}
	v, err := a.targetVersion(ctx, c, declared)
	if err != nil {
		c.Close()
		return nil, v, err
	}
	return c, v, nil
}

// unknownVersion says, once per command, that the target cannot say its
// version and none was declared, and what follows from it.
func unknownVersion(p *plan.Plan) plan.Diagnostic {
	pos := p.Target.Pos
	if pos.Line == 0 {
		pos = plan.Pos{File: p.Path}
	}
	return plan.Diagnostic{Pos: pos, Severity: plan.SeverityWarning, Message: "the target has no version function, so it runs a version before 22.0, but which one is unknown: " +
		plan.DeclareVersion + "; until then text sub-forms and attachments are refused and batches hold at most 100 operations"}
}

// versionText names a version in output and, unless the target reported
// it, where it came from.
func versionText(v odata.Version) string {
	switch {
	case !v.Known():
		return "unknown, older than 22.0 (no version function)"
	case v.From == "" || strings.HasSuffix(v.From, "()"):
		return v.String()
	}
	return v.String() + ", " + v.From
}

// conn is a connected target: a client, and the in-process sandbox behind it
// when --sandbox was given.
type conn struct {
	client  *odata.Client
	url     string
	method  string
	sandbox *sandbox.Server
	close   func()
}

func (c *conn) Close() {
	if c != nil && c.close != nil {
		c.close()
	}
}

// forCompany is the connection to another company of the same
// installation, sharing c's client's pace (odata.Client.ForCompany). It
// does not close c.
func (c *conn) forCompany(company string) (*conn, error) {
	cl, err := c.client.ForCompany(company)
	if err != nil {
		return nil, usageErr("--company: %v", err)
	}
	url, err := odata.CompanyURL(c.url, company)
	if err != nil {
		return nil, usageErr("--company: %v", err)
	}
	return &conn{client: cl, url: url, method: c.method, sandbox: c.sandbox}, nil
}

// targetURL applies docs/cli.md's precedence: flag, environment, plan. A user
// name and password written into the URL are dropped, with a note: they
// would otherwise be echoed by every message that names the target.
func (a *app) targetURL(flagURL string, p *plan.Plan) (string, int) {
	lang := 0
	if p != nil {
		lang = p.Target.Language
	}
	url := rawTarget(a.getenv, flagURL, p)
	stripped := odata.StripUserinfo(url)
	if stripped != url {
		fmt.Fprintf(a.stderr, "note: the credentials in the target URL are ignored and never shown: use %s, or %s and %s\n",
			auth.EnvToken, auth.EnvUser, auth.EnvPassword)
	}
	return stripped, lang
}

// targetOf is targetURL's target without its note, for a command that
// names the target before it connects (the journal of a load).
func targetOf(getenv func(string) string, flagURL string, p *plan.Plan) string {
	return odata.StripUserinfo(rawTarget(getenv, flagURL, p))
}

// rawTarget is docs/cli.md's precedence: flag, environment, plan.
func rawTarget(getenv func(string) string, flagURL string, p *plan.Plan) string {
	switch {
	case flagURL != "":
		return flagURL
	case getenv("MIGRATE_TARGET") != "":
		return getenv("MIGRATE_TARGET")
	case p != nil:
		return p.Target.URL
	}
	return ""
}

// connectMetadata connects as connect does and reads the target's
// $metadata; the caller closes the conn. When the read fails, the conn is
// closed and the error says the target is unreachable.
func (a *app) connectMetadata(ctx context.Context, f connFlags, p *plan.Plan) (*conn, *odata.Metadata, error) {
	cn, err := a.connect(ctx, f, p)
	if err != nil {
		return nil, nil, err
	}
	md, _, err := cn.client.Metadata(ctx)
	if err != nil {
		cn.Close()
		return nil, nil, a.unreachable(cn, err)
	}
	return cn, md, nil
}

// connect builds the client for a command. With --sandbox it starts an
// in-process sandbox on a loopback port and logs in as its demo user.
func (a *app) connect(ctx context.Context, f connFlags, p *plan.Plan) (*conn, error) {
	if f.shared != nil {
		return f.shared.forCompany(f.company)
	}
	cfg := odata.Config{Timeout: f.timeout, Clock: a.clock}
	if p != nil {
		cfg.CallsPerMinute = p.Target.CallsPerMinute
		cfg.MaxConcurrent = p.Target.Concurrency
	}
	dialect, err := a.dialectOf(f, p)
	if err != nil {
		return nil, err
	}
	cfg.Dialect = dialect
	if dialect.Standard() {
		if err := standardOnly(f, p); err != nil {
			return nil, err
		}
	}
	if f.sandbox {
		// The sandbox plays the server the user declared.
		declared, err := a.declaredVersion(f, p)
		if err != nil {
			return nil, err
		}
		sb, err := sandbox.New(sandbox.Options{SystemVersion: declared.Raw, Companies: f.companies})
		if err != nil {
			return nil, withCode(ExitUsage, err)
		}
		srv := httptest.NewServer(sb)
		cfg.BaseURL = srv.URL + sandbox.CompanyPath(sb.Companies()[0])
		if p != nil && p.Target.Language != 0 {
			cfg.Language = p.Target.Language
		}
		cfg.Auth = odata.BasicAuth{User: "demo", Password: "demo"}
		cl, err := odata.NewClient(cfg)
		if err != nil {
			srv.Close()
			return nil, withCode(ExitUsage, err)
		}
		return &conn{client: cl, url: cfg.BaseURL, method: "basic", sandbox: sb, close: func() { srv.Close(); sb.Close() }}, nil
	}
	url, lang := a.targetURL(f.target, p)
	if dialect.Standard() {
		lang = 0 // refused above when given
	}
	if url == "" {
		return nil, usageErr("no target: give --target URL, set MIGRATE_TARGET, or write target.url in the plan (or use --sandbox)")
	}
	svc := service{url: url, language: lang, flagAuth: f.auth, getenv: a.getenv, caCert: f.caCert,
		approval: approval{from: a.targetOrigin(f, p), instead: "give the address with --target or MIGRATE_TARGET", trust: f.trustHosts}}
	if p != nil {
		svc.planAuth, svc.planTokenURL, svc.planScopes = p.Target.Auth, p.Target.TokenURL, p.Target.Scopes
		svc.tokenURLFrom = "target.token_url of " + p.Path
	}
	return a.dial(cfg, svc)
}

// standardOnly refuses, for a target of dialect odata, what only the ERP
// has: the sandbox (which plays the ERP), a language code and other
// companies (segments of the ERP's URL) (docs/other-services.md).
func standardOnly(f connFlags, p *plan.Plan) error {
	switch {
	case f.sandbox:
		return usageErr("--sandbox plays the ERP's service; a target of dialect odata needs a real service (docs/other-services.md runs a CAP one)")
	case p != nil && p.Target.Language != 0:
		return usageErr("target.language is the ERP's segment of the service root; a target of dialect odata has none: remove it")
	case len(f.companies) > 0 || f.company != "":
		return usageErr("--company names a company of the ERP's installation; a target of dialect odata has none")
	}
	return nil
}

// service is what the client of a service is built from: the target, or
// a connection of the plan, which reads its variables through
// getenv under its own names.
type service struct {
	url      string
	language int
	flagAuth string // --auth; the target's only
	planAuth string
	// planTokenURL and planScopes are the plan's, for client credentials;
	// tokenURLFrom names the plan's token_url in messages.
	planTokenURL, tokenURLFrom string
	planScopes                 []string
	getenv                     func(string) string
	caCert                     string
	approval                   approval // whether credentials may go to url's host
}

// dial builds the client of a service and resolves how it logs in: one
// path for the target and every connection.
func (a *app) dial(cfg odata.Config, s service) (*conn, error) {
	cfg.BaseURL, cfg.Language = s.url, s.language
	// The client credentials' token requests go as the service's calls:
	// its CA, its timeout, no redirect to another host.
	tokenClient, err := auth.HTTPClient(s.caCert, cfg.Timeout)
	if err != nil {
		return nil, withCode(ExitUsage, err)
	}
	authn, warning, err := auth.Resolve(auth.ResolveOptions{Flag: s.flagAuth, Env: s.getenv, PlanAuth: s.planAuth, Target: s.url,
		PlanTokenURL: s.planTokenURL, PlanScopes: s.planScopes, HTTPClient: tokenClient})
	if err != nil {
		return nil, withCode(ExitUnreachable, err)
	}
	if err := a.approveHost(s.url, s.approval); err != nil {
		return nil, err
	}
	if err := a.approveTokenURL(authn, s); err != nil {
		return nil, err
	}
	if cfg.Dialect.Standard() {
		// The deprecation is the ERP's; Basic is a standard service's own
		// way (docs/other-services.md). Other warnings stand.
		warning = strings.TrimPrefix(strings.TrimPrefix(warning, auth.BasicDeprecation), "\n")
	}
	if warning != "" {
		fmt.Fprintln(a.stderr, warning)
	}
	cfg.Auth = authn
	cfg.AppID, cfg.AppKey = s.getenv("MIGRATE_APP_ID"), s.getenv("MIGRATE_APP_KEY")
	cfg.CACertFile = s.caCert
	cfg.Clock = a.clock
	cl, err := odata.NewClient(cfg)
	if err != nil {
		return nil, withCode(ExitUsage, err)
	}
	return &conn{client: cl, url: s.url, method: authn.Method()}, nil
}

// approveTokenURL lets the client secret go to the token endpoint the
// plan names only on the target's own host or one the user approved
// (docs/cli.md, Which hosts receive credentials); MIGRATE_TOKEN_URL the
// user set needs no approval.
func (a *app) approveTokenURL(authn auth.Authenticator, s service) error {
	tokenURL := auth.TokenURLOf(authn)
	if tokenURL == "" {
		return nil
	}
	if odata.CleartextCredentials(tokenURL) {
		fmt.Fprintf(a.stderr, "warning: the token endpoint %s is plain http on another machine: the client secret crosses the network unencrypted; use its https address\n", odata.RedactURL(tokenURL))
	}
	if s.getenv(auth.EnvTokenURL) != "" || auth.HostApproved([]string{auth.Host(s.url)}, tokenURL) {
		return nil
	}
	from := s.tokenURLFrom
	if from == "" {
		from = "the plan's token_url"
	}
	return a.approveHost(tokenURL, approval{from: from, instead: "set " + auth.EnvTokenURL + " to it", named: s.approval.named, trust: s.approval.trust})
}

// unreachable turns a failure to talk to the target into a message and
// exit 3.
func (a *app) unreachable(c *conn, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, context.Canceled) {
		return withCode(ExitInterrupted, err)
	}
	method := ""
	if c != nil {
		method = c.method
	}
	if msg := auth.Explain(err, method); msg != "" {
		return withCode(ExitUnreachable, errors.New(msg))
	}
	return withCode(ExitUnreachable, err)
}

// loadMetadataFile finds the metadata for offline work: --metadata, the plan's
// target.metadata (relative to the plan), or nothing.
func loadMetadataFile(flagFile string, p *plan.Plan) (*odata.Metadata, string, error) {
	file := flagFile
	if file == "" && p != nil && p.Target.Metadata != "" {
		file = p.File(p.Target.Metadata)
	}
	if file == "" {
		return nil, "", nil
	}
	f, err := os.Open(file)
	if err != nil {
		return nil, file, withCode(ExitUsage, fmt.Errorf("metadata: %w", err))
	}
	defer f.Close()
	md, err := odata.ParseMetadata(f)
	if err != nil {
		return nil, file, withCode(ExitUsage, fmt.Errorf("metadata %s: %w", file, err))
	}
	return md, file, nil
}

// newest is assumed when validating offline against a metadata file that
// does not say which version wrote it.
var newest = odata.Version{Major: 25, Minor: 1, Raw: "25.1", From: "assumed: none declared"}

// busyIsPending is apply's reading of a server that answers but keeps
// failing (5xx, or 429 past every retry): no wrong address or credential,
// but a load that could not go on for now. That is exit 4, "run apply again
// to resume", which is what works a moment later; exit 3 would send the
// consultant looking for a network or password problem.
func busyIsPending(err error) error {
	if codeOf(err) == ExitUnreachable && (odata.IsServerError(err) || odata.IsThrottled(err)) {
		return withCode(ExitInterrupted, fmt.Errorf("%w; the server is failing or throttling for now: run apply again to resume", errors.Unwrap(err)))
	}
	return err
}

// metadataOf is the metadata for commands that need nothing else of the
// target: a saved file, the sandbox's demo schema, or the live $metadata.
func (a *app) metadataOf(ctx context.Context, cf connFlags, file string) (*odata.Metadata, error) {
	md, _, err := loadMetadataFile(file, nil)
	switch {
	case err != nil:
		return nil, err
	case md != nil:
		return md, nil
	case cf.sandbox:
		return sandbox.DemoMetadata(), nil
	}
	c, md, err := a.connectMetadata(ctx, cf, nil)
	if err != nil {
		return nil, err
	}
	c.Close()
	return md, nil
}
