package auth

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"golang.org/x/oauth2"
)

// DiscoveryPath is where an OpenID provider publishes its configuration
// (OpenID Connect Discovery 1.0, section 4), below its issuer.
const DiscoveryPath = "/.well-known/openid-configuration"

// Endpoints are where the login goes: found by discovery, or the contract's
// {auth_url}/authorize and {auth_url}/token (docs/service.md, Authentication).
type Endpoints struct {
	Authorize, Token string
	// AuthStyle is how the client secret travels: in the form
	// (docs/service.md, Authentication step 4), or as a Basic header
	// (client_secret_basic, which real servers offer as "send as Basic Auth
	// header"). Never both in turn: a server may spend the code on the first
	// attempt.
	AuthStyle oauth2.AuthStyle
	// From is the discovery document they came from, "" for the contract's.
	From string
}

// discoveryDoc is the part of a provider's configuration the login uses.
type discoveryDoc struct {
	Authorize   string   `json:"authorization_endpoint"`
	Token       string   `json:"token_endpoint"`
	AuthMethods []string `json:"token_endpoint_auth_methods_supported"`
}

// discoveryCandidates are the documents tried, in order: below the auth
// URL when one is set (MIGRATE_AUTH_URL may also name the document
// itself); else below the contract's default {auth_url} (scheme://host/oauth2),
// at the host's root, and on-premise under /accounts (docs/servers.md,
// Authentication:
// https://DOMAIN/accounts/.well-known/openid-configuration).
func discoveryCandidates(authURL, target string) []string {
	if authURL != "" {
		if strings.HasSuffix(authURL, DiscoveryPath) {
			return []string{authURL}
		}
		return []string{authURL + DiscoveryPath}
	}
	u, err := url.Parse(strings.TrimSpace(target))
	if err != nil || u.Host == "" {
		return nil
	}
	root := u.Scheme + "://" + u.Host
	return []string{root + "/oauth2" + DiscoveryPath, root + DiscoveryPath, root + "/accounts" + DiscoveryPath}
}

// FindEndpoints finds the login's endpoints: the first discovery document
// that answers among the candidates, else the contract's {auth_url}/authorize
// and /token (authURL "" means scheme://host/oauth2 of the target). A
// document that answers but is unusable is an error: it is the server's
// word, and guessing past it would send the user's login elsewhere.
//
// clientAuth is MIGRATE_CLIENT_AUTH: "basic" or "form" choose how the
// secret travels whatever the document says; "" lets the document decide
// (the form when it offers client_secret_post or says nothing).
func FindEndpoints(ctx context.Context, hc *http.Client, authURL, target, clientAuth string, secret bool) (Endpoints, error) {
	style := func(methods []string) oauth2.AuthStyle {
		switch {
		case !secret:
			return oauth2.AuthStyleInParams
		case clientAuth == "basic":
			return oauth2.AuthStyleInHeader
		case clientAuth == "form":
			return oauth2.AuthStyleInParams
		}
		return authStyle(methods)
	}
	if clientAuth != "" && clientAuth != "basic" && clientAuth != "form" {
		return Endpoints{}, newError(ErrConfig, "%s=%q: want basic (the client secret as a Basic header) or form (in the token request's form)", EnvClientAuth, clientAuth)
	}
	for _, doc := range discoveryCandidates(authURL, target) {
		d, found, err := fetchDiscovery(ctx, hc, doc)
		if err != nil {
			return Endpoints{}, err
		}
		if !found {
			continue
		}
		return Endpoints{Authorize: d.Authorize, Token: d.Token, AuthStyle: style(d.AuthMethods), From: doc}, nil
	}
	base := authURL
	if base == "" || strings.HasSuffix(base, DiscoveryPath) {
		var err error
		if base, err = AuthURLFor(target); err != nil {
			return Endpoints{}, err
		}
	}
	return Endpoints{Authorize: base + "/authorize", Token: base + "/token", AuthStyle: style(nil)}, nil
}

// authStyle picks how the secret travels from the methods a provider
// lists: the form, the contract's way, unless only client_secret_basic is.
func authStyle(methods []string) oauth2.AuthStyle {
	var post, basic bool
	for _, m := range methods {
		post = post || m == "client_secret_post"
		basic = basic || m == "client_secret_basic"
	}
	if basic && !post {
		return oauth2.AuthStyleInHeader
	}
	return oauth2.AuthStyleInParams
}

// fetchDiscovery reads one discovery document. found is false when there
// is none there (any answer but 200 with JSON, or no connection): the next
// candidate is tried.
func fetchDiscovery(ctx context.Context, hc *http.Client, doc string) (d discoveryDoc, found bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, doc, nil)
	if err != nil {
		return d, false, nil
	}
	req.Header.Set("Accept", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return d, false, nil
	}
	defer resp.Body.Close()
	ct := resp.Header.Get("Content-Type")
	if resp.StatusCode != http.StatusOK || !strings.Contains(ct, "json") {
		return d, false, nil
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return d, false, nil
	}
	if err := json.Unmarshal(body, &d); err != nil {
		return d, false, newError(ErrConfig, "the discovery document %s is not valid JSON; set %s to the authorization server's base address", doc, EnvAuthURL)
	}
	for _, e := range []struct{ name, v string }{{"authorization_endpoint", d.Authorize}, {"token_endpoint", d.Token}} {
		u, perr := url.Parse(e.v)
		if e.v == "" || perr != nil || u.Host == "" || u.Scheme != "https" && u.Scheme != "http" {
			return d, false, newError(ErrConfig, "the discovery document %s gives no usable %s (%q); set %s to the authorization server's base address", doc, e.name, e.v, EnvAuthURL)
		}
	}
	return d, true, nil
}

// String says where the endpoints came from, for the login's first line.
func (e Endpoints) String() string {
	if e.From != "" {
		return fmt.Sprintf("%s (from %s)", e.Authorize, e.From)
	}
	return e.Authorize
}
