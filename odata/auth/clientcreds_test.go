package auth

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/odata/auth/authtest"
	"github.com/migrate-tool/migrate/odata/odatatest"
)

// noWait is the odata client's clock: the test's time, waits that
// return at once.
type noWait struct{ c *odatatest.Clock }

func (n noWait) Now() time.Time { return n.c.Now() }

func (noWait) Sleep(ctx context.Context, _ time.Duration) error { return ctx.Err() }

// ccWorld is a token endpoint, a service behind its guard that answers
// every read and write, and an odata client signed by client credentials.
type ccWorld struct {
	ts          *authtest.TokenServer
	tokenReqs   atomic.Int32
	serviceHits atomic.Int32
	tokenURL    string
	cc          *ClientCredentials
	client      *odata.Client
}

func newCCWorld(t *testing.T, ts *authtest.TokenServer, secret string, clock *odatatest.Clock, service http.Handler) *ccWorld {
	t.Helper()
	w := &ccWorld{ts: ts}
	idp := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		w.tokenReqs.Add(1)
		ts.ServeHTTP(rw, r)
	}))
	t.Cleanup(idp.Close)
	if service == nil {
		service = http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
			rw.Header().Set("Content-Type", "application/json")
			if r.Method == http.MethodPost {
				rw.WriteHeader(http.StatusCreated)
				_, _ = rw.Write([]byte(`{"ID":1}`))
				return
			}
			_, _ = rw.Write([]byte(`{"value":[]}`))
		})
	}
	svc := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		w.serviceHits.Add(1)
		ts.Guard(service).ServeHTTP(rw, r)
	}))
	t.Cleanup(svc.Close)
	w.tokenURL = idp.URL + "/token"
	w.cc = NewClientCredentials(ClientCredentialsOptions{TokenURL: w.tokenURL, ClientID: "app", ClientSecret: secret,
		Scopes: []string{"api://erp/.default"}, Now: clock.Now})
	// The default retries, without their waits: a failure retried
	// shows as more requests.
	cl, err := odata.NewClient(odata.Config{BaseURL: svc.URL + "/odata/v4/demo", Dialect: odata.DialectOData, Auth: w.cc, Clock: noWait{clock}})
	if err != nil {
		t.Fatal(err)
	}
	w.client = cl
	return w
}

func TestClientCredentialsCachesAndRefreshesOnExpiry(t *testing.T) {
	t.Parallel()
	clock := odatatest.NewClock(fixedNow)
	w := newCCWorld(t, &authtest.TokenServer{ClientID: "app", Secret: "client-s3cret", TTL: 100 * time.Second, Now: clock.Now}, "client-s3cret", clock, nil)
	ctx := context.Background()
	for range 3 {
		if err := w.client.Get(ctx, "ORDERS", odata.Query{}, nil); err != nil {
			t.Fatal(err)
		}
	}
	if got := w.ts.Issued(); got != 1 {
		t.Fatalf("3 reads within the token's life fetched %d tokens, want 1", got)
	}
	// 100s of life, fetched again a tenth before its end: at 90s.
	clock.Advance(89 * time.Second)
	if err := w.client.Get(ctx, "ORDERS", odata.Query{}, nil); err != nil {
		t.Fatal(err)
	}
	if got := w.ts.Issued(); got != 1 {
		t.Fatalf("at 89s of 100 a new token was fetched (%d issued), want the first still", got)
	}
	clock.Advance(time.Second)
	if err := w.client.Post(ctx, "ORDERS", []byte(`{"ORDNAME":"SO1"}`), nil); err != nil {
		t.Fatal(err)
	}
	if got, refused := w.ts.Issued(), w.ts.Refused(); got != 2 || refused != 0 {
		t.Fatalf("after the token's life: %d issued, %d refused; want 2 issued and none refused (renewed before it was sent)", got, refused)
	}
	if got := w.ts.Scopes(); len(got) != 2 || got[0] != "api://erp/.default" {
		t.Errorf("token requests asked for scopes %q, want api://erp/.default each time", got)
	}
}

func TestClientCredentialsRenewsOnceAfter401(t *testing.T) {
	t.Parallel()
	clock := odatatest.NewClock(fixedNow)
	// No lifetime given: only the service knows the token is over, after
	// 2 requests.
	w := newCCWorld(t, &authtest.TokenServer{ClientID: "app", Secret: "client-s3cret", Uses: 2}, "client-s3cret", clock, nil)
	ctx := context.Background()
	for i := range 5 {
		var err error
		if i%2 == 0 {
			err = w.client.Get(ctx, "ORDERS", odata.Query{}, nil)
		} else {
			err = w.client.Post(ctx, "ORDERS", []byte(`{}`), nil) // a write goes again too: a 401 ran nothing
		}
		if err != nil {
			t.Fatalf("call %d: %v", i+1, err)
		}
	}
	// Tokens used 2, 2, 1 times; each expiry seen once as a 401.
	if issued, refused, hits := w.ts.Issued(), w.ts.Refused(), w.serviceHits.Load(); issued != 3 || refused != 2 || hits != 7 {
		t.Fatalf("5 calls with tokens good for 2: %d issued, %d refused, %d requests; want 3, 2, 7", issued, refused, hits)
	}
}

func TestClientCredentialsSecond401IsTheError(t *testing.T) {
	t.Parallel()
	clock := odatatest.NewClock(fixedNow)
	deny := http.HandlerFunc(func(rw http.ResponseWriter, _ *http.Request) {
		rw.WriteHeader(http.StatusUnauthorized)
		_, _ = rw.Write([]byte(`{"error":{"code":"401","message":"this client may not read ORDERS"}}`))
	})
	w := newCCWorld(t, &authtest.TokenServer{ClientID: "app", Secret: "client-s3cret"}, "client-s3cret", clock, deny)
	err := w.client.Get(context.Background(), "ORDERS", odata.Query{}, nil)
	if err == nil || Explain(err, MethodClientCredentials) != "the credentials were refused (method: client_credentials)" {
		t.Fatalf("a service that refuses every token: %v (explained %q)", err, Explain(err, MethodClientCredentials))
	}
	if issued, hits := w.ts.Issued(), w.serviceHits.Load(); issued != 2 || hits != 2 {
		t.Fatalf("%d tokens issued and %d requests; want 2 and 2 (one renewal, then the 401 stands)", issued, hits)
	}
}

func TestClientCredentialsWrongSecret(t *testing.T) {
	t.Parallel()
	clock := odatatest.NewClock(fixedNow)
	w := newCCWorld(t, &authtest.TokenServer{ClientID: "app", Secret: "the-right-one"}, "client-s3cret", clock, nil)
	err := w.client.Get(context.Background(), "ORDERS", odata.Query{}, nil)
	if err == nil {
		t.Fatal("a wrong secret read ORDERS")
	}
	msg := err.Error()
	checkNoSecret(t, "the error", msg)
	for _, want := range []string{"the token endpoint " + w.tokenURL + " refused the client credentials (HTTP 401, invalid_client)", "check MIGRATE_CLIENT_ID, MIGRATE_CLIENT_SECRET"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q lacks %q", msg, want)
		}
	}
	var ae *odata.AuthorizeError
	if !errors.Is(err, ErrTokenRefused) || !errors.As(err, &ae) {
		t.Errorf("error %v is not a refused token of an unsigned request", err)
	}
	// The secret tried as a header, then in the form (no ClientAuth
	// given); not retried; the service never asked.
	if reqs, hits := w.tokenReqs.Load(), w.serviceHits.Load(); reqs != 2 || hits != 0 {
		t.Errorf("%d token requests and %d service requests; want 2 and 0", reqs, hits)
	}
}

func TestClientCredentialsDescriptionQuotingSecret(t *testing.T) {
	t.Parallel()
	idp := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		rw.Header().Set("Content-Type", "application/json")
		rw.WriteHeader(http.StatusBadRequest)
		_, _ = rw.Write([]byte(`{"error":"invalid_client","error_description":"secret ` + r.PostForm.Get("client_secret") + ` is wrong"}`))
	}))
	t.Cleanup(idp.Close)
	cc := NewClientCredentials(ClientCredentialsOptions{TokenURL: idp.URL, ClientID: "app", ClientSecret: "client-s3cret", ClientAuth: "form"})
	req := httptest.NewRequest(http.MethodGet, "https://svc.example.com/", nil)
	err := cc.Authorize(req)
	if err == nil || !strings.Contains(err.Error(), "secret [redacted] is wrong") {
		t.Fatalf("error %v, want the description with the secret redacted", err)
	}
	checkNoSecret(t, "the error", err.Error())
	if req.Header.Get("Authorization") != "" {
		t.Error("a refused token request signed the request anyway")
	}
}

func TestResolveClientCredentials(t *testing.T) {
	t.Parallel()
	const target = "https://s4.example.com/sap/opu/odata4/api"
	full := map[string]string{EnvTokenURL: "https://idp.example.com/oauth/token", EnvClientID: "app", EnvClientSecret: "client-s3cret"}
	with := func(kv ...string) map[string]string { return withEnv(full, kv...) }
	for _, tc := range []struct {
		name         string
		flag         string
		planTokenURL string
		planScopes   []string
		env          map[string]string
		wantMethod   string
		wantTokenURL string
		wantScopes   string
		wantMsg      string
	}{
		{name: "asked by flag", flag: "client_credentials", env: full, wantMethod: MethodClientCredentials, wantTokenURL: full[EnvTokenURL]},
		{name: "inferred from the token URL and secret, before a PAT", env: with(EnvToken, "pat"), wantMethod: MethodClientCredentials, wantTokenURL: full[EnvTokenURL]},
		{name: "the plan's token URL", flag: "client_credentials", planTokenURL: "https://login.example.com/t", env: with(EnvTokenURL, ""), wantMethod: MethodClientCredentials, wantTokenURL: "https://login.example.com/t"},
		{name: "the environment's token URL beats the plan's", flag: "client_credentials", planTokenURL: "https://login.example.com/t", env: full, wantMethod: MethodClientCredentials, wantTokenURL: full[EnvTokenURL]},
		{name: "the plan's scopes", flag: "client_credentials", planScopes: []string{"a", "b"}, env: full, wantMethod: MethodClientCredentials, wantTokenURL: full[EnvTokenURL], wantScopes: "a b"},
		{name: "MIGRATE_SCOPES beats the plan's", flag: "client_credentials", planScopes: []string{"a"}, env: with(EnvScopes, "x, y"), wantMethod: MethodClientCredentials, wantTokenURL: full[EnvTokenURL], wantScopes: "x y"},
		{name: "no secret: a PAT is inferred", env: with(EnvClientSecret, "", EnvToken, "pat"), wantMethod: MethodPAT},
		{name: "no token URL", flag: "client_credentials", env: with(EnvTokenURL, ""), wantMsg: "auth method client_credentials (from --auth) needs the token endpoint: set MIGRATE_TOKEN_URL, or token_url in the plan"},
		{name: "no client id", flag: "client_credentials", env: with(EnvClientID, ""), wantMsg: "needs MIGRATE_CLIENT_ID"},
		{name: "no secret", flag: "client_credentials", env: with(EnvClientSecret, ""), wantMsg: `needs MIGRATE_CLIENT_SECRET: set it to client "app"'s secret`},
		{name: "token URL not http", flag: "client_credentials", env: with(EnvTokenURL, "ftp://idp/token"), wantMsg: `the token endpoint "ftp://idp/token" (from MIGRATE_TOKEN_URL) is not an http(s) URL`},
		{name: "bad client auth", flag: "client_credentials", env: with(EnvClientAuth, "jwt"), wantMsg: `MIGRATE_CLIENT_AUTH="jwt": want basic or form`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, _, err := Resolve(ResolveOptions{Flag: tc.flag, Env: envOf(tc.env), Target: target, CacheDir: t.TempDir(),
				PlanTokenURL: tc.planTokenURL, PlanScopes: tc.planScopes})
			if tc.wantMsg != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantMsg) {
					t.Fatalf("error %v, want %q", err, tc.wantMsg)
				}
				checkNoSecret(t, "the error", err.Error())
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if a.Method() != tc.wantMethod {
				t.Fatalf("method %s, want %s", a.Method(), tc.wantMethod)
			}
			if cc, ok := a.(*ClientCredentials); ok {
				if cc.TokenURL() != tc.wantTokenURL || strings.Join(cc.scopes, " ") != tc.wantScopes {
					t.Errorf("token URL %s, scopes %q; want %s, %q", cc.TokenURL(), cc.scopes, tc.wantTokenURL, tc.wantScopes)
				}
			}
		})
	}
}
