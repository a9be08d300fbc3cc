package cli

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/migrate-tool/migrate/odata/auth/authtest"
	"github.com/migrate-tool/migrate/sandbox"
)

// configHome gives the test a folder of its own as HOME and
// XDG_CONFIG_HOME, where logins, tokens and trusted hosts are kept; the
// test must not be parallel.
func configHome(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", dir)
	t.Setenv("HOME", dir)
	return dir
}

// loginRunner runs the command line with env and a test browser, and fails
// the test when the output shows the client secret.
func loginRunner(t *testing.T, env map[string]string, browser *authtest.Browser, secret string) func(args ...string) (int, string, string) {
	return func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		a := &app{stdin: strings.NewReader(""), stdout: &out, stderr: &errb,
			getenv: func(k string) string { return env[k] }, openBrowser: browser.Open}
		code := a.main(context.Background(), args)
		if strings.Contains(out.String()+errb.String(), secret) {
			t.Errorf("migrate %v printed the client secret", args)
		}
		return code, out.String(), errb.String()
	}
}

// TestLoginLogout runs the flow of docs/service.md, Authentication through
// the command line against the sandbox's authorization server, with a test
// browser filling in its login form: the token is cached (0600, no client
// secret), later commands use it, and logout removes it.
func TestLoginLogout(t *testing.T) {
	cfg := configHome(t)
	_, target := startSandbox(t, sandbox.Options{})
	const secret = "demo-secret"
	env := map[string]string{"MIGRATE_CLIENT_SECRET": secret}
	browser := authtest.NewBrowser("demo", "demo")
	run := loginRunner(t, env, browser, secret)

	code, out, errOut := run("login", "--target", target)
	if code != ExitOK || !strings.Contains(out, "logged in to "+target) {
		t.Fatalf("login: exit %d\n%s%s", code, out, errOut)
	}
	if browser.FormsFilled != 1 {
		t.Errorf("login forms filled: %d, want 1", browser.FormsFilled)
	}
	var cached []string
	filepath.WalkDir(cfg, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			cached = append(cached, p)
		}
		return nil
	})
	if len(cached) != 1 {
		t.Fatalf("token cache files: %v", cached)
	}
	fi, err := os.Stat(cached[0])
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token cache mode: %v %v", fi.Mode(), err)
	}
	if b, _ := os.ReadFile(cached[0]); bytes.Contains(b, []byte(secret)) || bytes.Contains(b, []byte("demo-pat")) {
		t.Errorf("the token cache holds a secret other than the access token: %s", b)
	}

	// The cached token is used without any other credential.
	code, out, errOut = run("info", "--target", target)
	if code != ExitOK || !strings.Contains(out, "demo (oidc)") {
		t.Fatalf("info with the cached token: exit %d\n%s%s", code, out, errOut)
	}

	// A second login while the browser session lasts needs no password.
	if code, out, errOut = run("login", "--target", target); code != ExitOK {
		t.Fatalf("second login: exit %d\n%s%s", code, out, errOut)
	}
	if browser.FormsFilled != 1 {
		t.Errorf("the second login asked for the password again")
	}

	if code, out, _ = run("logout", "--target", target); code != ExitOK || !strings.Contains(out, "cached token was removed") {
		t.Fatalf("logout: exit %d: %s", code, out)
	}
	code, _, errOut = run("info", "--target", target)
	if code != ExitUnreachable || !strings.Contains(errOut, "MIGRATE_TOKEN") {
		t.Errorf("info after logout: exit %d: %s", code, errOut)
	}
}

// The sandbox's banner names the OIDC application it accepts, and those
// are what `migrate login` needs: a login with exactly them succeeds.
func TestSandboxBannerNamesLoginClient(t *testing.T) {
	configHome(t)
	ctx, stop := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan int)
	go func() {
		a := &app{stdin: strings.NewReader(""), stdout: pw, stderr: io.Discard, getenv: func(string) string { return "" }}
		done <- a.main(ctx, []string{"sandbox", "--addr", "127.0.0.1:0"})
		pw.Close()
	}()
	banner, err := bufio.NewReader(pr).ReadString('\n')
	go io.Copy(io.Discard, pr)
	defer func() { stop(); <-done }()
	if err != nil {
		t.Fatal(err)
	}
	var url, id, secret string
	for f := strings.Fields(banner); len(f) > 1; f = f[1:] {
		switch f[0] {
		case "sandbox:":
			url = f[1]
		case "client":
			id = f[1]
		case "secret":
			secret = f[1]
		}
	}
	if url == "" || id == "" || secret == "" {
		t.Fatalf("the banner does not name the OIDC client and secret: %s", banner)
	}
	env := map[string]string{"MIGRATE_CLIENT_ID": id, "MIGRATE_CLIENT_SECRET": secret}
	var out, errb bytes.Buffer
	a := &app{stdin: strings.NewReader(""), stdout: &out, stderr: &errb,
		getenv: func(k string) string { return env[k] }, openBrowser: authtest.NewBrowser("demo", "demo").Open}
	if code := a.main(context.Background(), []string{"login", "--target", url}); code != ExitOK {
		t.Fatalf("login with the banner's client: exit %d\n%s%s", code, out.String(), errb.String())
	}
}
