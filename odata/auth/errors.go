package auth

import (
	"errors"
	"fmt"
	"time"
)

// Kinds of failure, for errors.Is. Every error this package returns wraps
// exactly one of them in an *Error.
var (
	// ErrUnknownMethod: an auth method other than basic, pat or oidc was asked for.
	ErrUnknownMethod = errors.New("unknown auth method")
	// ErrMissingVariable: the chosen method needs an environment variable that is not set.
	ErrMissingVariable = errors.New("missing credential variable")
	// ErrNoCredentials: no method was asked for and none could be inferred.
	ErrNoCredentials = errors.New("no credentials")
	// ErrNotLoggedIn: OIDC was asked for but no token is cached for the target.
	ErrNotLoggedIn = errors.New("not logged in")
	// ErrExpired: the cached OIDC token has expired.
	ErrExpired = errors.New("token expired")
	// ErrCache: the token cache could not be read or written.
	ErrCache = errors.New("token cache")
	// ErrConfig: a setting (URL, redirect URI, CA file) is wrong.
	ErrConfig = errors.New("bad auth setting")
	// ErrStateMismatch: the authorization response carried a state other than the one sent.
	ErrStateMismatch = errors.New("state mismatch")
	// ErrAuthorizationDenied: the authorization server answered the redirect with an error.
	ErrAuthorizationDenied = errors.New("authorization denied")
	// ErrTokenRefused: the token endpoint refused the code (wrong verifier, redirect URI, client secret...).
	ErrTokenRefused = errors.New("token request refused")
	// ErrNoCode: the login ended without an authorization code.
	ErrNoCode = errors.New("no authorization code")
)

// Error is a failure of this package: what went wrong (Kind, for errors.Is),
// a message for the person reading it that says what to do, and the cause
// if there is one. It never holds a secret.
type Error struct {
	Kind    error
	Message string
	// Target is the service base URL concerned, when there is one.
	Target string
	// Expiry is set for ErrExpired.
	Expiry time.Time
	Err    error
}

func (e *Error) Error() string {
	if e.Err != nil {
		return e.Message + ": " + e.Err.Error()
	}
	return e.Message
}

// Unwrap returns the kind and the cause, so errors.Is works with both.
func (e *Error) Unwrap() []error {
	if e.Err != nil {
		return []error{e.Kind, e.Err}
	}
	return []error{e.Kind}
}

func newError(kind error, format string, args ...any) *Error {
	return &Error{Kind: kind, Message: fmt.Sprintf(format, args...)}
}

// expiredError says the token expired, when, and what to run (migrate
// login), with the time in UTC so it reads the same in logs from every
// machine.
func expiredError(target string, expiry time.Time) *Error {
	return &Error{
		Kind:    ErrExpired,
		Message: fmt.Sprintf("the token for %s expired at %s; run `migrate login`", target, expiry.UTC().Format(time.RFC3339)),
		Target:  target,
		Expiry:  expiry,
	}
}
