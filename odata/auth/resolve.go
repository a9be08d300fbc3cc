package auth

import (
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/migrate-tool/migrate/odata"
)

// Environment variables read here (docs/cli.md, Target and secrets).
const (
	EnvAuth         = "MIGRATE_AUTH"
	EnvUser         = "MIGRATE_USER"
	EnvPassword     = "MIGRATE_PASSWORD"
	EnvToken        = "MIGRATE_TOKEN"
	EnvAppID        = "MIGRATE_APP_ID"
	EnvAppKey       = "MIGRATE_APP_KEY"
	EnvClientID     = "MIGRATE_CLIENT_ID"
	EnvClientSecret = "MIGRATE_CLIENT_SECRET"
	EnvAuthURL      = "MIGRATE_AUTH_URL"
	EnvClientAuth   = "MIGRATE_CLIENT_AUTH"
)

// BasicDeprecation is the warning Resolve returns with Basic credentials,
// for the CLI to print on stderr.
const BasicDeprecation = "warning: basic authentication (MIGRATE_USER/MIGRATE_PASSWORD) is deprecated by the service; set MIGRATE_TOKEN to a personal access token or run `migrate login`"

// ResolveOptions says where Resolve looks. Only Target is needed for OIDC;
// the zero value of the rest reads the real environment and clock.
type ResolveOptions struct {
	Flag     string              // --auth, highest precedence
	Env      func(string) string // nil: os.Getenv
	PlanAuth string              // the plan's target.auth
	Target   string              // service base URL: keys the token cache
	CacheDir string              // "": DefaultCacheDir()
	Now      func() time.Time    // nil: time.Now
	// AppID and AppKey are the application licence from configuration;
	// empty ones fall back to MIGRATE_APP_ID and MIGRATE_APP_KEY.
	AppID, AppKey string
	// PlanTokenURL and PlanScopes are the plan's token_url and scopes, for
	// the client credentials grant; MIGRATE_TOKEN_URL and MIGRATE_SCOPES
	// override them.
	PlanTokenURL string
	PlanScopes   []string
	// HTTPClient makes the token requests of the client credentials
	// grant; nil: one that follows no redirect to another host.
	HTTPClient *http.Client
}

// Resolve chooses the method and builds its authenticator. Precedence: the
// flag, then MIGRATE_AUTH, then the plan's target.auth; with none of them,
// a cached OIDC token for the target that has not expired, then the client
// credentials grant if a token URL and MIGRATE_CLIENT_SECRET are set, then a
// personal access token if MIGRATE_TOKEN is set, then Basic if MIGRATE_USER
// is set.
// warning is non-empty for Basic (deprecated), and when the credentials
// would go to a plain-http target that is not loopback. The licence headers, when
// configured, are added whatever the method.
func Resolve(opts ResolveOptions) (a Authenticator, warning string, err error) {
	env := opts.Env
	if env == nil {
		env = os.Getenv
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	method, source := "", ""
	for _, c := range []struct{ value, source string }{
		{opts.Flag, "--auth"},
		{env(EnvAuth), EnvAuth},
		{opts.PlanAuth, "the plan's target.auth"},
	} {
		if v := strings.TrimSpace(c.value); v != "" {
			method, source = strings.ToLower(v), c.source
			break
		}
	}

	switch method {
	case MethodBasic:
		a, warning, err = resolveBasic(env, source)
	case MethodPAT:
		a, err = resolvePAT(env, source)
	case MethodOIDC:
		a, err = resolveOIDC(opts, now, source)
	case MethodClientCredentials:
		a, err = resolveClientCredentials(opts, env, now, source)
	case "":
		a, warning, err = infer(opts, env, now)
	default:
		err = newError(ErrUnknownMethod, "unknown auth method %q (from %s): use basic, pat, oidc or client_credentials", method, source)
	}
	if err != nil {
		return nil, "", err
	}
	appID, appKey := opts.AppID, opts.AppKey
	if appID == "" {
		appID = env(EnvAppID)
	}
	if appKey == "" {
		appKey = env(EnvAppKey)
	}
	if odata.CleartextCredentials(opts.Target) {
		w := fmt.Sprintf("warning: the target %s is plain http on another machine: the credentials (%s) cross the network unencrypted; use its https address", odata.RedactURL(opts.Target), a.Method())
		if warning != "" {
			w = warning + "\n" + w
		}
		warning = w
	}
	return WithAppLicence(a, appID, appKey), warning, nil
}

func resolveBasic(env func(string) string, source string) (Authenticator, string, error) {
	user, password := env(EnvUser), env(EnvPassword)
	if user == "" {
		return nil, "", newError(ErrMissingVariable, "auth method basic (from %s) needs %s: set it to the user name (and %s to the password)", source, EnvUser, EnvPassword)
	}
	if password == "" {
		return nil, "", newError(ErrMissingVariable, "auth method basic (from %s) needs %s: set it to the password of user %q", source, EnvPassword, user)
	}
	return NewBasic(user, password), BasicDeprecation, nil
}

func resolvePAT(env func(string) string, source string) (Authenticator, error) {
	token := env(EnvToken)
	if token == "" {
		return nil, newError(ErrMissingVariable, "auth method pat (from %s) needs %s: set it to a personal access token", source, EnvToken)
	}
	return NewPAT(token), nil
}

func resolveOIDC(opts ResolveOptions, now func() time.Time, source string) (Authenticator, error) {
	if strings.TrimSpace(opts.Target) == "" {
		return nil, newError(ErrConfig, "auth method oidc (from %s) needs a target: set MIGRATE_TARGET or --target", source)
	}
	tok, err := LoadToken(opts.CacheDir, opts.Target)
	if err != nil {
		return nil, err
	}
	if tok == nil {
		return nil, &Error{Kind: ErrNotLoggedIn, Target: opts.Target,
			Message: "auth method oidc (from " + source + "): no token for " + normalizeTarget(opts.Target) + "; run `migrate login`"}
	}
	if tok.Expired(now()) {
		return nil, expiredError(tok.Target, tok.Expiry)
	}
	return tok.Authenticator(now), nil
}

// infer applies the implicit part of the precedence. An expired cached
// token gives way to a PAT or Basic credentials that are set; only when
// nothing else fits is its expiry the error, since that is what the user
// can act on.
func infer(opts ResolveOptions, env func(string) string, now func() time.Time) (Authenticator, string, error) {
	var expired error
	if strings.TrimSpace(opts.Target) != "" {
		tok, err := LoadToken(opts.CacheDir, opts.Target)
		if err != nil {
			return nil, "", err
		}
		if tok != nil {
			if !tok.Expired(now()) {
				return tok.Authenticator(now), "", nil
			}
			expired = expiredError(tok.Target, tok.Expiry)
		}
	}
	if (env(EnvTokenURL) != "" || opts.PlanTokenURL != "") && env(EnvClientSecret) != "" {
		a, err := resolveClientCredentials(opts, env, now, EnvClientSecret)
		return a, "", err
	}
	if env(EnvToken) != "" {
		a, err := resolvePAT(env, EnvToken)
		return a, "", err
	}
	if env(EnvUser) != "" {
		return resolveBasic(env, EnvUser)
	}
	if expired != nil {
		return nil, "", expired
	}
	return nil, "", newError(ErrNoCredentials,
		"no credentials for %s: set %s to a personal access token, or run `migrate login` (OIDC), or set %s, %s and %s (OAuth2 client credentials), or set %s and %s (basic, deprecated)",
		targetOrService(opts.Target), EnvToken, EnvTokenURL, EnvClientID, EnvClientSecret, EnvUser, EnvPassword)
}

func targetOrService(target string) string {
	if t := normalizeTarget(target); t != "" {
		return t
	}
	return "the service"
}
