package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/migrate-tool/migrate/sandbox"
)

// TestApplyDamagedJournal: apply on a damaged journal exits 2 (a file that
// cannot be read), as status does, with the journal's line. It used to
// exit 3, as if the target could not be reached.
func TestApplyDamagedJournal(t *testing.T) {
	dir := t.TempDir()
	for name, text := range map[string]string{
		"p.yaml":    "version: 1\nsources:\n  f: {file: f.csv}\nsteps:\n  - name: families\n    entity: FAMILY_LOG\n    source: f\n    fields:\n      FAMILYNAME: row.Code\n      FAMILYDESC: row.Description\n",
		"f.csv":     "Code,Description\nBOLT,Bolts\n",
		"p.journal": "00000000 {\"t\":\"header\"}\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	code, out, errb := runMain(t, map[string]string{"HOME": dir}, "apply", filepath.Join(dir, "p.yaml"), "--sandbox", "--journal", filepath.Join(dir, "p.journal"))
	if code != ExitUsage {
		t.Errorf("exit %d, want %d\nstdout: %s\nstderr: %s", code, ExitUsage, out, errb)
	}
	if !strings.Contains(errb, "p.journal:1: ") || !strings.Contains(errb, "the journal is damaged") {
		t.Errorf("stderr %q does not name the damaged journal line", errb)
	}
}

// TestApplyShiftedSourceExits2: a resume refused because rows moved under
// location identities is a file problem (exit 2), like a stale journal,
// and names the location and id:. Nothing is sent: the target holds what
// the first run loaded.
func TestApplyShiftedSourceExits2(t *testing.T) {
	sb, target := startSandbox(t, sandbox.Options{})
	dir := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("p.yaml", "version: 1\nsources:\n  c: {file: c.csv}\n  o: {file: o.csv}\nsteps:\n  - name: customers\n    entity: CUSTOMERS\n    source: c\n    fields: {CUSTNAME: row.C, CUSTDES: row.C}\n  - name: orders\n    entity: ORDERS\n    source: o\n    after: [customers]\n    match: [DETAILS]\n    fields: {CUSTNAME: row.C, DETAILS: row.D}\n")
	write("c.csv", "C\nC1\n")
	write("o.csv", "C,D\nC1,a\nNOPE,b\nC1,c\n")
	env := map[string]string{"HOME": dir, "MIGRATE_USER": "demo", "MIGRATE_PASSWORD": "demo"}
	args := []string{"apply", filepath.Join(dir, "p.yaml"), "--target", target, "--journal", filepath.Join(dir, "p.journal")}
	if code, out, errs := runMain(t, env, args...); code != ExitData {
		t.Fatalf("first apply: exit %d\n%s%s", code, out, errs)
	}
	write("o.csv", "C,D\nC1,a\nC1,c\n")
	code, out, errs := runMain(t, env, append(args, "--retry-failed")...)
	if code != ExitUsage || !strings.Contains(errs, "step orders, o.csv:3: the row now holds what was sent from o.csv:4") || !strings.Contains(errs, "id:") {
		t.Errorf("exit %d, want %d\nstdout: %s\nstderr: %s", code, ExitUsage, out, errs)
	}
	if n := len(sb.Snapshot()["ORDERS"]); n != 2 {
		t.Errorf("the target holds %d orders, want the 2 of the first run", n)
	}
}
