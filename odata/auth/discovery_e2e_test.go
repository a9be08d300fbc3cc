package auth

import (
	"bytes"
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/migrate-tool/migrate/odata/auth/authtest"
	"github.com/migrate-tool/migrate/odata/odatatest"
	"github.com/migrate-tool/migrate/sandbox"
)

// Against the sandbox as an on-premise server (quirk oidc-accounts): the
// endpoints are under /accounts/connect, only discovery finds them, and
// the token endpoint takes the client secret as a Basic header only.
func TestLoginByDiscoveryOnPremise(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		clientAuth string
		wantErr    error
	}{
		{"as discovery says: Basic", "", nil},
		{"the secret in the form is refused", "form", ErrTokenRefused},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			clock := odatatest.NewClock(fixedNow)
			sb, err := sandbox.New(sandbox.Options{Now: clock.Now, Quirks: map[string]bool{sandbox.QuirkOIDCAccounts: true}})
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(sb)
			defer srv.Close()
			browser := authtest.NewBrowser("demo", "demo")
			var out bytes.Buffer
			env := map[string]string{EnvClientSecret: sandbox.OIDCClientSecret, EnvClientAuth: tt.clientAuth}
			opts := LoginOptions{
				Target: srv.URL + sandbox.BasePath, Env: envOf(env), OpenBrowser: browser.Open, HTTPClient: srv.Client(),
				Stdout: &out, Stdin: strings.NewReader(""), CacheDir: t.TempDir(), Now: clock.Now,
			}
			tok, err := Login(context.Background(), opts)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Login = %v, want %v\n%s", err, tt.wantErr, out.String())
			}
			if !strings.Contains(out.String(), srv.URL+"/accounts/connect/authorize?") || len(browser.Pages) == 0 || !strings.Contains(browser.Pages[0], "/accounts/connect/authorize") {
				t.Errorf("the login did not go to /accounts/connect/authorize:\n%s\npages %v", out.String(), browser.Pages)
			}
			if err != nil {
				if strings.Contains(err.Error(), sandbox.OIDCClientSecret) {
					t.Errorf("the error quotes the secret: %v", err)
				}
				return
			}
			a, _, err := Resolve(ResolveOptions{Env: envOf(nil), Target: opts.Target, CacheDir: opts.CacheDir, Now: clock.Now})
			if err != nil || a.Method() != MethodOIDC || tok.AccessToken() == "" {
				t.Fatalf("Resolve after login = %v, %v", a, err)
			}
			f := &sandboxFixture{srv: srv, target: opts.Target}
			if status, err := f.call(t, a, "/GetLoginName()"); status != 200 || err != nil {
				t.Fatalf("GetLoginName with the bearer token: %d, %v", status, err)
			}
		})
	}
}
