package auth

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/odata/auth/authtest"
	"github.com/migrate-tool/migrate/odata/odatatest"
	"github.com/migrate-tool/migrate/sandbox"
)

type sandboxFixture struct {
	clock   *odatatest.Clock
	srv     *httptest.Server
	target  string
	browser *authtest.Browser
	out     *bytes.Buffer
	opts    LoginOptions
}

// newSandboxFixture starts the project's sandbox, whose authorization server
// lives at TARGET_HOST/oauth2, the default auth URL derived from the target.
func newSandboxFixture(t *testing.T) *sandboxFixture {
	t.Helper()
	clock := odatatest.NewClock(fixedNow)
	sb, err := sandbox.New(sandbox.Options{Now: clock.Now, RedirectURIs: []string{"https://app.example.com/callback"}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(sb)
	t.Cleanup(func() { srv.Close(); sb.Close() })
	f := &sandboxFixture{clock: clock, srv: srv, target: srv.URL + sandbox.BasePath, browser: authtest.NewBrowser("demo", "demo"), out: &bytes.Buffer{}}
	env := map[string]string{EnvClientSecret: sandbox.OIDCClientSecret}
	f.opts = LoginOptions{
		Target: f.target, Env: envOf(env), OpenBrowser: f.browser.Open, HTTPClient: srv.Client(),
		Stdout: f.out, Stdin: strings.NewReader(""), CacheDir: t.TempDir(), Now: clock.Now,
	}
	return f
}

// call sends GET path with a, as the odata client would, and returns the
// status and, for a refusal, the odata error.
func (f *sandboxFixture) call(t *testing.T, a Authenticator, path string) (int, error) {
	t.Helper()
	req, err := http.NewRequest("GET", f.target+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Authorize(req); err != nil {
		return 0, err
	}
	resp, err := f.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 400 {
		return resp.StatusCode, odata.ParseError(resp.StatusCode, resp.Header, body)
	}
	return resp.StatusCode, nil
}

func TestSandboxOIDCEndToEnd(t *testing.T) {
	t.Parallel()
	f := newSandboxFixture(t)
	resolve := func(env map[string]string) (Authenticator, error) {
		a, _, err := Resolve(ResolveOptions{Env: envOf(env), Target: f.target, CacheDir: f.opts.CacheDir, Now: f.clock.Now})
		return a, err
	}

	// Before login nothing fits, and the message says what to set.
	if _, err := resolve(nil); !errors.Is(err, ErrNoCredentials) {
		t.Fatalf("before login: %v, want ErrNoCredentials", err)
	}

	tok, err := Login(context.Background(), f.opts)
	if err != nil {
		t.Fatalf("Login: %v\n%s", err, f.out)
	}
	if f.browser.FormsFilled != 1 || tok.IDToken() == "" || !tok.Expiry.Equal(fixedNow.Add(time.Hour)) {
		t.Fatalf("login: %d forms, token %v", f.browser.FormsFilled, tok)
	}
	a, err := resolve(nil)
	if err != nil || a.Method() != MethodOIDC {
		t.Fatalf("Resolve after login = %v, %v", a, err)
	}
	if status, err := f.call(t, a, "/GetLoginName()"); status != 200 || err != nil {
		t.Fatalf("GetLoginName with the bearer token: %d, %v", status, err)
	}

	// Two hours later the token has expired: refused here, before the server.
	f.clock.Advance(2 * time.Hour)
	if status, err := f.call(t, a, "/GetLoginName()"); status != 0 || !errors.Is(err, ErrExpired) {
		t.Fatalf("expired token: %d, %v; want ErrExpired before any request", status, err)
	}
	if _, err := resolve(nil); !errors.Is(err, ErrExpired) || !strings.Contains(err.Error(), "run `migrate login`") {
		t.Fatalf("Resolve with the expired token: %v", err)
	}
	// The server refuses it too.
	stale := NewBearerAuth(tok.AccessToken(), time.Time{}, f.target, nil)
	if status, err := f.call(t, stale, "/GetLoginName()"); status != 401 || Explain(err, stale.Method()) != "the credentials were refused (method: oidc)" {
		t.Fatalf("expired token at the server: %d, %v", status, err)
	}

	// The browser session is still active: the new login needs no form.
	tok2, err := Login(context.Background(), f.opts)
	if err != nil {
		t.Fatalf("second Login: %v", err)
	}
	if f.browser.FormsFilled != 1 {
		t.Errorf("the second login showed the form (%d forms filled)", f.browser.FormsFilled)
	}
	a, err = resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	if status, err := f.call(t, a, "/GetLoginName()"); status != 200 || err != nil || tok2.AccessToken() == tok.AccessToken() {
		t.Fatalf("after the second login: %d, %v", status, err)
	}

	// Logout: the token is gone and Resolve falls back to a PAT.
	if removed, err := Logout(f.target, f.opts.CacheDir); !removed || err != nil {
		t.Fatalf("Logout = %v, %v", removed, err)
	}
	a, err = resolve(map[string]string{EnvToken: "demo-pat"})
	if err != nil || a.Method() != MethodPAT {
		t.Fatalf("after logout: %v, %v; want the PAT", a, err)
	}
	if status, err := f.call(t, a, "/GetLoginName()"); status != 200 || err != nil {
		t.Fatalf("PAT demo-pat: %d, %v", status, err)
	}
}

func TestSandboxPATAndBasic(t *testing.T) {
	t.Parallel()
	f := newSandboxFixture(t)
	for _, tc := range []struct {
		name        string
		env         map[string]string
		path        string
		wantStatus  int
		wantExplain string
	}{
		{"PAT", map[string]string{EnvToken: "demo-pat"}, "/GetLoginName()", 200, ""},
		{"PAT with licence headers", map[string]string{EnvToken: "demo-pat", EnvAppID: "app", EnvAppKey: "key"}, "/GetLoginName()", 200, ""},
		{"wrong PAT", map[string]string{EnvToken: "not-a-pat"}, "/GetLoginName()", 401, "the credentials were refused (method: pat)"},
		{"Basic", map[string]string{EnvUser: "demo", EnvPassword: "demo"}, "/GetLoginName()", 200, ""},
		{"wrong password", map[string]string{EnvUser: "demo", EnvPassword: "nope"}, "/GetLoginName()", 401, "the credentials were refused (method: basic)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, _, err := Resolve(ResolveOptions{Env: envOf(tc.env), Target: f.target, CacheDir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			status, err := f.call(t, a, tc.path)
			if status != tc.wantStatus || Explain(err, a.Method()) != tc.wantExplain {
				t.Errorf("%d, %q (%v); want %d, %q", status, Explain(err, a.Method()), err, tc.wantStatus, tc.wantExplain)
			}
		})
	}
}

func TestSandboxForbiddenScreen(t *testing.T) {
	t.Parallel()
	f := newSandboxFixture(t)
	a := NewPAT("demo-pat")
	req, _ := http.NewRequest("POST", f.target+"/CURRENCIES", strings.NewReader(`{"CODE":"GBP","NAME":"Pound"}`))
	req.Header.Set("Content-Type", "application/json")
	if err := a.Authorize(req); err != nil {
		t.Fatal(err)
	}
	resp, err := f.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	got := Explain(odata.ParseError(resp.StatusCode, resp.Header, body), a.Method())
	if resp.StatusCode != 403 || got != "the screen is not open to the API for this user" {
		t.Errorf("POST CURRENCIES: %d, Explain %q", resp.StatusCode, got)
	}
}

func TestSandboxOIDCRefusals(t *testing.T) {
	t.Parallel()
	tamper := func(k, v string) func(u *url.URL) {
		return func(u *url.URL) { q := u.Query(); q.Set(k, v); u.RawQuery = q.Encode() }
	}
	for _, tc := range []struct {
		name    string
		setup   func(f *sandboxFixture)
		wantErr error
		wantMsg string
	}{
		{"wrong verifier", func(f *sandboxFixture) {
			f.browser.Tamper = tamper("code_challenge", s256("another-verifier-another-verifier-another-verifier"))
		}, ErrTokenRefused, "code_verifier does not match"},
		{"wrong state", func(f *sandboxFixture) { f.browser.Tamper = tamper("state", "forged") }, ErrStateMismatch, "state differs"},
		{"wrong redirect URI", func(f *sandboxFixture) { f.opts.RedirectURI = "https://evil.example.com/callback" }, ErrNoCode, "no code was pasted"},
		{"wrong client secret", func(f *sandboxFixture) { f.opts.ClientSecret = "not-the-secret" }, ErrTokenRefused, "invalid_client"},
		{"no scope", func(f *sandboxFixture) { f.browser.Tamper = tamper("scope", "openid") }, ErrAuthorizationDenied, "invalid_scope"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newSandboxFixture(t)
			tc.setup(f)
			tok, err := Login(context.Background(), f.opts)
			if tok != nil || !errors.Is(err, tc.wantErr) || !strings.Contains(err.Error(), tc.wantMsg) {
				t.Fatalf("Login = %v, %v; want %v saying %q", tok, err, tc.wantErr, tc.wantMsg)
			}
			if strings.Contains(err.Error(), sandbox.OIDCClientSecret) || strings.Contains(err.Error(), "not-the-secret") {
				t.Errorf("error holds the client secret: %v", err)
			}
			assertNothingCached(t, f.opts.CacheDir, f.target)
		})
	}
}

func TestSandboxPasteRegisteredRedirect(t *testing.T) {
	t.Parallel()
	f := newSandboxFixture(t)
	pasteRedirect(&f.opts, f.browser, func(r string) string { return r })
	tok, err := Login(context.Background(), f.opts)
	if err != nil {
		t.Fatalf("Login: %v\n%s", err, f.out)
	}
	if status, err := f.call(t, tok.Authenticator(f.clock.Now), "/GetLoginName()"); status != 200 || err != nil {
		t.Fatalf("the pasted login's token: %d, %v", status, err)
	}
}
