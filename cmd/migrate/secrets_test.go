package main

import (
	"bytes"
	"context"
	"encoding/pem"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/migrate-tool/migrate/cmd/migrate/cli"
	"github.com/migrate-tool/migrate/sandbox"
)

// Known secret values: none of them may appear in anything the tool writes.
const (
	secretPassword = "Pw-9f3c1e77-secret"
	secretToken    = "Pat-4b2d88aa-secret"
	secretClient   = "Cs-71e0c3d9-secret"
	secretAppKey   = "Ak-5a6b7c8d-secret"
)

var secrets = []string{secretPassword, secretToken, secretClient, secretAppKey}

// runCLI runs the command in this process with the environment the test
// set, and returns its exit code and output.
func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := cli.Run(context.Background(), args, strings.NewReader(""), &out, &errb)
	for _, bad := range []string{"panic:", "goroutine "} {
		if strings.Contains(out.String()+errb.String(), bad) {
			t.Fatalf("migrate %s crashed:\n%s%s", strings.Join(args, " "), out.String(), errb.String())
		}
	}
	return code, out.String(), errb.String()
}

// TestNoSecretsAnywhere runs every command with known secrets in the
// environment and searches everything written: stdout, stderr and every
// file under the work folder (journal, plan --out batches, report, metadata,
// the token cache's folder, init's plan).
func TestNoSecretsAnywhere(t *testing.T) {
	work := t.TempDir()
	if err := copyDir("../../examples/plans", work); err != nil {
		t.Fatal(err)
	}
	target := serveSandbox(t, sandbox.Options{
		Users:  map[string]string{"loader": secretPassword},
		Tokens: []string{secretToken},
	})
	t.Setenv("HOME", work)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(work, ".config"))
	t.Setenv("MIGRATE_TARGET", target)
	t.Setenv("MIGRATE_AUTH", "basic")
	t.Setenv("MIGRATE_USER", "loader")
	t.Setenv("MIGRATE_PASSWORD", secretPassword)
	t.Setenv("MIGRATE_TOKEN", secretToken)
	t.Setenv("MIGRATE_CLIENT_SECRET", secretClient)
	t.Setenv("MIGRATE_APP_KEY", secretAppKey)
	t.Setenv("MIGRATE_APP_ID", "app-1")

	plan := filepath.Join(work, "quickstart.yaml")
	journal := filepath.Join(work, "quickstart.journal")
	runs := []struct {
		args []string
		code int
		out  string // a sign the command did its work
	}{
		{[]string{"version"}, 0, "migrate v"},
		{[]string{"sandbox", "--help"}, 0, ""},
		{[]string{"validate", plan}, 0, "ok:"},
		{[]string{"plan", plan, "--out", filepath.Join(work, "batches")}, 0, "apply would make"},
		{[]string{"info"}, 0, "system version"},
		{[]string{"metadata", "pull", "--out", filepath.Join(work, "metadata.xml")}, 0, ""},
		{[]string{"metadata", "show", "LOGPART", "--metadata", filepath.Join(work, "metadata.xml")}, 0, "PARTNAME"},
		{[]string{"init", "--entity", "CUSTOMERS", "--source", filepath.Join(work, "data", "customers.csv"), "--out", filepath.Join(work, "init.yaml")}, 0, ""},
		{[]string{"apply", plan}, 0, "orders"},
		{[]string{"status", journal}, 0, "complete"},
		{[]string{"report", journal, "--out", filepath.Join(work, "failed.csv")}, 0, ""},
		{[]string{"undo", journal}, 0, "would"},
		{[]string{"undo", journal, "--yes"}, 0, ""},
		// The wrong password: refused, and the message does not echo it.
		{[]string{"info", "--auth", "basic", "--target", target + "x"}, 3, ""},
		{[]string{"logout"}, 0, ""},
	}
	for _, r := range runs {
		code, out, errs := runCLI(t, r.args...)
		if code != r.code {
			t.Errorf("migrate %s: exit %d, want %d\nstdout: %s\nstderr: %s", strings.Join(r.args, " "), code, r.code, out, errs)
		}
		if !strings.Contains(out, r.out) {
			t.Errorf("migrate %s: stdout %q does not contain %q", strings.Join(r.args, " "), out, r.out)
		}
		for _, s := range secrets {
			if strings.Contains(out+errs, s) {
				t.Errorf("migrate %s printed a secret:\n%s%s", strings.Join(r.args, " "), out, errs)
			}
		}
	}
	if _, err := os.Stat(journal); err != nil {
		t.Fatalf("apply wrote no journal to search: %v", err)
	}
	files := 0
	filepath.WalkDir(work, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		files++
		b, err := os.ReadFile(p)
		if err != nil {
			t.Error(err)
			return nil
		}
		for _, s := range secrets {
			if bytes.Contains(b, []byte(s)) {
				t.Errorf("%s holds a secret", p)
			}
		}
		return nil
	})
	for _, want := range []string{"metadata.xml", "init.yaml", "quickstart.journal"} {
		if _, err := os.Stat(filepath.Join(work, want)); err != nil {
			t.Errorf("expected %s to be written and searched: %v", want, err)
		}
	}
	t.Logf("searched %d files", files)
}

// TestTLSVerification: a server whose certificate is not trusted is
// refused with a clear message and exit 3; with --ca-cert it is used.
func TestTLSVerification(t *testing.T) {
	sb, err := sandbox.New(sandbox.Options{Tokens: []string{secretToken}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewTLSServer(sb)
	defer srv.Close()
	dir := t.TempDir()
	ca := filepath.Join(dir, "ca.pem")
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	if err := os.WriteFile(ca, pemBytes, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", dir)
	t.Setenv("XDG_CONFIG_HOME", dir)
	t.Setenv("MIGRATE_TOKEN", secretToken)
	t.Setenv("MIGRATE_AUTH", "pat")
	target := srv.URL + sandbox.BasePath
	code, out, errs := runCLI(t, "info", "--target", target)
	if code != cli.ExitUnreachable || !strings.Contains(errs, "certificate") {
		t.Errorf("untrusted certificate: exit %d, stderr %q, stdout %q; want 3 and a message about the certificate", code, errs, out)
	}
	code, out, errs = runCLI(t, "info", "--target", target, "--ca-cert", ca)
	if code != cli.ExitOK || !strings.Contains(out, "system version") {
		t.Errorf("with --ca-cert: exit %d\nstdout: %s\nstderr: %s", code, out, errs)
	}
}

// TestFileOutsidePlanFolder: file() cannot read outside the plan's folder.
func TestFileOutsidePlanFolder(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "plan")
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(root, "secret.txt"), []byte("outside"), 0o644)
	os.WriteFile(filepath.Join(dir, "c.csv"), []byte("Code,Name,Doc\nC1,One,../secret.txt\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "p.yaml"), []byte(`version: 1
sources:
  c: {file: c.csv}
steps:
  - name: orders
    entity: ORDERS
    source: c
    fields:
      CUSTNAME: row.Code
    subforms:
      - name: EXTFILES_SUBFORM
        fields:
          EXTFILEDES: row.Code
          EXTFILENAME: file(row.Doc)
`), 0o644)
	t.Setenv("HOME", root)
	code, out, errs := runCLI(t, "plan", filepath.Join(dir, "p.yaml"), "--sandbox")
	if code != cli.ExitData || !strings.Contains(out, "outside the plan's folder") {
		t.Errorf("file() outside the folder: exit %d\nstdout: %s\nstderr: %s", code, out, errs)
	}
}

// serveSandbox serves a sandbox made with opts until the test ends and
// returns its service root.
func serveSandbox(t *testing.T, opts sandbox.Options) string {
	t.Helper()
	sb, err := sandbox.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(sb)
	t.Cleanup(srv.Close)
	return srv.URL + sandbox.BasePath
}

// TestSandboxRefusesUnauthenticated walks the sandbox's routes without
// credentials: every one is refused.
func TestSandboxRefusesUnauthenticated(t *testing.T) {
	base := serveSandbox(t, sandbox.Options{})
	reqs := []struct{ method, path, body string }{
		{"GET", "/", ""},
		{"GET", "/$metadata", ""},
		{"GET", "/CUSTOMERS", ""},
		{"GET", "/CUSTOMERS('C1')", ""},
		{"GET", "/CUSTOMERS('C1')/CUSTOMERSTEXT_SUBFORM", ""},
		{"POST", "/CUSTOMERS", `{"CUSTNAME":"X","CUSTDES":"x"}`},
		{"PATCH", "/CUSTOMERS('C1')", `{"CUSTDES":"y"}`},
		{"DELETE", "/CUSTOMERS('C1')", ""},
		{"POST", "/$batch", `{"requests":[]}`},
		{"GET", "/GetLoginName()", ""},
		{"GET", "/$metadata?$filter=x", ""},
	}
	for _, r := range reqs {
		req, _ := http.NewRequest(r.method, base+r.path, strings.NewReader(r.body))
		if r.body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s %s without credentials: %d, want 401", r.method, r.path, resp.StatusCode)
		}
	}
}
