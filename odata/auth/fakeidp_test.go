package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// fakeIdP is a small authorization server as docs/service.md, Authentication
// describes it, for the tests of this package; the sandbox's own server is
// tested end to end in sandbox_e2e_test.go. It registers loopback callbacks
// on any port and the HTTPS redirect URIs in https.
type fakeIdP struct {
	clientID, secret string
	user, password   string
	https            map[string]bool
	expiresIn        int
	now              func() time.Time

	mu        sync.Mutex
	codes     map[string]grant
	sessions  map[string]bool
	authorize []url.Values // every authorize query received
	tokenReqs []url.Values // every token form received
	formShown int
	issued    map[string]time.Time // access token -> expiry
}

type grant struct {
	clientID, redirect, challenge string
}

func newFakeIdP() *fakeIdP {
	return &fakeIdP{
		clientID: "migrate-cli", secret: "demo-secret", user: "demo", password: "demo",
		https:     map[string]bool{"https://app.example.com/callback": true},
		expiresIn: 3600, now: time.Now,
		codes: map[string]grant{}, sessions: map[string]bool{}, issued: map[string]time.Time{},
	}
}

func randText() string {
	b := make([]byte, 18)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

func (f *fakeIdP) registered(redirect string) bool {
	if f.https[redirect] {
		return true
	}
	u, err := url.Parse(redirect)
	if err != nil || u.Scheme != "http" || u.Path != "/callback" || u.RawQuery != "" {
		return false
	}
	host, _, err := net.SplitHostPort(u.Host)
	return err == nil && host == "127.0.0.1"
}

func (f *fakeIdP) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/oauth2/authorize":
		f.serveAuthorize(w, r)
	case "/oauth2/token":
		f.serveToken(w, r)
	default:
		http.NotFound(w, r)
	}
}

func (f *fakeIdP) serveAuthorize(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		http.Error(w, "bad form", http.StatusBadRequest)
		return
	}
	q := r.Form
	f.mu.Lock()
	if r.Method == http.MethodGet {
		f.authorize = append(f.authorize, r.URL.Query())
	}
	f.mu.Unlock()
	redirect := q.Get("redirect_uri")
	// An unregistered redirect URI is never redirected to (RFC 6749 4.1.2.1).
	if !f.registered(redirect) {
		http.Error(w, "redirect_uri is not registered", http.StatusBadRequest)
		return
	}
	if q.Get("client_id") != f.clientID || q.Get("response_type") != "code" ||
		q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" {
		redirectTo(w, r, redirect, url.Values{"error": {"invalid_request"}, "state": {q.Get("state")}})
		return
	}
	session := false
	if c, err := r.Cookie("idp_session"); err == nil {
		f.mu.Lock()
		session = f.sessions[c.Value]
		f.mu.Unlock()
	}
	if !session && r.Method == http.MethodPost {
		if q.Get("username") != f.user || q.Get("password") != f.password {
			f.showForm(w, q, "wrong user name or password")
			return
		}
		sid := randText()
		f.mu.Lock()
		f.sessions[sid] = true
		f.mu.Unlock()
		http.SetCookie(w, &http.Cookie{Name: "idp_session", Value: sid, Path: "/oauth2", HttpOnly: true})
		session = true
	}
	if !session {
		f.showForm(w, q, "")
		return
	}
	code := randText()
	f.mu.Lock()
	f.codes[code] = grant{clientID: q.Get("client_id"), redirect: redirect, challenge: q.Get("code_challenge")}
	f.mu.Unlock()
	redirectTo(w, r, redirect, url.Values{"code": {code}, "state": {q.Get("state")}})
}

func redirectTo(w http.ResponseWriter, r *http.Request, redirect string, v url.Values) {
	http.Redirect(w, r, redirect+"?"+v.Encode(), http.StatusFound)
}

func (f *fakeIdP) showForm(w http.ResponseWriter, q url.Values, problem string) {
	f.mu.Lock()
	f.formShown++
	f.mu.Unlock()
	var b strings.Builder
	b.WriteString("<!doctype html><html><body><h1>Log in</h1>")
	if problem != "" {
		fmt.Fprintf(&b, "<p class=error>%s</p>", html.EscapeString(problem))
	}
	b.WriteString(`<form method="post" action="/oauth2/authorize">`)
	for _, k := range []string{"response_type", "client_id", "redirect_uri", "scope", "audience", "code_challenge", "code_challenge_method", "state", "grant_type"} {
		fmt.Fprintf(&b, `<input type="hidden" name="%s" value="%s">`, k, html.EscapeString(q.Get(k)))
	}
	b.WriteString(`<input name="username"><input type="password" name="password"><button type="submit">Log in</button></form></body></html>`)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = fmt.Fprint(w, b.String())
}

func tokenFail(w http.ResponseWriter, status int, code, desc string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": code, "error_description": desc})
}

func (f *fakeIdP) serveToken(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/x-www-form-urlencoded") {
		tokenFail(w, http.StatusBadRequest, "invalid_request", "POST form-urlencoded")
		return
	}
	if err := r.ParseForm(); err != nil {
		tokenFail(w, http.StatusBadRequest, "invalid_request", "bad form")
		return
	}
	p := r.PostForm
	f.mu.Lock()
	f.tokenReqs = append(f.tokenReqs, p)
	g, ok := f.codes[p.Get("code")]
	delete(f.codes, p.Get("code")) // single use
	f.mu.Unlock()
	switch {
	case p.Get("client_id") != f.clientID || p.Get("client_secret") != f.secret:
		tokenFail(w, http.StatusUnauthorized, "invalid_client", "unknown client or wrong secret")
	case p.Get("grant_type") != "authorization_code":
		tokenFail(w, http.StatusBadRequest, "unsupported_grant_type", "")
	case !ok:
		tokenFail(w, http.StatusBadRequest, "invalid_grant", "unknown or used code")
	case p.Get("redirect_uri") != g.redirect:
		tokenFail(w, http.StatusBadRequest, "invalid_grant", "redirect_uri differs from the authorize request")
	case s256(p.Get("code_verifier")) != g.challenge:
		tokenFail(w, http.StatusBadRequest, "invalid_grant", "code_verifier does not match the code_challenge")
	default:
		tok := "at-" + randText()
		f.mu.Lock()
		f.issued[tok] = f.now().Add(time.Duration(f.expiresIn) * time.Second)
		f.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"access_token": tok, "token_type": "Bearer", "expires_in": f.expiresIn, "id_token": "idt-" + randText(),
		})
	}
}

func s256(verifier string) string {
	sum := sha256.Sum256([]byte(verifier))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}
