package plan

import (
	"os"
	"strings"
	"testing"

	"github.com/migrate-tool/migrate/internal/userdocs"
)

// The users' documentation of the format, in the product.
const formatDoc = "../docs/plan-format.md"

// testdata/good/format-example-complete.yaml, which the decoder and
// metadata tests read, is docs/plan-format.md's example byte for byte.
func TestFormatExampleIsCurrent(t *testing.T) {
	t.Parallel()
	copyData, err := os.ReadFile("testdata/good/format-example-complete.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if string(copyData) != userdocs.FirstYAML(t, formatDoc) {
		t.Errorf("testdata/good/format-example-complete.yaml differs from the example of %s; copy it again", formatDoc)
	}
}

// The keys tables of docs/plan-format.md are what the format table
// generates: a key added to the decoder's table without its line of
// documentation, or a table edited by hand, fails here.
func TestKeysDocIsGenerated(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(formatDoc)
	if err != nil {
		t.Fatal(err)
	}
	want, err := ReplaceKeysDoc(string(data))
	if err != nil {
		t.Fatalf("%s: %v", formatDoc, err)
	}
	if string(data) != want {
		t.Errorf("%s: the keys tables are stale: run `go generate ./plan` (they come from plan/format.go)", formatDoc)
	}
}

// Every block and key the decoder reads has a row, a type, a default and
// a meaning in the table, and the choices and bounds the decoder checks
// are the table's.
func TestFormatTableIsComplete(t *testing.T) {
	t.Parallel()
	for _, b := range format {
		if b.Heading == "" || b.Desc == "" || len(b.Keys) == 0 {
			t.Errorf("block %s lacks a heading, a description or keys", b.Name)
		}
		seen := map[string]bool{}
		for _, k := range b.Keys {
			if seen[k.Name] {
				t.Errorf("%s.%s is in the table twice", b.Name, k.Name)
			}
			seen[k.Name] = true
			if k.typeText() == "" || k.Default == "" || k.Meaning == "" {
				t.Errorf("%s.%s lacks a type, a default or a meaning", b.Name, k.Name)
			}
			if k.Required != (k.Default == "required" || strings.HasPrefix(k.Default, "required,")) {
				t.Errorf("%s.%s: Required is %v, the default column says %q", b.Name, k.Name, k.Required, k.Default)
			}
		}
	}
}
