// Package auth chooses and builds the credentials the odata client sends
// (docs/service.md, Authentication): Basic (deprecated), personal access
// tokens, OIDC authorization code flow with PKCE, whose bearer token it
// caches per target in the user's configuration directory, and OAuth2's
// client credentials grant (ClientCredentials), whose tokens it keeps in
// memory for the run and fetches again when they expire or are refused.
//
// It owns: the precedence of the ways a method is chosen (Resolve), the
// OIDC login and logout (Login, Logout), the token cache and the hosts
// approved to receive credentials beside it (TrustHost, TrustedHosts,
// HostApproved; the CLI decides when to ask), the TLS client
// for servers with their own CA (HTTPClient), and the wording of credential
// refusals (Explain).
//
// It does not own: the wire format of requests (package odata), flags and
// the `migrate login` command (cmd/migrate), or the authorization server
// (package sandbox emulates one for tests).
//
// No secret leaves this package in text: every authenticator and token
// prints redacted with fmt's verbs (%v, %+v, %#v, %s, %q), has no exported
// secret field for encoding/json to write, and no error message carries a
// password, token, client secret or Authorization header.
package auth
