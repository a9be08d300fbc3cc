package odata

import (
	"encoding/json"
	"slices"
	"unicode/utf8"
)

// A $batch answer to 100 deep inserts carries every line back,
// and encoding/json went over each byte five or six times (the envelope,
// each response, then each entity into maps of every field). jsonScan reads
// such a body once, validating as it goes, and keeps only what the caller
// asks for. It takes the plain road only: anything it does not handle
// exactly as encoding/json would (a nesting deeper than maxScanDepth)
// stops it, and the caller decodes with encoding/json instead, which also
// words the errors.

// maxScanDepth bounds the scanner's recursion; deeper bodies go to
// encoding/json.
const maxScanDepth = 200

// jsonScan reads JSON text from s; every string it returns is a substring
// of s unless it held an escape.
type jsonScan struct {
	s  string
	i  int
	ok bool // false once the text is not what the scanner handles
}

func (p *jsonScan) fail() bool { p.ok = false; return false }

func (p *jsonScan) ws() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// lit consumes c after whitespace.
func (p *jsonScan) lit(c byte) bool {
	p.ws()
	if p.i < len(p.s) && p.s[p.i] == c {
		p.i++
		return true
	}
	return false
}

// peek is the next byte after whitespace, 0 at the end.
func (p *jsonScan) peek() byte {
	p.ws()
	if p.i < len(p.s) {
		return p.s[p.i]
	}
	return 0
}

// str reads a string as encoding/json decodes it.
func (p *jsonScan) str() (string, bool) {
	if !p.lit('"') {
		return "", p.fail()
	}
	start, plain := p.i, true
	for p.i < len(p.s) {
		c := p.s[p.i]
		if plainByte[c] { // most of every answer: one look a byte
			p.i++
			continue
		}
		switch {
		case c == '"':
			v := p.s[start:p.i]
			p.i++
			if plain {
				return v, true
			}
			// An escape, or bytes that may not be UTF-8 (which encoding/json
			// replaces): its own decoding, rare in answers.
			var out string
			if json.Unmarshal([]byte(p.s[start-1:p.i]), &out) != nil {
				return "", p.fail()
			}
			return out, true
		case c == '\\':
			plain = false
			p.i++
			if p.i >= len(p.s) {
				return "", p.fail()
			}
			switch p.s[p.i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				p.i++
			case 'u':
				if p.i+5 > len(p.s) {
					return "", p.fail()
				}
				for _, h := range []byte(p.s[p.i+1 : p.i+5]) {
					if !isHex(h) {
						return "", p.fail()
					}
				}
				p.i += 5
			default:
				return "", p.fail()
			}
		case c < 0x20:
			return "", p.fail()
		case c >= utf8.RuneSelf:
			r, n := utf8.DecodeRuneInString(p.s[p.i:])
			if r == utf8.RuneError && n == 1 {
				plain = false
			}
			p.i += n
		default:
			p.i++
		}
	}
	return "", p.fail()
}

// plainByte marks the bytes a string holds as they are: printable ASCII
// but the quote and the backslash.
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// num reads a number literal by JSON's grammar, as its text.
func (p *jsonScan) num() (string, bool) {
	p.ws()
	s, start := p.s, p.i
	digits := func() bool {
		n := p.i
		for p.i < len(s) && '0' <= s[p.i] && s[p.i] <= '9' {
			p.i++
		}
		return p.i > n
	}
	if p.i < len(s) && s[p.i] == '-' {
		p.i++
	}
	switch {
	case p.i < len(s) && s[p.i] == '0':
		p.i++
	case !digits():
		return "", p.fail()
	}
	if p.i < len(s) && s[p.i] == '.' {
		p.i++
		if !digits() {
			return "", p.fail()
		}
	}
	if p.i < len(s) && (s[p.i] == 'e' || s[p.i] == 'E') {
		p.i++
		if p.i < len(s) && (s[p.i] == '+' || s[p.i] == '-') {
			p.i++
		}
		if !digits() {
			return "", p.fail()
		}
	}
	return s[start:p.i], true
}

// word consumes true, false or null.
func (p *jsonScan) word(w string) bool {
	if len(p.s)-p.i >= len(w) && p.s[p.i:p.i+len(w)] == w {
		p.i += len(w)
		return true
	}
	return p.fail()
}

// object calls field for each member of an object; field reads the value.
func (p *jsonScan) object(field func(k string) bool) bool {
	if !p.lit('{') {
		return p.fail()
	}
	if p.lit('}') {
		return true
	}
	for {
		k, ok := p.str()
		if !ok || !p.lit(':') || !field(k) {
			return p.fail()
		}
		if p.lit('}') {
			return true
		}
		if !p.lit(',') {
			return p.fail()
		}
	}
}

// array calls elem for each element of an array; elem reads it.
func (p *jsonScan) array(elem func() bool) bool {
	if !p.lit('[') {
		return p.fail()
	}
	if p.lit(']') {
		return true
	}
	for {
		if !elem() {
			return p.fail()
		}
		if p.lit(']') {
			return true
		}
		if !p.lit(',') {
			return p.fail()
		}
	}
}

// skip reads past one value, validating it.
func (p *jsonScan) skip(depth int) bool {
	if depth > maxScanDepth {
		return p.fail()
	}
	switch c := p.peek(); c {
	case '{':
		return p.object(func(string) bool { return p.skip(depth + 1) })
	case '[':
		return p.array(func() bool { return p.skip(depth + 1) })
	case '"':
		_, ok := p.str()
		return ok
	case 't':
		return p.word("true")
	case 'f':
		return p.word("false")
	case 'n':
		return p.word("null")
	default:
		_, ok := p.num()
		return ok
	}
}

// value decodes one value as encoding/json does into an any with
// UseNumber, keeping of each object only what keep projects (all of it
// when keep is nil).
func (p *jsonScan) value(depth int, keep *Projection) (any, bool) {
	if depth > maxScanDepth {
		return nil, p.fail()
	}
	switch c := p.peek(); c {
	case '{':
		m := map[string]any{}
		ok := p.object(func(k string) bool {
			sub, kept := keep.member(k)
			if !kept {
				return p.skip(depth + 1)
			}
			v, ok := p.value(depth+1, sub)
			m[k] = v
			return ok
		})
		return m, ok
	case '[':
		l := []any{}
		ok := p.array(func() bool {
			v, ok := p.value(depth+1, keep)
			l = append(l, v)
			return ok
		})
		return l, ok
	case '"':
		return p.str()
	case 't':
		return true, p.word("true")
	case 'f':
		return false, p.word("false")
	case 'n':
		return nil, p.word("null")
	default:
		n, ok := p.num()
		return json.Number(n), ok
	}
}

// compactJSON reports whether b is one valid JSON value without a space
// outside its strings: what json.Compact gives back unchanged.
func compactJSON(b []byte) bool {
	in := false
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			in = !in
		case c == '\\' && in:
			i++ // the escaped byte
		case !in && (c == ' ' || c == '\t' || c == '\n' || c == '\r'):
			return false
		}
	}
	p := jsonScan{s: string(b), ok: true}
	return p.skip(0) && p.i == len(p.s)
}

// A Projection names what a decode keeps of an entity: the properties in
// Fields and the sub-forms in Navs, each line (or the one entity) of a
// sub-form projected in turn. A nil *Projection keeps everything.
type Projection struct {
	Fields []string
	Navs   map[string]*Projection
}

// member says whether k is kept, and what is kept of its value.
func (p *Projection) member(k string) (*Projection, bool) {
	if p == nil {
		return nil, true
	}
	if sub, ok := p.Navs[k]; ok {
		return sub, true
	}
	return nil, slices.Contains(p.Fields, k)
}
