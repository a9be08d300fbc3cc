package sandbox

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"html"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"
)

// The built-in OIDC authorization server (docs/service.md, Authentication):
// authorization code flow with PKCE S256, at /oauth2/authorize and
// /oauth2/token, with a discovery document at
// /oauth2/.well-known/openid-configuration and at the host's root; under
// QuirkOIDCAccounts at /accounts/connect/authorize and /token as on-premise
// real servers, discovery at /accounts/.well-known/….
const (
	// OIDCClientID and OIDCClientSecret are the one registered application.
	OIDCClientID     = "migrate-cli"
	OIDCClientSecret = "demo-secret"
	// AuthorizePath and TokenPath are the endpoints ({auth_url}/authorize, /token).
	AuthorizePath = "/oauth2/authorize"
	TokenPath     = "/oauth2/token"

	codeTTL       = time.Minute
	sessionTTL    = 8 * time.Hour
	sessionCookie = "sandbox_session"
)

type authCode struct {
	clientID, redirectURI, challenge, user string
	expires                                time.Time
	used                                   bool
	token                                  string // the access token issued for it, revoked on reuse
}

type grant struct {
	user    string
	expires time.Time
}

type authServer struct {
	s        *Server
	mu       sync.Mutex
	codes    map[string]*authCode
	tokens   map[string]grant
	sessions map[string]grant
	key      []byte
}

func newAuthServer(s *Server) *authServer {
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	return &authServer{s: s, codes: map[string]*authCode{}, tokens: map[string]grant{}, sessions: map[string]grant{}, key: key}
}

func randomToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

func (a *authServer) bearerUser(token string) (string, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	g, ok := a.tokens[token]
	if !ok {
		return "", false
	}
	if !a.s.now().Before(g.expires) {
		delete(a.tokens, token)
		return "", false
	}
	return g.user, true
}

// isAuthPath reports whether the authorization server answers path: its
// endpoints and discovery documents, under /oauth2, /accounts (quirk
// oidc-accounts) or the host's root.
func isAuthPath(path string) bool {
	return strings.HasPrefix(path, "/oauth2/") || strings.HasPrefix(path, "/accounts/") || path == "/.well-known/openid-configuration"
}

// authPrefix is where the endpoints live: /oauth2 as docs/service.md,
// Authentication has it, or /accounts/connect as on-premise real servers
// (quirk oidc-accounts).
func (a *authServer) authPrefix() (prefix, discovery string) {
	if a.s.quirk(QuirkOIDCAccounts) {
		return "/accounts/connect", "/accounts/.well-known/openid-configuration"
	}
	return "/oauth2", "/oauth2/.well-known/openid-configuration"
}

// issuerPath is the issuer's path: /oauth2, or /accounts on-premise.
func (a *authServer) issuerPath() string {
	prefix, _ := a.authPrefix()
	return strings.TrimSuffix(prefix, "/connect")
}

func (a *authServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	prefix, discovery := a.authPrefix()
	switch r.URL.Path {
	case prefix + "/authorize":
		a.authorize(w, r)
	case prefix + "/token":
		a.token(w, r)
	case discovery, "/.well-known/openid-configuration":
		a.discovery(w, r)
	default:
		http.NotFound(w, r)
	}
}

// discovery serves the provider configuration (OpenID Connect Discovery
// 1.0): where the endpoints are and how the client authenticates. Real
// on-premise servers take the client secret as a Basic header only.
func (a *authServer) discovery(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET")
		http.Error(w, "use GET", http.StatusMethodNotAllowed)
		return
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	prefix, _ := a.authPrefix()
	issuer := scheme + "://" + r.Host + a.issuerPath()
	methods := []string{"client_secret_post", "client_secret_basic"}
	if a.s.quirk(QuirkOIDCAccounts) {
		methods = []string{"client_secret_basic"}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"issuer":                                issuer,
		"authorization_endpoint":                scheme + "://" + r.Host + prefix + "/authorize",
		"token_endpoint":                        scheme + "://" + r.Host + prefix + "/token",
		"response_types_supported":              []string{"code"},
		"grant_types_supported":                 []string{"authorization_code"},
		"code_challenge_methods_supported":      []string{"S256"},
		"scopes_supported":                      []string{"openid", "profile", "wcf_api", "rest_api"},
		"token_endpoint_auth_methods_supported": methods,
	})
}

// redirectAllowed: a registered https URI, exactly; or a loopback
// http://127.0.0.1:<port>/callback (RFC 8252 7.3, any port).
func (a *authServer) redirectAllowed(uri string) bool {
	for _, u := range a.s.opts.RedirectURIs {
		if u == uri {
			return true
		}
	}
	pu, err := url.Parse(uri)
	if err != nil || pu.Scheme != "http" || pu.Path != "/callback" || pu.RawQuery != "" || pu.Fragment != "" || pu.User != nil {
		return false
	}
	host, port, err := net.SplitHostPort(pu.Host)
	return err == nil && port != "" && (host == "127.0.0.1" || host == "::1")
}

func (a *authServer) authorize(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodPost {
		w.Header().Set("Allow", "GET, POST")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	if err := r.ParseForm(); err != nil {
		errorPage(w, http.StatusBadRequest, "The request is malformed.")
		return
	}
	p := r.Form
	// Errors about the client or the redirect URI are shown, never
	// redirected (RFC 6749 4.1.2.1).
	if p.Get("client_id") != OIDCClientID {
		errorPage(w, http.StatusBadRequest, "Unknown client_id: the application is not registered.")
		return
	}
	redirect := p.Get("redirect_uri")
	if !a.redirectAllowed(redirect) {
		errorPage(w, http.StatusBadRequest, "The redirect_uri is not registered for this application (an exact https URL, or http://127.0.0.1:PORT/callback).")
		return
	}
	state := p.Get("state")
	fail := func(code, desc string) {
		q := url.Values{"error": {code}, "error_description": {desc}}
		if state != "" {
			q.Set("state", state)
		}
		http.Redirect(w, r, redirect+"?"+q.Encode(), http.StatusFound)
	}
	if p.Get("response_type") != "code" {
		fail("unsupported_response_type", "response_type must be code")
		return
	}
	if !slices.Contains(strings.Fields(p.Get("scope")), "rest_api") {
		fail("invalid_scope", "scope must include rest_api")
		return
	}
	if p.Get("code_challenge_method") != "S256" {
		fail("invalid_request", "PKCE is required: code_challenge_method must be S256")
		return
	}
	challenge := p.Get("code_challenge")
	if raw, err := base64.RawURLEncoding.DecodeString(challenge); err != nil || len(raw) != sha256.Size {
		fail("invalid_request", "code_challenge must be BASE64URL(SHA256(code_verifier))")
		return
	}
	now := a.s.now()
	user := ""
	if c, err := r.Cookie(sessionCookie); err == nil {
		a.mu.Lock()
		if g, ok := a.sessions[c.Value]; ok && now.Before(g.expires) {
			user = g.user
		}
		a.mu.Unlock()
	}
	if user == "" && r.Method == http.MethodPost && p.Has("username") {
		name, pass := p.Get("username"), p.Get("password")
		pw, ok := a.s.opts.Users[name]
		if !ok || pass == "" || subtle.ConstantTimeCompare([]byte(pw), []byte(pass)) != 1 {
			a.loginForm(w, http.StatusUnauthorized, p, "Wrong user name or password.")
			return
		}
		user = name
		sid := randomToken()
		a.mu.Lock()
		a.sessions[sid] = grant{user: user, expires: now.Add(sessionTTL)}
		a.mu.Unlock()
		prefix, _ := a.authPrefix()
		http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: sid, Path: prefix + "/", HttpOnly: true, SameSite: http.SameSiteLaxMode})
	}
	if user == "" {
		a.loginForm(w, http.StatusOK, p, "")
		return
	}
	code := randomToken()
	a.mu.Lock()
	for k, old := range a.codes { // forget codes long expired
		if now.Sub(old.expires) > time.Hour {
			delete(a.codes, k)
		}
	}
	a.codes[code] = &authCode{clientID: OIDCClientID, redirectURI: redirect, challenge: challenge, user: user, expires: now.Add(codeTTL)}
	a.mu.Unlock()
	q := url.Values{"code": {code}}
	if state != "" {
		q.Set("state", state)
	}
	http.Redirect(w, r, redirect+"?"+q.Encode(), http.StatusSeeOther)
}

// loginForm is the login page; hidden fields carry the authorization request.
func (a *authServer) loginForm(w http.ResponseWriter, status int, p url.Values, msg string) {
	var b strings.Builder
	b.WriteString("<!DOCTYPE html>\n<html><head><title>Sandbox login</title></head><body>\n<h1>Sign in to the sandbox</h1>\n")
	if msg != "" {
		b.WriteString(`<p class="error">` + html.EscapeString(msg) + "</p>\n")
	}
	prefix, _ := a.authPrefix()
	b.WriteString(`<form method="post" action="` + prefix + `/authorize">` + "\n")
	for _, k := range []string{"response_type", "client_id", "redirect_uri", "scope", "audience", "state", "nonce", "code_challenge", "code_challenge_method", "grant_type"} {
		if p.Has(k) {
			b.WriteString(`<input type="hidden" name="` + k + `" value="` + html.EscapeString(p.Get(k)) + `">` + "\n")
		}
	}
	b.WriteString(`<label>User <input name="username"></label>` + "\n")
	b.WriteString(`<label>Password <input type="password" name="password"></label>` + "\n")
	b.WriteString(`<button type="submit">Sign in</button>` + "\n</form></body></html>\n")
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(b.String()))
}

func errorPage(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write([]byte("<!DOCTYPE html>\n<html><body><h1>Authorization error</h1><p>" + html.EscapeString(msg) + "</p></body></html>\n"))
}

// oauthError answers as RFC 6749 5.2.
func oauthError(w http.ResponseWriter, status int, code, desc string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Basic realm="sandbox"`)
	}
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": code, "error_description": desc})
}

func validVerifier(v string) bool {
	if len(v) < 43 || len(v) > 128 {
		return false
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || strings.IndexByte("-._~", c) >= 0) {
			return false
		}
	}
	return true
}

func (a *authServer) token(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		oauthError(w, http.StatusMethodNotAllowed, "invalid_request", "use POST")
		return
	}
	if !strings.HasPrefix(r.Header.Get("Content-Type"), "application/x-www-form-urlencoded") {
		oauthError(w, http.StatusBadRequest, "invalid_request", "the body must be application/x-www-form-urlencoded")
		return
	}
	if err := r.ParseForm(); err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_request", "malformed form body")
		return
	}
	p := r.PostForm
	id, secret := p.Get("client_id"), p.Get("client_secret")
	if a.s.quirk(QuirkOIDCAccounts) {
		secret = "" // client_secret_basic only, as discovery says
	}
	if u, pw, ok := r.BasicAuth(); ok {
		id, secret = u, pw
	}
	if id != OIDCClientID || subtle.ConstantTimeCompare([]byte(secret), []byte(OIDCClientSecret)) != 1 {
		oauthError(w, http.StatusUnauthorized, "invalid_client", "unknown client or wrong client secret")
		return
	}
	if p.Get("grant_type") != "authorization_code" {
		oauthError(w, http.StatusBadRequest, "unsupported_grant_type", "grant_type must be authorization_code")
		return
	}
	verifier := p.Get("code_verifier")
	if !validVerifier(verifier) {
		oauthError(w, http.StatusBadRequest, "invalid_request", "code_verifier must be 43 to 128 characters of A-Z a-z 0-9 - . _ ~")
		return
	}
	now := a.s.now()
	a.mu.Lock()
	defer a.mu.Unlock()
	code := a.codes[p.Get("code")]
	switch {
	case code == nil:
		oauthError(w, http.StatusBadRequest, "invalid_grant", "unknown authorization code")
		return
	case code.used:
		delete(a.tokens, code.token) // RFC 6749 4.1.2: revoke what a reused code issued
		oauthError(w, http.StatusBadRequest, "invalid_grant", "the authorization code was already used")
		return
	case !now.Before(code.expires):
		oauthError(w, http.StatusBadRequest, "invalid_grant", "the authorization code expired")
		return
	case code.clientID != id:
		oauthError(w, http.StatusBadRequest, "invalid_grant", "the code was issued to another client")
		return
	case code.redirectURI != p.Get("redirect_uri"):
		oauthError(w, http.StatusBadRequest, "invalid_grant", "redirect_uri does not match the authorization request")
		return
	}
	sum := sha256.Sum256([]byte(verifier))
	if base64.RawURLEncoding.EncodeToString(sum[:]) != code.challenge {
		oauthError(w, http.StatusBadRequest, "invalid_grant", "code_verifier does not match the code_challenge")
		return
	}
	code.used = true
	ttl := a.s.opts.TokenTTL
	access := randomToken()
	code.token = access
	a.tokens[access] = grant{user: code.user, expires: now.Add(ttl)}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	idToken := a.jwt(map[string]any{
		"iss": scheme + "://" + r.Host + a.issuerPath(), "sub": code.user, "aud": id, "preferred_username": code.user,
		"iat": now.Unix(), "exp": now.Add(ttl).Unix(),
	})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"access_token": access, "token_type": "Bearer", "expires_in": int64(ttl / time.Second),
		"id_token": idToken, "scope": "openid profile wcf_api rest_api",
	})
}

// jwt signs claims with HS256: a JWT-shaped id_token.
func (a *authServer) jwt(claims map[string]any) string {
	head := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`))
	body, _ := json.Marshal(claims)
	msg := head + "." + base64.RawURLEncoding.EncodeToString(body)
	mac := hmac.New(sha256.New, a.key)
	mac.Write([]byte(msg))
	return msg + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}
