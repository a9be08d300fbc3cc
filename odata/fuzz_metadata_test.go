package odata

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// seedFiles are the contents of the files pattern matches: the seed
// corpus a fuzz test starts from.
func seedFiles(pattern string) [][]byte {
	files, _ := filepath.Glob(pattern)
	var out [][]byte
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			out = append(out, b)
		}
	}
	return out
}

// FuzzParseMetadata feeds untrusted documents to both metadata parsers.
// What parses must write and parse back to the same model.
func FuzzParseMetadata(f *testing.F) {
	for _, b := range seedFiles("testdata/metadata/*.xml") {
		f.Add(b)
	}
	f.Add([]byte(`<Edmx><DataServices><Schema Namespace="N"><EntityType Name="T"><Key><PropertyRef Name="A"/></Key><Property Name="A" Type="Edm.String" MaxLength="3"/></EntityType><EntityContainer Name="C"><EntitySet Name="T" EntityType="N.T"/></EntityContainer><Annotations Target="N.T/A"><Annotation Term="N.Mandatory"/></Annotations></Schema></DataServices></Edmx>`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ParseMetadata(bytes.NewReader(data))
		if err != nil {
			if !errors.Is(err, ErrBadMetadata) {
				t.Fatalf("error %v does not wrap ErrBadMetadata", err)
			}
		} else {
			var out bytes.Buffer
			if err := m.WriteXML(&out); err != nil {
				t.Fatal(err)
			}
			m2, err := ParseMetadata(bytes.NewReader(out.Bytes()))
			if err != nil {
				t.Fatalf("written document does not parse: %v\n%s", err, out.String())
			}
			if !sameMetadata(m, m2) {
				t.Fatalf("round trip differs:\n%s\nvs\n%s", dumpMetadata(m), dumpMetadata(m2))
			}
		}
		et, err := ParseEntityType(bytes.NewReader(data))
		if err != nil {
			if !errors.Is(err, ErrBadMetadata) {
				t.Fatalf("error %v does not wrap ErrBadMetadata", err)
			}
			return
		}
		var out bytes.Buffer
		if err := et.WriteXML(&out, "N"); err != nil {
			t.Fatal(err)
		}
		et2, err := ParseEntityType(bytes.NewReader(out.Bytes()))
		if err != nil {
			t.Fatalf("written fragment does not parse: %v\n%s", err, out.String())
		}
		if !sameType(et, et2) {
			t.Fatalf("fragment round trip differs\n%s", out.String())
		}
	})
}
