package sandbox_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/migrate-tool/migrate/sandbox"
)

// The authorization server publishes its configuration: under /oauth2 and
// at the root as docs/service.md, Authentication places it, under /accounts
// as on-premise servers do (quirk oidc-accounts), where the secret goes as a
// Basic header only.
func TestOIDCDiscovery(t *testing.T) {
	t.Parallel()
	tests := []struct {
		quirk     bool
		doc       string
		status    int
		prefix    string
		methods   []string
		notServed string
	}{
		{false, "/.well-known/openid-configuration", 200, "/oauth2", []string{"client_secret_post", "client_secret_basic"}, "/accounts/connect/authorize"},
		{false, "/oauth2/.well-known/openid-configuration", 200, "/oauth2", []string{"client_secret_post", "client_secret_basic"}, "/accounts/.well-known/openid-configuration"},
		{true, "/accounts/.well-known/openid-configuration", 200, "/accounts/connect", []string{"client_secret_basic"}, "/oauth2/authorize"},
		{true, "/.well-known/openid-configuration", 200, "/accounts/connect", []string{"client_secret_basic"}, "/oauth2/.well-known/openid-configuration"},
	}
	for _, tt := range tests {
		c := start(t, sandbox.Options{Quirks: quirkIf(tt.quirk, sandbox.QuirkOIDCAccounts)})
		r := c.must(tt.status, "GET", c.srv.URL+tt.doc, nil)
		var d struct {
			Authorize string   `json:"authorization_endpoint"`
			Token     string   `json:"token_endpoint"`
			Methods   []string `json:"token_endpoint_auth_methods_supported"`
			PKCE      []string `json:"code_challenge_methods_supported"`
		}
		if err := json.Unmarshal(r.body, &d); err != nil {
			t.Fatalf("%s: %v\n%s", tt.doc, err, r.body)
		}
		if d.Authorize != c.srv.URL+tt.prefix+"/authorize" || d.Token != c.srv.URL+tt.prefix+"/token" ||
			!reflect.DeepEqual(d.Methods, tt.methods) || !reflect.DeepEqual(d.PKCE, []string{"S256"}) {
			t.Errorf("quirk %v %s: %s", tt.quirk, tt.doc, r.body)
		}
		c.must(404, "GET", c.srv.URL+tt.notServed, nil)
	}
}
