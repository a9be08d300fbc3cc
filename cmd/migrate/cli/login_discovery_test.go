package cli

import (
	"strings"
	"testing"

	"github.com/migrate-tool/migrate/odata/auth/authtest"
	"github.com/migrate-tool/migrate/sandbox"
)

// TestLoginByDiscovery: `migrate login` against an on-premise server (the
// sandbox under oidc-accounts), whose endpoints only its discovery document
// under /accounts names and whose token endpoint takes the client secret as
// a Basic header only; then `info` uses the cached token.
func TestLoginByDiscovery(t *testing.T) {
	configHome(t)
	_, target := startSandbox(t, sandbox.Options{Quirks: map[string]bool{sandbox.QuirkOIDCAccounts: true}})
	host := strings.TrimSuffix(target, sandbox.BasePath)
	env := map[string]string{"MIGRATE_CLIENT_SECRET": sandbox.OIDCClientSecret}
	run := loginRunner(t, env, authtest.NewBrowser("demo", "demo"), sandbox.OIDCClientSecret)
	code, out, errOut := run("login", "--target", target)
	if code != ExitOK || !strings.Contains(out, "logged in to "+target) || !strings.Contains(errOut, host+"/accounts/connect/authorize?") {
		t.Fatalf("login: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = run("info", "--target", target)
	if code != ExitOK || !strings.Contains(out, "demo (oidc)") {
		t.Fatalf("info with the cached token: exit %d\n%s%s", code, out, errOut)
	}

	// By hand, the secret in the form: the on-premise server refuses it,
	// exit 3 with the reason, and the secret is never printed.
	env["MIGRATE_CLIENT_AUTH"] = "form"
	code, out, errOut = run("login", "--target", target, "--auth-url", host+"/accounts")
	if code != ExitUnreachable || !strings.Contains(out+errOut, "invalid_client") {
		t.Fatalf("login with the secret in the form: exit %d\n%s%s", code, out, errOut)
	}
}
