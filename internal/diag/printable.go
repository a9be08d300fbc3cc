package diag

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// Printable is s as a terminal may be shown it. Text from a server or a
// data file (a login name, a server's message, a cell) can hold escape
// sequences and carriage returns that clear the screen or forge a line:
// control characters are written as Go escapes (\x1b, \r,
// \u009b), so are the bidirectional overrides that reorder what is shown,
// and bytes that are not UTF-8 (\xff). Line feeds and tabs stay: a
// server's message may have several lines. JSON output needs none of this:
// encoding/json escapes control characters itself.
func Printable(s string) string {
	if !needsEscape(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n' || r == '\t':
			b.WriteRune(r)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case unsafeRune(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

func needsEscape(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x80 {
			// The rare case: look rune by rune.
			for _, r := range s[i:] {
				if r == utf8.RuneError || r < 0x20 && r != '\n' && r != '\t' || r == 0x7f || unsafeRune(r) {
					return true
				}
			}
			return false
		}
		if c < 0x20 && c != '\n' && c != '\t' || c == 0x7f {
			return true
		}
	}
	return false
}

// unsafeRune is a C1 control (0x9b starts an escape sequence on many
// terminals) or a bidirectional override or isolate.
func unsafeRune(r rune) bool {
	return r >= 0x80 && r < 0xa0 || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069
}

// PrintableWriter passes what is written to w through Printable: for a
// human view, all of whose output is for a terminal. Each Write is escaped
// by itself, so a write must not split a character (fmt and tabwriter
// never do).
func PrintableWriter(w io.Writer) io.Writer { return printableWriter{w} }

type printableWriter struct{ w io.Writer }

func (p printableWriter) Write(b []byte) (int, error) {
	s := string(b)
	if !needsEscape(s) {
		return p.w.Write(b)
	}
	if _, err := io.WriteString(p.w, Printable(s)); err != nil {
		return 0, err
	}
	return len(b), nil
}
