// Package didyoumean finds the name a person most likely meant: the field,
// key, sheet, step or command nearest to a misspelt one. Every "did you
// mean" in the tool comes from here, so they all agree.
package didyoumean

import (
	"strconv"
	"strings"
)

// Hint is a message's suggestion of the candidate nearest to name, as
// every message words it (`; did you mean "CUSTDES"?`), or "" when none is
// close (Closest).
func Hint(name string, candidates []string) string {
	if s := Closest(name, candidates); s != "" {
		return "; did you mean " + strconv.Quote(s) + "?"
	}
	return ""
}

// Closest returns the candidate nearest to name, or "" when none is close
// enough to be a plausible misspelling. Case is ignored when measuring, so
// "custdes" finds "CUSTDES"; a candidate equal to name is never suggested.
func Closest(name string, candidates []string) string {
	if len([]rune(name)) < 3 {
		// One or two characters are no misspelling of anything in
		// particular ("." for ";").
		return ""
	}
	best, bestD := "", -1
	ln := strings.ToLower(name)
	for _, c := range candidates {
		if c == name {
			continue
		}
		lc := strings.ToLower(c)
		if lc == ln {
			return c
		}
		d := Distance(ln, lc)
		if bestD < 0 || d < bestD {
			best, bestD = c, d
		}
	}
	if bestD < 0 {
		return ""
	}
	// A third of the longer name, at least 1 and at most 3 edits; a prefix
	// match (CUSTDES for CUSTDESCRIPTION) counts too.
	limit := max(len([]rune(name)), len([]rune(best))) / 3
	limit = min(max(limit, 1), 3)
	if bestD <= limit {
		return best
	}
	lb := strings.ToLower(best)
	if len(ln) >= 4 && len(lb) >= 4 && (strings.HasPrefix(ln, lb) || strings.HasPrefix(lb, ln)) {
		return best
	}
	return ""
}

// Distance is the optimal string alignment distance (Levenshtein with
// transpositions) over runes. Names past 64 runes are no misspelling of a
// name: they compare as wholly different, so hostile input stays cheap.
func Distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	if len(ra) > 64 || len(rb) > 64 {
		if a == b {
			return 0
		}
		return max(len(ra), len(rb))
	}
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}

// Nearest returns the candidate a value most likely stands for: one equal
// to it but for case first (kg for KG, however short), else Closest.
// Value maps suggest and propose with it.
func Nearest(name string, candidates []string) string {
	for _, c := range candidates {
		if strings.EqualFold(c, name) {
			return c
		}
	}
	return Closest(name, candidates)
}
