package sandbox

import (
	"fmt"
	"strconv"
	"strings"
)

// segment is one step of a resource path: a name and an optional key
// (spec 2.5): one value, or name=value pairs for a composite key.
type segment struct {
	name     string
	brackets bool // written as [NAME] (text sub-forms before 20.0)
	hasKey   bool
	key      []keyPart
}

type keyPart struct {
	name  string // empty for a single unnamed value
	value any    // string or int64
}

// splitPath splits a resource path on "/" outside quoted key strings.
func splitPath(p string) []string {
	var out []string
	start, inQuote := 0, false
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '\'':
			inQuote = !inQuote // '' inside a string toggles twice: harmless
		case '/':
			if !inQuote {
				out = append(out, p[start:i])
				start = i + 1
			}
		}
	}
	return append(out, p[start:])
}

func parseSegment(s string) (segment, error) {
	var seg segment
	name, rest, hasKey := strings.Cut(s, "(")
	if strings.HasPrefix(name, "[") && strings.HasSuffix(name, "]") && len(name) > 2 {
		name, seg.brackets = name[1:len(name)-1], true
	}
	seg.name = name
	if name == "" {
		return seg, fmt.Errorf("empty path segment in %q", s)
	}
	if !hasKey {
		return seg, nil
	}
	if !strings.HasSuffix(rest, ")") {
		return seg, fmt.Errorf("key of %q: missing closing parenthesis", s)
	}
	keys, err := parseKey(rest[:len(rest)-1])
	if err != nil {
		return seg, fmt.Errorf("key of %q: %v", s, err)
	}
	seg.hasKey, seg.key = true, keys
	return seg, nil
}

// parseKey reads 'A', 12, or F1='A',F2=2.
func parseKey(s string) ([]keyPart, error) {
	var parts []keyPart
	for s != "" {
		var kp keyPart
		if i := strings.IndexAny(s, "='"); i > 0 && s[i] == '=' {
			kp.name, s = strings.TrimSpace(s[:i]), s[i+1:]
		}
		v, rest, err := parseLiteral(s)
		if err != nil {
			return nil, err
		}
		kp.value = v
		parts = append(parts, kp)
		rest = strings.TrimSpace(rest)
		if rest == "" {
			break
		}
		if rest[0] != ',' {
			return nil, fmt.Errorf("unexpected %q", rest)
		}
		s = strings.TrimSpace(rest[1:])
		if s == "" {
			return nil, fmt.Errorf("trailing comma")
		}
	}
	if len(parts) == 0 {
		return nil, fmt.Errorf("empty key")
	}
	if len(parts) > 1 {
		for _, p := range parts {
			if p.name == "" {
				return nil, fmt.Errorf("a composite key needs NAME=value pairs")
			}
		}
	}
	return parts, nil
}

// parseLiteral reads a quoted string (” escapes a quote) or an integer from
// the start of s and returns the rest.
func parseLiteral(s string) (any, string, error) {
	s = strings.TrimLeft(s, " ")
	if strings.HasPrefix(s, "'") {
		var b strings.Builder
		for i := 1; i < len(s); i++ {
			if s[i] == '\'' {
				if i+1 < len(s) && s[i+1] == '\'' {
					b.WriteByte('\'')
					i++
					continue
				}
				return b.String(), s[i+1:], nil
			}
			b.WriteByte(s[i])
		}
		return nil, "", fmt.Errorf("unterminated string")
	}
	end := 0
	for end < len(s) && (s[end] == '-' || s[end] >= '0' && s[end] <= '9') {
		end++
	}
	n, err := strconv.ParseInt(s[:end], 10, 64)
	if err != nil {
		return nil, "", fmt.Errorf("want a quoted string or an integer at %q", s)
	}
	return n, s[end:], nil
}

// formatKey writes a key as a URL segment suffix: ('A') or (F1='A',F2=2).
func formatKey(names []string, vals []any) string {
	var b strings.Builder
	b.WriteByte('(')
	for i, v := range vals {
		if i > 0 {
			b.WriteByte(',')
		}
		if len(vals) > 1 {
			b.WriteString(names[i] + "=")
		}
		switch x := v.(type) {
		case string:
			b.WriteString("'" + strings.ReplaceAll(x, "'", "''") + "'")
		default:
			fmt.Fprint(&b, x)
		}
	}
	b.WriteByte(')')
	return b.String()
}
