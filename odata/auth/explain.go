package auth

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/migrate-tool/migrate/odata"
)

// statusCoder is any error that knows the HTTP status the server answered.
type statusCoder interface{ StatusCode() int }

// Explain turns a credential refusal into a sentence for the user: 401 is
// "the credentials were refused (method: METHOD)", 403 (service notes: an
// allowed user and a forbidden screen) is "the screen is not open to the
// API for this user". Any other error gives "", so the caller prints the
// error itself. method is the Method() of the authenticator that was used.
func Explain(err error, method string) string {
	switch statusOf(err) {
	case http.StatusUnauthorized:
		return fmt.Sprintf("the credentials were refused (method: %s)", method)
	case http.StatusForbidden:
		return "the screen is not open to the API for this user"
	}
	return ""
}

// Hint says what to check after a 401 with method, for the CLI to print
// under Explain's line.
func Hint(method string) string {
	switch method {
	case MethodBasic:
		return "check " + EnvUser + " and " + EnvPassword + "; the server may have switched Basic off (use " + EnvToken + " or `migrate login`)"
	case MethodPAT:
		return "check " + EnvToken + ": the token may be wrong, revoked or expired"
	case MethodOIDC:
		return "the token may have been revoked: run `migrate login`"
	case MethodClientCredentials:
		return "the service refused a fresh token from the token endpoint: check that client " + EnvClientID + " is granted access to this service, and the scopes (" + EnvScopes + ")"
	}
	return "set " + EnvToken + " or run `migrate login`"
}

func statusOf(err error) int {
	var oe *odata.Error
	if errors.As(err, &oe) {
		return oe.Status
	}
	var sc statusCoder
	if errors.As(err, &sc) {
		return sc.StatusCode()
	}
	return 0
}
