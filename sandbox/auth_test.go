package sandbox_test

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/migrate-tool/migrate/sandbox"
)

// docs/service.md, Authentication: every endpoint needs credentials; Basic
// users, PATs, bearer tokens.
func TestSpec5Authentication(t *testing.T) {
	t.Parallel()
	c := start(t, sandbox.Options{Users: map[string]string{"demo": "demo", "anna": "s3cret"}, Tokens: []string{"pat-1"}})
	tests := []struct {
		name, auth string
		status     int
		login      string
	}{
		{"none", "", 401, ""},
		{"basic", basic("anna", "s3cret"), 200, "anna"},
		{"wrong password", basic("anna", "nope"), 401, ""},
		{"pat", basic("pat-1", "PAT"), 200, "demo"},
		{"pat wrong word", basic("pat-1", "pat"), 401, ""},
		{"unknown pat", basic("pat-2", "PAT"), 401, ""},
		{"unknown bearer", "Bearer abc", 401, ""},
		{"garbage", "Basic !!!", 401, ""},
	}
	for _, tt := range tests {
		for _, path := range []string{"/", "/$metadata", "/GetLoginName", "/CUSTOMERS", "/$batch"} {
			c.auth = tt.auth
			method := "GET"
			if path == "/$batch" {
				method = "POST"
			}
			r := c.do(method, path, nil)
			want := tt.status
			if want == 200 && path == "/$batch" {
				want = 400 // authenticated, but no body
			}
			if r.status != want {
				t.Errorf("%s %s: status %d, want %d", tt.name, path, r.status, want)
			}
			if r.status == 401 && r.header.Get("WWW-Authenticate") == "" {
				t.Errorf("%s %s: 401 without WWW-Authenticate", tt.name, path)
			}
			if path == "/GetLoginName" && r.status == 200 && r.json(t)["value"] != tt.login {
				t.Errorf("%s: login name %s", tt.name, r.body)
			}
		}
	}
}

func pkce() (verifier, challenge string) {
	verifier = strings.Repeat("abcdefghij", 5) + "-._~"
	sum := sha256.Sum256([]byte(verifier))
	return verifier, base64.RawURLEncoding.EncodeToString(sum[:])
}

// browser plays the user's browser: a cookie jar, no automatic redirects, so
// the test sees where the server sends it.
func browser(t *testing.T) *http.Client {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

func authorizeURL(srv, redirect, challenge string) string {
	q := url.Values{
		"response_type": {"code"}, "client_id": {sandbox.OIDCClientID}, "redirect_uri": {redirect},
		"scope": {"openid profile wcf_api rest_api"}, "audience": {`["wcf_api","rest_api"]`},
		"code_challenge": {challenge}, "code_challenge_method": {"S256"}, "grant_type": {"authorization_code"},
		"state": {"xyz"},
	}
	return srv + sandbox.AuthorizePath + "?" + q.Encode()
}

var hiddenField = regexp.MustCompile(`<input type="hidden" name="([a-z_]+)" value="([^"]*)">`)

// login fills the login form the authorize page shows and returns the code.
func login(t *testing.T, b *http.Client, srv, redirect, challenge, user, pass string) (code string, res *http.Response) {
	t.Helper()
	res, err := b.Get(authorizeURL(srv, redirect, challenge))
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || !strings.Contains(string(page), `name="username"`) || !strings.Contains(string(page), `name="password"`) {
		t.Fatalf("authorize: %d\n%s", res.StatusCode, page)
	}
	form := url.Values{"username": {user}, "password": {pass}}
	for _, m := range hiddenField.FindAllStringSubmatch(string(page), -1) {
		form.Set(m[1], strings.ReplaceAll(strings.ReplaceAll(m[2], "&#34;", `"`), "&amp;", "&"))
	}
	res, err = b.PostForm(srv+sandbox.AuthorizePath, form)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if loc, err := url.Parse(res.Header.Get("Location")); err == nil {
		code = loc.Query().Get("code")
	}
	return code, res
}

func exchange(t *testing.T, srv string, form url.Values) (int, map[string]any) {
	t.Helper()
	res, err := http.PostForm(srv+sandbox.TokenPath, form)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var m map[string]any
	if err := json.NewDecoder(res.Body).Decode(&m); err != nil {
		t.Fatalf("token answer not JSON: %v", err)
	}
	return res.StatusCode, m
}

func tokenForm(code, redirect, verifier string) url.Values {
	return url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {redirect},
		"client_id": {sandbox.OIDCClientID}, "client_secret": {sandbox.OIDCClientSecret}, "code_verifier": {verifier}}
}

// docs/service.md, Authentication: the whole flow with a browser, then the
// token on API calls, then expiry and a silent second authorize while the
// session lives.
func TestSpec5_2OIDCFlow(t *testing.T) {
	t.Parallel()
	clock := newClock()
	c := start(t, sandbox.Options{Now: clock.Now, TokenTTL: 30 * time.Minute, RedirectURIs: []string{"https://app.example/cb"}})
	srv := c.srv.URL
	verifier, challenge := pkce()
	redirect := "http://127.0.0.1:53682/callback"
	b := browser(t)

	code, res := login(t, b, srv, redirect, challenge, "demo", "wrong")
	if code != "" || res.StatusCode != 401 {
		t.Fatalf("wrong password: status %d code %q", res.StatusCode, code)
	}
	code, res = login(t, b, srv, redirect, challenge, "demo", "demo")
	loc, _ := url.Parse(res.Header.Get("Location"))
	if code == "" || loc.Query().Get("state") != "xyz" || !strings.HasPrefix(loc.String(), redirect+"?") {
		t.Fatalf("redirect %q", res.Header.Get("Location"))
	}
	status, tok := exchange(t, srv, tokenForm(code, redirect, verifier))
	if status != 200 || tok["token_type"] != "Bearer" || tok["expires_in"] != float64(1800) || tok["access_token"] == "" {
		t.Fatalf("token: %d %v", status, tok)
	}
	if parts := strings.Split(tok["id_token"].(string), "."); len(parts) != 3 {
		t.Errorf("id_token not JWT-shaped: %v", tok["id_token"])
	}
	c.auth = "Bearer " + tok["access_token"].(string)
	if got := c.must(200, "GET", "/GetLoginName", nil).json(t)["value"]; got != "demo" {
		t.Errorf("login name %v", got)
	}
	// A reused code is refused.
	if status, e := exchange(t, srv, tokenForm(code, redirect, verifier)); status != 400 || e["error"] != "invalid_grant" {
		t.Errorf("reused code: %d %v", status, e)
	}
	// The token expires.
	clock.Advance(31 * time.Minute)
	r := c.must(401, "GET", "/GetLoginName", nil)
	if !strings.Contains(r.header.Get("WWW-Authenticate"), "invalid_token") {
		t.Errorf("expired: %v", r.header)
	}
	// docs/service.md, Authentication step 7: the session is active, so a new
	// code comes without the form.
	res, err := b.Get(authorizeURL(srv, "https://app.example/cb", challenge))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	loc, _ = url.Parse(res.Header.Get("Location"))
	if res.StatusCode/100 != 3 || loc.Query().Get("code") == "" || loc.Host != "app.example" {
		t.Fatalf("silent authorize: %d %q", res.StatusCode, res.Header.Get("Location"))
	}
	if status, tok := exchange(t, srv, tokenForm(loc.Query().Get("code"), "https://app.example/cb", verifier)); status != 200 {
		t.Errorf("second token: %d %v", status, tok)
	}
}

// docs/service.md, Authentication: refusals, RFC 6749 errors.
func TestSpec5_2OIDCRefusals(t *testing.T) {
	t.Parallel()
	clock := newClock()
	c := start(t, sandbox.Options{Now: clock.Now, RedirectURIs: []string{"https://app.example/cb"}})
	srv := c.srv.URL
	verifier, challenge := pkce()
	redirect := "http://127.0.0.1:8123/callback"
	newCode := func() string {
		code, _ := login(t, browser(t), srv, redirect, challenge, "demo", "demo")
		if code == "" {
			t.Fatal("no code")
		}
		return code
	}
	tests := []struct {
		name   string
		mutate func(url.Values)
		status int
		err    string
	}{
		{"wrong verifier", func(f url.Values) { f.Set("code_verifier", strings.Repeat("x", 43)) }, 400, "invalid_grant"},
		{"short verifier", func(f url.Values) { f.Set("code_verifier", "short") }, 400, "invalid_request"},
		{"long verifier", func(f url.Values) { f.Set("code_verifier", strings.Repeat("x", 129)) }, 400, "invalid_request"},
		{"wrong redirect", func(f url.Values) { f.Set("redirect_uri", "http://127.0.0.1:9999/callback") }, 400, "invalid_grant"},
		{"wrong secret", func(f url.Values) { f.Set("client_secret", "nope") }, 401, "invalid_client"},
		{"wrong grant", func(f url.Values) { f.Set("grant_type", "password") }, 400, "unsupported_grant_type"},
		{"unknown code", func(f url.Values) { f.Set("code", "nope") }, 400, "invalid_grant"},
	}
	for _, tt := range tests {
		f := tokenForm(newCode(), redirect, verifier)
		tt.mutate(f)
		status, e := exchange(t, srv, f)
		if status != tt.status || e["error"] != tt.err {
			t.Errorf("%s: %d %v, want %d %s", tt.name, status, e, tt.status, tt.err)
		}
	}
	// An expired code.
	code := newCode()
	clock.Advance(2 * time.Minute)
	if status, e := exchange(t, srv, tokenForm(code, redirect, verifier)); status != 400 || e["error"] != "invalid_grant" {
		t.Errorf("expired code: %d %v", status, e)
	}
	// Authorize refusals: shown when client or redirect are wrong, redirected otherwise.
	b := browser(t)
	get := func(mut func(url.Values)) *http.Response {
		u, _ := url.Parse(authorizeURL(srv, redirect, challenge))
		q := u.Query()
		mut(q)
		u.RawQuery = q.Encode()
		res, err := b.Get(u.String())
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res
	}
	for name, mut := range map[string]func(url.Values){
		"unknown client":    func(q url.Values) { q.Set("client_id", "other") },
		"http redirect":     func(q url.Values) { q.Set("redirect_uri", "http://app.example/cb") },
		"unregistered":      func(q url.Values) { q.Set("redirect_uri", "https://evil.example/cb") },
		"loopback bad path": func(q url.Values) { q.Set("redirect_uri", "http://127.0.0.1:8123/other") },
	} {
		if res := get(mut); res.StatusCode != 400 || res.Header.Get("Location") != "" {
			t.Errorf("%s: %d %q", name, res.StatusCode, res.Header.Get("Location"))
		}
	}
	for name, tc := range map[string]struct {
		mut func(url.Values)
		err string
	}{
		"plain challenge": {func(q url.Values) { q.Set("code_challenge_method", "plain") }, "invalid_request"},
		"no rest_api":     {func(q url.Values) { q.Set("scope", "openid profile") }, "invalid_scope"},
		"token flow":      {func(q url.Values) { q.Set("response_type", "token") }, "unsupported_response_type"},
	} {
		res := get(tc.mut)
		loc, _ := url.Parse(res.Header.Get("Location"))
		if res.StatusCode != 302 || loc.Query().Get("error") != tc.err || loc.Query().Get("state") != "xyz" {
			t.Errorf("%s: %d %q", name, res.StatusCode, res.Header.Get("Location"))
		}
	}
	if _, err := sandbox.New(sandbox.Options{RedirectURIs: []string{"http://app.example/cb"}}); err == nil {
		t.Error("an http redirect URI was registered")
	}
}
