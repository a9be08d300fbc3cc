package bloom

import (
	"hash/maphash"
	"strconv"
	"testing"
)

func hashOf(seed maphash.Seed, s string) [2]uint64 {
	return [2]uint64{maphash.String(seed, s), maphash.String(seed, s+"\x00")}
}

// TestFilter: every key given passes; of keys not given, about 1 % do at
// BitsPerKey and about 8 % at LeanBitsPerKey; the encoded filter answers
// the same.
func TestFilter(t *testing.T) {
	for _, c := range []struct {
		bits    int
		maxRate float64 // of the keys not given, the share that may pass
	}{{BitsPerKey, 0.03}, {LeanBitsPerKey, 0.12}} {
		t.Run(strconv.Itoa(c.bits), func(t *testing.T) { testFilter(t, c.bits, c.maxRate) })
	}
}

func testFilter(t *testing.T, bits int, maxRate float64) {
	seed := maphash.MakeSeed()
	for _, n := range []int{0, 1, 100, 50_000} {
		f := New(n, bits)
		for i := range n {
			f.Add(hashOf(seed, strconv.Itoa(i)))
		}
		b, _ := f.AppendBinary(nil)
		g, ok := Decode(b)
		if !ok {
			t.Fatalf("n=%d: the encoded filter does not decode", n)
		}
		for _, x := range []*Filter{f, g} {
			for i := range n {
				if !x.MayHave(hashOf(seed, strconv.Itoa(i))) {
					t.Fatalf("n=%d: key %d given, and refused", n, i)
				}
			}
		}
		if n < 1000 {
			continue
		}
		passed := 0
		for i := range n {
			if f.MayHave(hashOf(seed, "x"+strconv.Itoa(i))) {
				passed++
			}
		}
		rate := float64(passed) / float64(n)
		if rate > maxRate {
			t.Errorf("n=%d: %.1f %% of the keys not given pass, want under %.0f %%", n, rate*100, maxRate*100)
		}
		t.Logf("n=%d, %d bits a key: %.2f %% of the keys not given pass", n, bits, rate*100)
	}
}

func TestDecodeRefuses(t *testing.T) {
	for _, b := range [][]byte{nil, make([]byte, 8), make([]byte, 65)} {
		if _, ok := Decode(b); ok {
			t.Errorf("Decode(%d bytes) = ok, want refused", len(b))
		}
	}
}
