package auth

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"golang.org/x/oauth2"
)

// FindEndpoints tries the discovery documents in order and falls back to
// the contract's {auth_url}/authorize and /token (docs/service.md,
// Authentication).
func TestFindEndpoints(t *testing.T) {
	t.Parallel()
	// docs maps a path to the token_endpoint_auth_methods_supported its
	// document lists; "bad" serves a broken document, "html" a proxy's page.
	tests := []struct {
		name       string
		docs       map[string]string
		authURL    string // "HOST" is replaced by the server's address
		clientAuth string
		secret     bool
		wantAuth   string // path of the authorize endpoint
		wantStyle  oauth2.AuthStyle
		wantFrom   string
		wantErr    string
	}{
		{name: "spec default without discovery", secret: true,
			wantAuth: "/oauth2/authorize", wantStyle: oauth2.AuthStyleInParams},
		{name: "on-premise /accounts, Basic only", docs: map[string]string{"/accounts": "client_secret_basic"}, secret: true,
			wantAuth: "/accounts/connect/authorize", wantStyle: oauth2.AuthStyleInHeader, wantFrom: "/accounts/.well-known/openid-configuration"},
		{name: "root before /accounts", docs: map[string]string{"": "client_secret_post client_secret_basic", "/accounts": "client_secret_basic"}, secret: true,
			wantAuth: "/connect/authorize", wantStyle: oauth2.AuthStyleInParams, wantFrom: "/.well-known/openid-configuration"},
		{name: "/oauth2 first", docs: map[string]string{"/oauth2": "", "": "client_secret_basic"}, secret: true,
			wantAuth: "/oauth2/connect/authorize", wantStyle: oauth2.AuthStyleInParams, wantFrom: "/oauth2/.well-known/openid-configuration"},
		{name: "a proxy's HTML page is no document", docs: map[string]string{"": "html", "/accounts": "client_secret_basic"}, secret: true,
			wantAuth: "/accounts/connect/authorize", wantStyle: oauth2.AuthStyleInHeader, wantFrom: "/accounts/.well-known/openid-configuration"},
		{name: "no secret: the client id in the form", docs: map[string]string{"/accounts": "client_secret_basic"},
			wantAuth: "/accounts/connect/authorize", wantStyle: oauth2.AuthStyleInParams, wantFrom: "/accounts/.well-known/openid-configuration"},
		{name: "MIGRATE_AUTH_URL with a document", docs: map[string]string{"/idp": "client_secret_basic", "/accounts": ""}, authURL: "HOST/idp", secret: true,
			wantAuth: "/idp/connect/authorize", wantStyle: oauth2.AuthStyleInHeader, wantFrom: "/idp/.well-known/openid-configuration"},
		{name: "MIGRATE_AUTH_URL naming the document", docs: map[string]string{"/idp": "client_secret_basic"}, authURL: "HOST/idp/.well-known/openid-configuration", secret: true,
			wantAuth: "/idp/connect/authorize", wantStyle: oauth2.AuthStyleInHeader, wantFrom: "/idp/.well-known/openid-configuration"},
		{name: "MIGRATE_AUTH_URL by hand, no document", docs: map[string]string{"/accounts": "client_secret_basic"}, authURL: "HOST/sso", secret: true,
			wantAuth: "/sso/authorize", wantStyle: oauth2.AuthStyleInParams},
		{name: "MIGRATE_CLIENT_AUTH=basic by hand", authURL: "HOST/sso", clientAuth: "basic", secret: true,
			wantAuth: "/sso/authorize", wantStyle: oauth2.AuthStyleInHeader},
		{name: "MIGRATE_CLIENT_AUTH=form overrides the document", docs: map[string]string{"/accounts": "client_secret_basic"}, clientAuth: "form", secret: true,
			wantAuth: "/accounts/connect/authorize", wantStyle: oauth2.AuthStyleInParams, wantFrom: "/accounts/.well-known/openid-configuration"},
		{name: "MIGRATE_CLIENT_AUTH unknown", clientAuth: "header", secret: true,
			wantErr: `MIGRATE_CLIENT_AUTH="header": want basic`},
		{name: "a broken document is the server's word", docs: map[string]string{"": "bad", "/accounts": "client_secret_basic"}, secret: true,
			wantErr: "/.well-known/openid-configuration gives no usable token_endpoint"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var host string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				prefix, ok := strings.CutSuffix(r.URL.Path, DiscoveryPath)
				methods, has := tt.docs[prefix]
				switch {
				case !ok || !has:
					http.NotFound(w, r)
				case methods == "html":
					w.Header().Set("Content-Type", "text/html")
					w.Write([]byte("<html>sign in</html>"))
				case methods == "bad":
					w.Header().Set("Content-Type", "application/json")
					w.Write([]byte(`{"authorization_endpoint":"` + host + `/a"}`))
				default:
					w.Header().Set("Content-Type", "application/json; charset=utf-8")
					list := `[]`
					if methods != "" {
						list = `["` + strings.Join(strings.Fields(methods), `","`) + `"]`
					}
					w.Write([]byte(`{"issuer":"` + host + prefix + `","authorization_endpoint":"` + host + prefix + `/connect/authorize","token_endpoint":"` + host + prefix + `/connect/token","token_endpoint_auth_methods_supported":` + list + `}`))
				}
			}))
			defer srv.Close()
			host = srv.URL
			authURL := strings.Replace(tt.authURL, "HOST", host, 1)
			ep, err := FindEndpoints(context.Background(), srv.Client(), authURL, host+"/odata/Priority/tabula.ini/demo", tt.clientAuth, tt.secret)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.Is(err, ErrConfig) {
					t.Fatalf("err = %v, want ErrConfig with %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			wantToken := strings.TrimSuffix(tt.wantAuth, "/authorize") + "/token"
			if ep.Authorize != host+tt.wantAuth || ep.Token != host+wantToken {
				t.Errorf("endpoints %s, %s; want %s, %s", ep.Authorize, ep.Token, host+tt.wantAuth, host+wantToken)
			}
			if ep.AuthStyle != tt.wantStyle {
				t.Errorf("auth style %v, want %v", ep.AuthStyle, tt.wantStyle)
			}
			if want := map[bool]string{true: host + tt.wantFrom, false: ""}[tt.wantFrom != ""]; ep.From != want {
				t.Errorf("from %q, want %q", ep.From, want)
			}
		})
	}
}
