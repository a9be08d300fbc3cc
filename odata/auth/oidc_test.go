package auth

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/migrate-tool/migrate/odata/auth/authtest"
)

var fixedNow = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)

type loginFixture struct {
	idp     *fakeIdP
	srv     *httptest.Server
	browser *authtest.Browser
	out     *bytes.Buffer
	opts    LoginOptions
	target  string
	ctx     context.Context // nil: context.Background()
}

// pasteRedirect makes opts log in by pasting, at the registered HTTPS
// redirect URI: the browser logs in, and paste of the address it ended on
// is what the user pastes on stdin.
func pasteRedirect(opts *LoginOptions, b *authtest.Browser, paste func(string) string) {
	opts.RedirectURI = "https://app.example.com/callback"
	stdin := &bytes.Buffer{}
	opts.Stdin = stdin
	opts.OpenBrowser = func(u string) error {
		err := b.Open(u)
		stdin.WriteString(paste(b.LastRedirect) + "\n")
		return err
	}
}

// newLoginFixture starts a fake authorization server and returns options
// whose browser is the test browser and whose environment holds only the
// client secret.
func newLoginFixture(t *testing.T) *loginFixture {
	t.Helper()
	idp := newFakeIdP()
	idp.now = func() time.Time { return fixedNow }
	srv := httptest.NewServer(idp)
	t.Cleanup(srv.Close)
	f := &loginFixture{idp: idp, srv: srv, browser: authtest.NewBrowser("demo", "demo"), out: &bytes.Buffer{}}
	f.target = srv.URL + "/odata/Priority/tabula.ini/demo"
	env := map[string]string{EnvClientSecret: "demo-secret"}
	f.opts = LoginOptions{
		Target:      f.target,
		Env:         func(k string) string { return env[k] },
		OpenBrowser: f.browser.Open,
		HTTPClient:  srv.Client(),
		Stdout:      f.out,
		Stdin:       strings.NewReader(""),
		CacheDir:    t.TempDir() + "/tokens",
		Now:         func() time.Time { return fixedNow },
	}
	return f
}

func TestLoginLoopbackEndToEnd(t *testing.T) {
	t.Parallel()
	f := newLoginFixture(t)
	tok, err := Login(context.Background(), f.opts)
	if err != nil {
		t.Fatalf("Login: %v\noutput:\n%s", err, f.out)
	}
	if !strings.HasPrefix(tok.AccessToken(), "at-") || tok.IDToken() == "" {
		t.Fatalf("token = %#v, want an access token and an id token", tok)
	}
	if want := fixedNow.Add(time.Hour); !tok.Expiry.Equal(want) {
		t.Errorf("expiry = %v, want %v (now + expires_in)", tok.Expiry, want)
	}
	if f.idp.formShown != 1 {
		t.Errorf("login form shown %d times, want 1", f.idp.formShown)
	}

	// docs/service.md, Authentication step 2: every parameter of the
	// authorize request.
	if len(f.idp.authorize) != 1 {
		t.Fatalf("%d authorize requests, want 1", len(f.idp.authorize))
	}
	q := f.idp.authorize[0]
	redirect := q.Get("redirect_uri")
	if !regexp.MustCompile(`^http://127\.0\.0\.1:[0-9]+/callback$`).MatchString(redirect) {
		t.Errorf("redirect_uri = %q, want http://127.0.0.1:<port>/callback", redirect)
	}
	for k, want := range map[string]string{
		"response_type": "code", "client_id": "migrate-cli", "scope": "openid profile wcf_api rest_api",
		"code_challenge_method": "S256", "grant_type": "authorization_code",
	} {
		if got := q.Get(k); got != want {
			t.Errorf("authorize %s = %q, want %q", k, got, want)
		}
	}
	var aud []string
	if err := json.Unmarshal([]byte(q.Get("audience")), &aud); err != nil || len(aud) != 2 || aud[0] != "wcf_api" || aud[1] != "rest_api" {
		t.Errorf("audience = %q, want the JSON array [\"wcf_api\",\"rest_api\"]", q.Get("audience"))
	}
	if len(q.Get("state")) < 16 {
		t.Errorf("state = %q, want a random value", q.Get("state"))
	}
	if !strings.Contains(f.out.String(), f.srv.URL+"/oauth2/authorize?") {
		t.Errorf("the authorize URL was not printed:\n%s", f.out)
	}

	// docs/service.md, Authentication step 4: the token request.
	if len(f.idp.tokenReqs) != 1 {
		t.Fatalf("%d token requests, want 1", len(f.idp.tokenReqs))
	}
	p := f.idp.tokenReqs[0]
	v := p.Get("code_verifier")
	if len(v) < 43 || len(v) > 128 || !regexp.MustCompile(`^[A-Za-z0-9._~-]+$`).MatchString(v) {
		t.Errorf("code_verifier %q: want 43 to 128 unreserved characters", v)
	}
	if s256(v) != q.Get("code_challenge") {
		t.Errorf("code_challenge is not BASE64URL(SHA256(code_verifier))")
	}
	for k, want := range map[string]string{"grant_type": "authorization_code", "client_id": "migrate-cli", "client_secret": "demo-secret", "redirect_uri": redirect} {
		if got := p.Get(k); got != want {
			t.Errorf("token request %s = %q, want %q", k, got, want)
		}
	}

	// The cache: the token is there for the target, the secret is not.
	cached, err := LoadToken(f.opts.CacheDir, f.target)
	if err != nil || cached == nil || cached.AccessToken() != tok.AccessToken() || !cached.Expiry.Equal(tok.Expiry) {
		t.Fatalf("LoadToken = %v, %v; want the token just issued", cached, err)
	}
	path, _ := CachePath(f.opts.CacheDir, f.target)
	data, _ := os.ReadFile(path)
	for _, secret := range []string{"demo-secret", tok.IDToken(), "code_verifier"} {
		if bytes.Contains(data, []byte(secret)) {
			t.Errorf("cache file holds %q", secret)
		}
	}

	// The token works: Resolve picks it with no method named.
	a, warn, err := Resolve(ResolveOptions{Target: f.target, CacheDir: f.opts.CacheDir, Env: emptyEnv, Now: func() time.Time { return fixedNow }})
	if err != nil || warn != "" || a.Method() != MethodOIDC {
		t.Fatalf("Resolve after login = %v, %q, %v; want the oidc token", a, warn, err)
	}
	req := httptest.NewRequest("GET", f.target, nil)
	if err := a.Authorize(req); err != nil || req.Header.Get("Authorization") != "Bearer "+tok.AccessToken() {
		t.Errorf("Authorization = %q, %v; want the bearer token", req.Header.Get("Authorization"), err)
	}
}

// docs/service.md, Authentication step 7: with the session still active, a
// second login comes back with a new code and no form.
func TestLoginAgainWithActiveSession(t *testing.T) {
	t.Parallel()
	f := newLoginFixture(t)
	first, err := Login(context.Background(), f.opts)
	if err != nil {
		t.Fatal(err)
	}
	later := fixedNow.Add(2 * time.Hour)
	f.opts.Now = func() time.Time { return later }
	// The first token has expired by now.
	if _, _, err := Resolve(ResolveOptions{Target: f.target, CacheDir: f.opts.CacheDir, Env: emptyEnv, Now: f.opts.Now}); !errors.Is(err, ErrExpired) {
		t.Fatalf("Resolve with an expired token: %v, want ErrExpired", err)
	}
	second, err := Login(context.Background(), f.opts)
	if err != nil {
		t.Fatal(err)
	}
	if f.idp.formShown != 1 {
		t.Errorf("login form shown %d times, want 1 (the session cookie should skip it)", f.idp.formShown)
	}
	if second.AccessToken() == first.AccessToken() || !second.Expiry.Equal(later.Add(time.Hour)) {
		t.Errorf("second token = %v, want a new one valid one hour from %v", second, later)
	}
	a, _, err := Resolve(ResolveOptions{Flag: "oidc", Target: f.target, CacheDir: f.opts.CacheDir, Env: emptyEnv, Now: f.opts.Now})
	if err != nil || a.(*BearerAuth).token.get() != second.AccessToken() {
		t.Fatalf("Resolve after the second login = %v, %v", a, err)
	}
}

func TestLoginPasteCode(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		paste   func(redirect string) string
		wantErr error
	}{
		{"whole address", func(r string) string { return r }, nil},
		{"code alone", func(r string) string { u, _ := url.Parse(r); return u.Query().Get("code") }, nil},
		{"query only", func(r string) string { u, _ := url.Parse(r); return "?" + u.RawQuery }, nil},
		{"address of another login", func(r string) string {
			u, _ := url.Parse(r)
			q := u.Query()
			q.Set("state", "someone-elses")
			u.RawQuery = q.Encode()
			return u.String()
		}, ErrStateMismatch},
		{"nothing", func(string) string { return "" }, ErrNoCode},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newLoginFixture(t)
			pasteRedirect(&f.opts, f.browser, tc.paste)
			tok, err := Login(context.Background(), f.opts)
			if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil) != (tok != nil) {
				t.Fatalf("Login = %v, %v; want error %v", tok, err, tc.wantErr)
			}
			if tc.wantErr == nil {
				if !strings.HasPrefix(f.browser.LastRedirect, "https://app.example.com/callback?") {
					t.Errorf("browser ended on %q, want the registered HTTPS URI", f.browser.LastRedirect)
				}
				if got := f.idp.tokenReqs[0].Get("redirect_uri"); got != "https://app.example.com/callback" {
					t.Errorf("token request redirect_uri = %q", got)
				}
			}
		})
	}
}

// The refusals: each ends without a cached token and with an error that
// says what happened and quotes no secret.
func TestLoginRefusals(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		setup   func(f *loginFixture)
		wantErr error
		wantMsg string
	}{
		{"wrong verifier", func(f *loginFixture) {
			// The server is sent the challenge of another verifier.
			f.browser.Tamper = func(u *url.URL) {
				q := u.Query()
				q.Set("code_challenge", s256("another-verifier-another-verifier-another-verifier"))
				u.RawQuery = q.Encode()
			}
		}, ErrTokenRefused, "code_verifier does not match"},
		{"wrong state", func(f *loginFixture) {
			f.browser.Tamper = func(u *url.URL) {
				q := u.Query()
				q.Set("state", "forged-state")
				u.RawQuery = q.Encode()
			}
		}, ErrStateMismatch, "state differs"},
		{"wrong redirect URI", func(f *loginFixture) {
			f.opts.RedirectURI = "https://not-registered.example.com/callback"
		}, ErrNoCode, "no code was pasted"},
		{"wrong client secret", func(f *loginFixture) {
			f.opts.ClientSecret = "wrong-secret-value"
		}, ErrTokenRefused, "invalid_client"},
		{"unknown client", func(f *loginFixture) {
			f.opts.ClientID = "someone-else"
		}, ErrAuthorizationDenied, "invalid_request"},
		{"wrong password", func(f *loginFixture) {
			f.browser.Pass = "wrong-password-value"
			ctx, cancel := context.WithCancel(context.Background())
			cancel() // the user gives up: nothing comes back
			f.ctx = ctx
		}, ErrNoCode, "not completed"},
		{"redirect URI not HTTPS", func(f *loginFixture) {
			f.opts.RedirectURI = "http://app.example.com/callback"
		}, ErrConfig, "must be an HTTPS URL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newLoginFixture(t)
			tc.setup(f)
			ctx := f.ctx
			if ctx == nil {
				ctx = context.Background()
			}
			tok, err := Login(ctx, f.opts)
			if tok != nil || !errors.Is(err, tc.wantErr) {
				t.Fatalf("Login = %v, %v; want %v", tok, err, tc.wantErr)
			}
			if !strings.Contains(err.Error(), tc.wantMsg) {
				t.Errorf("error %q does not say %q", err, tc.wantMsg)
			}
			for _, secret := range []string{"demo-secret", "wrong-secret-value", "wrong-password-value", "Bearer"} {
				if strings.Contains(err.Error(), secret) || strings.Contains(f.out.String(), secret) {
					t.Errorf("error or output holds %q: %v\n%s", secret, err, f.out)
				}
			}
			assertNothingCached(t, f.opts.CacheDir, f.target)
		})
	}
}

func TestLoginWrongRedirectIsRefusedByServer(t *testing.T) {
	t.Parallel()
	f := newLoginFixture(t)
	f.opts.RedirectURI = "https://not-registered.example.com/callback"
	var browserErr error
	f.opts.OpenBrowser = func(u string) error { browserErr = f.browser.Open(u); return browserErr }
	if _, err := Login(context.Background(), f.opts); err == nil {
		t.Fatal("Login succeeded with an unregistered redirect URI")
	}
	if browserErr == nil || !strings.Contains(browserErr.Error(), "HTTP 400") || f.browser.LastRedirect != "" {
		t.Errorf("browser: %v, redirected to %q; want a 400 and no redirect", browserErr, f.browser.LastRedirect)
	}
}

func TestLoginDefaults(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, target string
		env          map[string]string
		wantAuth     string
		wantID       string
		wantErr      error
	}{
		// Unset: left to FindEndpoints (discovery, else scheme://host/oauth2).
		{"derived from target", "https://erp.example.com/odata/Priority/tabula.ini/demo", nil, "", "migrate-cli", nil},
		{"from environment", "https://erp.example.com/odata", map[string]string{EnvAuthURL: "https://login.example.com/op/", EnvClientID: "my-app"}, "https://login.example.com/op", "my-app", nil},
		{"no target", "", nil, "", "", ErrConfig},
		{"target not a URL", "erp.example.com/odata", nil, "", "", ErrConfig},
		{"bad auth URL", "https://erp.example.com/odata", map[string]string{EnvAuthURL: "ftp://x"}, "", "", ErrConfig},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := LoginOptions{Target: tc.target, Env: func(k string) string { return tc.env[k] }}
			err := o.defaults()
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("defaults: %v, want %v", err, tc.wantErr)
			}
			if err == nil && (o.AuthURL != tc.wantAuth || o.ClientID != tc.wantID) {
				t.Errorf("auth URL %q, client %q; want %q, %q", o.AuthURL, o.ClientID, tc.wantAuth, tc.wantID)
			}
		})
	}
}

// The loopback listener answers only its own path, and only once.
func TestCallbackListener(t *testing.T) {
	t.Parallel()
	f := newLoginFixture(t)
	var second *http.Response
	f.opts.OpenBrowser = func(u string) error {
		if err := f.browser.Open(u); err != nil {
			return err
		}
		q, _ := url.Parse(u)
		redirect := q.Query().Get("redirect_uri")
		resp, err := http.Get(strings.TrimSuffix(redirect, "/callback") + "/other")
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("GET /other on the listener: %d, want 404", resp.StatusCode)
		}
		second, err = http.Get(redirect + "?code=x&state=" + q.Query().Get("state"))
		if err == nil {
			second.Body.Close()
		}
		return err
	}
	if _, err := Login(context.Background(), f.opts); err != nil {
		t.Fatal(err)
	}
	if second == nil || second.StatusCode != http.StatusGone {
		t.Errorf("a second callback: %v, want 410 Gone", second)
	}
}

// A browser that cannot be opened does not stop the login: the address is
// printed, and the user opens it by hand (here the test browser does).
func TestLoginWithoutBrowserOpener(t *testing.T) {
	t.Parallel()
	f := newLoginFixture(t)
	f.opts.OpenBrowser = func(u string) error {
		if err := f.browser.Open(u); err != nil {
			return err
		}
		return errors.New("no browser opener found (xdg-open or open)")
	}
	if _, err := Login(context.Background(), f.opts); err != nil {
		t.Fatal(err)
	}
	out := f.out.String()
	if !strings.Contains(out, f.srv.URL+"/oauth2/authorize?") || !strings.Contains(out, "could not be opened") {
		t.Errorf("output does not show the address and the notice:\n%s", out)
	}
}

func TestDefaultOpenBrowserWithoutOpener(t *testing.T) {
	t.Setenv("PATH", t.TempDir()) // no xdg-open, no open
	if err := DefaultOpenBrowser("http://127.0.0.1:1/x"); err == nil || !strings.Contains(err.Error(), "no browser opener") {
		t.Errorf("DefaultOpenBrowser = %v, want an error saying there is no opener", err)
	}
}

// assertNothingCached fails t when a token for target is in the cache
// dir: a refused login must leave none.
func assertNothingCached(t *testing.T, dir, target string) {
	t.Helper()
	if cached, _ := LoadToken(dir, target); cached != nil {
		t.Errorf("a token was cached after a refused login")
	}
}
