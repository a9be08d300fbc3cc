package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
	var out, errb bytes.Buffer
	env := map[string]string{"HOME": dir}
	a := &app{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: func(k string) string { return env[k] }}
	code := a.main(context.Background(), []string{"apply", filepath.Join(dir, "p.yaml"), "--sandbox", "--journal", filepath.Join(dir, "p.journal")})
	if code != ExitUsage {
		t.Errorf("exit %d, want %d\nstdout: %s\nstderr: %s", code, ExitUsage, out.String(), errb.String())
	}
	if !strings.Contains(errb.String(), "p.journal:1: ") || !strings.Contains(errb.String(), "the journal is damaged") {
		t.Errorf("stderr %q does not name the damaged journal line", errb.String())
	}
}
