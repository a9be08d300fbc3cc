package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/migrate-tool/migrate/odata/auth/authtest"
	"github.com/migrate-tool/migrate/odata/captest"
)

// capPool holds the CAP services of the scripts: a script's `cap start`
// takes one that no running script holds, emptied, and gives it back when
// the script ends, so that the scripts start a service each only as many
// at a time as run at once (TestScripts stops them at its end).
var capPool captest.Pool

var (
	capMu      sync.Mutex
	capServers = map[*testscript.TestScript]map[string]*captest.Server{}
	capTokens  = map[*testscript.TestScript]map[string]*authtest.TokenServer{}
	capFilters = map[*testscript.TestScript][]string{}
)

// capCondition is [cap]: the CAP test service can run here, or must (CI),
// so a script that needs it skips only where it is not installed and not
// required (docs/other-services.md, The CAP test service).
func capCondition() bool { return captest.Installed() == nil || captest.Required() }

// cmdCap: `cap start [as=NAME] [drop=N]` gives the script a CAP test
// service (odata/captest), holding nothing, until it ends (capPool), and
// points MIGRATE_TARGET at it
// (with as=NAME, the connection's MIGRATE_NAME_TARGET), with a user and
// password it takes; with drop=N,M through a proxy that loses the answers
// of the Nth and Mth $batch that create (dropProxy); with oauth=USES
// behind a token endpoint of the client credentials grant whose tokens
// are good for USES requests (oauthProxy), MIGRATE_TOKEN_URL,
// MIGRATE_CLIENT_ID and MIGRATE_CLIENT_SECRET set instead of a user;
// `cap tokens [@NAME]` prints how many tokens were issued and requests refused;
// with log through a proxy that keeps the $filter of every call, which
// `cap filters` prints, one a line, and forgets;
// `cap id SET FIELD=VALUE ENV` sets ENV to the ID of the row with FIELD = VALUE;
// `cap patch SET(KEY) JSON` changes what the service holds, as a user would;
// `cap dump [@NAME] SET [EXPAND]` prints what it holds of SET, with EXPAND
// as $expand, the values it makes up (Guids, times) steadied.
func cmdCap(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: cap start [as=NAME] [drop=N,M | oauth=USES | log] | cap dump [@NAME] SET [EXPAND] | cap id SET FIELD=VALUE ENV | cap patch SET(KEY) JSON | cap filters | cap tokens [@NAME]")
	}
	switch args[0] {
	case "start":
		name, drop, uses, logged := "", map[int]bool{}, -1, false
		for _, a := range args[1:] {
			k, v, _ := strings.Cut(a, "=")
			switch k {
			case "as":
				name = v
			case "log":
				logged = true
			case "oauth":
				n, err := strconv.Atoi(v)
				if err != nil || n < 0 {
					ts.Fatalf("cap start: oauth=%s: want how many requests a token is good for (0: no limit)", v)
				}
				uses = n
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
		s, err := capPool.Get(context.Background())
		if err != nil {
			ts.Fatalf("cap start: %v", err)
		}
		ts.Defer(func() { capPool.Put(s) })
		root, tokenURL := s.Root, ""
		var tokens *authtest.TokenServer
		switch {
		case len(drop) > 0 && uses >= 0, logged && (len(drop) > 0 || uses >= 0):
			ts.Fatalf("cap start: drop, oauth and log do not go together")
		case logged:
			root = logProxy(ts, s.Root)
		case len(drop) > 0:
			root = dropProxy(ts, s.Root, drop)
		case uses >= 0:
			root, tokenURL, tokens = oauthProxy(ts, s.Root, uses)
		}
		capMu.Lock()
		if capServers[ts] == nil {
			capServers[ts] = map[string]*captest.Server{}
			ts.Defer(func() {
				capMu.Lock()
				delete(capServers, ts)
				delete(capTokens, ts)
				delete(capFilters, ts)
				capMu.Unlock()
			})
		}
		capServers[ts][name] = s
		if tokens != nil {
			if capTokens[ts] == nil {
				capTokens[ts] = map[string]*authtest.TokenServer{}
			}
			capTokens[ts][name] = tokens
		}
		capMu.Unlock()
		env := "MIGRATE_"
		if name != "" {
			env += strings.ToUpper(name) + "_"
		}
		ts.Setenv(env+"TARGET", root)
		if tokens != nil {
			ts.Setenv(env+"TOKEN_URL", tokenURL)
			ts.Setenv(env+"CLIENT_ID", capClientID)
			ts.Setenv(env+"CLIENT_SECRET", capClientSecret)
			return
		}
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
		s := capServer(ts, "dump", name)
		expand := ""
		if len(args) == 2 {
			expand = args[1]
		}
		out, err := captest.Dump(context.Background(), s.Root, args[0], expand)
		ts.Check(err)
		_, _ = ts.Stdout().Write(out)
	case "id":
		// cap id SET FIELD=VALUE ENV: ENV is the ID of SET's row with FIELD = VALUE.
		if len(args) != 4 || !strings.Contains(args[2], "=") {
			ts.Fatalf("usage: cap id SET FIELD=VALUE ENV")
		}
		s := capServer(ts, "id", "")
		field, value, _ := strings.Cut(args[2], "=")
		id, err := captest.ID(context.Background(), s.Root, args[1], field, value)
		ts.Check(err)
		ts.Setenv(args[3], id)
	case "patch":
		// cap patch PATH JSON: a user of the service changes what PATH holds.
		if len(args) != 3 {
			ts.Fatalf("usage: cap patch SET(KEY) JSON")
		}
		s := capServer(ts, "patch", "")
		ts.Check(captest.Patch(context.Background(), s.Root, args[1], args[2]))
	case "filters":
		capMu.Lock()
		sent := capFilters[ts]
		delete(capFilters, ts)
		capMu.Unlock()
		for _, f := range sent {
			fmt.Fprintln(ts.Stdout(), f)
		}
	case "tokens":
		name := ""
		if len(args) > 1 && strings.HasPrefix(args[1], "@") {
			name = args[1][1:]
		}
		capMu.Lock()
		tokens := capTokens[ts][name]
		capMu.Unlock()
		if tokens == nil {
			ts.Fatalf("cap tokens: no CAP service %q started with oauth=N", name)
		}
		fmt.Fprintf(ts.Stdout(), "issued %d, refused %d, scopes %q\n", tokens.Issued(), tokens.Refused(), tokens.Scopes())
	default:
		ts.Fatalf("cap %s: want start, dump, id, patch, filters or tokens", args[0])
	}
}

// capServer is the CAP service the script started (`cap start`, as=NAME
// for a named one); the cap command cmd fails without one.
func capServer(ts *testscript.TestScript, cmd, name string) *captest.Server {
	capMu.Lock()
	s := capServers[ts][name]
	capMu.Unlock()
	if s == nil {
		if name == "" {
			ts.Fatalf("cap %s: no CAP service started", cmd)
		}
		ts.Fatalf("cap %s: no CAP service %q started", cmd, name)
	}
	return s
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
	srv := httptest.NewServer(forward(u, func(r *http.Request, body []byte) bool {
		if !strings.HasSuffix(r.URL.Path, "/$batch") || !bytes.Contains(body, []byte(`"POST"`)) {
			return false
		}
		mu.Lock()
		defer mu.Unlock()
		batches++
		return drop[batches]
	}))
	ts.Defer(srv.Close)
	return srv.URL + u.Path
}

// forward passes every call on to the server of u as it came, unless
// lose says its answer is lost: then the call is carried out and the
// connection closed unanswered.
func forward(u *url.URL, lose func(r *http.Request, body []byte) bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
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
		if lose != nil && lose(r, body) {
			panic(http.ErrAbortHandler) // done by the service, never answered
		}
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		_, _ = w.Write(answer)
	})
}

// logProxy stands before the service at root, passes every call on, and
// keeps the $filter of each (`cap filters` prints and forgets them): what
// the service was sent, as it decodes it.
func logProxy(ts *testscript.TestScript, root string) string {
	u, err := url.Parse(root)
	ts.Check(err)
	srv := httptest.NewServer(forward(u, func(r *http.Request, _ []byte) bool {
		if f := r.URL.Query().Get("$filter"); f != "" {
			capMu.Lock()
			capFilters[ts] = append(capFilters[ts], f)
			capMu.Unlock()
		}
		return false
	}))
	ts.Defer(srv.Close)
	return srv.URL + u.Path
}

// Client credentials of `cap start oauth=N`.
const (
	capClientID     = "migrate-app"
	capClientSecret = "cap-client-s3cret"
)

// oauthProxy stands before the service at root as a service of the
// client credentials grant does: a token endpoint (authtest.TokenServer,
// on a host of its own) issues tokens good for uses requests (0: no
// limit), and the proxy lets through, signed with the service's own user,
// only the requests that carry one still good. It returns the service
// root through it and the token endpoint's address.
func oauthProxy(ts *testscript.TestScript, root string, uses int) (string, string, *authtest.TokenServer) {
	u, err := url.Parse(root)
	ts.Check(err)
	tokens := &authtest.TokenServer{ClientID: capClientID, Secret: capClientSecret, Uses: uses}
	mux := http.NewServeMux()
	mux.Handle("/oauth2/token", tokens)
	idp := httptest.NewServer(mux)
	ts.Defer(idp.Close)
	through := forward(u, nil)
	srv := httptest.NewServer(tokens.Guard(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.SetBasicAuth("alice", "alice")
		through.ServeHTTP(w, r)
	})))
	ts.Defer(srv.Close)
	return srv.URL + u.Path, idp.URL + "/oauth2/token", tokens
}
