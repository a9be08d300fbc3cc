package auth

import (
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/migrate-tool/migrate/odata"
)

func emptyEnv(string) string { return "" }

// withEnv is a copy of m with the pairs kv (name, value, name, value…) set
// over it.
func withEnv(m map[string]string, kv ...string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		out[k] = v
	}
	for i := 0; i < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}

func envOf(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestResolvePrecedence(t *testing.T) {
	t.Parallel()
	const target = "https://erp.example.com/odata/Priority/tabula.ini/demo"
	valid := NewToken(target, "cached-access-token", fixedNow.Add(time.Hour))
	expired := NewToken(target, "old-access-token", fixedNow.Add(-time.Minute))
	all := map[string]string{EnvToken: "pat-value", EnvUser: "alice", EnvPassword: "alice-password"}
	with := withEnv
	for _, tc := range []struct {
		name       string
		flag, plan string
		env        map[string]string
		cached     *Token
		wantMethod string
		wantHeader string // Authorization header the authenticator sets
		wantWarn   bool
		wantErr    error
		wantMsg    string
	}{
		{name: "flag beats everything", flag: "basic", plan: "pat", env: with(all, EnvAuth, "pat"), cached: valid, wantMethod: "basic", wantHeader: basicHeader("alice", "alice-password"), wantWarn: true},
		{name: "env beats plan and cache", plan: "basic", env: with(all, EnvAuth, "pat"), cached: valid, wantMethod: "pat", wantHeader: basicHeader("pat-value", "PAT")},
		{name: "plan beats cache", plan: "pat", env: all, cached: valid, wantMethod: "pat", wantHeader: basicHeader("pat-value", "PAT")},
		{name: "method names ignore case", flag: " PAT ", env: all, wantMethod: "pat", wantHeader: basicHeader("pat-value", "PAT")},
		{name: "cache beats PAT and Basic", env: all, cached: valid, wantMethod: "oidc", wantHeader: "Bearer cached-access-token"},
		{name: "PAT beats Basic", env: all, wantMethod: "pat", wantHeader: basicHeader("pat-value", "PAT")},
		{name: "Basic last, with a warning", env: with(nil, EnvUser, "alice", EnvPassword, "alice-password"), wantMethod: "basic", wantHeader: basicHeader("alice", "alice-password"), wantWarn: true},
		{name: "expired cache gives way to PAT", env: all, cached: expired, wantMethod: "pat", wantHeader: basicHeader("pat-value", "PAT")},
		{name: "expired cache alone", env: nil, cached: expired, wantErr: ErrExpired, wantMsg: "the token for " + target + " expired at 2026-03-01T08:59:00Z; run `migrate login`"},
		{name: "oidc asked, token expired", flag: "oidc", env: all, cached: expired, wantErr: ErrExpired, wantMsg: "expired at 2026-03-01T08:59:00Z; run `migrate login`"},
		{name: "oidc asked, no token", plan: "oidc", env: all, wantErr: ErrNotLoggedIn, wantMsg: "auth method oidc (from the plan's target.auth): no token for " + target + "; run `migrate login`"},
		{name: "pat asked, no token set", flag: "pat", env: with(nil, EnvUser, "alice"), wantErr: ErrMissingVariable, wantMsg: "auth method pat (from --auth) needs MIGRATE_TOKEN"},
		{name: "basic asked, no user", env: with(nil, EnvAuth, "basic"), wantErr: ErrMissingVariable, wantMsg: "auth method basic (from MIGRATE_AUTH) needs MIGRATE_USER"},
		{name: "basic asked, no password", plan: "basic", env: with(nil, EnvUser, "alice"), wantErr: ErrMissingVariable, wantMsg: "needs MIGRATE_PASSWORD: set it to the password of user \"alice\""},
		{name: "user without password", env: with(nil, EnvUser, "alice"), wantErr: ErrMissingVariable, wantMsg: "auth method basic (from MIGRATE_USER) needs MIGRATE_PASSWORD"},
		{name: "unknown method", flag: "kerberos", env: all, wantErr: ErrUnknownMethod, wantMsg: `unknown auth method "kerberos" (from --auth): use basic, pat, oidc or client_credentials`},
		{name: "nothing at all", env: nil, wantErr: ErrNoCredentials, wantMsg: "no credentials for " + target + ": set MIGRATE_TOKEN to a personal access token, or run `migrate login` (OIDC), or set MIGRATE_TOKEN_URL, MIGRATE_CLIENT_ID and MIGRATE_CLIENT_SECRET (OAuth2 client credentials), or set MIGRATE_USER and MIGRATE_PASSWORD (basic, deprecated)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			if tc.cached != nil {
				if err := SaveToken(dir, tc.cached); err != nil {
					t.Fatal(err)
				}
			}
			a, warn, err := Resolve(ResolveOptions{
				Flag: tc.flag, PlanAuth: tc.plan, Env: envOf(tc.env), Target: target, CacheDir: dir,
				Now: func() time.Time { return fixedNow },
			})
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("Resolve error = %v, want %v", err, tc.wantErr)
			}
			if err != nil {
				if a != nil || warn != "" {
					t.Errorf("Resolve returned %v, %q with an error", a, warn)
				}
				if !strings.Contains(err.Error(), tc.wantMsg) {
					t.Errorf("error %q\nwant it to contain %q", err, tc.wantMsg)
				}
				return
			}
			if a.Method() != tc.wantMethod {
				t.Errorf("method = %q, want %q", a.Method(), tc.wantMethod)
			}
			if (warn != "") != tc.wantWarn || (tc.wantWarn && warn != BasicDeprecation) {
				t.Errorf("warning = %q, want one: %v", warn, tc.wantWarn)
			}
			if strings.Contains(warn, "\n") {
				t.Errorf("warning is not one line: %q", warn)
			}
			req := httptest.NewRequest("GET", target, nil)
			if err := a.Authorize(req); err != nil {
				t.Fatal(err)
			}
			if got := req.Header.Get("Authorization"); got != tc.wantHeader {
				t.Errorf("Authorization = %q, want %q", got, tc.wantHeader)
			}
		})
	}
}

func basicHeader(user, pass string) string {
	req := httptest.NewRequest("GET", "/", nil)
	req.SetBasicAuth(user, pass)
	return req.Header.Get("Authorization")
}

func TestResolveAppLicence(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name          string
		opts          ResolveOptions
		wantID, wantK string
	}{
		{"from environment", ResolveOptions{Env: envOf(map[string]string{EnvToken: "t", EnvAppID: "app-1", EnvAppKey: "key-1"})}, "app-1", "key-1"},
		{"configuration beats environment", ResolveOptions{AppID: "app-2", AppKey: "key-2", Env: envOf(map[string]string{EnvToken: "t", EnvAppID: "app-1", EnvAppKey: "key-1"})}, "app-2", "key-2"},
		{"none", ResolveOptions{Env: envOf(map[string]string{EnvToken: "t"})}, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.opts.CacheDir = t.TempDir()
			a, _, err := Resolve(tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			if a.Method() != MethodPAT {
				t.Errorf("method %q, want pat", a.Method())
			}
			req := httptest.NewRequest("GET", "/", nil)
			if err := a.Authorize(req); err != nil {
				t.Fatal(err)
			}
			if req.Header.Get("X-App-Id") != tc.wantID || req.Header.Get("X-App-Key") != tc.wantK {
				t.Errorf("X-App-Id %q, X-App-Key %q; want %q, %q", req.Header.Get("X-App-Id"), req.Header.Get("X-App-Key"), tc.wantID, tc.wantK)
			}
			if req.Header.Get("Authorization") != basicHeader("t", "PAT") {
				t.Errorf("Authorization = %q", req.Header.Get("Authorization"))
			}
		})
	}
}

// A token that expires during a run is refused by the authenticator itself.
func TestBearerRefusesOnceExpired(t *testing.T) {
	t.Parallel()
	now := fixedNow
	b := NewBearerAuth("access-token-value", fixedNow.Add(time.Minute), "https://erp.example.com/odata", func() time.Time { return now })
	req := httptest.NewRequest("GET", "/", nil)
	if err := b.Authorize(req); err != nil || req.Header.Get("Authorization") != "Bearer access-token-value" {
		t.Fatalf("before expiry: %q, %v", req.Header.Get("Authorization"), err)
	}
	now = fixedNow.Add(time.Minute)
	req = httptest.NewRequest("GET", "/", nil)
	err := b.Authorize(req)
	var ae *Error
	if !errors.As(err, &ae) || !errors.Is(err, ErrExpired) || !ae.Expiry.Equal(fixedNow.Add(time.Minute)) {
		t.Fatalf("after expiry: %v, want ErrExpired", err)
	}
	if want := "the token for https://erp.example.com/odata expired at 2026-03-01T09:01:00Z; run `migrate login`"; err.Error() != want {
		t.Errorf("message %q, want %q", err, want)
	}
	if req.Header.Get("Authorization") != "" {
		t.Errorf("an expired token was still sent")
	}
	if NewBearerAuth("x", time.Time{}, "t", nil).Expired() {
		t.Errorf("a token without expiry counts as expired")
	}
}

// Every variable that carries a secret here is one that env() and the
// browser's environment leave out.
func TestSecretVariablesAreKnownSecrets(t *testing.T) {
	for _, name := range []string{EnvPassword, EnvToken, EnvAppKey, EnvClientSecret} {
		if !odata.IsSecretVariable(name) {
			t.Errorf("%s is not an odata.IsSecretVariable", name)
		}
	}
}

func TestCleartextTargetWarns(t *testing.T) {
	get := envOf(map[string]string{EnvToken: "tok"})
	for target, warn := range map[string]bool{
		"http://erp.example.com/odata/Priority/tabula.ini/demo":  true,
		"https://erp.example.com/odata/Priority/tabula.ini/demo": false,
		"http://127.0.0.1:8099/odata/Priority/tabula.ini/demo":   false,
	} {
		_, w, err := Resolve(ResolveOptions{Env: get, Target: target, CacheDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(w, "unencrypted"); got != warn {
			t.Errorf("%s: warning %q", target, w)
		}
		if strings.Contains(w, "tok") {
			t.Errorf("token in the warning %q", w)
		}
	}
}
