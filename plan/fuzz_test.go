package plan

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/migrate-tool/migrate/odata"
)

// FuzzDecode feeds arbitrary bytes to Decode and every later check: none
// may panic, every diagnostic names a position in the file, and the
// diagnostics come sorted.
func FuzzDecode(f *testing.F) {
	for _, pattern := range []string{"testdata/*.yaml", "testdata/good/*.yaml", "testdata/broken/*.yaml"} {
		files, _ := filepath.Glob(pattern)
		for _, path := range files {
			data, err := os.ReadFile(path)
			if err != nil {
				f.Fatal(err)
			}
			if len(data) > 1500 || strings.Contains(path, "billion_laughs") {
				// The fuzzer minimises every new input for up to a minute;
				// from a large seed that stalls a 45-second run.
				continue
			}
			f.Add(data)
		}
	}
	md := demoMetadata()
	v := odata.Version{Major: 19, Minor: 1}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, ds := Decode("plan.yaml", data)
		if p == nil {
			t.Fatal("Decode returned a nil plan")
		}
		for i, d := range ds {
			if d.Pos.File != "plan.yaml" || d.Pos.Line < 1 || d.Pos.Col < 1 {
				t.Fatalf("diagnostic without a position: %q", d.String())
			}
			if d.Message == "" {
				t.Fatalf("empty message at %v", d.Pos)
			}
			if strings.Contains(d.Message, "yaml.Node") || strings.Contains(d.Message, "*plan.") || strings.Contains(d.Message, "[]interface") {
				t.Fatalf("a Go type leaks into %q", d.Message)
			}
			if i > 0 && lessPos(d.Pos, ds[i-1].Pos) {
				t.Fatalf("diagnostics not sorted: %v before %v", ds[i-1], d)
			}
		}
		p.Check()
		headers := map[string][]string{}
		for _, s := range p.Sources {
			headers[s.Name] = []string{"Code"}
		}
		for _, d := range p.CheckColumns(headers) {
			if d.Pos.Line < 1 || d.Pos.Col < 1 {
				t.Fatalf("column problem without a position: %q", d.String())
			}
		}
		p.CheckMetadata(md, v)
		if waves, err := p.Order(); err == nil {
			n := 0
			for _, w := range waves {
				n += len(w)
			}
			if n != len(p.Steps) {
				t.Fatalf("Order placed %d of %d steps", n, len(p.Steps))
			}
		}
	})
}

func lessPos(a, b Pos) bool {
	if a.Line != b.Line {
		return a.Line < b.Line
	}
	return a.Col < b.Col
}
