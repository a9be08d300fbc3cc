package source

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/migrate-tool/migrate/internal/golden"
)

// TestGolden reads every sample file under testdata/golden (with the
// Options of its .opts file, if any) and compares everything it reads
// with the .golden file next to it. go test -run TestGolden -update
// rewrites them.
func TestGolden(t *testing.T) {
	t.Parallel()
	golden.Each(t, "testdata/golden/*", []string{".opts"}, func(t *testing.T, p string) {
		base := strings.TrimSuffix(p, filepath.Ext(p))
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
		golden.Check(t, base+".golden", []byte(got))
	})
}
