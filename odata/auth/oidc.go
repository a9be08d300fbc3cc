package auth

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"golang.org/x/oauth2"
)

// docs/service.md, Authentication step 2: what the authorize request asks for.
const (
	DefaultClientID = "migrate-cli"
	Scope           = "openid profile wcf_api rest_api"
	Audience        = `["wcf_api","rest_api"]`
	CallbackPath    = "/callback"
)

// LoginOptions configure Login. Only Target is required; the zero value of
// the rest reads the environment, the real clock, stdin and stdout.
type LoginOptions struct {
	Target string // service base URL; keys the token cache

	// AuthURL is the {auth_url} of docs/service.md, Authentication, or a
	// discovery document's address. "": MIGRATE_AUTH_URL, else discovery on
	// the target's host (FindEndpoints), else scheme://host/oauth2 of Target.
	// The endpoints are those of AuthURL's discovery document when it has
	// one, else AuthURL/authorize and AuthURL/token.
	AuthURL string
	// ClientID: "" reads MIGRATE_CLIENT_ID, else "migrate-cli".
	ClientID string
	// ClientSecret: "" reads MIGRATE_CLIENT_SECRET. It is sent only in the
	// token request and never cached.
	ClientSecret string
	// RedirectURI is a registered HTTPS redirect URI: the user pastes the code
	// (or the whole address the browser was sent to) on Stdin. "": a loopback
	// listener on 127.0.0.1:<random port>/callback receives the redirect.
	RedirectURI string

	Env         func(string) string    // nil: os.Getenv
	OpenBrowser func(url string) error // nil: DefaultOpenBrowser
	HTTPClient  *http.Client           // for the token request; nil: http.DefaultClient
	Stdin       io.Reader              // nil: os.Stdin (paste mode only)
	Stdout      io.Writer              // nil: os.Stdout; the URL and prompts go here
	CacheDir    string                 // "": DefaultCacheDir()
	Now         func() time.Time       // nil: time.Now; expiry = Now + expires_in
	// Listen is the loopback address of the callback listener; "": 127.0.0.1:0.
	Listen string
}

func (o *LoginOptions) defaults() error {
	if o.Env == nil {
		o.Env = os.Getenv
	}
	if o.OpenBrowser == nil {
		o.OpenBrowser = DefaultOpenBrowser
	}
	if o.HTTPClient == nil {
		o.HTTPClient = http.DefaultClient
	}
	if o.Stdin == nil {
		o.Stdin = os.Stdin
	}
	if o.Stdout == nil {
		o.Stdout = os.Stdout
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Listen == "" {
		o.Listen = "127.0.0.1:0"
	}
	if o.ClientID == "" {
		o.ClientID = o.Env(EnvClientID)
	}
	if o.ClientID == "" {
		o.ClientID = DefaultClientID
	}
	if o.ClientSecret == "" {
		o.ClientSecret = o.Env(EnvClientSecret)
	}
	if strings.TrimSpace(o.Target) == "" {
		return newError(ErrConfig, "login needs a target: set MIGRATE_TARGET or --target")
	}
	if o.AuthURL == "" {
		o.AuthURL = o.Env(EnvAuthURL)
	}
	// "" stays: FindEndpoints tries discovery on the target's host first.
	o.AuthURL = strings.TrimRight(o.AuthURL, "/")
	if _, err := AuthURLFor(o.Target); err != nil {
		return err
	}
	if u, err := url.Parse(o.AuthURL); o.AuthURL != "" && (err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https")) {
		return newError(ErrConfig, "auth URL %q is not an http(s) URL; set %s to the operator's {auth_url}", o.AuthURL, EnvAuthURL)
	}
	if o.RedirectURI != "" {
		u, err := url.Parse(o.RedirectURI)
		// docs/service.md, Authentication: a registered redirect URI must be
		// HTTPS.
		if err != nil || u.Scheme != "https" || u.Host == "" {
			return newError(ErrConfig, "redirect URI %q must be an HTTPS URL registered with the operator (docs/service.md, Authentication); leave it empty for the loopback callback", o.RedirectURI)
		}
	}
	return nil
}

// AuthURLFor derives the default {auth_url} from a target: scheme://host/oauth2.
func AuthURLFor(target string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(target))
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return "", newError(ErrConfig, "target %q is not an http(s) URL", target)
	}
	return u.Scheme + "://" + u.Host + "/oauth2", nil
}

// Login runs the authorization code flow with PKCE (docs/service.md,
// Authentication): a fresh code_verifier and state, the authorize URL printed
// and opened in the browser, the code received on the loopback listener (or
// pasted), then the token request. The token is cached for the target and
// returned. If the user's session at the authorization server is still
// active, the browser comes straight back with a code and no form.
func Login(ctx context.Context, opts LoginOptions) (*Token, error) {
	if err := opts.defaults(); err != nil {
		return nil, err
	}
	ep, err := FindEndpoints(ctx, opts.HTTPClient, opts.AuthURL, opts.Target, strings.ToLower(strings.TrimSpace(opts.Env(EnvClientAuth))), opts.ClientSecret != "")
	if err != nil {
		return nil, err
	}
	verifier := oauth2.GenerateVerifier() // 43 characters (docs/service.md, Limits: 43 to 128)
	state, err := randomState()
	if err != nil {
		return nil, err
	}

	var (
		redirect string
		wait     func(context.Context) (string, error)
	)
	if opts.RedirectURI == "" {
		ln, err := net.Listen("tcp", opts.Listen)
		if err != nil {
			return nil, &Error{Kind: ErrConfig, Message: fmt.Sprintf("cannot listen on %s for the login callback", opts.Listen), Err: err}
		}
		cb := newCallback(ln, state)
		defer cb.close()
		redirect = "http://" + ln.Addr().String() + CallbackPath
		wait = cb.wait
	} else {
		redirect = opts.RedirectURI
		wait = func(ctx context.Context) (string, error) { return readPasted(ctx, opts.Stdin, opts.Stdout, state) }
	}

	cfg := &oauth2.Config{
		ClientID:     opts.ClientID,
		ClientSecret: opts.ClientSecret,
		Endpoint: oauth2.Endpoint{
			AuthURL:  ep.Authorize,
			TokenURL: ep.Token,
			// docs/service.md, Authentication step 4 sends client_id and
			// client_secret as form fields; real servers may want the secret
			// as a Basic header.
			AuthStyle: ep.AuthStyle,
		},
		RedirectURL: redirect,
		Scopes:      strings.Fields(Scope),
	}
	authorizeURL := cfg.AuthCodeURL(state,
		oauth2.S256ChallengeOption(verifier),
		oauth2.SetAuthURLParam("audience", Audience),
		oauth2.SetAuthURLParam("grant_type", "authorization_code"),
	)

	fmt.Fprintf(opts.Stdout, "Open this address in a browser to log in to %s:\n\n  %s\n\n", normalizeTarget(opts.Target), authorizeURL)
	if err := opts.OpenBrowser(authorizeURL); err != nil {
		fmt.Fprintf(opts.Stdout, "(the browser could not be opened: %v; open the address yourself)\n", err)
	}

	code, err := wait(ctx)
	if err != nil {
		return nil, err
	}

	ctx = context.WithValue(ctx, oauth2.HTTPClient, opts.HTTPClient)
	tok, err := cfg.Exchange(ctx, code, oauth2.VerifierOption(verifier))
	if err != nil {
		return nil, tokenError(cfg.Endpoint.TokenURL, err)
	}
	if !strings.EqualFold(tok.TokenType, "Bearer") {
		return nil, newError(ErrTokenRefused, "%s answered a token of type %q; the service needs Bearer (docs/service.md, Authentication)", cfg.Endpoint.TokenURL, tok.TokenType)
	}
	var expiry time.Time
	if tok.ExpiresIn > 0 {
		expiry = opts.Now().Add(time.Duration(tok.ExpiresIn) * time.Second)
	}
	out := NewToken(normalizeTarget(opts.Target), tok.AccessToken, expiry)
	if id, ok := tok.Extra("id_token").(string); ok {
		out.id = newSecret(id)
	}
	if err := SaveToken(opts.CacheDir, out); err != nil {
		return nil, err
	}
	return out, nil
}

// tokenError describes a refused token request without quoting the
// response body or the request, which carry the code and the secret.
func tokenError(tokenURL string, err error) error {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		status := 0
		if re.Response != nil {
			status = re.Response.StatusCode
		}
		msg := fmt.Sprintf("%s refused the authorization code (HTTP %d", tokenURL, status)
		if re.ErrorCode != "" {
			msg += ", " + re.ErrorCode
		}
		msg += ")"
		if re.ErrorDescription != "" {
			msg += ": " + re.ErrorDescription
		}
		msg += "; check " + EnvClientID + ", " + EnvClientSecret + " and the registered redirect URI, then run `migrate login` again"
		return &Error{Kind: ErrTokenRefused, Message: msg}
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return &Error{Kind: ErrTokenRefused, Message: fmt.Sprintf("cannot reach the token endpoint %s", tokenURL), Err: ue.Err}
	}
	// oauth2's own errors (a response without access_token) quote no secret.
	return &Error{Kind: ErrTokenRefused, Message: fmt.Sprintf("%s gave no usable token", tokenURL), Err: err}
}

func randomState() (string, error) {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", &Error{Kind: ErrConfig, Message: "no randomness for the login state", Err: err}
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// callback is the loopback listener that receives the redirect (RFC 8252
// section 7.3). It takes the first request to CallbackPath and no other.
type callback struct {
	srv    *http.Server
	state  string
	result chan callbackResult
}

type callbackResult struct {
	code string
	err  error
}

func newCallback(ln net.Listener, state string) *callback {
	cb := &callback{state: state, result: make(chan callbackResult, 1)}
	mux := http.NewServeMux()
	mux.HandleFunc(CallbackPath, cb.serve)
	cb.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = cb.srv.Serve(ln) }()
	return cb
}

func (cb *callback) serve(w http.ResponseWriter, r *http.Request) {
	code, err := checkRedirect(r.URL.Query(), cb.state)
	select {
	case cb.result <- callbackResult{code, err}:
	default:
		http.Error(w, "this login has already finished; close this window", http.StatusGone)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, "<!doctype html><title>migrate login</title><p>Login refused: %s</p><p>Return to the terminal.</p>\n", html.EscapeString(err.Error()))
		return
	}
	fmt.Fprint(w, "<!doctype html><title>migrate login</title><p>Logged in. You can close this window and return to the terminal.</p>\n")
}

func (cb *callback) wait(ctx context.Context) (string, error) {
	select {
	case r := <-cb.result:
		return r.code, r.err
	case <-ctx.Done():
		return "", &Error{Kind: ErrNoCode, Message: "the login was not completed in the browser", Err: ctx.Err()}
	}
}

func (cb *callback) close() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = cb.srv.Shutdown(ctx)
}

// checkRedirect reads the query of the redirect (docs/service.md,
// Authentication step 3). The state must be the one sent, or the response
// belongs to some other login (RFC 6749 section 10.12) and is refused.
func checkRedirect(q url.Values, state string) (string, error) {
	if e := q.Get("error"); e != "" {
		msg := fmt.Sprintf("the authorization server refused the login (%s", e)
		if d := q.Get("error_description"); d != "" {
			msg += ": " + d
		}
		return "", &Error{Kind: ErrAuthorizationDenied, Message: msg + ")"}
	}
	if got := q.Get("state"); got != state {
		return "", newError(ErrStateMismatch, "the login response does not belong to this login (its state differs); it was refused: run `migrate login` again")
	}
	code := q.Get("code")
	if code == "" {
		return "", newError(ErrNoCode, "the login response carries no code; run `migrate login` again")
	}
	return code, nil
}

// readPasted reads the code, or the whole address the browser ended on, from
// in. A pasted address must carry this login's state; a bare code cannot be
// checked and is taken as it is.
func readPasted(ctx context.Context, in io.Reader, out io.Writer, state string) (string, error) {
	fmt.Fprint(out, "After logging in, paste the code (or the whole address the browser shows): ")
	type line struct {
		s   string
		err error
	}
	ch := make(chan line, 1)
	go func() {
		s, err := bufio.NewReader(in).ReadString('\n')
		ch <- line{s, err}
	}()
	var l line
	select {
	case l = <-ch:
	case <-ctx.Done():
		return "", &Error{Kind: ErrNoCode, Message: "the login was not completed", Err: ctx.Err()}
	}
	s := strings.TrimSpace(l.s)
	if s == "" {
		if l.err != nil && !errors.Is(l.err, io.EOF) {
			return "", &Error{Kind: ErrNoCode, Message: "cannot read the pasted code", Err: l.err}
		}
		return "", newError(ErrNoCode, "no code was pasted; run `migrate login` again and paste the code the login page gives")
	}
	if strings.Contains(s, "://") || strings.HasPrefix(s, "?") || strings.Contains(s, "code=") {
		raw := s
		if i := strings.IndexByte(raw, '?'); i >= 0 {
			raw = raw[i+1:]
		}
		if i := strings.IndexByte(raw, '#'); i >= 0 {
			raw = raw[:i]
		}
		q, err := url.ParseQuery(raw)
		if err != nil {
			return "", newError(ErrNoCode, "the pasted address has no readable query; paste the code alone or the whole address")
		}
		return checkRedirect(q, state)
	}
	return s, nil
}
