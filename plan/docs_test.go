package plan

import (
	"os"
	"regexp"
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

var docKeyRow = regexp.MustCompile("(?m)^\\| `([a-z_]+)` \\|")

// Every key the decoder accepts has a row in its block's table of "Every
// plan key", and every row names a key the decoder accepts: a key added
// to the decoder without a line of documentation fails here.
func TestDocsNameEveryPlanKey(t *testing.T) {
	t.Parallel()
	documented := map[string][]string{}
	for heading, body := range userdocs.Subsections(userdocs.Section(t, formatDoc, "Every plan key")) {
		for _, m := range docKeyRow.FindAllStringSubmatch(body, -1) {
			documented[heading] = append(documented[heading], m[1])
		}
	}
	blocks := []struct {
		heading string
		keys    []string
	}{
		{"Top level", topKeys},
		{"target", targetKeys},
		{"connections.NAME", connKeys},
		{"sources.NAME", sourceKeys},
		{"lookups.NAME", lookupKeys},
		{"steps[]", stepKeys},
		{"subforms[]", subformKeys},
		{"link", linkKeys},
	}
	for _, b := range blocks {
		if got, want := userdocs.Set(documented[b.heading]), userdocs.Set(b.keys); got != want {
			t.Errorf("%s, \"### %s\": documents [%s]; the decoder accepts [%s]", formatDoc, b.heading, got, want)
		}
		delete(documented, b.heading)
	}
	for heading := range documented {
		t.Errorf("%s: \"### %s\" is a block the decoder does not have", formatDoc, heading)
	}
}
