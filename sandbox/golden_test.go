package sandbox_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/migrate-tool/migrate/sandbox"
)

func init() {
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite golden files under testdata/")
	}
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if f := flag.Lookup("update"); f != nil && f.Value.String() == "true" {
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
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (run go test -update and review the diff)", name)
	}
}

// Spec 2.2 / 4.1: the demo schema's documents, as served at 25.1 (with
// Mandatory) and 25.0 (without), and one GetMetadataFor fragment.
func TestSpec2_2MetadataGolden(t *testing.T) {
	t.Parallel()
	for _, v := range []string{"25.0", "25.1"} {
		c := start(t, sandbox.Options{SystemVersion: v})
		golden(t, "metadata-"+v+".xml", c.must(200, "GET", "/$metadata", nil).body)
		c.must(200, "GET", "/AINVOICES?$top=1", nil)
		golden(t, "GetMetadataFor-AINVOICES-"+v+".xml", c.must(200, "GET", "/GetMetadataFor(entity='AINVOICES')", nil).body)
	}
}
