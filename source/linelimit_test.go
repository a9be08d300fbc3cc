package source

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLineGuard(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in       string
		max      int
		wantLine int // 0: no error
	}{
		{"ab\ncd\n", 2, 0},
		{"ab\ncde\n", 2, 2},
		{"abc", 2, 1},
		{"ab\ncd\nef\nghij", 3, 4},
		{"", 1, 0},
	}
	for _, tt := range tests {
		g := newLineGuard(iotestOneByte(strings.NewReader(tt.in)), tt.max)
		_, err := io.ReadAll(g)
		var long *lineTooLong
		switch {
		case tt.wantLine == 0 && err != nil:
			t.Errorf("%q: %v", tt.in, err)
		case tt.wantLine != 0 && (!errors.As(err, &long) || long.line != tt.wantLine):
			t.Errorf("%q: err %v, want line %d too long", tt.in, err, tt.wantLine)
		}
	}
}

// iotestOneByte reads a byte at a time, so lines straddle reads.
func iotestOneByte(r io.Reader) io.Reader { return oneByte{r} }

type oneByte struct{ r io.Reader }

func (o oneByte) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	return o.r.Read(p[:1])
}

// A CSV with no line end is refused at MaxLineBytes with the line, instead
// of being read into memory whole.
func TestCSVLineTooLong(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "one-line.csv")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	chunk := strings.Repeat("x", 1<<20)
	f.WriteString("a,b\n")
	for i := 0; i < MaxLineBytes>>20+1; i++ {
		f.WriteString(chunk)
	}
	f.Close()
	r, err := Open(Options{Name: "one-line.csv", Path: path})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	_, err = r.Next()
	var se *Error
	if !errors.As(err, &se) || se.Line != 2 || !strings.Contains(err.Error(), "one-line.csv:2: line 2 is longer than 16 MiB") {
		t.Fatalf("got %v", err)
	}
}
