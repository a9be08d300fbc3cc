package profile

import (
	"math"
	"math/bits"
	"strings"
)

// hash64 is FNV-1a with a final mix: deterministic (goldens), no
// allocation, and its high bits are good enough for the estimator.
func hash64(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h
}

// fold is how two values that differ only in case compare.
func fold(s string) string { return strings.ToLower(s) }

// hllBits is the estimator's precision: 2^12 registers, 4 KB a column,
// a standard error of 1.04/sqrt(4096), about 1.6 %.
const hllBits = 12

// hll estimates the number of distinct values (Flajolet et al.,
// HyperLogLog, with the small-range correction).
type hll struct{ reg [1 << hllBits]uint8 }

func (h *hll) add(x uint64) {
	i := x >> (64 - hllBits)
	rho := uint8(bits.LeadingZeros64(x<<hllBits|1<<(hllBits-1)) + 1)
	if rho > h.reg[i] {
		h.reg[i] = rho
	}
}

func (h *hll) estimate() int {
	const m = float64(1 << hllBits)
	sum, zeros := 0.0, 0
	for _, r := range h.reg {
		sum += math.Ldexp(1, -int(r))
		if r == 0 {
			zeros++
		}
	}
	e := 0.7213 / (1 + 1.079/m) * m * m / sum
	if e <= 2.5*m && zeros > 0 {
		e = m * math.Log(m/float64(zeros))
	}
	return int(math.Round(e))
}
