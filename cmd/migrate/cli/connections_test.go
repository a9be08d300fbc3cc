package cli

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/migrate-tool/migrate/odata/auth/authtest"
	"github.com/migrate-tool/migrate/sandbox"
)

// A connection reads its own variables, MIGRATE_<NAME>_X for MIGRATE_X,
// and never the target's.
func TestConnEnv(t *testing.T) {
	t.Parallel()
	env := map[string]string{"MIGRATE_TOKEN": "target-secret", "MIGRATE_TEMPLATE_TOKEN": "t", "MIGRATE_TEMPLATE_USER": "u", "HOME": "/h"}
	get := connEnv(func(k string) string { return env[k] }, "template")
	for k, want := range map[string]string{"MIGRATE_TOKEN": "t", "MIGRATE_USER": "u", "MIGRATE_PASSWORD": "", "HOME": "/h"} {
		if got := get(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	err := connFail("template", withCode(ExitUnreachable, errors.New("no credentials: set MIGRATE_TOKEN, or MIGRATE_USER and MIGRATE_PASSWORD")))
	if codeOf(err) != ExitUnreachable || err.Error() != "connection template: no credentials: set MIGRATE_TEMPLATE_TOKEN, or MIGRATE_TEMPLATE_USER and MIGRATE_TEMPLATE_PASSWORD" {
		t.Errorf("exit %d: %v", codeOf(err), err)
	}
}

// login --connection caches a token for the connection's URL, which the
// connection then logs in with, and logout --connection removes it.
func TestLoginConnection(t *testing.T) {
	configHome(t)
	_, target := startSandbox(t, sandbox.Options{})
	_, template := startSandbox(t, sandbox.Options{})
	dir := t.TempDir()
	planPath := filepath.Join(dir, "plan.yaml")
	if err := os.WriteFile(planPath, []byte("version: 1\nconnections:\n  template: {url: \""+template+"\"}\nsources:\n  x: {connection: template, entity: CURRENCIES}\nsteps:\n  - {name: s, entity: CURRENCIES, source: x, fields: {CODE: row.CODE}}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	const secret = "demo-secret"
	browser := authtest.NewBrowser("demo", "demo")
	run := loginRunner(t, map[string]string{"MIGRATE_TEMPLATE_CLIENT_SECRET": secret, "MIGRATE_TARGET": target}, browser, secret)

	code, out, errOut := run("login", "--connection", "template", planPath, "--trust-host", template)
	if code != ExitOK || !strings.Contains(out, "logged in to "+template) {
		t.Fatalf("login: exit %d\n%s%s", code, out, errOut)
	}
	csv := filepath.Join(dir, "cur.csv")
	code, out, errOut = run("export", "CURRENCIES", "--plan", planPath, "--connection", "template", "--out", csv)
	if code != ExitOK || !strings.Contains(out, "CURRENCIES: 3 rows") {
		t.Fatalf("export with the cached token: exit %d\n%s%s", code, out, errOut)
	}
	if code, out, _ = run("logout", "--connection", "template", planPath); code != ExitOK || !strings.Contains(out, "cached token was removed") {
		t.Fatalf("logout: exit %d: %s", code, out)
	}
	code, _, errOut = run("export", "CURRENCIES", "--plan", planPath, "--connection", "template", "--out", csv)
	if code != ExitUnreachable || !strings.Contains(errOut, "connection template: ") || !strings.Contains(errOut, "MIGRATE_TEMPLATE_TOKEN") {
		t.Errorf("export after logout: exit %d: %s", code, errOut)
	}
	if code, _, errOut = run("login", "--connection", "tmpl", planPath); code != ExitUsage || !strings.Contains(errOut, `no connection "tmpl" (connections: template)`) {
		t.Errorf("login to an unknown connection: exit %d: %s", code, errOut)
	}
}
