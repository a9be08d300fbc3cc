package diag

import (
	"strconv"
)

// Quote is s as a message quotes a value (strconv.Quote), its first max
// characters when it has more, marked by "…" after the closing quote: a
// value in a message stays short, and the cut never splits a character
// (Hebrew text takes two bytes a letter).
func Quote(s string, max int) string {
	if c := cut(s, max); len(c) < len(s) {
		return strconv.Quote(c) + "…"
	}
	return strconv.Quote(s)
}

// Cut is s, or its first max characters and "…" when it has more; the cut
// never splits a character.
func Cut(s string, max int) string {
	if c := cut(s, max); len(c) < len(s) {
		return c + "…"
	}
	return s
}

// cut is the first max characters of s (s itself when it has no more).
func cut(s string, max int) string {
	if len(s) <= max {
		return s
	}
	n := 0
	for i := range s {
		if n == max {
			return s[:i]
		}
		n++
	}
	return s
}

// Count is n with its noun as a message words it: "1 record", "3 records"
// (one and many are the noun's two forms).
func Count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// Them is the pronoun of n things as a message words it: "it" of one,
// "them" of any other number.
func Them(n int) string {
	if n == 1 {
		return "it"
	}
	return "them"
}
