package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/sandbox"
)

// listFlag collects a repeatable flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(s string) error { *l = append(*l, s); return nil }

var faultKinds = []string{sandbox.FaultDropBeforeCommit, sandbox.FaultDropAfterCommit, sandbox.FaultError500, sandbox.FaultThrottle429}

func parseFaults(specs []string) (map[string]float64, error) {
	faults := map[string]float64{}
	for _, s := range specs {
		kind, rate, err := sandbox.ParseFault(s)
		if err != nil {
			return nil, usageErr("--%v", err)
		}
		faults[kind] = rate
	}
	return faults, nil
}

// quirksFlag is --quirks: alone it switches on every quirk, --quirks a,b
// (or --quirks=a,b) only those.
type quirksFlag struct{ set map[string]bool }

func (q *quirksFlag) String() string   { return "" }
func (q *quirksFlag) IsBoolFlag() bool { return true }
func (q *quirksFlag) Set(s string) error {
	if s == "false" {
		q.set = nil
		return nil
	}
	set, err := sandbox.ParseQuirks(s)
	if err != nil {
		return err
	}
	q.set = set
	return nil
}

// joinQuirksValue turns "--quirks a,b" into "--quirks=a,b": a flag that
// can stand alone takes its value only after "=", and `migrate sandbox`
// has no positional argument it could be confused with.
func joinQuirksValue(args []string) []string {
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		if (a == "--quirks" || a == "-quirks") && i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
			a += "=" + args[i+1]
			i++
		}
		out = append(out, a)
	}
	return out
}

func (a *app) sandbox(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("sandbox", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:8099", "address to listen on (port 0 picks a free port)")
	version := fs.String("system-version", "25.1", "the system version to emulate (docs/service.md, Versions)")
	mdFile := fs.String("metadata", "", "serve a real installation's $metadata instead of the demo schema")
	state := fs.String("state", "", "keep the data in this file across restarts")
	latency := fs.Duration("latency", 0, "added to every call, e.g. 10ms")
	cpm, maxConc := new(int), new(int)
	fs.Var(countFlag{cpm, 0}, "calls-per-minute", "`calls` per minute per user; past it: 429 with Retry-After (0: no limit)")
	fs.Var(countFlag{maxConc, 0}, "max-concurrent", "concurrent `requests` per user; past it: 429 (0: no limit)")
	seed := fs.Int64("seed", 1, "seed for the faults")
	ttl := fs.Duration("token-ttl", time.Hour, "lifetime of OIDC bearer tokens")
	var faults, redirects, unpermitted, companies, hidden listFlag
	var quirks quirksFlag
	fs.Var(&quirks, "quirks", "imitate real servers' quirks: all, or some of "+strings.Join(sandbox.QuirkNames(), ", "))
	fs.Var(&faults, "fault", "KIND=RATE, repeatable: "+strings.Join(faultKinds, ", "))
	fs.Var(&redirects, "redirect-uri", "a registered OIDC redirect URI (https), repeatable")
	fs.Var(&companies, "company", "a company of the installation, repeatable (default: demo); each holds its own data, and others are refused")
	fs.Var(&unpermitted, "unpermitted", "a form the user may not write (403, or 400 under --quirks permission-400), repeatable")
	fs.Var(&hidden, "hidden-field", "FORM.FIELD the user may not read (field-level permissions): left out of read answers, repeatable")
	if _, err := a.parse(fs, joinQuirksValue(args), "", 0, 0); err != nil {
		return err
	}
	fm, err := parseFaults(faults)
	if err != nil {
		return err
	}
	if _, err := odata.ParseVersion(*version); err != nil {
		return usageErr("--system-version: %v", err)
	}
	opts := sandbox.Options{
		SystemVersion: *version, StatePath: *state, Latency: *latency,
		CallsPerMinute: *cpm, MaxConcurrent: *maxConc, Faults: fm, Seed: *seed,
		TokenTTL: *ttl, RedirectURIs: redirects, Quirks: quirks.set, Unpermitted: unpermitted,
		Companies: companies, HiddenFields: hidden,
	}
	if *mdFile != "" {
		md, _, err := loadMetadataFile(*mdFile, nil)
		if err != nil {
			return err
		}
		opts.Metadata = md
	}
	sb, err := sandbox.New(opts)
	if err != nil {
		return withCode(ExitUsage, err)
	}
	defer sb.Close()
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return withCode(ExitUsage, fmt.Errorf("cannot listen on %s: %w", *addr, err))
	}
	// Bounded: a client that never finishes its request or keeps idle
	// connections open cannot hold the sandbox's memory or sockets. The
	// handler caps bodies (odata.MaxBatchBytes).
	srv := &http.Server{Handler: sb, ReadHeaderTimeout: 30 * time.Second, ReadTimeout: 5 * time.Minute,
		WriteTimeout: 10 * time.Minute, IdleTimeout: 2 * time.Minute, MaxHeaderBytes: 1 << 20}
	names := sb.Companies()
	fmt.Fprintf(a.stdout, "sandbox: http://%s%s  user demo  password demo  token demo-pat  OIDC client %s secret %s  (system version %s%s)\n",
		ln.Addr(), sandbox.CompanyPath(names[0]), sandbox.OIDCClientID, sandbox.OIDCClientSecret, *version, quirksNote(quirks.set)+hiddenNote(hidden))
	if len(names) > 1 {
		fmt.Fprintf(a.stdout, "companies: %s (the last segment of the URL)\n", strings.Join(names, ", "))
	}
	if tcp, ok := ln.Addr().(*net.TCPAddr); ok && !tcp.IP.IsLoopback() {
		fmt.Fprintf(a.stderr, "warning: the sandbox listens on %s, beyond this machine, and accepts the well-known demo credentials: anyone who can reach it can read and change its data; listen on 127.0.0.1 unless that is what you want\n", ln.Addr())
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case <-ctx.Done():
	case <-a.interrupts:
	case err := <-errc:
		if !errors.Is(err, http.ErrServerClosed) {
			return err
		}
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = srv.Shutdown(sctx)
	fmt.Fprintln(a.stderr, "sandbox: stopped")
	return nil
}

// quirksNote names the quirks switched on, for the sandbox's first line.
func quirksNote(set map[string]bool) string {
	var on []string
	for _, q := range sandbox.QuirkNames() {
		if set[q] {
			on = append(on, q)
		}
	}
	if len(on) == 0 {
		return ""
	}
	return ", quirks " + strings.Join(on, ",")
}

// hiddenNote names the fields the API user may not read, for the
// sandbox's first line.
func hiddenNote(fields []string) string {
	if len(fields) == 0 {
		return ""
	}
	return ", hidden fields " + strings.Join(fields, ",")
}
