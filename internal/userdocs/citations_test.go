package userdocs

import (
	"bufio"
	"fmt"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// A comment explains by what the repository holds: docs/service.md for the
// service's rules, docs/servers.md for real servers, docs/design.md and
// docs/conventions.md for the tree (docs/conventions.md, Comments). These
// are the citations a newcomer cannot follow: documents outside the tree,
// a section of the contract by its number, a ticket by its number.
var outsideCitations = []struct {
	re   *regexp.Regexp
	says string
}{
	{regexp.MustCompile(`SERVICE-NOTES`), "cite docs/servers.md and its section"},
	{regexp.MustCompile(`\b[Ss]pec \d[\d.]*`), "cite docs/service.md and its section (docs/service.md, Keys)"},
	{regexp.MustCompile(`\b[Ii]ssue \d[\d.]*`), "say the reason in words: an issue number explains nothing to a reader"},
	{regexp.MustCompile(`\bDESIGN\b`), "cite docs/design.md and its section, or say it"},
	{regexp.MustCompile(`\bSTYLE\.md\b`), "cite docs/conventions.md and its section"},
	{regexp.MustCompile(`(?:^|[^/\w])(?:CLI|PLAN-FORMAT)\.md\b`), "cite docs/cli.md or docs/plan-format.md"},
	{regexp.MustCompile(`shared/(?:spec|docs)/`), "cite the page of docs/ that says it"},
}

// docCitation is a citation of a page of docs/ and, after ", ", the
// section cited.
var docCitation = regexp.MustCompile(`docs/([\w.-]+\.md)(?:, ("?)([^\s,;:()"][^,;:()"]*))?`)

// TestCommentsCiteTheRepository: no comment of the module's Go files, tests
// included, cites what is not in the repository, and every page of docs/ a
// comment cites exists, with the section it names.
func TestCommentsCiteTheRepository(t *testing.T) {
	root := filepath.Join("..", "..")
	headings := map[string][]string{} // page → its headings, loaded on first citation
	files := eachGoFile(t, root, func(path string) error {
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		for _, cg := range f.Comments {
			text := strings.Join(strings.Fields(cg.Text()), " ")
			at := func() string { return fmt.Sprintf("%s:%d", filepath.ToSlash(rel), fset.Position(cg.Pos()).Line) }
			for _, c := range outsideCitations {
				if m := c.re.FindString(text); m != "" {
					t.Errorf("%s: a comment cites %q: %s", at(), strings.TrimSpace(m), c.says)
				}
			}
			for _, m := range docCitation.FindAllStringSubmatch(text, -1) {
				page, section := m[1], m[3]
				hs, ok := headings[page]
				if !ok {
					hs = pageHeadings(filepath.Join(root, "docs", page))
					headings[page] = hs
				}
				if hs == nil {
					t.Errorf("%s: a comment cites docs/%s, which is not in docs/", at(), page)
					continue
				}
				if section != "" && !startsWithHeading(section, hs) {
					t.Errorf("%s: a comment cites docs/%s, %q, but the page has no such section (after \"docs/%s, \" comes a heading of the page)", at(), page, strings.TrimSpace(section), page)
				}
			}
		}
		return nil
	})
	if files < 100 {
		t.Fatalf("read %d Go files: the walk missed the module", files)
	}
}

// pageHeadings returns the headings of a page of docs/ (any level, code
// blocks left out, backquotes dropped), or nil when there is no such page.
func pageHeadings(path string) []string {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	hs := []string{}
	fenced := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
			continue
		}
		if fenced || !strings.HasPrefix(line, "#") {
			continue
		}
		h := strings.TrimSpace(strings.TrimLeft(line, "#"))
		hs = append(hs, strings.ReplaceAll(h, "`", ""))
	}
	return hs
}

// startsWithHeading reports whether the text after a citation's comma
// starts with one of the page's headings, whole words.
func startsWithHeading(section string, headings []string) bool {
	section = strings.ReplaceAll(section, "`", "")
	for _, h := range headings {
		if rest, ok := strings.CutPrefix(section, h); ok {
			if rest == "" || !isWordByte(rest[0]) {
				return true
			}
		}
	}
	return false
}

func isWordByte(b byte) bool {
	return b == '_' || b == '-' || 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9'
}
