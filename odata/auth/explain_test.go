package auth

import (
	"errors"
	"fmt"
	"testing"

	"github.com/migrate-tool/migrate/odata"
)

type statusErr int

func (s statusErr) Error() string   { return fmt.Sprintf("HTTP %d", int(s)) }
func (s statusErr) StatusCode() int { return int(s) }

func TestExplain(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		err    error
		method string
		want   string
	}{
		{"odata 401", &odata.Error{Status: 401}, "pat", "the credentials were refused (method: pat)"},
		{"odata 401 wrapped", fmt.Errorf("GET CUSTOMERS: %w", &odata.Error{Status: 401}), "basic", "the credentials were refused (method: basic)"},
		{"odata 403", &odata.Error{Status: 403, Messages: []string{"forbidden"}}, "oidc", "the screen is not open to the API for this user"},
		{"status coder 401", statusErr(401), "oidc", "the credentials were refused (method: oidc)"},
		{"status coder 403 wrapped", fmt.Errorf("x: %w", statusErr(403)), "pat", "the screen is not open to the API for this user"},
		{"screen error", &odata.Error{Status: 400}, "pat", ""},
		{"not an HTTP error", errors.New("dial tcp: refused"), "pat", ""},
		{"nil", nil, "pat", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Explain(tc.err, tc.method); got != tc.want {
				t.Errorf("Explain = %q, want %q", got, tc.want)
			}
		})
	}
	for _, m := range []string{MethodBasic, MethodPAT, MethodOIDC, ""} {
		if Hint(m) == "" {
			t.Errorf("no hint for method %q", m)
		}
	}
}
