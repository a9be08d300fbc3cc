package odata

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/migrate-tool/migrate/odata/odatatest"
)

// newFakeClock is the clients' clock in these tests: it advances when
// slept on and records every sleep.
func newFakeClock() *odatatest.Clock {
	return odatatest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
}

const testPassword = "s3cret-pw"

// seen is what a test server recorded of one request.
type seen struct {
	Method, Path, Query string
	Header              http.Header
	Body                []byte
}

// failTwice is a server that answers its first two calls with fail and
// every later one with ok.
func failTwice(t *testing.T, fail, ok func(w http.ResponseWriter)) (*httptest.Server, func() []seen) {
	t.Helper()
	var n atomic.Int32
	return newServer(t, func(w http.ResponseWriter, _ *http.Request, _ []byte) {
		if n.Add(1) <= 2 {
			fail(w)
			return
		}
		ok(w)
	})
}

// newServer starts a server whose handler also records requests.
func newServer(t *testing.T, h func(w http.ResponseWriter, r *http.Request, body []byte)) (*httptest.Server, func() []seen) {
	t.Helper()
	var mu sync.Mutex
	var log []seen
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		log = append(log, seen{r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Clone(), body})
		mu.Unlock()
		h(w, r, body)
	}))
	t.Cleanup(srv.Close)
	return srv, func() []seen {
		mu.Lock()
		defer mu.Unlock()
		return append([]seen(nil), log...)
	}
}

func newTestClient(t *testing.T, srv *httptest.Server, mod func(*Config)) (*Client, *odatatest.Clock) {
	t.Helper()
	clk := newFakeClock()
	cfg := Config{
		BaseURL:    srv.URL + "/odata/Priority/tabula.ini/demo",
		Auth:       BasicAuth{User: "api", Password: testPassword},
		HTTPClient: srv.Client(),
		Clock:      clk,
	}
	if mod != nil {
		mod(&cfg)
	}
	c, err := NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c, clk
}

func writeJSONAnswer(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v) //nolint:errcheck
}

func TestClientHeadersAndAuth(t *testing.T) {
	t.Parallel()
	srv, log := newServer(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		writeJSONAnswer(w, 201, map[string]any{"ORDNAME": "SO1", "QUANT": json.Number("9007199254740993")})
	})
	c, _ := newTestClient(t, srv, func(cfg *Config) { cfg.Language = 3; cfg.AppID = "app"; cfg.AppKey = "key" })
	var out map[string]any
	if err := c.Post(context.Background(), "ORDERS", []byte(`{"CUSTNAME":"C1"}`), &out); err != nil {
		t.Fatal(err)
	}
	if out["QUANT"] != json.Number("9007199254740993") {
		t.Errorf("number lost: %#v", out["QUANT"])
	}
	r := log()[0]
	if r.Path != "/odata/Priority/tabula.ini,3/demo/ORDERS" {
		t.Errorf("path %s", r.Path)
	}
	want := map[string]string{"Accept": "application/json", "Odata-Version": "4.0", "Content-Type": "application/json", "X-App-Id": "app", "X-App-Key": "key"}
	for k, v := range want {
		if r.Header.Get(k) != v {
			t.Errorf("header %s = %q, want %q", k, r.Header.Get(k), v)
		}
	}
	u, p, ok := (&http.Request{Header: r.Header}).BasicAuth()
	if !ok || u != "api" || p != testPassword {
		t.Errorf("basic auth = %q %q %v", u, p, ok)
	}
	if string(r.Body) != `{"CUSTNAME":"C1"}` {
		t.Errorf("body %s", r.Body)
	}

	c2, _ := newTestClient(t, srv, func(cfg *Config) { cfg.Auth = PATAuth{Token: "tok123"} })
	if err := c2.Get(context.Background(), "ORDERS", Query{Top: 1}, nil); err != nil {
		t.Fatal(err)
	}
	last := log()[1]
	u, p, ok = (&http.Request{Header: last.Header}).BasicAuth()
	if !ok || u != "tok123" || p != "PAT" {
		t.Errorf("PAT auth = %q %q", u, p)
	}
	if last.Header.Get("Content-Type") != "" || last.Query != "$top=1" {
		t.Errorf("GET carried Content-Type %q, query %q", last.Header.Get("Content-Type"), last.Query)
	}
	for _, s := range []string{fmt.Sprint(BasicAuth{"u", testPassword}), fmt.Sprintf("%+v %#v", BasicAuth{"u", testPassword}, BasicAuth{"u", testPassword}), fmt.Sprintf("%v %#v", PATAuth{testPassword}, PATAuth{testPassword})} {
		if strings.Contains(s, testPassword) {
			t.Errorf("secret printed: %s", s)
		}
	}
}

func TestClientVersion(t *testing.T) {
	t.Parallel()
	const answer = "23.1-srv01"
	sys := Version{23, 1, answer, "GetSystemVersion()", false}
	pri := Version{23, 1, answer, "GetPriorityVersion()", false}
	// A status of 0 answers a value that is no version.
	tests := []struct {
		name     string
		sys, pri int
		want     Version
		known    bool
		calls    int
	}{
		{"system", 200, 0, sys, true, 1},
		{"priority name", 404, 200, pri, true, 2},
		// docs/servers.md, Connection: any failure of one version function
		// means trying the other.
		{"system fails", 500, 200, pri, true, 2},
		{"system garbled", 0, 200, pri, true, 2},
		{"neither", 404, 400, Version{}, false, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv, log := newServer(t, func(w http.ResponseWriter, r *http.Request, _ []byte) {
				status := tc.sys
				if strings.HasSuffix(r.URL.Path, "GetPriorityVersion()") {
					status = tc.pri
				}
				switch status {
				case 200:
					writeJSONAnswer(w, 200, map[string]string{"@odata.context": "x", "value": answer})
				case 0:
					writeJSONAnswer(w, 200, map[string]string{"@odata.context": "x", "value": "unknown"})
				default:
					w.WriteHeader(status)
				}
			})
			c, _ := newTestClient(t, srv, noRetries)
			for range 2 {
				v, err := c.Version(context.Background())
				if err != nil || v != tc.want {
					t.Fatalf("Version = %+v, %v; want %+v", v, err, tc.want)
				}
			}
			if c.VersionKnown() != tc.known || len(log()) != tc.calls {
				t.Errorf("known=%v calls=%d", c.VersionKnown(), len(log()))
			}
			c.SetVersion(Version{Major: 25, Minor: 1})
			if v, _ := c.Version(context.Background()); v.Major != 25 || !c.VersionKnown() {
				t.Errorf("SetVersion ignored")
			}
		})
	}
}

// noRetries counts one call per function: a 5xx is otherwise tried again.
func noRetries(c *Config) { c.Retries = -1 }

// When both functions fail otherwise than "not there", the error is the
// first one, and the next call asks again.
func TestClientVersionFailureNotCached(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		sys, pri int
		is       func(error) bool
	}{
		{"refused", 401, 401, IsUnauthorized},
		{"server error, then missing", 500, 404, IsServerError},
		{"missing, then server error", 404, 503, IsServerError},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var n atomic.Int32
			srv, _ := newServer(t, func(w http.ResponseWriter, r *http.Request, _ []byte) {
				switch {
				case n.Add(1) > 2:
					writeJSONAnswer(w, 200, map[string]string{"value": "22.1"})
				case strings.HasSuffix(r.URL.Path, "GetPriorityVersion()"):
					w.WriteHeader(tc.pri)
				default:
					w.WriteHeader(tc.sys)
				}
			})
			c, _ := newTestClient(t, srv, noRetries)
			if _, err := c.Version(context.Background()); !tc.is(err) {
				t.Fatalf("err = %v", err)
			}
			if v, err := c.Version(context.Background()); err != nil || v.String() != "22.1" {
				t.Errorf("second try = %v, %v", v, err)
			}
		})
	}
}

func TestClientServiceFunctions(t *testing.T) {
	t.Parallel()
	srv, log := newServer(t, func(w http.ResponseWriter, r *http.Request, _ []byte) {
		switch {
		case strings.HasSuffix(r.URL.Path, "GetODataVersion()"):
			writeJSONAnswer(w, 200, map[string]string{"value": "4.0"})
		case strings.HasSuffix(r.URL.Path, "GetLoginName"):
			writeJSONAnswer(w, 200, map[string]string{"value": "tabula"})
		case strings.HasSuffix(r.URL.Path, "ClearEntityMetadata"):
			w.WriteHeader(204)
		}
	})
	c, _ := newTestClient(t, srv, nil)
	ctx := context.Background()
	if v, err := c.ODataVersion(ctx); v != "4.0" || err != nil {
		t.Errorf("ODataVersion = %q %v", v, err)
	}
	if v, err := c.LoginName(ctx); v != "tabula" || err != nil {
		t.Errorf("LoginName = %q %v", v, err)
	}
	if err := c.ClearEntityMetadata(ctx, "ORDERS"); err != nil {
		t.Fatal(err)
	}
	if err := c.ClearEntityMetadata(ctx, ""); err != nil {
		t.Fatal(err)
	}
	l := log()
	if l[2].Method != "POST" || string(l[2].Body) != `{"Entity":"ORDERS"}` || len(l[3].Body) != 0 {
		t.Errorf("ClearEntityMetadata sent %s %q / %q", l[2].Method, l[2].Body, l[3].Body)
	}
}

func TestClientGetRetries(t *testing.T) {
	t.Parallel()
	var n atomic.Int32
	srv, _ := newServer(t, func(w http.ResponseWriter, r *http.Request, _ []byte) {
		// Fresh connections, so that net/http does not retry the dropped
		// one by itself.
		w.Header().Set("Connection", "close")
		switch n.Add(1) {
		case 1:
			w.WriteHeader(503)
		case 2:
			w.Header().Set("Retry-After", "7")
			w.WriteHeader(429)
		case 3:
			// Drop the connection: a transport error.
			hj, _ := w.(http.Hijacker)
			conn, _, _ := hj.Hijack()
			conn.Close()
		default:
			writeJSONAnswer(w, 200, map[string]any{"value": []any{}})
		}
	})
	c, clk := newTestClient(t, srv, nil)
	var waits []Wait
	ctx := WithWaitTrace(context.Background(), func(w Wait) { waits = append(waits, w) })
	if err := c.Get(ctx, "ORDERS", Query{}, nil); err != nil {
		t.Fatal(err)
	}
	want := []time.Duration{500 * time.Millisecond, 7 * time.Second, 2 * time.Second}
	if got := clk.Sleeps(); !reflect.DeepEqual(got, want) {
		t.Errorf("sleeps = %v, want %v", got, want)
	}
	// Every pause is told before it is taken; only the 429's is the rate
	// limit's.
	wantWaits := []Wait{{500 * time.Millisecond, false}, {7 * time.Second, true}, {2 * time.Second, false}}
	if !reflect.DeepEqual(waits, wantWaits) {
		t.Errorf("traced waits = %v, want %v", waits, wantWaits)
	}
}

// TestClientGetRetries500: a plain 500 on a read is retried like a
// gateway's (found by the fault campaign: an injected 500 on $metadata or
// the version read made apply exit 3 before it sent anything).
func TestClientGetRetries500(t *testing.T) {
	t.Parallel()
	srv, log := failTwice(t, func(w http.ResponseWriter) { w.WriteHeader(500) }, func(w http.ResponseWriter) {
		writeJSONAnswer(w, 200, map[string]any{"value": []any{}})
	})
	c, clk := newTestClient(t, srv, nil)
	if err := c.Get(context.Background(), "ORDERS", Query{}, nil); err != nil {
		t.Fatalf("a read after two 500s: %v", err)
	}
	if len(log()) != 3 || len(clk.Sleeps()) != 2 {
		t.Errorf("%d attempts and sleeps %v, want 3 attempts after 2 backoffs", len(log()), clk.Sleeps())
	}
}

func TestClientGetGivesUp(t *testing.T) {
	t.Parallel()
	srv, log := newServer(t, func(w http.ResponseWriter, r *http.Request, _ []byte) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(502)
		io.WriteString(w, "<html><title>Bad Gateway</title></html>") //nolint:errcheck
	})
	c, _ := newTestClient(t, srv, func(cfg *Config) { cfg.Retries = 2 })
	err := c.Get(context.Background(), "ORDERS", Query{}, nil)
	var e *Error
	if !errors.As(err, &e) || e.Status != 502 || !e.HTML || e.Snippet != "Bad Gateway" {
		t.Fatalf("err = %#v", err)
	}
	if len(log()) != 3 {
		t.Errorf("%d attempts, want 3", len(log()))
	}
	// A 400 is not retried.
	srv2, log2 := newServer(t, func(w http.ResponseWriter, r *http.Request, _ []byte) {
		w.WriteHeader(400)
		w.Write(ScreenErrorXML("ORDERS", nil, []string{"Line 1- Customer X not found"})) //nolint:errcheck
	})
	c2, _ := newTestClient(t, srv2, nil)
	err = c2.Get(context.Background(), "ORDERS", Query{}, nil)
	if !IsScreenError(err) || err.Error() != "ORDERS: Line 1- Customer X not found (HTTP 400)" || len(log2()) != 1 {
		t.Errorf("err = %v after %d calls", err, len(log2()))
	}
}

func TestClientWritesInDoubt(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		handler func(w http.ResponseWriter)
		status  int // the *Error inside, 0 for a transport error
	}{
		{"gateway timeout", func(w http.ResponseWriter) { w.WriteHeader(504) }, 504},
		{"connection dropped", func(w http.ResponseWriter) {
			conn, _, _ := w.(http.Hijacker).Hijack()
			conn.Close()
		}, 0},
		{"response cut", func(w http.ResponseWriter) {
			conn, buf, _ := w.(http.Hijacker).Hijack()
			buf.WriteString("HTTP/1.1 201 Created\r\nContent-Length: 100\r\n\r\n{\"a\"") //nolint:errcheck
			buf.Flush()                                                                  //nolint:errcheck
			conn.Close()
		}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv, log := newServer(t, func(w http.ResponseWriter, r *http.Request, _ []byte) { tc.handler(w) })
			c, _ := newTestClient(t, srv, nil)
			err := c.Post(context.Background(), "ORDERS", []byte(`{}`), nil)
			var ide *InDoubtError
			if !errors.As(err, &ide) || ide.Op != "POST ORDERS" {
				t.Fatalf("err = %v, want *InDoubtError", err)
			}
			if tc.status != 0 && !isStatus(err, tc.status) {
				t.Errorf("inner status lost: %v", err)
			}
			if n := len(log()); n != 1 {
				t.Errorf("write sent %d times", n)
			}
			if strings.Contains(err.Error(), testPassword) {
				t.Errorf("secret in error: %v", err)
			}
		})
	}
}

func TestClientWriteTimeoutInDoubt(t *testing.T) {
	t.Parallel()
	srv, _ := newServer(t, func(w http.ResponseWriter, r *http.Request, _ []byte) { <-r.Context().Done() })
	c, _ := newTestClient(t, srv, func(cfg *Config) { cfg.Timeout = 50 * time.Millisecond })
	err := c.Patch(context.Background(), "ORDERS('X')", []byte(`{}`), nil)
	var ide *InDoubtError
	if !errors.As(err, &ide) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v", err)
	}
}

func TestClientWriteRetriedWhenNotSent(t *testing.T) {
	t.Parallel()
	// 429: the server refused before doing anything.
	var n atomic.Int32
	srv, log := newServer(t, func(w http.ResponseWriter, r *http.Request, _ []byte) {
		if n.Add(1) == 1 {
			w.Header().Set("Retry-After", "3")
			w.WriteHeader(429)
			return
		}
		writeJSONAnswer(w, 201, map[string]string{"ORDNAME": "SO1"})
	})
	c, clk := newTestClient(t, srv, nil)
	var out map[string]any
	if err := c.Post(context.Background(), "ORDERS", []byte(`{}`), &out); err != nil || out["ORDNAME"] != "SO1" {
		t.Fatalf("Post = %v, %v", out, err)
	}
	if len(log()) != 2 || !reflect.DeepEqual(clk.Sleeps(), []time.Duration{3 * time.Second}) {
		t.Errorf("calls %d, sleeps %v", len(log()), clk.Sleeps())
	}

	// Connection refused: provably not sent, so retried, and no InDoubtError.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	clk2 := newFakeClock()
	c2, err := NewClient(Config{BaseURL: "http://" + addr + "/odata/Priority/tabula.ini/demo", Clock: clk2, Retries: 2,
		Auth: BasicAuth{"u", testPassword}})
	if err != nil {
		t.Fatal(err)
	}
	err = c2.Post(context.Background(), "ORDERS", []byte(`{}`), nil)
	var ide *InDoubtError
	if err == nil || errors.As(err, &ide) || len(clk2.Sleeps()) != 2 {
		t.Errorf("refused: err = %v, sleeps %v", err, clk2.Sleeps())
	}
	if err != nil && strings.Contains(err.Error(), testPassword) {
		t.Errorf("secret in error")
	}
}

func TestClientResponseLimit(t *testing.T) {
	t.Parallel()
	srv, _ := newServer(t, func(w http.ResponseWriter, r *http.Request, _ []byte) {
		writeJSONAnswer(w, 200, map[string]string{"value": strings.Repeat("x", 100)})
	})
	c, _ := newTestClient(t, srv, func(cfg *Config) { cfg.MaxResponseBytes = 50 })
	if err := c.Get(context.Background(), "X", Query{}, nil); !errors.Is(err, ErrResponseTooLarge) {
		t.Errorf("err = %v", err)
	}
}

func TestClientHTMLWith200(t *testing.T) {
	t.Parallel()
	srv, _ := newServer(t, func(w http.ResponseWriter, r *http.Request, _ []byte) {
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, "<!DOCTYPE html><html><head><title>Sign in</title></head></html>") //nolint:errcheck
	})
	c, _ := newTestClient(t, srv, nil)
	var out map[string]any
	err := c.Get(context.Background(), "ORDERS", Query{}, &out)
	var e *Error
	if !errors.As(err, &e) || !e.HTML || e.Snippet != "Sign in" {
		t.Errorf("err = %v", err)
	}
}

// A next link is followed only within the service root: credentials go
// only where they were given.
func TestLinkPath(t *testing.T) {
	t.Parallel()
	c, err := NewClient(Config{BaseURL: "https://erp.example.com/odata/Priority/tabula.ini/demo"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ link, want, err string }{
		{link: "ORDERS?$skiptoken=2000", want: "ORDERS?$skiptoken=2000"},
		{link: "https://erp.example.com/odata/Priority/tabula.ini/demo/ORDERS?$skip=2000", want: "ORDERS?$skip=2000"},
		{link: "https://evil.example.com/odata/Priority/tabula.ini/demo/ORDERS?$skip=2000", err: "leads outside the service root"},
		{link: "../other/ORDERS", err: "leads outside the service root"},
		{link: "/", err: "leads outside the service root"},
	} {
		got, err := c.LinkPath(tc.link)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: %q, %v; want an error with %q", tc.link, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s: %q, %v; want %q", tc.link, got, err, tc.want)
		}
	}
}

func TestClientRateLimit(t *testing.T) {
	t.Parallel()
	srv, _ := newServer(t, func(w http.ResponseWriter, r *http.Request, _ []byte) { w.WriteHeader(204) })
	c, clk := newTestClient(t, srv, func(cfg *Config) { cfg.CallsPerMinute = 60 })
	var waits []Wait
	ctx := WithWaitTrace(context.Background(), func(w Wait) { waits = append(waits, w) })
	for range 3 {
		if err := c.Get(ctx, "X", Query{}, nil); err != nil {
			t.Fatal(err)
		}
	}
	if got := clk.Sleeps(); !reflect.DeepEqual(got, []time.Duration{time.Second, time.Second}) {
		t.Errorf("sleeps = %v", got)
	}
	if want := []Wait{{time.Second, true}, {time.Second, true}}; !reflect.DeepEqual(waits, want) {
		t.Errorf("traced waits = %v, want %v", waits, want)
	}
}

func TestClientMaxConcurrent(t *testing.T) {
	t.Parallel()
	var inflight, maxSeen atomic.Int32
	arrived := make(chan struct{}, 10)
	gate := make(chan struct{})
	srv, _ := newServer(t, func(w http.ResponseWriter, r *http.Request, _ []byte) {
		n := inflight.Add(1)
		for {
			m := maxSeen.Load()
			if n <= m || maxSeen.CompareAndSwap(m, n) {
				break
			}
		}
		arrived <- struct{}{}
		<-gate
		inflight.Add(-1)
		w.WriteHeader(204)
	})
	c, _ := newTestClient(t, srv, func(cfg *Config) { cfg.MaxConcurrent = 2 })
	var wg sync.WaitGroup
	for range 6 {
		wg.Go(func() {
			if err := c.Get(context.Background(), "X", Query{}, nil); err != nil {
				t.Error(err)
			}
		})
	}
	for range 6 {
		<-arrived
		gate <- struct{}{}
	}
	wg.Wait()
	if m := maxSeen.Load(); m > 2 || m < 1 {
		t.Errorf("max in flight %d, want at most 2", m)
	}
}

func TestClientTLS(t *testing.T) {
	t.Parallel()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeJSONAnswer(w, 200, map[string]string{"value": "4.0"})
	}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake is expected
	srv.StartTLS()
	defer srv.Close()
	base := srv.URL + "/odata/Priority/tabula.ini/demo"

	// Without the CA: refused at once, with advice, not retried.
	clk := newFakeClock()
	c, err := NewClient(Config{BaseURL: base, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.ODataVersion(context.Background())
	if err == nil || !strings.Contains(err.Error(), "CACertFile") || len(clk.Sleeps()) != 0 {
		t.Errorf("untrusted: err = %v, sleeps %v", err, clk.Sleeps())
	}

	// With the CA file: works.
	ca := filepath.Join(t.TempDir(), "ca.pem")
	pemData := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	if err := os.WriteFile(ca, pemData, 0o600); err != nil {
		t.Fatal(err)
	}
	c, err = NewClient(Config{BaseURL: base, CACertFile: ca})
	if err != nil {
		t.Fatal(err)
	}
	if v, err := c.ODataVersion(context.Background()); err != nil || v != "4.0" {
		t.Errorf("with CA: %q, %v", v, err)
	}

	// Switching checks off is refused; so is a file with no certificate.
	insecure := srv.Client()
	insecure.Transport.(*http.Transport).TLSClientConfig.InsecureSkipVerify = true
	if _, err := NewClient(Config{BaseURL: base, HTTPClient: insecure}); err == nil {
		t.Errorf("InsecureSkipVerify accepted")
	}
	bad := filepath.Join(t.TempDir(), "bad.pem")
	os.WriteFile(bad, []byte("nothing"), 0o600) //nolint:errcheck
	if _, err := NewClient(Config{BaseURL: base, CACertFile: bad}); err == nil {
		t.Errorf("empty CA file accepted")
	}
	if _, err := NewClient(Config{BaseURL: "not a url"}); err == nil {
		t.Errorf("bad base URL accepted")
	}
}

func TestClientMetadata(t *testing.T) {
	t.Parallel()
	m := demoModel()
	var doc, frag bytes.Buffer
	if err := m.WriteXML(&doc); err != nil {
		t.Fatal(err)
	}
	if err := m.Type("ORDERS").WriteXML(&frag, m.Namespace); err != nil {
		t.Fatal(err)
	}
	var prepared atomic.Bool
	srv, log := newServer(t, func(w http.ResponseWriter, r *http.Request, _ []byte) {
		switch {
		case strings.HasSuffix(r.URL.Path, "/$metadata"):
			w.Header().Set("Content-Type", "application/xml")
			w.Write(doc.Bytes()) //nolint:errcheck
		case strings.Contains(r.URL.Path, "GetMetadataFor"):
			if !prepared.Load() {
				w.WriteHeader(400)
				w.Write(ODataErrorJSON("400", "metadata not prepared")) //nolint:errcheck
				return
			}
			w.Write(frag.Bytes()) //nolint:errcheck
		case strings.HasSuffix(r.URL.Path, "/ORDERS"):
			prepared.Store(true)
			writeJSONAnswer(w, 200, map[string]any{"value": []any{}})
		}
	})
	c, _ := newTestClient(t, srv, nil)
	got, raw, err := c.Metadata(context.Background())
	if err != nil || !sameMetadata(got, m) || !bytes.Equal(raw, doc.Bytes()) {
		t.Fatalf("Metadata = %v, %v", got, err)
	}
	if a := log()[0].Header.Get("Accept"); a != "application/xml" {
		t.Errorf("Accept %q", a)
	}
	et, _, err := c.MetadataFor(context.Background(), "ORDERS")
	if err != nil || !sameType(et, m.Type("ORDERS")) {
		t.Fatalf("MetadataFor = %v, %v", et, err)
	}
	var paths []string
	for _, s := range log()[1:] {
		paths = append(paths, strings.TrimPrefix(s.Path, "/odata/Priority/tabula.ini/demo/")+"?"+s.Query)
	}
	want := []string{"ORDERS?$top=1", "GetMetadataFor(entity='ORDERS')?"}
	if !reflect.DeepEqual(paths, want) {
		t.Errorf("calls = %v, want %v", paths, want)
	}
}

// docs/servers.md, Reading and Metadata: a cold form answers 404 to its first
// GET, and a cold entity's GetMetadataFor can answer another entity's type.
// MetadataFor warms the entity, takes only the type asked for, and never the
// other.
func TestClientMetadataForColdEntity(t *testing.T) {
	t.Parallel()
	m := demoModel()
	frag := func(name string) []byte {
		var b bytes.Buffer
		if err := m.Type(name).WriteXML(&b, m.Namespace); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	tests := []struct {
		name      string
		wrongFor  int // how many GetMetadataFor answers give another type
		want      []string
		wantError string
	}{
		{"warm at once", 0, []string{"ORDERS?$top=1 404", "ORDERS?$top=1 200", "GetMetadataFor 200"}, ""},
		{"another type once", 1, []string{"ORDERS?$top=1 404", "ORDERS?$top=1 200", "GetMetadataFor 200", "ORDERS?$top=1 200", "GetMetadataFor 200"}, ""},
		{"another type always", 9, []string{"ORDERS?$top=1 404", "ORDERS?$top=1 200", "GetMetadataFor 200", "ORDERS?$top=1 200", "GetMetadataFor 200"},
			"no EntityType ORDERS, only ORDERITEMS_SUBFORM"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var mu sync.Mutex
			var calls []string
			reads, wrong := 0, tt.wrongFor
			srv, _ := newServer(t, func(w http.ResponseWriter, r *http.Request, _ []byte) {
				mu.Lock()
				defer mu.Unlock()
				switch {
				case strings.Contains(r.URL.Path, "GetMetadataFor"):
					calls = append(calls, "GetMetadataFor 200")
					w.Header().Set("Content-Type", "application/xml")
					if wrong > 0 {
						wrong--
						w.Write(frag("ORDERITEMS_SUBFORM")) //nolint:errcheck
						return
					}
					w.Write(frag("ORDERS")) //nolint:errcheck
				case strings.HasSuffix(r.URL.Path, "/ORDERS"):
					if reads++; reads == 1 {
						calls = append(calls, "ORDERS?"+r.URL.RawQuery+" 404")
						w.WriteHeader(404)
						return
					}
					calls = append(calls, "ORDERS?"+r.URL.RawQuery+" 200")
					writeJSONAnswer(w, 200, map[string]any{"value": []any{}})
				}
			})
			c, _ := newTestClient(t, srv, nil)
			et, _, err := c.MetadataFor(context.Background(), "ORDERS")
			switch {
			case tt.wantError == "" && (err != nil || !sameType(et, m.Type("ORDERS"))):
				t.Errorf("MetadataFor = %v, %v", et, err)
			case tt.wantError != "" && (err == nil || et != nil || !strings.Contains(err.Error(), tt.wantError)):
				t.Errorf("MetadataFor = %v, %v; want an error with %q", et, err, tt.wantError)
			}
			mu.Lock()
			defer mu.Unlock()
			if !reflect.DeepEqual(calls, tt.want) {
				t.Errorf("calls = %q, want %q", calls, tt.want)
			}
		})
	}
}

func TestClientBatch(t *testing.T) {
	t.Parallel()
	reqs := []BatchRequest{
		{ID: "1", Method: "POST", URL: "ORDERS", Body: json.RawMessage(`{"CUSTNAME":"C1"}`)},
		{ID: "2", Method: "POST", URL: "$1/ORDERITEMS_SUBFORM", Body: json.RawMessage(`{"PARTNAME":"P"}`), DependsOn: []string{"1"}},
	}
	answers := []BatchResponse{
		{ID: "1", Status: 201, Headers: map[string]string{"Content-Type": "application/json"}, Body: json.RawMessage(`{"ORDNAME":"SO1"}`)},
		{ID: "2", Status: 201, Headers: map[string]string{"Content-Type": "application/json"}, Body: json.RawMessage(`{"KLINE":1}`)},
	}
	tests := []struct {
		name      string
		opts      BatchOptions
		answerFmt string // "json" or "multipart"
		wantCT    string
	}{
		{"json", BatchOptions{ContinueOnError: false}, "json", "application/json;odata.continue-on-error=false"},
		{"json continue", BatchOptions{ContinueOnError: true}, "json", "application/json;odata.continue-on-error=true"},
		{"json to an old server", BatchOptions{}, "multipart", "application/json;odata.continue-on-error=false"},
		{"multipart", BatchOptions{Multipart: true}, "multipart", "multipart/mixed;boundary="},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv, log := newServer(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
				if tc.answerFmt == "json" {
					w.Header().Set("Content-Type", "application/json")
					EncodeJSONBatchResponse(w, answers) //nolint:errcheck
					return
				}
				b := "batchresponse_x1"
				w.Header().Set("Content-Type", "multipart/mixed; boundary="+b)
				EncodeMultipartBatchResponse(w, b, answers) //nolint:errcheck
			})
			c, _ := newTestClient(t, srv, nil)
			got, err := c.Batch(context.Background(), reqs, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 2 || got[0].ID != "1" || got[0].Status != 201 || got[1].Status != 201 || !strings.Contains(string(got[1].Body), `"KLINE":1`) {
				t.Errorf("responses = %+v", got)
			}
			sent := log()
			if len(sent) != 2 || !strings.Contains(string(sent[0].Body), "ORDERS?$top=1") {
				t.Fatalf("sent %d calls, want the warm-up of ORDERS and the batch", len(sent))
			}
			s := sent[1]
			wantPrefer := fmt.Sprintf("odata.continue-on-error=%v", tc.opts.ContinueOnError)
			if s.Path != "/odata/Priority/tabula.ini/demo/$batch" || s.Header.Get("Prefer") != wantPrefer || !strings.HasPrefix(s.Header.Get("Content-Type"), tc.wantCT) {
				t.Errorf("sent %s Prefer=%q Content-Type=%q", s.Path, s.Header.Get("Prefer"), s.Header.Get("Content-Type"))
			}
			if tc.opts.Multipart {
				if !strings.Contains(s.Header.Get("Content-Type"), "continue-on-error=false") {
					t.Errorf("multipart Content-Type lacks the preference: %q", s.Header.Get("Content-Type"))
				}
			} else {
				back, err := DecodeJSONBatchRequest(bytes.NewReader(s.Body))
				if err != nil || len(back) != 2 || back[1].URL != "$1/ORDERITEMS_SUBFORM" || !reflect.DeepEqual(back[1].DependsOn, []string{"1"}) {
					t.Errorf("JSON body decodes to %+v, %v", back, err)
				}
			}
		})
	}
}

// TestBatchWarmsFormsBeforeWrites: a server answers 404 to the first
// request to a form since it started, a POST included (docs/servers.md,
// Reading: cold forms). The client reads SET?$top=1 of every set a batch
// writes to, once per set, in one call, before the first batch that writes to
// it; reads alone cost nothing more, and a set a read found (200) is warm
// already.
func TestBatchWarmsFormsBeforeWrites(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	warm := map[string]bool{}
	var calls [][]string // per call, method and URL of each sub-request
	srv, _ := newServer(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		reqs, err := DecodeJSONBatchRequest(bytes.NewReader(body))
		if err != nil {
			t.Error(err)
		}
		mu.Lock()
		defer mu.Unlock()
		var call []string
		var out []BatchResponse
		for _, q := range reqs {
			call = append(call, q.Method+" "+q.URL)
			set := EntitySetOf(q.URL)
			status := 201
			if q.Method == http.MethodGet {
				status = 200
			}
			if set != "" && !warm[set] {
				status = 404 // cold: refused, nothing changed
			}
			warm[set] = true
			out = append(out, BatchResponse{ID: q.ID, Status: status, Headers: map[string]string{"Content-Type": "application/json"}, Body: json.RawMessage(`{}`)})
		}
		calls = append(calls, call)
		w.Header().Set("Content-Type", "application/json")
		EncodeJSONBatchResponse(w, out) //nolint:errcheck
	})
	c, _ := newTestClient(t, srv, nil)
	ctx := context.Background()
	read := []BatchRequest{{ID: "1", Method: "GET", URL: "CUSTOMERS('C1')"}}
	for range 2 { // 404 (cold), then 200: CUSTOMERS is known warm
		if _, err := c.Batch(ctx, read, BatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	writes := []BatchRequest{
		{ID: "1", Method: "POST", URL: "ORDERS", Body: json.RawMessage(`{}`)},
		{ID: "2", Method: "POST", URL: "$1/ORDERITEMS_SUBFORM", Body: json.RawMessage(`{}`), DependsOn: []string{"1"}},
		{ID: "3", Method: "PATCH", URL: "LOGPART('P1')", Body: json.RawMessage(`{}`)},
		{ID: "4", Method: "POST", URL: "ORDERS", Body: json.RawMessage(`{}`)},
		{ID: "5", Method: "PATCH", URL: "CUSTOMERS('C1')", Body: json.RawMessage(`{}`)},
	}
	for round := 0; round < 2; round++ {
		got, err := c.Batch(ctx, writes, BatchOptions{ContinueOnError: true})
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range got {
			if g.Status >= 400 {
				t.Errorf("round %d: %s answered %d: the form was cold", round+1, g.ID, g.Status)
			}
		}
	}
	sent := []string{"POST ORDERS", "POST $1/ORDERITEMS_SUBFORM", "PATCH LOGPART('P1')", "POST ORDERS", "PATCH CUSTOMERS('C1')"}
	want := [][]string{
		{"GET CUSTOMERS('C1')"}, // a read is not warmed: the executor confirms its 404s
		{"GET CUSTOMERS('C1')"},
		{"GET ORDERS?$top=1", "GET LOGPART?$top=1"},
		sent,
		sent,
	}
	if !reflect.DeepEqual(calls, want) {
		t.Errorf("calls:\n got %q\nwant %q", calls, want)
	}
}

// TestBatchWarmUpFails: a warm-up is a read, retried when its connection
// drops; one the server never took leaves the form cold, so the batch is
// not sent onto it, and the error says so.
func TestBatchWarmUpFails(t *testing.T) {
	t.Parallel()
	writes := []BatchRequest{{ID: "1", Method: "POST", URL: "ORDERS", Body: json.RawMessage(`{}`)}}
	for _, drops := range []int{1, 100} {
		var mu sync.Mutex
		dropped, sentWrite := 0, false
		srv, _ := newServer(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
			mu.Lock()
			defer mu.Unlock()
			if !bytes.Contains(body, []byte("?$top=1")) {
				sentWrite = true
			} else if dropped < drops {
				dropped++
				conn, _, _ := w.(http.Hijacker).Hijack()
				conn.Close()
				return
			}
			w.Header().Set("Content-Type", "application/json")
			EncodeJSONBatchResponse(w, []BatchResponse{{ID: "1", Status: 201, Headers: map[string]string{"Content-Type": "application/json"}, Body: json.RawMessage(`{}`)}}) //nolint:errcheck
		})
		c, _ := newTestClient(t, srv, nil)
		_, err := c.Batch(context.Background(), writes, BatchOptions{ContinueOnError: true})
		mu.Lock()
		switch {
		case drops == 1 && (err != nil || !sentWrite):
			t.Errorf("one dropped warm-up: %v, write sent %v; want it retried and the batch sent", err, sentWrite)
		case drops > 1 && (!errors.As(err, new(*NotSentError)) || sentWrite || !strings.Contains(err.Error(), "POST $batch: not sent: warming up ORDERS?$top=1 before writing to it")):
			t.Errorf("every warm-up dropped: %v, write sent %v; want an error and no write", err, sentWrite)
		}
		mu.Unlock()
	}
}

func TestClientBatchFailures(t *testing.T) {
	t.Parallel()
	reqs := []BatchRequest{{ID: "1", Method: "POST", URL: "ORDERS", Body: json.RawMessage(`{}`)}}
	tests := []struct {
		name    string
		handler func(w http.ResponseWriter)
		inDoubt bool
		// calls: the warm-up of ORDERS (cold forms) and the batch, never
		// sent again.
		calls int
	}{
		{"500", func(w http.ResponseWriter) { w.WriteHeader(500) }, true, 2},
		{"unreadable answer", func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"responses":[`) //nolint:errcheck
		}, true, 2},
		{"dropped", func(w http.ResponseWriter) {
			conn, _, _ := w.(http.Hijacker).Hijack()
			conn.Close()
		}, true, 2},
		{"400 refused whole", func(w http.ResponseWriter) {
			w.WriteHeader(400)
			w.Write(ODataErrorJSON("400", "malformed batch")) //nolint:errcheck
		}, false, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv, log := newServer(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
				if bytes.Contains(body, []byte("?$top=1")) { // the warm-up goes through
					w.Header().Set("Content-Type", "application/json")
					io.WriteString(w, `{"responses":[]}`) //nolint:errcheck
					return
				}
				tc.handler(w)
			})
			c, _ := newTestClient(t, srv, nil)
			_, err := c.Batch(context.Background(), reqs, BatchOptions{})
			var ide *InDoubtError
			if err == nil || errors.As(err, &ide) != tc.inDoubt {
				t.Errorf("err = %v, in doubt wanted %v", err, tc.inDoubt)
			}
			if len(log()) != tc.calls {
				t.Errorf("%d calls", len(log()))
			}
		})
	}
	// Past the version's limit: refused before sending.
	srv, log := newServer(t, func(w http.ResponseWriter, r *http.Request, _ []byte) {})
	c, _ := newTestClient(t, srv, nil)
	c.SetVersion(Version{Major: 23, Minor: 1})
	if _, err := c.Batch(context.Background(), make([]BatchRequest, 101), BatchOptions{}); err == nil || len(log()) != 0 {
		t.Errorf("101 operations: err = %v, calls %d", err, len(log()))
	}
}

func TestClientHook(t *testing.T) {
	t.Parallel()
	srv, _ := newServer(t, func(w http.ResponseWriter, r *http.Request, _ []byte) { w.WriteHeader(404) })
	var calls []CallInfo
	c, _ := newTestClient(t, srv, func(cfg *Config) { cfg.Hook = func(ci CallInfo) { calls = append(calls, ci) } })
	err := c.Delete(context.Background(), "ORDERS('X')")
	if !IsNotFound(err) || len(calls) != 1 || calls[0].Method != "DELETE" || calls[0].Status != 404 || calls[0].Path != "ORDERS('X')" {
		t.Errorf("err %v, calls %+v", err, calls)
	}
}

// TestCallStatsCountAttemptsThrottlesAndWaits: a context with CallStats
// learns what its calls cost: two 429s waited out as told, then success.
func TestCallStatsCountAttemptsThrottlesAndWaits(t *testing.T) {
	t.Parallel()
	srv, log := failTwice(t, func(w http.ResponseWriter) {
		w.Header().Set("Retry-After", "7")
		w.WriteHeader(429)
	}, func(w http.ResponseWriter) {
		writeJSONAnswer(w, 201, map[string]string{"ORDNAME": "SO1"})
	})
	c, _ := newTestClient(t, srv, nil)
	var stats CallStats
	if err := c.Post(WithCallStats(context.Background(), &stats), "ORDERS", []byte(`{}`), nil); err != nil {
		t.Fatal(err)
	}
	want := CallStats{Attempts: 3, Throttled: 2, Waited: 14 * time.Second}
	if stats != want || len(log()) != 3 {
		t.Errorf("stats %+v after %d calls, want %+v", stats, len(log()), want)
	}
}

// TestClientRateLimitAsTheServerCounts: a server that admits 10 calls in
// any minute, counted when each arrives, and a client paced at exactly 10
// a minute. The first call of a run arrives late (a new connection): at an
// even pace alone, the eleventh call arrived less than a minute after it
// and drew a 429. Every call, the start-up ones too, counts against one
// budget, so none is refused, and no minute holds more than 10 calls.
func TestClientRateLimitAsTheServerCounts(t *testing.T) {
	t.Parallel()
	const perMinute = 10
	var (
		mu       sync.Mutex
		arrivals []time.Time
		refused  int
		clk      *odatatest.Clock
	)
	srv, _ := newServer(t, func(w http.ResponseWriter, r *http.Request, _ []byte) {
		mu.Lock()
		defer mu.Unlock()
		if len(arrivals) == 0 && refused == 0 {
			clk.Sleep(context.Background(), 5*time.Second) // connecting
		}
		now := clk.Now()
		n := 0
		for _, a := range arrivals {
			if now.Sub(a) < time.Minute {
				n++
			}
		}
		if n >= perMinute {
			refused++
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		arrivals = append(arrivals, now)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"value":"25.1"}`)
	})
	c, fc := newTestClient(t, srv, func(cfg *Config) { cfg.CallsPerMinute = perMinute; cfg.Retries = -1 })
	clk = fc
	if _, err := c.Version(context.Background()); err != nil { // a start-up call
		t.Fatal(err)
	}
	for i := range 3 * perMinute {
		if err := c.Get(context.Background(), "X", Query{}, nil); err != nil {
			t.Fatalf("call %d: %v", i+2, err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if refused > 0 {
		t.Errorf("%d calls refused with 429", refused)
	}
	if len(arrivals) != 3*perMinute+1 {
		t.Errorf("%d calls arrived, want %d", len(arrivals), 3*perMinute+1)
	}
	for i := perMinute; i < len(arrivals); i++ {
		if d := arrivals[i].Sub(arrivals[i-perMinute]); d < time.Minute {
			t.Errorf("calls %d and %d arrived %v apart", i-perMinute+1, i+1, d)
		}
	}
}

// TestClientRateLimitUnbounded: a limit no server has (a typo of extra
// zeros) spaces calls without remembering a window of them.
func TestClientRateLimitUnbounded(t *testing.T) {
	t.Parallel()
	srv, _ := newServer(t, func(w http.ResponseWriter, r *http.Request, _ []byte) { w.WriteHeader(204) })
	c, _ := newTestClient(t, srv, func(cfg *Config) { cfg.CallsPerMinute = 2_000_000_000 })
	if c.limit.recent != nil {
		t.Fatalf("the limiter keeps %d calls", len(c.limit.recent))
	}
	for range 3 {
		if err := c.Get(context.Background(), "X", Query{}, nil); err != nil {
			t.Fatal(err)
		}
	}
}

// isStatus reports whether err holds an *Error with that HTTP status.
func isStatus(err error, code int) bool {
	var e *Error
	return errors.As(err, &e) && e.Status == code
}

func TestEntitySetOf(t *testing.T) {
	t.Parallel()
	for url, want := range map[string]string{
		"ORDERS":                               "ORDERS",
		"ORDERS('SO1')/ORDERITEMS_SUBFORM":     "ORDERS",
		"ORDERS?$filter=CUSTNAME eq 'C1'":      "ORDERS",
		"ORDERS/ORDERITEMS_SUBFORM":            "ORDERS",
		"$1/ORDERITEMS_SUBFORM":                "",
		"GetLoginName()":                       "",
		"https://erp.example.com/odata/ORDERS": "",
		"":                                     "",
	} {
		if got := EntitySetOf(url); got != want {
			t.Errorf("EntitySetOf(%q) = %q, want %q", url, got, want)
		}
	}
}
