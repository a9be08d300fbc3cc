package source

import (
	"fmt"
	"io"
	"strings"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/unicode"
	"golang.org/x/text/transform"
)

// encodings maps normalised names (lower case, without '-', '_' and spaces)
// to decoders. utf8 is Nop so invalid bytes reach the reader, which reports
// them with their line instead of silently replacing them.
var encodings = map[string]encoding.Encoding{
	"utf8":        encoding.Nop,
	"utf16":       unicode.UTF16(unicode.LittleEndian, unicode.UseBOM),
	"utf16le":     unicode.UTF16(unicode.LittleEndian, unicode.UseBOM),
	"utf16be":     unicode.UTF16(unicode.BigEndian, unicode.UseBOM),
	"windows1255": charmap.Windows1255,
	"cp1255":      charmap.Windows1255,
	"iso88598":    charmap.ISO8859_8,
	"iso88598i":   charmap.ISO8859_8,
	"hebrew":      charmap.ISO8859_8,
	"windows1252": charmap.Windows1252,
	"cp1252":      charmap.Windows1252,
	"iso88591":    charmap.ISO8859_1,
	"latin1":      charmap.ISO8859_1,
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
	enc, ok := encodings[n]
	if !ok {
		return nil, false, fmt.Errorf("unknown encoding %q: use utf-8, utf-16, windows-1255, iso-8859-8 or windows-1252", name)
	}
	return transform.NewReader(r, unicode.BOMOverride(enc.NewDecoder())), n == "utf8", nil
}
