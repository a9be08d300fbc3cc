package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/migrate-tool/migrate/odata/captest"
)

var (
	capMu      sync.Mutex
	capServers = map[*testscript.TestScript]map[string]*captest.Server{}
)

// capCondition is [cap]: the CAP test service can run here, or must (CI),
// so a script that needs it skips only where it is not installed and not
// required (docs/other-services.md, The CAP test service).
func capCondition() bool { return captest.Installed() == nil || captest.Required() }

// cmdCap: `cap start [as=NAME] [drop=N]` runs a CAP test service
// (odata/captest) until the script ends and points MIGRATE_TARGET at it
// (with as=NAME, the connection's MIGRATE_NAME_TARGET), with a user and
// password it takes; with drop=N,M through a proxy that loses the answers
// of the Nth and Mth $batch that create (dropProxy);
// `cap dump [@NAME] SET [EXPAND]` prints what it holds of SET, with EXPAND
// as $expand, the values it makes up (Guids, times) steadied.
func cmdCap(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: cap start [as=NAME] | cap dump [@NAME] SET [EXPAND]")
	}
	switch args[0] {
	case "start":
		name, drop := "", map[int]bool{}
		for _, a := range args[1:] {
			k, v, _ := strings.Cut(a, "=")
			switch k {
			case "as":
				name = v
			case "drop":
				for _, f := range strings.Split(v, ",") {
					n, err := strconv.Atoi(f)
					if err != nil || n < 1 {
						ts.Fatalf("cap start: drop=%s: want the numbers of batches, such as 3,4", v)
					}
					drop[n] = true
				}
			default:
				ts.Fatalf("cap start: unknown option %q", a)
			}
		}
		s, err := captest.Start(context.Background())
		if err != nil {
			ts.Fatalf("cap start: %v", err)
		}
		ts.Defer(s.Close)
		root := s.Root
		if len(drop) > 0 {
			root = dropProxy(ts, s.Root, drop)
		}
		capMu.Lock()
		if capServers[ts] == nil {
			capServers[ts] = map[string]*captest.Server{}
			ts.Defer(func() {
				capMu.Lock()
				delete(capServers, ts)
				capMu.Unlock()
			})
		}
		capServers[ts][name] = s
		capMu.Unlock()
		env := "MIGRATE_"
		if name != "" {
			env += strings.ToUpper(name) + "_"
		}
		ts.Setenv(env+"TARGET", root)
		ts.Setenv(env+"USER", "alice")
		ts.Setenv(env+"PASSWORD", "alice")
	case "dump":
		args = args[1:]
		name := ""
		if len(args) > 0 && strings.HasPrefix(args[0], "@") {
			name, args = args[0][1:], args[1:]
		}
		if len(args) < 1 || len(args) > 2 {
			ts.Fatalf("usage: cap dump [@NAME] SET [EXPAND]")
		}
		capMu.Lock()
		s := capServers[ts][name]
		capMu.Unlock()
		if s == nil {
			ts.Fatalf("cap dump: no CAP service %q started", name)
		}
		expand := ""
		if len(args) == 2 {
			expand = args[1]
		}
		out, err := captest.Dump(context.Background(), s.Root, args[0], expand)
		ts.Check(err)
		_, _ = ts.Stdout().Write(out)
	default:
		ts.Fatalf("cap %s: want start or dump", args[0])
	}
}

// dropProxy stands before the service at root and passes every call on,
// but loses the answers of the $batch calls that create whose numbers
// (counted from 1 over the script) drop holds: the service carried them
// out, the client sees its connection close, and the batch is in doubt.
// It returns the service root through it.
func dropProxy(ts *testscript.TestScript, root string, drop map[int]bool) string {
	u, err := url.Parse(root)
	ts.Check(err)
	var mu sync.Mutex
	batches := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			panic(http.ErrAbortHandler)
		}
		req, err := http.NewRequestWithContext(r.Context(), r.Method, u.Scheme+"://"+u.Host+r.URL.RequestURI(), bytes.NewReader(body))
		if err != nil {
			panic(http.ErrAbortHandler)
		}
		req.Header = r.Header.Clone()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			panic(http.ErrAbortHandler)
		}
		defer resp.Body.Close()
		answer, err := io.ReadAll(resp.Body)
		if err != nil {
			panic(http.ErrAbortHandler)
		}
		if strings.HasSuffix(r.URL.Path, "/$batch") && bytes.Contains(body, []byte(`"POST"`)) {
			mu.Lock()
			batches++
			lose := drop[batches]
			mu.Unlock()
			if lose {
				panic(http.ErrAbortHandler) // done by the service, never answered
			}
		}
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		_, _ = w.Write(answer)
	}))
	ts.Defer(srv.Close)
	return srv.URL + u.Path
}
