package auth

import (
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/migrate-tool/migrate/odata"
)

// Authenticator is the odata client's: every value returned here can be
// handed to odata.Client as it is.
type Authenticator = odata.Authenticator

// Method names, as flags, MIGRATE_AUTH and the plan's target.auth spell them.
const (
	MethodBasic = "basic"
	MethodPAT   = "pat"
	MethodOIDC  = "oidc"
)

const redacted = "[redacted]"

// secret holds a credential one pointer away: fmt, reflecting on a value
// that holds one in an unexported field (where it cannot call Format),
// prints an address, never the text. encoding/json sees no field at all.
type secret struct{ p *string }

func newSecret(s string) secret { return secret{&s} }

func (s secret) get() string {
	if s.p == nil {
		return ""
	}
	return *s.p
}

func (s secret) String() string { return redacted }

// GoString redacts too.
func (s secret) GoString() string { return redacted }

// Format redacts for every verb.
func (s secret) Format(f fmt.State, _ rune) { redact(f, redacted) }

// redact makes every fmt verb print s: %v, %+v, %#v, %s, %q, %x alike.
func redact(f fmt.State, s string) { _, _ = io.WriteString(f, s) }

// Basic sends a user name and password in the Authorization header
// (docs/service.md, Authentication, deprecated by the service). Build it with
// NewBasic; the password is not an exported field so that neither fmt nor
// encoding/json can write it.
type Basic struct {
	user     string
	password secret
}

// NewBasic returns Basic credentials.
func NewBasic(user, password string) *Basic { return &Basic{user: user, password: newSecret(password)} }

// User is the user name (not a secret).
func (b *Basic) User() string { return b.user }

// Method returns "basic".
func (b *Basic) Method() string { return MethodBasic }

// Authorize sets the Basic Authorization header (odata owns the wire format).
func (b *Basic) Authorize(req *http.Request) error {
	return odata.BasicAuth{User: b.user, Password: b.password.get()}.Authorize(req)
}

func (b *Basic) String() string {
	return fmt.Sprintf("auth.Basic{User: %q, Password: %s}", b.user, redacted)
}

// GoString is the same redacted text as String.
func (b *Basic) GoString() string { return b.String() }

// Format prints the redacted form for every verb.
func (b *Basic) Format(f fmt.State, _ rune) { redact(f, b.String()) }

// PAT sends a personal access token the way the service expects it (service
// notes: Basic credentials with the token as user name and the literal PAT
// as password).
type PAT struct{ token secret }

// NewPAT returns personal access token credentials.
func NewPAT(token string) *PAT { return &PAT{token: newSecret(token)} }

// Method returns "pat".
func (p *PAT) Method() string { return MethodPAT }

// Authorize sets the Authorization header (odata owns the wire format).
func (p *PAT) Authorize(req *http.Request) error {
	return odata.PATAuth{Token: p.token.get()}.Authorize(req)
}

func (p *PAT) String() string { return "auth.PAT{Token: " + redacted + "}" }

// GoString is the same redacted text as String.
func (p *PAT) GoString() string { return p.String() }

// Format prints the redacted form for every verb.
func (p *PAT) Format(f fmt.State, _ rune) { redact(f, p.String()) }

// BearerAuth sends an OIDC access token (docs/service.md, Authentication step
// 6) and refuses once it has expired, so a long run stops with a clear
// message instead of a 401.
type BearerAuth struct {
	token  secret
	expiry time.Time // zero: the server gave no lifetime
	target string
	now    func() time.Time
}

// NewBearerAuth returns bearer credentials for target that expire at expiry (zero:
// never refused client-side). now may be nil for time.Now.
func NewBearerAuth(token string, expiry time.Time, target string, now func() time.Time) *BearerAuth {
	if now == nil {
		now = time.Now
	}
	return &BearerAuth{token: newSecret(token), expiry: expiry, target: target, now: now}
}

// Method returns "oidc".
func (b *BearerAuth) Method() string { return MethodOIDC }

// Expiry is when the token stops being accepted.
func (b *BearerAuth) Expiry() time.Time { return b.expiry }

// Target is the service base URL the token was issued for.
func (b *BearerAuth) Target() string { return b.target }

// Expired reports whether the token has expired.
func (b *BearerAuth) Expired() bool { return !b.expiry.IsZero() && !b.now().Before(b.expiry) }

// Authorize sets "Authorization: Bearer ..." or returns an ErrExpired error.
func (b *BearerAuth) Authorize(req *http.Request) error {
	if b.Expired() {
		return expiredError(b.target, b.expiry)
	}
	req.Header.Set("Authorization", "Bearer "+b.token.get())
	return nil
}

func (b *BearerAuth) String() string {
	exp := "none"
	if !b.expiry.IsZero() {
		exp = b.expiry.UTC().Format(time.RFC3339)
	}
	return fmt.Sprintf("auth.BearerAuth{Token: %s, Target: %q, Expiry: %s}", redacted, b.target, exp)
}

// GoString is the same redacted text as String.
func (b *BearerAuth) GoString() string { return b.String() }

// Format prints the redacted form for every verb.
func (b *BearerAuth) Format(f fmt.State, _ rune) { redact(f, b.String()) }

// AppLicence adds the application licence headers X-App-Id and X-App-Key to
// every request, then lets the wrapped authenticator sign it. The key is
// treated as a secret.
type AppLicence struct {
	next  Authenticator
	appID string
	key   secret
}

// WithAppLicence wraps a with the licence headers; with both empty it returns a unchanged.
func WithAppLicence(a Authenticator, appID, appKey string) Authenticator {
	if appID == "" && appKey == "" {
		return a
	}
	return &AppLicence{next: a, appID: appID, key: newSecret(appKey)}
}

// Method is the wrapped authenticator's method.
func (a *AppLicence) Method() string { return a.next.Method() }

// Unwrap returns the wrapped authenticator.
func (a *AppLicence) Unwrap() Authenticator { return a.next }

// Renew passes a refused request on to the wrapped authenticator when it
// can fetch its credential again (odata.Renewer); false otherwise.
func (a *AppLicence) Renew(refused *http.Request) bool {
	if r, ok := a.next.(odata.Renewer); ok {
		return r.Renew(refused)
	}
	return false
}

// Authorize sets the licence headers and signs the request.
func (a *AppLicence) Authorize(req *http.Request) error {
	if a.appID != "" {
		req.Header.Set("X-App-Id", a.appID)
	}
	if k := a.key.get(); k != "" {
		req.Header.Set("X-App-Key", k)
	}
	return a.next.Authorize(req)
}

func (a *AppLicence) String() string {
	// Only the wrapped method's name: a foreign authenticator may not redact.
	return fmt.Sprintf("auth.AppLicence{AppID: %q, AppKey: %s, Method: %s}", a.appID, redacted, a.next.Method())
}

// GoString is the same redacted text as String.
func (a *AppLicence) GoString() string { return a.String() }

// Format prints the redacted form for every verb.
func (a *AppLicence) Format(f fmt.State, _ rune) { redact(f, a.String()) }

// Every authenticator here is one the odata client accepts.
var (
	_ Authenticator = (*Basic)(nil)
	_ Authenticator = (*PAT)(nil)
	_ Authenticator = (*BearerAuth)(nil)
	_ Authenticator = (*AppLicence)(nil)
	_ odata.Renewer = (*AppLicence)(nil)
)
