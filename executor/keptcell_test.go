package executor

import (
	"strings"
	"testing"
)

// A long cell is kept for report --created as its head and how long it
// was: the journal never holds a 100 KB text per record.
func TestKeptCell(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("א", 2000) // two bytes each
	for _, tc := range []struct{ in, want string }{
		{"short", "short"},
		{strings.Repeat("x", keptCellMax), strings.Repeat("x", keptCellMax)},
		{strings.Repeat("x", keptCellMax+1), strings.Repeat("x", keptCellMax) + "… [1025 bytes in the source]"},
		{long, strings.Repeat("א", keptCellMax/2) + "… [4000 bytes in the source]"},
	} {
		if got := keptCell(tc.in); got != tc.want {
			t.Errorf("keptCell(%d bytes) = %.40q…, want %.40q…", len(tc.in), got, tc.want)
		}
	}
}
