package workbook

import (
	"strings"
	"testing"
	"unicode/utf16"
)

func TestText(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("א", MaxCellChars+5)
	// An emoji is two UTF-16 units: one that would end past the limit is
	// left out whole, never half a pair.
	pair := strings.Repeat("a", MaxCellChars-1) + "😀b"
	for _, c := range []struct {
		name, in, want string
		cut, replaced  bool
	}{
		{"plain", "שלום, world", "שלום, world", false, false},
		{"tab, line feed, carriage return", "a\tb\nc\rd", "a\tb\nc\rd", false, false},
		{"at the limit", long[:MaxCellChars*2], long[:MaxCellChars*2], false, false},
		{"past the limit", long, long[:MaxCellChars*2], true, false},
		{"a pair across the limit", pair, strings.Repeat("a", MaxCellChars-1), true, false},
		{"control characters", "a\x00b\x1bc\x0bd", "a\uFFFDb\uFFFDc\uFFFDd", false, true},
		{"not UTF-8", "a\xffb", "a\uFFFDb", false, true},
		{"U+FFFE", "a\uFFFEb", "a\uFFFDb", false, true},
		{"both", "\x07" + long, "\uFFFD" + long[:(MaxCellChars-1)*2], true, true},
	} {
		got, cut, replaced := Text(c.in)
		if got != c.want || cut != c.cut || replaced != c.replaced {
			t.Errorf("%s: got %d units (cut %v, replaced %v), want %d (cut %v, replaced %v)", c.name,
				len(utf16.Encode([]rune(got))), cut, replaced, len(utf16.Encode([]rune(c.want))), c.cut, c.replaced)
		}
	}
}

func TestNeutraliseFormula(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"":              "",
		"plain":         "plain",
		"=1+1":          "'=1+1",
		"+SUM(A1)":      "'+SUM(A1)",
		"-2+3+cmd|' /C": "'-2+3+cmd|' /C",
		"@SUM(A1)":      "'@SUM(A1)",
		"\t=1":          "'\t=1",
		"-5":            "-5",
		"+3.5":          "+3.5",
		"a=b":           "a=b",
	} {
		if got := neutraliseFormula(in); got != want {
			t.Errorf("neutraliseFormula(%q) = %q, want %q", in, got, want)
		}
	}
}
