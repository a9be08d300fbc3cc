// Package userdocs reads the users' documentation under docs/ for the tests
// that hold it to the code: the plan keys, the flags, the variables and the
// example a page shows. One reading of the pages' layout, for every package.
package userdocs

import (
	"os"
	"sort"
	"strings"
	"testing"
)

// Read returns the page at path.
func Read(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Section returns the text of the "## title" section of the page at path,
// up to the next section.
func Section(t testing.TB, path, title string) string {
	t.Helper()
	doc := Read(t, path)
	start := strings.Index(doc, "\n## "+title+"\n")
	if start < 0 {
		t.Fatalf("%s has no section %q", path, title)
	}
	body := doc[start+len("\n## "+title+"\n"):]
	if end := strings.Index(body, "\n## "); end >= 0 {
		body = body[:end]
	}
	return body
}

// Subsections splits a section at its "### " headings and maps each
// heading to the text under it; text before the first heading is dropped.
func Subsections(section string) map[string]string {
	out := map[string]string{}
	for _, sub := range strings.Split(section, "\n### ")[1:] {
		heading, body, _ := strings.Cut(sub, "\n")
		out[heading] = body
	}
	return out
}

// FirstYAML returns the first ```yaml block of the page at path: the
// example a page is built around.
func FirstYAML(t testing.TB, path string) string {
	t.Helper()
	doc := Read(t, path)
	start := strings.Index(doc, "```yaml\n")
	if start < 0 {
		t.Fatalf("no yaml block in %s", path)
	}
	start += len("```yaml\n")
	end := strings.Index(doc[start:], "```\n")
	if end < 0 {
		t.Fatalf("the yaml block of %s does not end", path)
	}
	return doc[start : start+end]
}

// Set returns the distinct names of names, sorted and joined by spaces, so
// a page's list and the code's compare as one string in a message.
func Set(names []string) string {
	seen := map[string]bool{}
	var out []string
	for _, n := range names {
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}
