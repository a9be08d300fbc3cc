package plan

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/migrate-tool/migrate/internal/golden"
)

// TestBrokenGolden decodes every plan under testdata/broken and compares
// its diagnostics, exactly, with the .golden file beside it. A plan with a
// .headers file beside it (one "source=Col1,Col2" per line: the headers
// its sources have) also has its columns checked against them.
func TestBrokenGolden(t *testing.T) {
	t.Parallel()
	n := golden.Each(t, "testdata/broken/*.yaml", nil, func(t *testing.T, path string) {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		p, ds := Decode(filepath.Base(path), data)
		if hdr, err := os.ReadFile(strings.TrimSuffix(path, ".yaml") + ".headers"); err == nil {
			headers := map[string][]string{}
			for _, line := range strings.Split(strings.TrimSpace(string(hdr)), "\n") {
				name, cols, _ := strings.Cut(line, "=")
				headers[name] = strings.Split(cols, ",")
			}
			ds = append(ds, p.CheckColumns(headers)...)
			ds.Sort()
		}
		if !ds.HasErrors() {
			t.Fatalf("a broken plan decoded without errors: %v", ds)
		}
		golden.Check(t, strings.TrimSuffix(path, ".yaml")+".golden", []byte(ds.Error()+"\n"))
	})
	if n < 30 {
		t.Fatalf("the broken corpus has %d plans; want at least 30", n)
	}
}
