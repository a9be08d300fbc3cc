package cli

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/migrate-tool/migrate/sandbox"
)

// A plan names where it loads; the token in the environment goes there
// only when the user approved the host. The server
// counts every request that reached it: a refusal sends nothing at all.
func TestCredentialsOnlyToApprovedHosts(t *testing.T) {
	cfg := configHome(t)
	sb, err := sandbox.New(sandbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		sb.ServeHTTP(w, r)
	}))
	defer srv.Close()
	target := srv.URL + sandbox.BasePath
	host := strings.TrimPrefix(srv.URL, "http://")
	dir := t.TempDir()
	planPath := filepath.Join(dir, "plan.yaml")
	if err := os.WriteFile(planPath, []byte("version: 1\ntarget: {url: \""+target+"\"}\nsources:\n  x: {file: x.csv}\nsteps:\n  - {name: s, entity: CURRENCIES, source: x, fields: {CODE: row.CODE}}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"MIGRATE_TOKEN": "demo-pat"}
	ctx := context.Background()
	run := func(answer string, asked *string, args ...string) (int, string) {
		var out, errb bytes.Buffer
		a := &app{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: func(k string) string { return env[k] },
			openBrowser: func(string) error { return errors.New("no browser in this test") }}
		if answer != "" {
			a.ask = func(q string) (string, bool) { *asked = q; return answer, true }
		}
		code := a.main(ctx, args)
		if strings.Contains(out.String()+errb.String(), "demo-pat") {
			t.Errorf("migrate %v printed the token", args)
		}
		return code, errb.String()
	}
	remembered := filepath.Join(cfg, "migrate", "trusted-hosts")

	// No terminal: refused, the host named, nothing sent, nothing remembered.
	code, stderr := run("", nil, "info", planPath)
	if code != ExitUsage || !strings.Contains(stderr, "names "+host+", a host you have not approved") || !strings.Contains(stderr, "--trust-host "+host) {
		t.Errorf("no terminal: exit %d\n%s", code, stderr)
	}
	if n := calls.Load(); n != 0 {
		t.Errorf("%d requests reached the plan's host", n)
	}
	if _, err := os.Stat(remembered); !os.IsNotExist(err) {
		t.Errorf("a refusal remembered something: %v", err)
	}

	// login would send MIGRATE_CLIENT_SECRET to the plan's host: the same.
	// (Cancelled: were it let through, it would wait for a browser.)
	env["MIGRATE_CLIENT_SECRET"] = "demo-secret"
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	ctx = cancelled
	if code, stderr = run("", nil, "login", planPath); code != ExitUsage || calls.Load() != 0 || !strings.Contains(stderr, "--trust-host "+host) {
		t.Errorf("login: exit %d, %d requests\n%s", code, calls.Load(), stderr)
	}
	ctx = context.Background()
	delete(env, "MIGRATE_CLIENT_SECRET")

	// Asked on a terminal, answered no: refused the same way.
	var question string
	if code, stderr = run("n", &question, "info", planPath); code != ExitUsage || calls.Load() != 0 {
		t.Errorf("answered no: exit %d, %d requests\n%s", code, calls.Load(), stderr)
	}
	if !strings.Contains(question, host) || !strings.Contains(question, "[y/N]") {
		t.Errorf("question %q does not name %s", question, host)
	}

	// The address typed by the user approves its host, for this command.
	env["MIGRATE_TARGET"] = target
	if code, stderr = run("", nil, "info", planPath); code != ExitOK {
		t.Errorf("MIGRATE_TARGET: exit %d\n%s", code, stderr)
	}
	delete(env, "MIGRATE_TARGET")
	if code, _ = run("", nil, "info", planPath); code != ExitUsage {
		t.Errorf("MIGRATE_TARGET was remembered: exit %d", code)
	}

	// Answered yes: sent, and remembered (0600) for the next command.
	if code, stderr = run("y", &question, "info", planPath); code != ExitOK {
		t.Errorf("answered yes: exit %d\n%s", code, stderr)
	}
	fi, err := os.Stat(remembered)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 && os.PathSeparator == '/' {
		t.Errorf("%s: mode %v, want 0600", remembered, fi.Mode().Perm())
	}
	if code, stderr = run("", nil, "info", planPath); code != ExitOK {
		t.Errorf("remembered: exit %d\n%s", code, stderr)
	}

	// --trust-host approves and is remembered too.
	if err := os.Remove(remembered); err != nil {
		t.Fatal(err)
	}
	if code, stderr = run("", nil, "info", planPath, "--trust-host", host); code != ExitOK {
		t.Errorf("--trust-host: exit %d\n%s", code, stderr)
	}
	if code, stderr = run("", nil, "info", planPath); code != ExitOK {
		t.Errorf("--trust-host remembered: exit %d\n%s", code, stderr)
	}
	// Another port of the same machine is another host.
	if err := os.Remove(remembered); err != nil {
		t.Fatal(err)
	}
	before := calls.Load()
	if code, _ = run("", nil, "info", planPath, "--trust-host", "127.0.0.1:1"); code != ExitUsage || calls.Load() != before {
		t.Errorf("another port approved: exit %d, %d requests", code, calls.Load()-before)
	}
	if code, _ = run("", nil, "info", planPath, "--trust-host", "a b"); code != ExitUsage {
		t.Errorf("--trust-host with no host name: exit %d, want 2", code)
	}
}
