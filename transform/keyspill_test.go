package transform

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestSeenKeysSpill: past the keys memory may hold, keys go to sorted runs
// on disk, merged eight of a level at a time; every key is still found
// with the line of its first row, and none is found that was not given.
func TestSeenKeysSpill(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name   string
		keys   int
		budget int64
		runs   int // runs on disk at the end
	}{
		{"in memory", 5_000, 0, 0},
		{"one run", 1_500, 1024 * seenKeyBytes, 1},
		{"merged", 100_000, 1024 * seenKeyBytes, 97%8 /* level 0 */ + 97/8%8 /* level 1 */ + 97/64},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := newSeenKeys(tt.budget)
			defer s.close()
			rng := rand.New(rand.NewPCG(1, 2))
			want := map[string]int{}
			for i := 0; i < tt.keys; i++ {
				k := fmt.Sprintf("K%07d", i)
				line := i + 2
				if prev, dup, err := s.first(k, line); err != nil || dup {
					t.Fatalf("%s: new key found (line %d, %v)", k, prev, err)
				}
				want[k] = line
				// Now and then a row gives an earlier key again.
				if i > 0 && rng.IntN(10) == 0 {
					old := fmt.Sprintf("K%07d", rng.IntN(i))
					prev, dup, err := s.first(old, line+1)
					if err != nil || !dup || prev != want[old] {
						t.Fatalf("%s again: %d %v %v, want line %d", old, prev, dup, err, want[old])
					}
				}
			}
			for k, line := range want {
				if prev, dup, err := s.first(k, 1); err != nil || !dup || prev != line {
					t.Fatalf("%s: %d %v %v, want line %d", k, prev, dup, err, line)
				}
			}
			runs := 0
			if s.disk != nil {
				runs = len(s.disk.runs)
			}
			if runs != tt.runs {
				t.Errorf("%d runs on disk, want %d", runs, tt.runs)
			}
			// Keys never given are not found (and are kept, as new ones).
			for i := 0; i < 1000; i++ {
				k := fmt.Sprintf("X%07d", i)
				if _, dup, err := s.first(k, 1); err != nil || dup {
					t.Fatalf("%s, never given, found (%v)", k, err)
				}
			}
		})
	}
}
