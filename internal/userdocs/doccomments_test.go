package userdocs

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
	"unicode"
)

// TestDocCommentsNameTheirDeclaration: a doc comment that begins with an
// identifier begins with the name of what it documents. One that names
// another function is a comment left behind by a rename, or one that
// drifted onto its neighbour, and go doc shows the wrong text. Tests are
// left out: their comments name the feature they test.
func TestDocCommentsNameTheirDeclaration(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..", "..")
	fset := token.NewFileSet()
	eachGoFile(t, root, func(path string) error {
		if strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			var name string
			var doc *ast.CommentGroup
			switch decl := decl.(type) {
			case *ast.FuncDecl:
				name, doc = decl.Name.Name, decl.Doc
			case *ast.GenDecl:
				if ts, ok := decl.Specs[0].(*ast.TypeSpec); ok && len(decl.Specs) == 1 {
					name, doc = ts.Name.Name, decl.Doc
				}
			}
			if first := firstIdentifier(doc); first != "" && first != name && !strings.HasSuffix(first, "."+name) {
				t.Errorf("%s: the doc comment of %s begins with %s", fset.Position(decl.Pos()), name, first)
			}
		}
		return nil
	})
}

// firstIdentifier is the doc comment's first word when it reads as a Go
// identifier rather than English: mixed case inside it (entityOps,
// Options.RefuseKey). "" otherwise.
func firstIdentifier(doc *ast.CommentGroup) string {
	if doc == nil {
		return ""
	}
	words := strings.FieldsFunc(doc.Text(), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_' && r != '.'
	})
	if len(words) == 0 {
		return ""
	}
	w := strings.TrimSuffix(words[0], ".")
	for i, r := range w {
		if i > 0 && unicode.IsUpper(r) {
			return w
		}
	}
	return ""
}
