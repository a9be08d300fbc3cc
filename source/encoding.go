package source

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/unicode"
	"golang.org/x/text/transform"
)

// charsets are the encodings a CSV source may declare: the canonical name
// first (what Encodings lists and the plan keeps), then the other names it
// goes by. Every name is matched as EncodingName normalises it. utf-8 is
// Nop so invalid bytes reach the reader, which reports them with their
// line instead of silently replacing them. The plan's decoder and its JSON
// Schema take their encodings from here.
var charsets = []struct {
	names []string
	enc   encoding.Encoding
}{
	{[]string{"utf-8"}, encoding.Nop},
	{[]string{"utf-16"}, unicode.UTF16(unicode.LittleEndian, unicode.UseBOM)},
	{[]string{"utf-16le"}, unicode.UTF16(unicode.LittleEndian, unicode.UseBOM)},
	{[]string{"utf-16be"}, unicode.UTF16(unicode.BigEndian, unicode.UseBOM)},
	{[]string{"windows-1255", "cp1255"}, charmap.Windows1255},
	{[]string{"windows-1252", "cp1252"}, charmap.Windows1252},
	{[]string{"iso-8859-8", "iso-8859-8-i", "hebrew"}, charmap.ISO8859_8},
	{[]string{"iso-8859-1", "latin1"}, charmap.ISO8859_1},
}

// encodings maps normalised names (normaliseEncodingName) to charsets.
var encodings = func() map[string]int {
	m := map[string]int{}
	for i, c := range charsets {
		for _, n := range c.names {
			m[normaliseEncodingName(n)] = i
		}
	}
	return m
}()

// Encodings are the canonical names of the encodings a source may declare.
func Encodings() []string {
	out := make([]string, len(charsets))
	for i, c := range charsets {
		out[i] = c.names[0]
	}
	return out
}

// EncodingSpellings are every name of every encoding as normaliseEncodingName
// leaves it (utf8, cp1255, hebrew): a spelling is accepted when it is one of
// these once lower-cased and stripped of '-', '_' and spaces.
func EncodingSpellings() []string {
	var out []string
	for _, c := range charsets {
		for _, n := range c.names {
			out = append(out, normaliseEncodingName(n))
		}
	}
	return out
}

// EncodingName is the canonical name of an encoding written any way a
// source accepts (UTF8, cp1255, Windows_1255), or false.
func EncodingName(name string) (string, bool) {
	i, ok := encodings[normaliseEncodingName(name)]
	if !ok {
		return "", false
	}
	return charsets[i].names[0], true
}

// unknownEncoding says what to write instead of name.
func unknownEncoding(name string) string {
	names := Encodings()
	return fmt.Sprintf("unknown encoding %q: use %s or %s", name, strings.Join(names[:len(names)-1], ", "), names[len(names)-1])
}

func normaliseEncodingName(name string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case '-', '_', ' ':
			return -1
		}
		return r
	}, strings.ToLower(strings.TrimSpace(name)))
}

// decoder wraps r so it yields UTF-8. A byte-order mark wins over the
// declared encoding: UTF-8's is dropped, UTF-16's selects UTF-16 LE or BE.
func decoder(r io.Reader, name string) (io.Reader, bool, error) {
	n := normaliseEncodingName(name)
	if n == "" {
		n = "utf8"
	}
	i, ok := encodings[n]
	if !ok {
		return nil, false, errors.New(unknownEncoding(name))
	}
	return transform.NewReader(r, unicode.BOMOverride(charsets[i].enc.NewDecoder())), n == "utf8", nil
}
