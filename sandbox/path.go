package sandbox

import (
	"fmt"
	"strings"

	"github.com/migrate-tool/migrate/odata"
)

// segment is one step of a resource path as odata.ParsePath reads it (the
// client's own grammar, docs/service.md, Keys), with the square brackets text
// sub-forms took before 20.0.
type segment struct {
	name     string
	brackets bool // written as [NAME] (text sub-forms before 20.0)
	hasKey   bool
	key      []odata.KeyPart
}

// parsePath reads an unescaped resource path into its segments.
func parsePath(p string) ([]segment, error) {
	segs, err := odata.ParsePath(p)
	if err != nil {
		return nil, err
	}
	if len(segs) == 0 {
		return nil, fmt.Errorf("empty path %q", p)
	}
	out := make([]segment, len(segs))
	for i, s := range segs {
		if s.Ref != "" {
			return nil, fmt.Errorf("$%s can only start a sub-request's URL", s.Ref)
		}
		seg := segment{name: s.Name, hasKey: s.HasKey, key: s.Key}
		if strings.HasPrefix(seg.name, "[") && strings.HasSuffix(seg.name, "]") && len(seg.name) > 2 {
			seg.name, seg.brackets = seg.name[1:len(seg.name)-1], true
		}
		out[i] = seg
	}
	return out, nil
}

// formatKey writes a key as a path writes it after the set: ('A') or
// (F1='A',F2=2), raw as in messages and @odata.id (Location escapes it:
// odata.EscapePath).
func formatKey(names []string, vals []any) string {
	k, err := odata.FormatKey(names, vals)
	if err != nil {
		return "(" + err.Error() + ")" // a stored row always has its key
	}
	return k
}
