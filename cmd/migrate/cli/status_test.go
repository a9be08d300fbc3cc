package cli

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/migrate-tool/migrate/sandbox"
)

// A run killed after its earlier steps committed everything, before its
// last step (orders) began, has nothing pending; status still says it is
// not complete and exits 4 (run apply again), and apply again finishes it.
func TestStatusOfARunStoppedBetweenSteps(t *testing.T) {
	t.Parallel()
	sb, target, journal, run := quickstartLoaded(t)
	// The journal as the kill left it: every line before the first of the
	// last step (its watermark); the orders it had sent are deleted.
	data, err := os.ReadFile(journal)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(data, []byte("\n"))
	cut := 1
	for cut < len(lines) && !bytes.Contains(lines[cut], []byte(`"st":"orders"`)) {
		cut++
	}
	if cut == len(lines) {
		t.Fatal("no line of step orders in the journal")
	}
	if err := os.WriteFile(journal, bytes.Join(lines[:cut], nil), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, o := range sb.Snapshot()["ORDERS"] {
		req, err := http.NewRequest("DELETE", fmt.Sprintf("%s/ORDERS('%v')", target, o["ORDNAME"]), nil)
		if err != nil {
			t.Fatal(err)
		}
		req.SetBasicAuth("demo", "demo")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNoContent {
			t.Fatalf("DELETE ORDERS('%v'): %s", o["ORDNAME"], resp.Status)
		}
	}

	code, out := run("status", journal)
	if code != ExitInterrupted || !strings.Contains(out, "not complete: the last apply stopped before it ran every step; run apply again") {
		t.Errorf("status: exit %d, want %d\n%s", code, ExitInterrupted, out)
	}
	code, out = run("status", journal, "--json")
	if code != ExitInterrupted || !strings.Contains(out, `"complete": false`) {
		t.Errorf("status --json: exit %d\n%s", code, out)
	}
	if code, out := run("apply", quickstartPlan(t), "--journal", journal); code != ExitOK {
		t.Fatalf("apply again: exit %d\n%s", code, out)
	}
	if n := len(sb.Snapshot()["ORDERS"]); n != 4 {
		t.Errorf("apply again: the sandbox holds %d orders, want the quickstart's 4", n)
	}
	if code, out := run("status", journal); code != ExitOK || !strings.Contains(out, "complete: every record is committed or skipped") {
		t.Errorf("status after apply again: exit %d\n%s", code, out)
	}
}

// quickstartLoaded loads the quickstart into a sandbox of its own: the
// sandbox, its service root, the journal, and a runner of commands with
// the sandbox's target and credentials in their environment.
func quickstartLoaded(t *testing.T) (sb *sandbox.Server, target, journal string, run func(args ...string) (int, string)) {
	t.Helper()
	sb, target = startSandbox(t, sandbox.Options{})
	journal = filepath.Join(t.TempDir(), "q.journal")
	run = runIn(t, map[string]string{"MIGRATE_USER": "demo", "MIGRATE_PASSWORD": "demo", "MIGRATE_TARGET": target})
	if code, out := run("apply", quickstartPlan(t), "--journal", journal); code != ExitOK {
		t.Fatalf("apply: exit %d\n%s", code, out)
	}
	return sb, target, journal, run
}
