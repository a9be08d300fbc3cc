package plan

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/migrate-tool/migrate/internal/diag"
	"github.com/migrate-tool/migrate/internal/didyoumean"
	"go.yaml.in/yaml/v3"
)

// maxNodes bounds how many YAML nodes the decoder visits, aliases expanded
// (a "billion laughs" document is tiny on disk and enormous once expanded).
const maxNodes = 200_000

// overflowMessage begins the one diagnostic of a walk past maxNodes.
const overflowMessage = "the plan is too large"

// MaxSteps bounds the steps of a plan: a plan is one load, and a load of
// thousands of entities is several loads, each with its own journal.
const MaxSteps = 1000

// walker turns yaml.Node trees into positions, typed values and
// diagnostics that speak of keys and values, never of Go types.
type walker struct {
	file  string
	lines []string // the file's lines, for block scalar positions
	runes [][]rune // lines in characters, as runeLine converts them
	diags
	visited  int
	overflow bool
	aliased  bool // an alias was followed: the size may come from expanding it
}

// entry is one key of a mapping, aliases and merge keys resolved.
type entry struct {
	key  string
	kpos Pos
	val  *yaml.Node // resolved; never an alias
}

// fields is a decoded mapping: its entries in order and by key.
type fields struct {
	pos     Pos
	entries []entry
	byKey   map[string]entry
	// suggested holds the keys an unknown key was taken for ("sorce":
	// "source"); require does not report those missing a second time.
	suggested map[string]bool
}

// spans returns where each key and value stand.
func (w *walker) spans(f *fields) Spans {
	if len(f.entries) == 0 {
		return nil
	}
	out := make(Spans, len(f.entries))
	for _, e := range f.entries {
		out[e.key] = Span{Key: e.kpos, Value: w.pos(e.val)}
	}
	return out
}

func (f *fields) get(key string) (entry, bool) {
	e, ok := f.byKey[key]
	return e, ok
}

func (w *walker) pos(n *yaml.Node) Pos {
	if n == nil {
		return Pos{File: w.file}
	}
	return Pos{File: w.file, Line: n.Line, Col: n.Column}
}

// resolve follows aliases and counts the node against the budget. It
// returns nil once the budget is spent (one diagnostic says so).
func (w *walker) resolve(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode; i++ {
		if i > 100 {
			return nil
		}
		n = n.Alias
		w.aliased = true
	}
	if n == nil {
		return nil
	}
	w.visited++
	if w.visited > maxNodes {
		if !w.overflow {
			w.overflow = true
			if w.aliased {
				w.errorf(w.pos(n), "%s once its aliases (*name) are expanded (more than %d keys and values); write it out without so many aliases", overflowMessage, maxNodes)
			} else {
				w.errorf(w.pos(n), "%s: more than %d keys and values; split the load into several plans", overflowMessage, maxNodes)
			}
		}
		return nil
	}
	return n
}

// describe names a value for a message: its text, or what kind it is.
func describe(n *yaml.Node) string {
	if n == nil {
		return "empty"
	}
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if n.ShortTag() == "!!null" {
			return "empty"
		}
		return quote(n.Value)
	}
	return "an unexpected value"
}

// quote quotes s for a message, shortened when long.
func quote(s string) string { return diag.Quote(s, 60) }

func isNull(n *yaml.Node) bool {
	return n == nil || n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

// mapping decodes a mapping node. what names the mapping in messages
// ("step \"parts\""). allowed lists its keys; nil allows any (a map of
// names). It reports unknown keys with a suggestion, duplicates, and keys
// that are not text. ok is false when n is not a mapping at all.
func (w *walker) mapping(n *yaml.Node, what string, allowed []string) (*fields, bool) {
	n = w.resolve(n)
	if n == nil {
		return &fields{byKey: map[string]entry{}}, false
	}
	f := &fields{pos: w.pos(n), byKey: map[string]entry{}}
	if n.Kind != yaml.MappingNode {
		w.errorf(w.pos(n), "%s must be a mapping of keys, not %s", what, describe(n))
		return f, false
	}
	explicit := map[string]bool{}
	w.collect(n, what, allowed, f, explicit, 0)
	return f, true
}

func (w *walker) collect(n *yaml.Node, what string, allowed []string, f *fields, explicit map[string]bool, depth int) {
	var merges []*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		kn, vn := n.Content[i], n.Content[i+1]
		kn = w.resolve(kn)
		if kn == nil {
			return
		}
		if kn.Kind == yaml.ScalarNode && kn.ShortTag() == "!!merge" {
			merges = append(merges, vn)
			continue
		}
		if kn.Kind != yaml.ScalarNode || isNull(kn) {
			w.errorf(w.pos(kn), "a key in %s must be a name, not %s", what, describe(kn))
			continue
		}
		key := kn.Value
		kpos := w.pos(kn)
		if depth == 0 {
			if prev, dup := f.byKey[key]; dup && explicit[key] {
				w.errorf(kpos, "duplicate key %q in %s (first written on line %d)", key, what, prev.kpos.Line)
				continue
			}
		} else if _, seen := f.byKey[key]; seen {
			// An explicit key overrides a merged one (YAML merge rules).
			continue
		}
		if allowed != nil && !slices.Contains(allowed, key) && secretKeys[strings.ToLower(key)] {
			// No key near it is where a secret goes (token is not token_url).
			w.errorf(kpos, "unknown key %q in %s: secrets never go in the plan; set them in the environment (docs/cli.md, Environment)", key, what)
			continue
		}
		if allowed != nil && !slices.Contains(allowed, key) {
			w.errorf(kpos, "unknown key %q in %s%s", key, what, didyoumean.Hint(key, allowed))
			if s := didyoumean.Closest(key, allowed); s != "" {
				if f.suggested == nil {
					f.suggested = map[string]bool{}
				}
				f.suggested[s] = true
			}
			continue
		}
		vr := w.resolve(vn)
		if vr == nil {
			return
		}
		if depth == 0 {
			explicit[key] = true
		}
		e := entry{key: key, kpos: kpos, val: vr}
		f.byKey[key] = e
		f.entries = append(f.entries, e)
	}
	// Merge keys (<<: *defaults) add the keys not written explicitly.
	for _, m := range merges {
		m = w.resolve(m)
		if m == nil {
			return
		}
		if depth > 20 {
			w.errorf(w.pos(m), "merge keys (<<) in %s nest too deeply", what)
			return
		}
		switch m.Kind {
		case yaml.MappingNode:
			w.collect(m, what, allowed, f, explicit, depth+1)
		case yaml.SequenceNode:
			for _, s := range m.Content {
				s = w.resolve(s)
				if s == nil {
					return
				}
				if s.Kind != yaml.MappingNode {
					w.errorf(w.pos(s), "a merge key (<<) in %s takes mappings, not %s", what, describe(s))
					continue
				}
				w.collect(s, what, allowed, f, explicit, depth+1)
			}
		default:
			w.errorf(w.pos(m), "a merge key (<<) in %s takes a mapping, not %s", what, describe(m))
		}
	}
}

// sequence returns the items of a list node (aliases resolved). A null
// value is an empty list.
func (w *walker) sequence(n *yaml.Node, what string) ([]*yaml.Node, bool) {
	if isNull(n) {
		return nil, true
	}
	if n.Kind != yaml.SequenceNode {
		w.errorf(w.pos(n), "%s must be a list, not %s", what, describe(n))
		return nil, false
	}
	var out []*yaml.Node
	for _, c := range n.Content {
		c = w.resolve(c)
		if c == nil {
			break
		}
		out = append(out, c)
	}
	return out, true
}

func (w *walker) require(f *fields, what string, keys ...string) {
	for _, k := range keys {
		if _, ok := f.byKey[k]; !ok && !f.suggested[k] {
			w.errorf(f.pos, "missing key %q in %s", k, what)
		}
	}
}

// text reads a scalar as text. Numbers are accepted as their text (a sheet
// may be called 2024); lists, mappings, booleans and empty values are not.
func (w *walker) text(e entry) (string, bool) {
	n := e.val
	if n.Kind != yaml.ScalarNode || isNull(n) || n.ShortTag() == "!!bool" {
		w.errorf(w.pos(n), "%q must be text, not %s", e.key, describe(n))
		return "", false
	}
	return n.Value, true
}

// choice reads a scalar that must be one of the choices the format table
// gives the key in block.
func (w *walker) choice(e entry, block string) (string, bool) {
	return w.enum(e, formatKey(block, e.key).Enum...)
}

// enum reads a scalar that must be one of choices.
func (w *walker) enum(e entry, choices ...string) (string, bool) {
	n := e.val
	if n.Kind == yaml.ScalarNode && !isNull(n) && slices.Contains(choices, n.Value) {
		return n.Value, true
	}
	w.errorf(w.pos(n), "%q must be %s, not %s%s", e.key, orList(choices), describe(n), suggestScalar(n, choices))
	return "", false
}

func suggestScalar(n *yaml.Node, choices []string) string {
	if n.Kind != yaml.ScalarNode || isNull(n) {
		return ""
	}
	return didyoumean.Hint(n.Value, choices)
}

// bounds reads a whole number within the bounds the format table gives
// the key in block; one outside is a problem said with msg.
func (w *walker) bounds(e entry, block, msg string) (int, bool) {
	k := formatKey(block, e.key)
	return w.bounded(e, k.Min, k.Max, msg)
}

// bounded reads a whole number from min up to max (max 0: no upper bound);
// one outside is a problem at the value, said with msg (a format taking
// the number).
func (w *walker) bounded(e entry, min, max int, msg string) (int, bool) {
	v, ok := w.integer(e)
	if !ok {
		return 0, false
	}
	if v < min || max > 0 && v > max {
		w.errorf(w.pos(e.val), msg, v)
		return 0, false
	}
	return v, true
}

// integer reads a whole number (written bare or quoted).
func (w *walker) integer(e entry) (int, bool) {
	n := e.val
	if n.Kind == yaml.ScalarNode && !isNull(n) {
		if t := n.ShortTag(); t == "!!int" || t == "!!str" {
			v, err := strconv.ParseInt(strings.ReplaceAll(n.Value, "_", ""), 0, 64)
			if err == nil && v >= -1<<31 && v < 1<<31 {
				return int(v), true
			}
		}
	}
	w.errorf(w.pos(n), "%q must be a whole number, not %s", e.key, describe(n))
	return 0, false
}

// boolean reads true or false.
func (w *walker) boolean(e entry) (bool, bool) {
	n := e.val
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!bool" {
		switch strings.ToLower(n.Value) {
		case "true":
			return true, true
		case "false":
			return false, true
		}
	}
	w.errorf(w.pos(n), "%q must be true or false, not %s", e.key, describe(n))
	return false, false
}

// expr reads an expression, or a constant written bare or as {value: X}.
// what names the value in messages (`field "CUSTDES"`, `"when"`).
func (w *walker) expr(n *yaml.Node, what string) (Expr, bool) {
	switch n.Kind {
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!null":
			w.errorf(w.pos(n), "%s has no value; write an expression, or {value: ...} for a constant", what)
			return Expr{}, false
		case "!!str":
			src, p, cont := w.exprText(n)
			if strings.TrimSpace(src) == "" {
				w.errorf(w.pos(n), "%s is empty; write an expression, or {value: \"\"} for empty text", what)
				return Expr{}, false
			}
			return Expr{Src: src, Pos: p, contCol: cont, places: w.placeRunes(src, p.Line, p.Col, n.Style, cont)}, true
		default:
			return w.constant(n, what)
		}
	case yaml.MappingNode:
		f, _ := w.mapping(n, "the constant of "+what, []string{"value"})
		e, ok := f.get("value")
		if !ok {
			// A mapping with other keys had them reported as unknown.
			if len(n.Content) == 0 {
				w.errorf(w.pos(n), "%s is an empty mapping; write an expression, or {value: ...} for a constant", what)
			}
			return Expr{}, false
		}
		v := e.val
		if v.Kind != yaml.ScalarNode {
			w.errorf(w.pos(v), "the constant of %s must be text, a number or true/false, not %s", what, describe(v))
			return Expr{}, false
		}
		if isNull(v) {
			return Expr{IsConst: true, Pos: w.pos(v)}, true
		}
		if v.ShortTag() == "!!str" {
			return Expr{IsConst: true, Const: v.Value, ConstText: v.Value, Pos: w.pos(v)}, true
		}
		return w.constant(v, what)
	default:
		w.errorf(w.pos(n), "%s must be an expression or {value: ...}, not %s", what, describe(n))
		return Expr{}, false
	}
}

// constant reads a bare number, boolean or date.
func (w *walker) constant(n *yaml.Node, what string) (Expr, bool) {
	x := Expr{IsConst: true, ConstText: n.Value, Pos: w.pos(n)}
	switch n.ShortTag() {
	case "!!str", "!!timestamp":
		// A bare date (2024-01-31) stays text; the field's type decides.
		x.Const = n.Value
	case "!!bool":
		x.Const = strings.ToLower(n.Value) == "true"
	case "!!int":
		v, err := strconv.ParseInt(strings.ReplaceAll(n.Value, "_", ""), 0, 64)
		if err != nil {
			f, ferr := strconv.ParseFloat(strings.ReplaceAll(n.Value, "_", ""), 64)
			if ferr != nil {
				w.errorf(w.pos(n), "%s: %s is not a number that fits; write it as text with {value: %q}", what, describe(n), n.Value)
				return Expr{}, false
			}
			x.Const = f
		} else {
			x.Const = v
		}
	case "!!float":
		v, err := strconv.ParseFloat(strings.ReplaceAll(n.Value, "_", ""), 64)
		if err != nil {
			// .inf, .nan and friends.
			w.errorf(w.pos(n), "%s: %s is not a usable number", what, describe(n))
			return Expr{}, false
		}
		x.Const = v
	default:
		w.errorf(w.pos(n), "%s: the tag %s is not supported; write an expression, or {value: ...} for a constant", what, n.ShortTag())
		return Expr{}, false
	}
	return x, true
}

// exprText returns a string scalar's text with the position where it
// starts in the file and, for block scalars, the column of their lines.
func (w *walker) exprText(n *yaml.Node) (string, Pos, int) {
	p := w.pos(n)
	switch {
	case n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0:
		p.Col++
		return n.Value, p, p.Col
	case n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0:
		src := n.Value
		// Leading blank lines carry nothing; start at the first content line.
		line := n.Line + 1
		for strings.HasPrefix(src, "\n") {
			src = src[1:]
			line++
		}
		col := 1
		for l := line; l-1 < len(w.lines) && l >= 1; l++ {
			text := w.lines[l-1]
			trimmed := strings.TrimLeft(text, " ")
			if trimmed == "" {
				continue
			}
			col = utf8.RuneCountInString(text[:len(text)-len(trimmed)]) + 1
			line = l
			break
		}
		// With an indentation indicator (|2) the value keeps some of the
		// line's leading spaces: its first character starts earlier.
		col -= len(src) - len(strings.TrimLeft(src, " "))
		col = max(col, 1)
		return src, Pos{File: w.file, Line: line, Col: col}, col
	default:
		return n.Value, p, p.Col
	}
}

// orList writes "insert, upsert or update" (each quoted).
func orList(choices []string) string {
	q := make([]string, len(choices))
	for i, c := range choices {
		q[i] = fmt.Sprintf("%q", c)
	}
	if len(q) == 1 {
		return q[0]
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}

// secretKeys are keys a plan may be given in the belief that a secret goes
// there: refused without a suggestion.
var secretKeys = map[string]bool{"token": true, "password": true, "secret": true, "client_secret": true, "access_token": true, "app_key": true}

// textAt reads a scalar as text into *dst and its position into *pos,
// leaving both as they were when it is not text.
func (w *walker) textAt(e entry, dst *string, pos *Pos) {
	if v, ok := w.text(e); ok {
		*dst, *pos = v, w.pos(e.val)
	}
}

// optEntries reads a block that may be left empty (null): the entries of
// the mapping, or none when it is empty or not a mapping (reported).
func (w *walker) optEntries(e entry, what string) []entry {
	if isNull(e.val) {
		return nil
	}
	if f, ok := w.mapping(e.val, what, nil); ok {
		return f.entries
	}
	return nil
}

// namedEntries is optEntries less the entries whose name is empty, each
// reported with the message empty.
func (w *walker) namedEntries(e entry, what, empty string) []entry {
	var out []entry
	for _, fe := range w.optEntries(e, what) {
		if strings.TrimSpace(fe.key) == "" {
			w.errorf(fe.kpos, "%s", empty)
			continue
		}
		out = append(out, fe)
	}
	return out
}

// checkName reports the name of a source, lookup or map (kind) that holds
// other than letters, digits, "_" and "-".
func (w *walker) checkName(e entry, kind string) {
	if !nameRE.MatchString(e.key) {
		w.errorf(e.kpos, "%s name %s may hold only letters, digits, \"_\" and \"-\"", kind, quote(e.key))
	}
}

// exprAt reads an expression into *dst, which keeps its value when the
// expression is wrong (reported).
func (w *walker) exprAt(e entry, what string, dst **Expr) {
	if x, ok := w.expr(e.val, fmt.Sprintf("%s of %s", quote(e.key), what)); ok {
		*dst = &x
	}
}

// set stores what a reader returns in *dst when it read well:
// set(&s.Sheet)(w.text(e)). A value that did not read (reported) leaves
// *dst as it was.
func set[T any](dst *T) func(T, bool) {
	return func(v T, ok bool) {
		if ok {
			*dst = v
		}
	}
}
