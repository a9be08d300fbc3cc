package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// Known secret values: none may appear in any printed form or error.
var secrets = []string{"s3cret-password", "pat-s3cret", "access-s3cret", "appkey-s3cret", "client-s3cret"}

func checkNoSecret(t *testing.T, what, s string) {
	t.Helper()
	for _, secret := range secrets {
		if strings.Contains(s, secret) {
			t.Errorf("%s shows %q: %s", what, secret, s)
		}
	}
}

func TestAuthenticatorsRedact(t *testing.T) {
	t.Parallel()
	exp := fixedNow.Add(time.Hour)
	values := map[string]any{
		"basic":       NewBasic("alice", "s3cret-password"),
		"pat":         NewPAT("pat-s3cret"),
		"bearer":      NewBearerAuth("access-s3cret", exp, "https://erp.example.com/odata", nil),
		"licence":     WithAppLicence(NewPAT("pat-s3cret"), "app-1", "appkey-s3cret"),
		"token":       withID(NewToken("https://erp.example.com/odata", "access-s3cret", exp), "access-s3cret-id"),
		"nested":      struct{ A, B any }{NewBasic("alice", "s3cret-password"), NewPAT("pat-s3cret")},
		"slice":       []Authenticator{NewBasic("alice", "s3cret-password"), NewBearerAuth("access-s3cret", exp, "t", nil)},
		"unexported":  struct{ a *Basic }{NewBasic("alice", "s3cret-password")},
		"token value": *(NewToken("t", "access-s3cret", time.Time{})),
		"client credentials": NewClientCredentials(ClientCredentialsOptions{TokenURL: "https://idp.example.com/token", ClientID: "app",
			ClientSecret: "client-s3cret"}),
		"client credentials licensed": WithAppLicence(NewClientCredentials(ClientCredentialsOptions{TokenURL: "https://idp.example.com/token",
			ClientID: "app", ClientSecret: "client-s3cret"}), "app-1", "appkey-s3cret"),
	}
	for name, v := range values {
		for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%T"} {
			checkNoSecret(t, name+" with "+verb, fmt.Sprintf(verb, v))
		}
		checkNoSecret(t, name+" with Sprint", fmt.Sprint(v))
		b, _ := json.Marshal(v)
		checkNoSecret(t, name+" as JSON", string(b))
	}
	// Still useful to read: the non-secret parts show.
	if s := fmt.Sprintf("%+v", NewBasic("alice", "s3cret-password")); !strings.Contains(s, "alice") || !strings.Contains(s, "[redacted]") {
		t.Errorf("Basic prints %q, want the user and [redacted]", s)
	}
}

// Every error path, fed the known secrets, quotes none of them.
func TestErrorsRedact(t *testing.T) {
	t.Parallel()
	env := envOf(map[string]string{
		EnvUser: "alice", EnvPassword: "s3cret-password", EnvToken: "pat-s3cret",
		EnvAppKey: "appkey-s3cret", EnvClientSecret: "client-s3cret",
	})
	onlyPassword := envOf(map[string]string{EnvPassword: "s3cret-password", EnvAppKey: "appkey-s3cret"})
	dir := t.TempDir()
	const target = "https://erp.example.com/odata"
	if err := SaveToken(dir, NewToken(target, "access-s3cret", fixedNow.Add(-time.Hour))); err != nil {
		t.Fatal(err)
	}
	var errs []error
	add := func(_ any, _ string, err error) { errs = append(errs, err) }
	add(Resolve(ResolveOptions{Flag: "nope", Env: env}))
	add(Resolve(ResolveOptions{Flag: "pat", Env: onlyPassword}))
	add(Resolve(ResolveOptions{Flag: "basic", Env: onlyPassword}))
	add(Resolve(ResolveOptions{Env: onlyPassword, CacheDir: t.TempDir()}))
	add(Resolve(ResolveOptions{Flag: "oidc", Env: env, Target: target, CacheDir: dir, Now: func() time.Time { return fixedNow }}))
	add(Resolve(ResolveOptions{Flag: "oidc", Env: env, Target: target + "/x", CacheDir: dir}))
	errs = append(errs, NewBearerAuth("access-s3cret", fixedNow, target, func() time.Time { return fixedNow }).Authorize(nil))

	// Login failures with the client secret set.
	for _, mutate := range []func(f *loginFixture){
		func(f *loginFixture) { f.opts.ClientSecret = "client-s3cret" },
		func(f *loginFixture) {
			f.opts.ClientSecret = "client-s3cret"
			f.opts.RedirectURI = "http://insecure/cb"
		},
		func(f *loginFixture) {
			f.opts.ClientSecret = "client-s3cret"
			f.opts.HTTPClient = nil
			f.opts.AuthURL = "http://127.0.0.1:1/oauth2" // nothing listens: the token request fails to connect
			f.opts.OpenBrowser = func(string) error { return errors.New("no browser") }
			f.opts.RedirectURI = "https://app.example.com/callback"
			f.opts.Stdin = strings.NewReader("some-code\n")
		},
	} {
		f := newLoginFixture(t)
		mutate(f)
		_, err := Login(context.Background(), f.opts)
		errs = append(errs, err)
		checkNoSecret(t, "login output", f.out.String())
	}
	for i, err := range errs {
		if err == nil {
			t.Errorf("error path %d gave no error", i)
			continue
		}
		checkNoSecret(t, fmt.Sprintf("error %d", i), err.Error())
		checkNoSecret(t, fmt.Sprintf("error %d %%+v", i), fmt.Sprintf("%+v", err))
		checkNoSecret(t, fmt.Sprintf("error %d %%#v", i), fmt.Sprintf("%#v", err))
	}
}

func withID(t *Token, id string) *Token { t.id = newSecret(id); return t }
