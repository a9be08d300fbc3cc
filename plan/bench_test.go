package plan

import (
	"os"
	"testing"
)

func BenchmarkDecodeFormatExample(b *testing.B) {
	data, err := os.ReadFile("testdata/good/format-example-complete.yaml")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, ds := Decode("plan.yaml", data); len(ds) != 0 {
			b.Fatal(ds)
		}
	}
}

func BenchmarkDecodeSyntaxError(b *testing.B) {
	data, err := os.ReadFile("testdata/good/format-example-complete.yaml")
	if err != nil {
		b.Fatal(err)
	}
	data = append(data, "\n  - name: [unclosed\n"...)
	b.ReportAllocs()
	for b.Loop() {
		if _, ds := Decode("plan.yaml", data); len(ds) != 1 {
			b.Fatal(ds)
		}
	}
}
