package source

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/golden/*.golden from the readers' output")

// TestGolden reads every sample file under testdata/golden (with the
// Options of its .opts file, if any) and compares everything it reads
// with the .golden file next to it. go test -run TestGolden -update
// rewrites them.
func TestGolden(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("testdata/golden/*")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, p := range files {
		ext := filepath.Ext(p)
		if ext == ".golden" || ext == ".opts" {
			continue
		}
		n++
		base := strings.TrimSuffix(p, ext)
		t.Run(filepath.Base(p), func(t *testing.T) {
			t.Parallel()
			var opts Options
			if b, err := os.ReadFile(base + ".opts"); err == nil {
				if err := json.Unmarshal(b, &opts); err != nil {
					t.Fatal(err)
				}
			}
			opts.Name, opts.Path = filepath.Base(p), p
			var got string
			r, err := Open(opts)
			if err != nil {
				got = "error: " + err.Error() + "\n"
			} else {
				got = dump(r)
				r.Close()
			}
			if *update {
				if err := os.WriteFile(base+".golden", []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(base + ".golden")
			if err != nil {
				t.Fatalf("%v (run go test -run TestGolden -update)", err)
			}
			if got != string(want) {
				t.Errorf("got\n%s\nwant\n%s", got, want)
			}
		})
	}
	if n == 0 {
		t.Fatal("no sample files")
	}
}
