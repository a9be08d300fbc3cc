package cli

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/migrate-tool/migrate/sandbox"
)

// TestServerTextEscaped: a server whose login name and error message hold
// an escape sequence that clears the screen and a carriage return that
// forges a line has both shown escaped in the human output; the
// JSON output stays JSON.
func TestServerTextEscaped(t *testing.T) {
	t.Parallel()
	sb, err := sandbox.New(sandbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	hostile := func(answer func(w http.ResponseWriter)) string {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasSuffix(r.URL.Path, "/GetLoginName") {
				answer(w)
				return
			}
			sb.ServeHTTP(w, r)
		}))
		t.Cleanup(srv.Close)
		return srv.URL + sandbox.BasePath
	}
	name := hostile(func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"value":"\u001b[2Jroot\rdemo"}`))
	})
	refusing := hostile(func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		w.Write([]byte(`{"error":{"code":"1","message":"\u001b[2Jdenied\rall fine"}}`))
	})
	run := runIn(t, map[string]string{"MIGRATE_TOKEN": "demo-pat"})
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"login name", []string{"info", "--target", name}, ExitOK, `user            \x1b[2Jroot\rdemo (`},
		{"login name as JSON", []string{"info", "--json", "--target", name}, ExitOK, `"user": "\u001b[2Jroot\rdemo"`},
		{"error message", []string{"info", "--target", refusing}, ExitUnreachable, `\x1b[2Jdenied\rall fine`},
	}
	for _, tt := range tests {
		code, out := run(tt.args...)
		if code != tt.code || !strings.Contains(out, tt.want) {
			t.Errorf("%s: exit %d, want %d, and output\n%s\nwant it to hold %s", tt.name, code, tt.code, out, tt.want)
		}
		if strings.ContainsAny(out, "\x1b\r") {
			t.Errorf("%s: a raw escape or carriage return reached the output: %q", tt.name, out)
		}
	}
}

// TestServerRefusalEscaped: a record the server refuses with a message
// holding an escape sequence and a carriage return is listed with both
// escaped, in apply's output and in report's.
func TestServerRefusalEscaped(t *testing.T) {
	t.Parallel()
	_, target := startSandbox(t, sandbox.Options{RefuseKey: func(entity, key string) string {
		if entity == "CUSTOMERS" && key == "C1002" {
			return "\x1b[2Jblocked\rall loaded"
		}
		return ""
	}})
	journal := filepath.Join(t.TempDir(), "q.journal")
	run := runIn(t, map[string]string{"MIGRATE_USER": "demo", "MIGRATE_PASSWORD": "demo"})
	for _, args := range [][]string{
		{"apply", quickstartPlan(t), "--target", target, "--journal", journal},
		{"status", journal},
		{"report", journal, "--out", filepath.Join(t.TempDir(), "failed.csv")},
	} {
		code, out := run(args...)
		if args[0] == "apply" && (code != ExitData || !strings.Contains(out, `\x1b[2Jblocked\rall loaded`)) {
			t.Errorf("apply: exit %d, want %d, and output\n%s\nwant the refusal escaped", code, ExitData, out)
		}
		if strings.ContainsAny(out, "\x1b\r") {
			t.Errorf("%s: a raw escape or carriage return reached the output: %q", args[0], out)
		}
	}
}
