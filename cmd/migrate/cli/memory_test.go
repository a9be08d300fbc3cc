package cli

import (
	"strings"
	"testing"
)

func TestMemoryFlag(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want int64
		err  string
	}{
		{in: "256MB", want: 256 << 20},
		{in: "1GB", want: 1 << 30},
		{in: "512", want: 512 << 20},
		{in: " 2gib ", want: 2 << 30},
		{in: "64m", want: 64 << 20},
		{in: "abc", err: `"abc" is not a size: give megabytes or gigabytes, such as 256MB or 2GB`},
		{in: "-1MB", err: `"-1MB" is not a size`},
		{in: "1.5GB", err: `"1.5GB" is not a size`},
		{in: "10MB", err: "10MB is less than the 32 MB a run needs"},
	} {
		var m memoryFlag
		err := m.Set(tc.in)
		switch {
		case tc.err != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.err)):
			t.Errorf("%q: %v, want %q", tc.in, err, tc.err)
		case tc.err == "" && (err != nil || m.bytes != tc.want):
			t.Errorf("%q: %d, %v; want %d", tc.in, m.bytes, err, tc.want)
		}
	}
}
