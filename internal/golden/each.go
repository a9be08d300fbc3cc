package golden

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Each runs each, as a parallel subtest named by the file's name without
// its extension, on every input matching pattern (a filepath.Glob pattern,
// under testdata/): every match but the .golden files and the files whose
// extension is in beside (what a test keeps beside an input: its options,
// its headers). It returns how many inputs it ran; none fails the test.
func Each(t *testing.T, pattern string, beside []string, each func(t *testing.T, path string)) int {
	t.Helper()
	files, err := filepath.Glob(pattern)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, path := range files {
		ext := filepath.Ext(path)
		if ext == ".golden" || slices.Contains(beside, ext) {
			continue
		}
		n++
		t.Run(strings.TrimSuffix(filepath.Base(path), ext), func(t *testing.T) {
			t.Parallel()
			each(t, path)
		})
	}
	if n == 0 {
		t.Fatalf("no input matches %s", pattern)
	}
	return n
}
