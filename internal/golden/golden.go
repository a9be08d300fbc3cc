// Package golden compares test output with files under testdata/, and
// rewrites them when the tests run with -update. Every package's golden
// tests use it, so the flag and the messages are the same everywhere.
package golden

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/ from the tests' output")

// Updating reports whether the tests run with -update.
func Updating() bool { return *update }

// Check compares got with the file at path; with -update it writes got
// there instead (creating the folder), for the diff to be reviewed.
func Check(t testing.TB, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update creates it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the output (go test -update rewrites it; review the diff)\n--- got:\n%s\n--- want:\n%s", path, got, want)
	}
}
