// Package bloom is the one Bloom filter of the tree: a set of keys' hashes
// that answers "certainly not" or "perhaps", in 10 or 6 bits a key. The
// sorted runs on disk keep one each (the duplicate-key spill of transform,
// the journal's index), so that a key a run does not hold costs no read of
// it.
//
// It is blocked: a key's bits all fall in one 512-bit block (one cache
// line pair), chosen by the first half of its hash; the second half picks
// the bits. About 1 % of the keys a filter was not given pass it at
// BitsPerKey, about 8 % at LeanBitsPerKey.
package bloom

import "encoding/binary"

const (
	// BitsPerKey is what a filter spends a key where few false passes
	// matter: a small run, looked in first and most often.
	BitsPerKey = 10
	// LeanBitsPerKey is what a filter of a large run spends a key: at
	// millions of keys its filter is most of what the process keeps, and
	// a false pass costs only one read of a block.
	LeanBitsPerKey = 6
	probes         = 7
	blockWords     = 8 // 512 bits
)

// Filter is a blocked Bloom filter.
type Filter struct {
	words []uint64
}

// New is an empty filter sized for n keys at bitsPerKey bits each
// (BitsPerKey or LeanBitsPerKey).
func New(n, bitsPerKey int) *Filter {
	blocks := max(1, (n*bitsPerKey+511)/512)
	return &Filter{words: make([]uint64, blocks*blockWords)}
}

// Add puts the key whose hash is h in the filter.
func (f *Filter) Add(h [2]uint64) {
	b := f.block(h)
	x := h[1]
	for range probes {
		bit := x & 511
		x >>= 9
		f.words[b+int(bit>>6)] |= 1 << (bit & 63)
	}
}

// MayHave says whether the filter may hold the key whose hash is h: false
// is certain.
func (f *Filter) MayHave(h [2]uint64) bool {
	b := f.block(h)
	x := h[1]
	for range probes {
		bit := x & 511
		x >>= 9
		if f.words[b+int(bit>>6)]&(1<<(bit&63)) == 0 {
			return false
		}
	}
	return true
}

func (f *Filter) block(h [2]uint64) int {
	return int(h[0]%uint64(len(f.words)/blockWords)) * blockWords
}

// Bytes is what the filter keeps in memory.
func (f *Filter) Bytes() int { return len(f.words) * 8 }

// AppendBinary appends the filter as little-endian words (encoding.BinaryAppender).
func (f *Filter) AppendBinary(dst []byte) ([]byte, error) {
	for _, w := range f.words {
		dst = binary.LittleEndian.AppendUint64(dst, w)
	}
	return dst, nil
}

// Decode is the filter AppendBinary wrote as b; ok is false when b cannot
// be one (empty, or not whole blocks).
func Decode(b []byte) (f *Filter, ok bool) {
	if len(b) == 0 || len(b)%(blockWords*8) != 0 {
		return nil, false
	}
	f = &Filter{words: make([]uint64, len(b)/8)}
	for i := range f.words {
		f.words[i] = binary.LittleEndian.Uint64(b[i*8:])
	}
	return f, true
}
