package userdocs

import (
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// eachGoFile calls each with the path of every Go file of the module under
// root, tests included, leaving out testdata and hidden folders; an error
// from the walk or from each fails the test. It returns how many files it
// gave each.
func eachGoFile(t *testing.T, root string, each func(path string) error) int {
	t.Helper()
	files := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		files++
		return each(path)
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}
