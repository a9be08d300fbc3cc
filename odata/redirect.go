package odata

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
)

// RedirectError says the server sent the client elsewhere and the client
// refused to follow: every request carries credentials (Authorization,
// X-App-Key), and a redirect is the one way a server can make the client
// hand them to somebody else. A redirect answer means the server did not
// carry out the request, so a refused write is not in doubt.
type RedirectError struct {
	From, To *url.URL
	Reason   string
}

func (e *RedirectError) Error() string {
	return fmt.Sprintf("the server redirected %s to %s: %s; migrate follows no redirect that could carry credentials elsewhere: set the target to the address the service really has",
		RedactURL(e.From.String()), RedactURL(e.To.String()), e.Reason)
}

// CheckRedirect is the redirect policy of every client that carries
// credentials: a redirect may stay on the same origin (scheme, host and
// port), or go from http to https on the same host name; nothing else.
// Go itself drops Authorization on a redirect to another domain, but not
// X-App-Key, and it keeps Authorization on an https-to-http redirect of the
// same host, in clear text.
func CheckRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= 10 {
		return &RedirectError{From: via[0].URL, To: req.URL, Reason: "more than 10 redirects"}
	}
	from, to := via[0].URL, req.URL
	switch {
	case from.Scheme == to.Scheme && from.Host == to.Host:
		return nil
	case from.Scheme == "https" && to.Scheme != "https":
		return &RedirectError{From: from, To: to, Reason: "from https to " + to.Scheme + " (credentials would travel in clear text)"}
	case from.Scheme == "http" && to.Scheme == "https" && from.Hostname() == to.Hostname():
		return nil
	default:
		return &RedirectError{From: from, To: to, Reason: "to another origin"}
	}
}

// withRedirectPolicy returns hc with CheckRedirect set where it has none;
// hc itself is not changed (a caller's client may be shared).
func withRedirectPolicy(hc *http.Client) *http.Client {
	if hc.CheckRedirect != nil {
		return hc
	}
	c := *hc
	c.CheckRedirect = CheckRedirect
	return &c
}

// CleartextCredentials reports whether credentials sent to target would
// cross a network unencrypted: an http:// URL whose host is not loopback.
func CleartextCredentials(target string) bool {
	u, err := url.Parse(target)
	if err != nil || u.Scheme != "http" {
		return false
	}
	host := u.Hostname()
	if host == "localhost" {
		return false
	}
	ip := net.ParseIP(host)
	return ip == nil || !ip.IsLoopback()
}

// RedactURL returns raw with any password in its user information replaced,
// so that a URL can be printed: https://user:secret@host/x becomes
// https://user:xxxxx@host/x. Text that is not a URL comes back unchanged.
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return raw
	}
	return u.Redacted()
}
