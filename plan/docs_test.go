package plan

import (
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// The users' documentation of the format, in the product.
const formatDoc = "../docs/plan-format.md"

func readFormatDoc(t *testing.T) string {
	t.Helper()
	doc, err := os.ReadFile(formatDoc)
	if err != nil {
		t.Fatal(err)
	}
	return string(doc)
}

// docSection returns the text of the "## title" section of doc, up to the
// next section.
func docSection(t *testing.T, doc, title string) string {
	t.Helper()
	start := strings.Index(doc, "\n## "+title+"\n")
	if start < 0 {
		t.Fatalf("%s has no section %q", formatDoc, title)
	}
	body := doc[start+len(title)+5:]
	if end := strings.Index(body, "\n## "); end >= 0 {
		body = body[:end]
	}
	return body
}

// testdata/good/format-example-complete.yaml, which the decoder and
// metadata tests read, is docs/plan-format.md's example byte for byte.
func TestFormatExampleIsCurrent(t *testing.T) {
	t.Parallel()
	doc := readFormatDoc(t)
	start := strings.Index(doc, "```yaml\n")
	if start < 0 {
		t.Fatalf("no yaml block in %s", formatDoc)
	}
	start += len("```yaml\n")
	end := strings.Index(doc[start:], "```\n")
	if end < 0 {
		t.Fatalf("the yaml block of %s does not end", formatDoc)
	}
	copyData, err := os.ReadFile("testdata/good/format-example-complete.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if string(copyData) != doc[start:start+end] {
		t.Errorf("testdata/good/format-example-complete.yaml differs from the example of %s; copy it again", formatDoc)
	}
}

var docKeyRow = regexp.MustCompile("(?m)^\\| `([a-z_]+)` \\|")

// Every key the decoder accepts has a row in its block's table of "Every
// plan key", and every row names a key the decoder accepts: a key added
// to the decoder without a line of documentation fails here.
func TestDocsNameEveryPlanKey(t *testing.T) {
	t.Parallel()
	section := docSection(t, readFormatDoc(t), "Every plan key")
	documented := map[string][]string{}
	for _, sub := range strings.Split(section, "\n### ")[1:] {
		heading, body, _ := strings.Cut(sub, "\n")
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
		{"sources.NAME", sourceKeys},
		{"lookups.NAME", lookupKeys},
		{"steps[]", stepKeys},
		{"subforms[]", subformKeys},
		{"link", linkKeys},
	}
	for _, b := range blocks {
		got, want := sortedCopy(documented[b.heading]), sortedCopy(b.keys)
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("%s, \"### %s\": documents %v; the decoder accepts %v", formatDoc, b.heading, got, want)
		}
		delete(documented, b.heading)
	}
	for heading := range documented {
		t.Errorf("%s: \"### %s\" is a block the decoder does not have", formatDoc, heading)
	}
}

func sortedCopy(in []string) []string {
	out := append([]string(nil), in...)
	sort.Strings(out)
	return out
}
