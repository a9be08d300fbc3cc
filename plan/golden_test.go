package plan

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// TestBrokenGolden decodes every plan under testdata/broken and compares
// its diagnostics, exactly, with the .golden file beside it.
func TestBrokenGolden(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("testdata/broken/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 30 {
		t.Fatalf("the broken corpus has %d plans; want at least 30", len(files))
	}
	for _, path := range files {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".yaml"), func(t *testing.T) {
			t.Parallel()
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			_, ds := Decode(filepath.Base(path), data)
			if !ds.HasErrors() {
				t.Fatalf("a broken plan decoded without errors: %v", ds)
			}
			got := ds.Error() + "\n"
			golden := strings.TrimSuffix(path, ".yaml") + ".golden"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test ./plan -run TestBrokenGolden -update)", err)
			}
			if got != string(want) {
				t.Errorf("diagnostics differ from %s\n--- got\n%s--- want\n%s", golden, got, want)
			}
		})
	}
}
