package cli

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestEngineBoundary holds the command line to its part (issue 13): it
// connects, parses flags, renders views and picks exit codes; reading
// sources and compiling the plan are the engine's (executor.Prepare), so
// no file of the command imports source or transform. Tests may.
func TestEngineBoundary(t *testing.T) {
	forbidden := []string{
		"github.com/migrate-tool/migrate/source",
		"github.com/migrate-tool/migrate/transform",
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range append(files, "../main.go") {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		ast, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range ast.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			for _, bad := range forbidden {
				if path == bad || strings.HasPrefix(path, bad+"/") {
					t.Errorf("%s imports %s: reading sources and compiling the plan belong to the engine (executor.Prepare)", f, path)
				}
			}
		}
	}
}
