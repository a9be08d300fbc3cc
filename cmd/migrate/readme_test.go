package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Every input file the README's tour names exists, so a newcomer's first
// commands do not fail on a file the repository never had. (The tour itself
// was run by hand; the scripts under testdata/script cover its commands.)
func TestREADMETourFilesExist(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(readme)
	start := strings.Index(s, "## A five-minute tour")
	if start < 0 {
		t.Fatal("no tour in README.md")
	}
	block := s[start:]
	block = block[strings.Index(block, "```sh")+5:]
	block = block[:strings.Index(block, "```")]
	named := 0
	writes := map[string]bool{"--out": true, "--html": true, "--created": true} // flags that name a file the command writes
	for _, line := range strings.Split(block, "\n") {
		if i := strings.Index(line, "#"); i >= 0 {
			line = line[:i]
		}
		fields := strings.Fields(line)
		for i, f := range fields {
			if i > 0 && fields[i-1] == ">" || strings.HasPrefix(f, "--out") || i > 0 && writes[fields[i-1]] {
				continue // written by the command
			}
			switch filepath.Ext(f) {
			case ".yaml", ".csv", ".xlsx":
				named++
				if _, err := os.Stat(filepath.Join("../..", f)); err != nil {
					t.Errorf("the README's tour names %s, which does not exist", f)
				}
			}
		}
	}
	if named < 5 {
		t.Errorf("found %d input files in the tour; the test no longer reads it", named)
	}
}
