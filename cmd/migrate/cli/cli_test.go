package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/migrate-tool/migrate/internal/scratch"
	"github.com/migrate-tool/migrate/odata/odatatest"
	"github.com/migrate-tool/migrate/sandbox"
)

// TestMain runs the tests with the garbage collector tuned as the command
// tunes it (TuneGC, which Run calls): most tests call the command's
// functions without Run, and would otherwise collect four times as often
// as a user's run does.
func TestMain(m *testing.M) {
	TuneGC()
	os.Exit(scratch.Main(m))
}

// TestExitCodes holds docs/cli.md's exit codes to their meaning, for the cases
// that need no data.
func TestExitCodes(t *testing.T) {
	// The servers stop when the test ends: the subtests run in parallel,
	// after this function returns.
	_, good := startSandbox(t, sandbox.Options{})
	_, failing := startSandbox(t, sandbox.Options{Faults: map[string]float64{sandbox.FaultError500: 1}})
	quickstart := quickstartPlan(t)
	tests := []struct {
		name   string
		args   []string
		env    map[string]string
		code   int
		stdout string
		stderr string
	}{
		{"no command", nil, nil, ExitUsage, "Usage: migrate COMMAND", ""},
		{"help", []string{"help"}, nil, ExitOK, "Commands:", ""},
		{"unknown command", []string{"aply"}, nil, ExitUsage, "", `unknown command "aply"; did you mean "apply"?`},
		{"version", []string{"version"}, nil, ExitOK, "migrate v", ""},
		{"bad flag", []string{"validate", "--nope", "x.yaml"}, nil, ExitUsage, "", "flag provided but not defined"},
		{"missing plan", []string{"validate", "does-not-exist.yaml", "--sandbox"}, nil, ExitUsage, "does-not-exist.yaml", ""},
		{"too many args", []string{"report", "a", "b"}, nil, ExitUsage, "", "Usage: migrate report"},
		{"no target", []string{"info"}, nil, ExitUsage, "", "no target"},
		{"unreachable", []string{"info", "--target", "http://127.0.0.1:1/odata/Priority/tabula.ini/demo"},
			map[string]string{"MIGRATE_TOKEN": "t0ps3cret"}, ExitUnreachable, "", ""},
		{"refused credentials", []string{"info", "--target", good},
			map[string]string{"MIGRATE_USER": "demo", "MIGRATE_PASSWORD": "wrong-pass-123"}, ExitUnreachable, "", "credentials were refused"},
		{"good credentials", []string{"info", "--target", good},
			map[string]string{"MIGRATE_TOKEN": "demo-pat"}, ExitOK, "system version  25.1", ""},
		{"no credentials", []string{"info", "--target", good}, nil, ExitUnreachable, "", "MIGRATE_TOKEN"},
		{"bad fault", []string{"sandbox", "--fault", "explode=0.5"}, nil, ExitUsage, "", `--fault "explode=0.5": unknown kind`},
		{"bad quirk", []string{"sandbox", "--quirks", "cold-forms,hot-forms"}, nil, ExitUsage, "", `quirk "hot-forms": unknown (want all or some of multipart-ids`},
		{"server failing at every call: apply is pending, not unreachable",
			[]string{"apply", quickstart, "--target", failing, "--journal", filepath.Join(t.TempDir(), "q.journal")},
			map[string]string{"MIGRATE_USER": "demo", "MIGRATE_PASSWORD": "demo"}, ExitInterrupted, "", "run apply again to resume"},
		{"server failing at every call: info says so with exit 3",
			[]string{"info", "--target", failing},
			map[string]string{"MIGRATE_TOKEN": "demo-pat"}, ExitUnreachable, "", "HTTP 500"},
		// A password in the target URL is never echoed, whatever fails.
		{"password in the URL, unreachable", []string{"info", "--target", "http://demo:s3cretpw@127.0.0.1:1/odata/Priority/tabula.ini/demo"},
			map[string]string{"MIGRATE_TOKEN": "demo-pat"}, ExitUnreachable, "", "127.0.0.1:1"},
		{"password in the URL, no credentials", []string{"info", "--target", "http://demo:s3cretpw@127.0.0.1:1/odata/Priority/tabula.ini/demo"},
			nil, ExitUnreachable, "", "no credentials for http://127.0.0.1:1/odata"},
		{"password in a malformed URL", []string{"info", "--target", "http://demo:s3cretpw@127.0.0.1:port/odata"},
			map[string]string{"MIGRATE_TOKEN": "demo-pat"}, ExitUsage, "", "the credentials in the target URL are ignored"},
		{"password in the environment's URL, info", []string{"info"},
			map[string]string{"MIGRATE_TARGET": strings.Replace(good, "://", "://demo:s3cretpw@", 1), "MIGRATE_TOKEN": "demo-pat"}, ExitOK, "target          " + good, ""},
		{"status of missing journal", []string{"status", "nope.journal"}, nil, ExitUsage, "", "nope.journal"},
		{"report wrong extension", []string{"report", "x.journal", "--out", "x.pdf"}, nil, ExitUsage, "", ".xlsx or .csv"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var out, errb bytes.Buffer
			env := map[string]string{"HOME": t.TempDir(), "XDG_CONFIG_HOME": t.TempDir()}
			for k, v := range tt.env {
				env[k] = v
			}
			a := &app{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: func(k string) string { return env[k] },
				clock: odatatest.NewClock(time.Now())}
			code := a.main(context.Background(), tt.args)
			if code != tt.code {
				t.Errorf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tt.code, out.String(), errb.String())
			}
			if !strings.Contains(out.String(), tt.stdout) {
				t.Errorf("stdout %q does not contain %q", out.String(), tt.stdout)
			}
			if !strings.Contains(errb.String(), tt.stderr) {
				t.Errorf("stderr %q does not contain %q", errb.String(), tt.stderr)
			}
			for _, secret := range []string{"t0ps3cret", "wrong-pass-123", "s3cretpw"} {
				if strings.Contains(out.String()+errb.String(), secret) {
					t.Errorf("a secret was printed: %s%s", out.String(), errb.String())
				}
			}
		})
	}
}

// WithClock reaches the client a command makes: against a server that
// fails every call, info retries as often as without it (the client's
// backoff, DefaultRetries times) and every pause is taken on the clock,
// none in real time. The tests above rely on it to wait for nothing.
func TestWithClockPacesTheRetries(t *testing.T) {
	t.Parallel()
	_, failing := startSandbox(t, sandbox.Options{Faults: map[string]float64{sandbox.FaultError500: 1}})
	clk := odatatest.NewClock(time.Now())
	env := map[string]string{"MIGRATE_TOKEN": "demo-pat", "HOME": t.TempDir(), "XDG_CONFIG_HOME": t.TempDir()}
	var out, errb bytes.Buffer
	a := &app{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: func(k string) string { return env[k] }}
	WithClock(clk)(a)
	if code := a.main(context.Background(), []string{"info", "--target", failing}); code != ExitUnreachable {
		t.Fatalf("exit %d, want %d\n%s%s", code, ExitUnreachable, out.String(), errb.String())
	}
	backoff := []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second}
	got := clk.Sleeps()
	if len(got) == 0 {
		t.Fatal("no pause was taken on the clock")
	}
	for call := range slices.Chunk(got, len(backoff)) {
		if !slices.Equal(call, backoff) {
			t.Errorf("pauses on the clock %v, want each call's backoff %v", got, backoff)
			break
		}
	}
}

// startSandbox serves a sandbox for one test and returns it with its
// service root.
func startSandbox(t *testing.T, o sandbox.Options) (*sandbox.Server, string) {
	t.Helper()
	sb, err := sandbox.New(o)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(sb)
	t.Cleanup(srv.Close)
	return sb, srv.URL + sandbox.BasePath
}

// quickstartPlan is the example plan's absolute path.
func quickstartPlan(t *testing.T) string {
	t.Helper()
	p, err := filepath.Abs("../../../examples/plans/quickstart.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// runIn runs commands with env as their whole environment (plus a home of
// their own) and returns the exit code with stdout and stderr together.
// The clients' pauses before a retry pass at once.
func runIn(t *testing.T, env map[string]string) func(args ...string) (int, string) {
	env["HOME"], env["XDG_CONFIG_HOME"] = t.TempDir(), t.TempDir()
	return func(args ...string) (int, string) {
		var out, errb bytes.Buffer
		a := &app{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: func(k string) string { return env[k] },
			clock: odatatest.NewClock(time.Now())}
		return a.main(context.Background(), args), out.String() + errb.String()
	}
}

// The Basic deprecation warning comes once per command, with one
// "warning:" in front, whatever the command does with the target.
func TestBasicWarningOnce(t *testing.T) {
	t.Parallel()
	_, target := startSandbox(t, sandbox.Options{})
	quickstart := quickstartPlan(t)
	journal := filepath.Join(t.TempDir(), "q.journal")
	env := map[string]string{"MIGRATE_TARGET": target, "MIGRATE_USER": "demo", "MIGRATE_PASSWORD": "demo"}
	env["HOME"], env["XDG_CONFIG_HOME"] = t.TempDir(), t.TempDir()
	for _, args := range [][]string{
		{"info"}, {"validate", quickstart}, {"plan", quickstart, "--journal", journal}, {"apply", quickstart, "--journal", journal},
		{"metadata", "show", "CUSTOMERS"}, {"undo", journal, "--yes"},
	} {
		code, out, errb := runMain(t, env, args...)
		if code != ExitOK {
			t.Fatalf("%v: exit %d\n%s%s", args, code, out, errb)
		}
		if n := strings.Count(errb, "basic authentication"); n != 1 || strings.Contains(errb, "warning: warning:") {
			t.Errorf("%v: the Basic warning came %d times:\n%s", args, n, errb)
		}
	}
}

// status exits as docs/cli.md says: 0 complete, 1 when failed records remain
// and nothing else, 4 while records are pending or in doubt (run apply
// again), so a script can tell "fix the data" from "resume".
func TestStatusExitCodes(t *testing.T) {
	t.Parallel()
	quickstart := quickstartPlan(t)
	refuse := func(entity, key string) string {
		if entity == "CUSTOMERS" && key == "C1002" {
			return "refused by the test"
		}
		return ""
	}
	tests := []struct {
		name      string
		opts      sandbox.Options
		apply     int
		status    int
		statusOut string
	}{
		{"complete", sandbox.Options{}, ExitOK, ExitOK, "complete: every record"},
		{"failed records", sandbox.Options{RefuseKey: refuse}, ExitData, ExitData, "failed records remain"},
		{"in doubt", sandbox.Options{Faults: map[string]float64{sandbox.FaultDropAfterCommit: 1}}, ExitInterrupted, ExitInterrupted, "run apply again"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, target := startSandbox(t, tt.opts)
			journal := filepath.Join(t.TempDir(), "q.journal")
			run := runIn(t, map[string]string{"MIGRATE_USER": "demo", "MIGRATE_PASSWORD": "demo"})
			if code, out := run("apply", quickstart, "--target", target, "--journal", journal); code != tt.apply {
				t.Fatalf("apply: exit %d, want %d\n%s", code, tt.apply, out)
			}
			if code, out := run("status", journal); code != tt.status || !strings.Contains(out, tt.statusOut) {
				t.Errorf("status: exit %d, want %d with %q\n%s", code, tt.status, tt.statusOut, out)
			}
			if code, _ := run("status", journal, "--json"); code != tt.status {
				t.Errorf("status --json: exit %d, want %d", code, tt.status)
			}
		})
	}
}

// A source or metadata file given by an absolute path is read where it is,
// not looked for under the plan's folder.
func TestAbsolutePathsInThePlan(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, d := range []string{"plans", "data"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	csv := filepath.Join(dir, "data", "parts.csv")
	if err := os.WriteFile(csv, []byte("Code,Name\nP1,Bolt\nP2,Nut\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var md bytes.Buffer
	if err := sandbox.DemoMetadata().WriteXML(&md); err != nil {
		t.Fatal(err)
	}
	mdFile := filepath.Join(dir, "data", "metadata.xml")
	if err := os.WriteFile(mdFile, md.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	planFile := filepath.Join(dir, "plans", "parts.yaml")
	body := fmt.Sprintf("version: 1\ntarget: {metadata: %q}\nsources:\n  parts: {file: %q}\nsteps:\n  - name: parts\n    entity: LOGPART\n    source: parts\n    fields: {PARTNAME: row.Code, PARTDES: row.Name}\n", mdFile, csv)
	if err := os.WriteFile(planFile, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	sb, target := startSandbox(t, sandbox.Options{})
	run := runIn(t, map[string]string{"MIGRATE_TOKEN": "demo-pat"})
	if code, out := run("validate", planFile); code != ExitOK || !strings.Contains(out, "checked against "+mdFile) {
		t.Fatalf("validate offline: exit %d\n%s", code, out)
	}
	if code, out := run("apply", planFile, "--target", target, "--journal", filepath.Join(dir, "parts.journal")); code != ExitOK {
		t.Fatalf("apply: exit %d\n%s", code, out)
	}
	var names []string
	for _, p := range sb.Snapshot()["LOGPART"] {
		names = append(names, fmt.Sprint(p["PARTNAME"]))
	}
	if want := []string{"P1", "P2"}; !reflect.DeepEqual(names, want) {
		t.Errorf("the sandbox holds parts %v, want %v", names, want)
	}
}

// login names the target it logs in to, without the password a user wrote
// into the URL.
func TestLoginHidesURLPassword(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	var out, errb bytes.Buffer
	env := map[string]string{"HOME": t.TempDir(), "XDG_CONFIG_HOME": t.TempDir()}
	a := &app{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: func(k string) string { return env[k] },
		openBrowser: func(string) error { return nil }}
	a.main(ctx, []string{"login", "--target", "http://demo:s3cretpw@127.0.0.1:1/odata/Priority/tabula.ini/demo"})
	all := out.String() + errb.String()
	if strings.Contains(all, "s3cretpw") || !strings.Contains(all, "log in to http://127.0.0.1:1/odata/Priority/tabula.ini/demo") {
		t.Errorf("login output:\n%s", all)
	}
}

// An undo whose batch may have reached the server stops in doubt (exit 4,
// run undo again), as apply does; it is no unreachable target.
func TestUndoInDoubtExits4(t *testing.T) {
	t.Parallel()
	sb, err := sandbox.New(sandbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Undo touches the journal's target only: the connection drops after
	// the server committed a batch that deletes, on the same URL.
	var drop atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		if !drop.Load() || !bytes.Contains(body, []byte(`"DELETE"`)) {
			sb.ServeHTTP(w, r)
			return
		}
		sb.ServeHTTP(httptest.NewRecorder(), r)
		if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
			conn.Close()
		}
	}))
	t.Cleanup(srv.Close)
	good := srv.URL + sandbox.BasePath
	quickstart := quickstartPlan(t)
	journal := filepath.Join(t.TempDir(), "q.journal")
	run := runIn(t, map[string]string{"MIGRATE_USER": "demo", "MIGRATE_PASSWORD": "demo"})
	if code, out := run("apply", quickstart, "--target", good, "--journal", journal); code != ExitOK {
		t.Fatalf("apply: exit %d\n%s", code, out)
	}
	drop.Store(true)
	code, out := run("undo", journal, "--yes", "--target", good)
	if code != ExitInterrupted || !strings.Contains(out, "run undo again") {
		t.Fatalf("undo against a server that drops every answer: exit %d, want 4\n%s", code, out)
	}
	drop.Store(false)
	if code, out := run("undo", journal, "--yes", "--target", good); code != ExitOK {
		t.Fatalf("undo again: exit %d\n%s", code, out)
	}
}

// Ctrl-C stops a command that waits on the target (here a server that never
// answers) at once, with exit 4; only apply and sandbox handle it themselves.
func TestInterruptCancelsWaitingCommand(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(hang.Close)
	t.Cleanup(func() { close(release) })
	sig := make(chan os.Signal, 1)
	var out, errb bytes.Buffer
	a := &app{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, interrupts: sig,
		getenv: func(k string) string { return map[string]string{"MIGRATE_TOKEN": "demo-pat"}[k] }}
	done := make(chan int, 1)
	go func() {
		done <- a.main(context.Background(), []string{"info", "--target", hang.URL + sandbox.BasePath})
	}()
	sig <- os.Interrupt
	select {
	case code := <-done:
		if code != ExitInterrupted {
			t.Errorf("exit %d, want %d\n%s", code, ExitInterrupted, errb.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("info did not stop on Ctrl-C")
	}
}

// A sandbox bound beyond loopback says that anyone can use its well-known
// credentials; on loopback it says nothing of the kind.
func TestSandboxWarnsBeyondLoopback(t *testing.T) {
	t.Parallel()
	for addr, warn := range map[string]bool{"127.0.0.1:0": false, "0.0.0.0:0": true} {
		var out, errb bytes.Buffer
		a := &app{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: func(string) string { return "" }}
		ctx, cancel := context.WithCancel(context.Background())
		cancel() // serve, then stop at once
		if code := a.main(ctx, []string{"sandbox", "--addr", addr}); code != ExitOK {
			t.Fatalf("%s: exit %d: %s", addr, code, errb.String())
		}
		if got := strings.Contains(errb.String(), "well-known demo credentials"); got != warn {
			t.Errorf("%s: stderr %q", addr, errb.String())
		}
	}
}
