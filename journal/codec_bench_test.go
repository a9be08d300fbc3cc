package journal

import (
	"bytes"
	stdjson "encoding/json"
	"strconv"
	"testing"

	segjson "github.com/segmentio/encoding/json"
)

// benchCodec is one way of encoding and decoding a journal line's JSON:
// the journal's (github.com/segmentio/encoding/json, as appendLine and
// State.apply call it) and encoding/json's. The hand codec they replaced
// was measured so too (BENCHMARKS.md, "The journal's JSON codec").
type benchCodec struct {
	name   string
	decode func(js []byte, e *Entry) error
	encode func(dst []byte, e *Entry) ([]byte, error)
}

var benchCodecs = []benchCodec{
	{"segmentio",
		func(js []byte, e *Entry) error { return segjson.Unmarshal(js, e) },
		func(dst []byte, e *Entry) ([]byte, error) {
			return segjson.Append(dst, e, lineFlags)
		}},
	{"encoding-json",
		func(js []byte, e *Entry) error { return stdjson.Unmarshal(js, e) },
		func(dst []byte, e *Entry) ([]byte, error) {
			js, err := stdjson.Marshal(e)
			return append(dst, js...), err
		}},
}

// BenchmarkCodec decodes, then encodes, the lines of a journal of
// 1,000,000 sub-requests (10,000 batches of 100: an intent, an outcome
// and 20 committed records each) with each codec: the JSON alone, without
// the checksum, the chain or the replay's bookkeeping.
func BenchmarkCodec(b *testing.B) {
	data := genJournal(b, 1_000_000)
	var lines [][]byte
	for l := range bytes.SplitSeq(bytes.TrimSuffix(data, []byte("\n")), []byte("\n")) {
		lines = append(lines, l[9:])
	}
	entries := make([]Entry, len(lines))
	for i, l := range lines {
		if err := stdjson.Unmarshal(l, &entries[i]); err != nil {
			b.Fatal(err)
		}
	}
	for _, c := range benchCodecs {
		b.Run("decode/"+c.name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				for _, l := range lines {
					var e Entry
					if err := c.decode(l, &e); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
	for _, c := range benchCodecs {
		b.Run("encode/"+c.name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			buf := make([]byte, 0, 64<<10)
			for b.Loop() {
				for i := range entries {
					var err error
					if buf, err = c.encode(buf[:0], &entries[i]); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}

// BenchmarkAppendBatch is the journal's CPU in apply for one batch of 100
// sub-requests: its intent, its outcome and its 20 committed records
// encoded, written (without an fsync) and decoded again into the live
// state, as Append does.
func BenchmarkAppendBatch(b *testing.B) {
	j, err := Create(b.TempDir()+"/run.journal", Header{PlanHash: "x"})
	if err != nil {
		b.Fatal(err)
	}
	defer j.Close()
	lines := bytes.Split(bytes.TrimSuffix(genJournal(b, 100), []byte("\n")), []byte("\n"))[1:]
	entries := make([]Entry, len(lines))
	for i, l := range lines {
		if err := stdjson.Unmarshal(l[9:], &entries[i]); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		n := j.NextBatch()
		entries[0].Batch, entries[1].Batch = n, n
		for i := range entries {
			if r := entries[i].Record; r != nil {
				r.ID = entries[0].Subs[0].Rec + "-" + strconv.Itoa(n) + "-" + strconv.Itoa(i)
			}
		}
		if err := j.AppendUnsynced(entries...); err != nil {
			b.Fatal(err)
		}
	}
}
