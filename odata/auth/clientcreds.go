package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/migrate-tool/migrate/odata"
)

// MethodClientCredentials is OAuth2's client credentials grant (RFC 6749
// section 4.4), the way S/4HANA, Business Central and Dataverse let a
// program in (docs/other-services.md, Logging in with client credentials).
const MethodClientCredentials = "client_credentials"

// Environment variables of the client credentials grant (docs/cli.md,
// Environment); the client id and secret are MIGRATE_CLIENT_ID and
// MIGRATE_CLIENT_SECRET, as for the OIDC login.
const (
	EnvTokenURL = "MIGRATE_TOKEN_URL"
	EnvScopes   = "MIGRATE_SCOPES"
)

// ClientCredentials signs requests with a bearer token it gets from a
// token endpoint with the client's id and secret, keeps in memory for the
// run (never on disk), and fetches again when it has expired or the
// service refused it (Renew). The secret goes only to the token endpoint.
type ClientCredentials struct {
	clientID string
	secret   secret
	tokenURL string
	scopes   []string
	style    oauth2.AuthStyle
	hc       *http.Client
	now      func() time.Time

	mu      sync.Mutex
	token   secret
	has     bool
	expiry  time.Time // zero: the endpoint gave no lifetime
	fetches int
}

// ClientCredentialsOptions configure NewClientCredentials.
type ClientCredentialsOptions struct {
	TokenURL, ClientID, ClientSecret string
	Scopes                           []string
	// ClientAuth is how the secret travels: "basic" (a Basic header),
	// "form" (in the form), "" (tried as a header, then in the form).
	ClientAuth string
	HTTPClient *http.Client     // nil: one that follows no redirect to another host
	Now        func() time.Time // nil: time.Now
}

// NewClientCredentials returns the authenticator of the client
// credentials grant; it fetches nothing until the first request.
func NewClientCredentials(o ClientCredentialsOptions) *ClientCredentials {
	c := &ClientCredentials{clientID: o.ClientID, secret: newSecret(o.ClientSecret), tokenURL: o.TokenURL,
		scopes: o.Scopes, hc: o.HTTPClient, now: o.Now}
	switch o.ClientAuth {
	case "basic":
		c.style = oauth2.AuthStyleInHeader
	case "form":
		c.style = oauth2.AuthStyleInParams
	}
	if c.hc == nil {
		c.hc = &http.Client{Timeout: 3 * time.Minute, CheckRedirect: odata.CheckRedirect}
	}
	if c.now == nil {
		c.now = time.Now
	}
	return c
}

// Method returns "client_credentials".
func (c *ClientCredentials) Method() string { return MethodClientCredentials }

// TokenURL is the token endpoint's address.
func (c *ClientCredentials) TokenURL() string { return c.tokenURL }

// Fetches is how many tokens were fetched so far.
func (c *ClientCredentials) Fetches() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.fetches
}

// Authorize sets "Authorization: Bearer ..." with the token in memory,
// fetched first when there is none or it has (nearly) expired.
func (c *ClientCredentials) Authorize(req *http.Request) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.has || c.expired() {
		if err := c.fetch(req.Context()); err != nil {
			return err
		}
	}
	req.Header.Set("Authorization", "Bearer "+c.token.get())
	return nil
}

// expired: the token's lifetime is over, or so nearly that a request
// signed now might arrive after it (expiry is set a tenth of the
// lifetime, at most 30 seconds, before the end the endpoint gave).
func (c *ClientCredentials) expired() bool {
	return !c.expiry.IsZero() && !c.now().Before(c.expiry)
}

// Renew drops the token that signed refused, so that the next request
// fetches a new one. A token another request already replaced is not
// dropped again. It always has a new token to get: true.
func (c *ClientCredentials) Renew(refused *http.Request) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.has && refused.Header.Get("Authorization") == "Bearer "+c.token.get() {
		c.has = false
	}
	return true
}

func (c *ClientCredentials) fetch(ctx context.Context) error {
	conf := &clientcredentials.Config{ClientID: c.clientID, ClientSecret: c.secret.get(), TokenURL: c.tokenURL,
		Scopes: c.scopes, AuthStyle: c.style}
	start := c.now()
	tok, err := conf.Token(context.WithValue(ctx, oauth2.HTTPClient, c.hc))
	if err != nil {
		return c.refused(err)
	}
	if !strings.EqualFold(tok.Type(), "Bearer") {
		return newError(ErrTokenRefused, "the token endpoint %s answered a token of type %q; a bearer token is needed", c.tokenURL, tok.Type())
	}
	c.token, c.has, c.expiry = newSecret(tok.AccessToken), true, time.Time{}
	if life := lifetime(tok); life > 0 {
		c.expiry = start.Add(life - min(life/10, 30*time.Second))
	}
	c.fetches++
	return nil
}

// lifetime is the token's expires_in, 0 when the endpoint gave none.
func lifetime(tok *oauth2.Token) time.Duration {
	var secs float64
	switch v := tok.Extra("expires_in").(type) {
	case float64:
		secs = v
	case json.Number:
		secs, _ = v.Float64()
	case string:
		secs, _ = strconv.ParseFloat(v, 64)
	}
	if secs <= 0 {
		return 0
	}
	return time.Duration(secs * float64(time.Second))
}

// refused describes a failed token request by the token endpoint's
// address and answer, never by the request (which holds the secret); a
// description that quotes the secret has it redacted.
func (c *ClientCredentials) refused(err error) error {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		status := 0
		if re.Response != nil {
			status = re.Response.StatusCode
		}
		msg := fmt.Sprintf("the token endpoint %s refused the client credentials (HTTP %d", c.tokenURL, status)
		if re.ErrorCode != "" {
			msg += ", " + re.ErrorCode
		}
		msg += ")"
		if re.ErrorDescription != "" {
			msg += ": " + re.ErrorDescription
		}
		msg += "; check " + EnvClientID + ", " + EnvClientSecret + " and the scopes (" + EnvScopes + ")"
		return &Error{Kind: ErrTokenRefused, Message: c.scrub(msg)}
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return &Error{Kind: ErrTokenRefused, Message: fmt.Sprintf("cannot reach the token endpoint %s", c.tokenURL), Err: errors.New(c.scrub(ue.Err.Error()))}
	}
	return &Error{Kind: ErrTokenRefused, Message: fmt.Sprintf("the token endpoint %s gave no usable token", c.tokenURL), Err: errors.New(c.scrub(err.Error()))}
}

func (c *ClientCredentials) scrub(s string) string {
	if sec := c.secret.get(); len(sec) >= 4 {
		s = strings.ReplaceAll(s, sec, redacted)
	}
	return s
}

func (c *ClientCredentials) String() string {
	return fmt.Sprintf("auth.ClientCredentials{ClientID: %q, ClientSecret: %s, TokenURL: %q}", c.clientID, redacted, c.tokenURL)
}

// GoString is the same redacted text as String.
func (c *ClientCredentials) GoString() string { return c.String() }

// Format prints the redacted form for every verb.
func (c *ClientCredentials) Format(f fmt.State, _ rune) { redact(f, c.String()) }

// resolveClientCredentials reads the grant's settings: the token URL from
// MIGRATE_TOKEN_URL, else the plan's target.token_url; the scopes from
// MIGRATE_SCOPES, else the plan's; the id and secret from the
// environment only.
func resolveClientCredentials(opts ResolveOptions, env func(string) string, now func() time.Time, source string) (Authenticator, error) {
	tokenURL, from := strings.TrimSpace(env(EnvTokenURL)), EnvTokenURL
	if tokenURL == "" {
		tokenURL, from = strings.TrimSpace(opts.PlanTokenURL), "the plan's token_url"
	}
	if tokenURL == "" {
		return nil, newError(ErrMissingVariable, "auth method client_credentials (from %s) needs the token endpoint: set %s, or token_url in the plan", source, EnvTokenURL)
	}
	if u, err := url.Parse(tokenURL); err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") || u.User != nil {
		return nil, newError(ErrConfig, "the token endpoint %q (from %s) is not an http(s) URL without a user name", odata.RedactURL(tokenURL), from)
	}
	id := env(EnvClientID)
	if id == "" {
		return nil, newError(ErrMissingVariable, "auth method client_credentials (from %s) needs %s: set it to the client id the service registered", source, EnvClientID)
	}
	sec := env(EnvClientSecret)
	if sec == "" {
		return nil, newError(ErrMissingVariable, "auth method client_credentials (from %s) needs %s: set it to client %q's secret", source, EnvClientSecret, id)
	}
	scopes := opts.PlanScopes
	if s := env(EnvScopes); strings.TrimSpace(s) != "" {
		scopes = SplitScopes(s)
	}
	clientAuth := strings.ToLower(strings.TrimSpace(env(EnvClientAuth)))
	if clientAuth != "" && clientAuth != "basic" && clientAuth != "form" {
		return nil, newError(ErrConfig, "%s=%q: want basic or form", EnvClientAuth, clientAuth)
	}
	return NewClientCredentials(ClientCredentialsOptions{TokenURL: tokenURL, ClientID: id, ClientSecret: sec, Scopes: scopes,
		ClientAuth: clientAuth, HTTPClient: opts.HTTPClient, Now: now}), nil
}

// TokenURLOf is the token endpoint a's client credentials go to, "" when
// a is of another method.
func TokenURLOf(a Authenticator) string {
	if l, ok := a.(*AppLicence); ok {
		a = l.Unwrap()
	}
	if c, ok := a.(*ClientCredentials); ok {
		return c.tokenURL
	}
	return ""
}

// SplitScopes reads scopes separated by spaces or commas.
func SplitScopes(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == ',' || r == '\t' })
}

var _ odata.Renewer = (*ClientCredentials)(nil)
