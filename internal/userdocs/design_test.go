package userdocs

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

const module = "github.com/migrate-tool/migrate/"

// TestPackageTable holds docs/design.md's table of packages to the tree:
// every package of the module has its row, every row a package, and a
// package's production files import no module package its row does not
// allow, so imports keep running one way.
func TestPackageTable(t *testing.T) {
	root := filepath.Join("..", "..")
	rows := packageRows(t, Section(t, filepath.Join(root, "docs", "design.md"), "Packages"))
	tree := modulePackages(t, root)
	for pkg, imports := range tree {
		allowed, ok := rows[pkg]
		if !ok {
			t.Errorf("package %s has no row in docs/design.md's table", pkg)
			continue
		}
		for _, imp := range imports {
			if !slices.Contains(allowed, imp) {
				t.Errorf("%s imports %s, which its row in docs/design.md does not allow (may import: %s): move the code, or say why in the table", pkg, imp, strings.Join(allowed, ", "))
			}
		}
	}
	for pkg := range rows {
		if _, ok := tree[pkg]; !ok {
			t.Errorf("docs/design.md has a row for %s, which is no package of the module", pkg)
		}
	}
}

// packageRows reads the table: the first column's package and the last
// column's module packages it may import ("—" for none).
func packageRows(t *testing.T, section string) map[string][]string {
	t.Helper()
	rows := map[string][]string{}
	for _, line := range strings.Split(section, "\n") {
		cells := strings.Split(strings.Trim(strings.TrimSpace(line), "|"), "|")
		if len(cells) < 4 || !strings.HasPrefix(strings.TrimSpace(cells[0]), "`") {
			continue
		}
		pkg := strings.Trim(strings.TrimSpace(cells[0]), "`")
		var may []string
		for _, f := range strings.Split(cells[len(cells)-1], ",") {
			f = strings.TrimSpace(f)
			if f == "—" || f == "" {
				continue
			}
			if i := strings.Index(f, " ("); i >= 0 {
				f = f[:i] // "`source` (encoding names only)"
			}
			may = append(may, strings.Trim(f, "`"))
		}
		rows[pkg] = may
	}
	if len(rows) == 0 {
		t.Fatal("docs/design.md's Packages section has no table")
	}
	return rows
}

// modulePackages maps each directory of the module with Go files to the
// module packages its non-test files import, sorted.
func modulePackages(t *testing.T, root string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (name == "testdata" || strings.HasPrefix(name, ".") || name == "examples" || name == "docs") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		rel, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		pkg := filepath.ToSlash(rel)
		if _, ok := out[pkg]; !ok {
			out[pkg] = nil
		}
		if strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, src, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, imp := range f.Imports {
			p := strings.Trim(imp.Path.Value, `"`)
			if rest, ok := strings.CutPrefix(p, module); ok && !slices.Contains(out[pkg], rest) {
				out[pkg] = append(out[pkg], rest)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, imps := range out {
		sort.Strings(imps)
	}
	return out
}
