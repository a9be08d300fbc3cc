package diag

import (
	"testing"
	"unicode/utf8"
)

// TestQuoteAndCut: a value is shortened by characters, never inside one,
// and marked when it was; a value within the bound is kept whole.
func TestQuoteAndCut(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in        string
		max       int
		cut, quot string
	}{
		{"abc", 3, "abc", `"abc"`},
		{"abcd", 3, "abc…", `"abc"…`},
		{"שלום עולם", 4, "שלום…", `"שלום"…`},
		{"שלום", 4, "שלום", `"שלום"`},
		{"ab\x1bc", 3, "ab\x1b…", `"ab\x1b"…`},
		{"", 0, "", `""`},
	} {
		if got := Cut(tc.in, tc.max); got != tc.cut || !utf8.ValidString(got) {
			t.Errorf("Cut(%q, %d) = %q, want %q", tc.in, tc.max, got, tc.cut)
		}
		if got := Quote(tc.in, tc.max); got != tc.quot {
			t.Errorf("Quote(%q, %d) = %s, want %s", tc.in, tc.max, got, tc.quot)
		}
	}
}

// TestCount: one takes the singular, any other number the plural.
func TestCount(t *testing.T) {
	t.Parallel()
	for n, want := range map[int]string{0: "0 records", 1: "1 record", 2: "2 records", 1948: "1948 records"} {
		if got := Count(n, "record", "records"); got != want {
			t.Errorf("Count(%d) = %q, want %q", n, got, want)
		}
	}
}
