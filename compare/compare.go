package compare

import (
	"encoding/json"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/migrate-tool/migrate/odata"
)

// Value reports whether got (what the server holds, as its JSON gives it
// or odata.DecodeValue typed it) and want (what was written) are the same
// value of the field p, by p's type: Int64 and Decimal numerically, in any
// form (json.Number, a string as IEEE754Compatible answers, int64,
// odata.Decimal), after rounding both to a declared Scale as the server
// stores it; DateTimeOffset as instants, a date-only field (DateOnly,
// Edm.Date) by its day; Boolean as true or false; String as its text. Null
// and empty text are the same (a blank String reads back as either).
//
// With p nil (a field the metadata does not know), or a value that does
// not read as p's type, the rule is untyped: numbers numerically (a string
// that reads as a number equals that number), text that reads as a
// DateTimeOffset as an instant, other text and booleans as they are, a
// nested object or list as its JSON.
func Value(p *odata.Property, got, want any) bool {
	if blank(got) || blank(want) {
		return blank(got) && blank(want)
	}
	if p != nil {
		if same, typed := typedValue(p, got, want); typed {
			return same
		}
	}
	return untyped(got, want)
}

// typedValue is Value by p's type; typed is false when p's type is not one
// it knows or a value does not read as it.
func typedValue(p *odata.Property, got, want any) (same, typed bool) {
	if p.Type.Numeric() {
		g, ok1 := Number(p, got)
		w, ok2 := Number(p, want)
		if !ok1 || !ok2 {
			return false, false
		}
		return g.Cmp(w) == 0, true
	}
	switch p.Type {
	case odata.EdmDateTimeOffset, odata.EdmDate:
		g, ok1 := decoded[time.Time](odata.EdmDateTimeOffset, got)
		w, ok2 := decoded[time.Time](odata.EdmDateTimeOffset, want)
		if !ok1 || !ok2 {
			return false, false
		}
		if p.DateOnly || p.Type == odata.EdmDate {
			// The server keeps the day, in its own time zone, which may
			// be UTC or the sender's (docs/servers.md, Metadata).
			const day = "2006-01-02"
			return g.Format(day) == w.Format(day) || g.Format(day) == w.UTC().Format(day), true
		}
		return g.Equal(w), true
	case odata.EdmBoolean:
		g, ok1 := decoded[bool](p.Type, got)
		w, ok2 := decoded[bool](p.Type, want)
		if !ok1 || !ok2 {
			return false, false
		}
		return g == w, true
	case odata.EdmString:
		g, ok1 := got.(string)
		w, ok2 := want.(string)
		if !ok1 || !ok2 {
			return false, false
		}
		return g == w, true
	case odata.EdmTimeOfDay:
		// 15:04 and 15:04:05.000 are the same time.
		g, ok1 := got.(string)
		w, ok2 := want.(string)
		if !ok1 || !ok2 {
			return false, false
		}
		gt, err1 := odata.ParseTimeOfDay(g)
		wt, err2 := odata.ParseTimeOfDay(w)
		if err1 != nil || err2 != nil {
			return false, false
		}
		return gt.Equal(wt), true
	case odata.EdmDuration:
		// PT1H and PT60M last as long.
		g, ok1 := got.(string)
		w, ok2 := want.(string)
		if !ok1 || !ok2 {
			return false, false
		}
		gd, err1 := odata.ParseDuration(g)
		wd, err2 := odata.ParseDuration(w)
		if err1 != nil || err2 != nil {
			return false, false
		}
		return gd.Cmp(wd) == 0, true
	case odata.EdmGuid:
		// The same Guid in either case of its hexadecimal digits.
		g, ok1 := decoded[odata.Guid](p.Type, got)
		w, ok2 := decoded[odata.Guid](p.Type, want)
		if !ok1 || !ok2 {
			return false, false
		}
		return strings.EqualFold(string(g), string(w)), true
	}
	return false, false
}

// Number is v, a number in any form or a number's text, as the numeric
// field p stores it: rounded to p's Scale when it declares one and v has
// more digits after the point, as the server rounds a decimal
// (docs/servers.md, Metadata). Control totals sum
// it, so that both sides of a total round as the values compare.
func Number(p *odata.Property, v any) (odata.Decimal, bool) {
	d, ok := decoded[odata.Decimal](odata.EdmDecimal, v)
	if !ok || p == nil || !p.HasScale || d.Scale() <= p.Scale {
		return d, ok // as written: 31 stays 31, not 31.00
	}
	r, err := odata.ParseDecimal(d.Rat().FloatString(p.Scale), '.')
	return r, err == nil
}

// untyped is the rule without metadata.
func untyped(a, b any) bool {
	na, aNum := number(a)
	nb, bNum := number(b)
	switch {
	case aNum && bNum:
		return na.Cmp(nb) == 0
	case aNum || bNum:
		// IEEE754Compatible: a number may come back as its text.
		if s, ok := a.(string); ok && bNum {
			d, ok := numericText(s)
			return ok && d.Cmp(nb) == 0
		}
		if s, ok := b.(string); ok && aNum {
			d, ok := numericText(s)
			return ok && d.Cmp(na) == 0
		}
		return false
	}
	if sa, ok := a.(string); ok {
		if sb, ok := b.(string); ok && sa == sb {
			return true
		}
	}
	ta, aTime := timeValue(a)
	tb, bTime := timeValue(b)
	if aTime || bTime {
		return aTime && bTime && ta.Equal(tb)
	}
	switch a.(type) {
	case string, bool:
		return a == b
	}
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(ja) == string(jb)
}

func blank(v any) bool { return v == nil || v == "" }

// number is v as a Decimal when v is a number of any Go form (not text).
func number(v any) (odata.Decimal, bool) {
	switch x := v.(type) {
	case odata.Decimal:
		return x, true
	case json.Number:
		d, err := odata.ParseDecimal(string(x), '.')
		return d, err == nil
	case int64:
		return odata.DecimalFromInt(x), true
	case int:
		return odata.DecimalFromInt(int64(x)), true
	case float64:
		d, err := odata.ParseDecimal(strconv.FormatFloat(x, 'f', -1, 64), '.')
		return d, err == nil
	}
	return odata.Decimal{}, false
}

// numericText is a string that reads as a number, as a server honouring
// IEEE754Compatible writes an Int64 or Decimal: digits with an optional
// sign and point, spaces around (odata.ParseDecimal), no exponent.
func numericText(s string) (odata.Decimal, bool) {
	d, err := odata.ParseDecimal(s, '.')
	return d, err == nil
}

// decoded is v read as Edm type t (odata.DecodeValue): a Decimal from a
// number or a number's text, a time from a time or its text, a bool.
func decoded[T any](t odata.EdmType, v any) (T, bool) {
	var zero T
	d, err := odata.DecodeValue(t, v)
	if err != nil {
		return zero, false
	}
	x, ok := d.(T)
	return x, ok
}

// timeValue is v as an instant: a time.Time, or text in DateTimeOffset
// form; other text is not parsed.
func timeValue(v any) (time.Time, bool) {
	switch x := v.(type) {
	case time.Time:
		return x, true
	case string:
		if !looksLikeDate(x) {
			return time.Time{}, false // most texts: no parse, no error to allocate
		}
		t, err := odata.ParseDateTime(x)
		return t, err == nil
	}
	return time.Time{}, false
}

// looksLikeDate reports whether s starts as every DateTimeOffset does,
// YYYY-MM-DD: what does not cannot parse as one.
func looksLikeDate(s string) bool {
	s = strings.TrimSpace(s)
	if len(s) < 10 || s[4] != '-' || s[7] != '-' {
		return false
	}
	for _, i := range []int{0, 1, 2, 3, 5, 6, 8, 9} {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// Diff is a field whose value on the server is not what was written.
type Diff struct {
	Field string
	// Found is the server's value; Left, what was written (what the run
	// left there).
	Found, Left any
	// Absent: the answer does not hold the field at all (a field hidden
	// by field-level permissions is missing from read answers,
	// docs/servers.md, Reading), which is not a value.
	Absent bool
}

// Fields compares every field of want with the entity got, each by its
// property of t (nil: not known, the untyped rule), and returns those
// that differ, by field name.
func Fields(t *odata.EntityType, got, want map[string]any) []Diff {
	var out []Diff
	for k, wv := range want {
		gv, present := got[k]
		p := property(t, k)
		if !Value(p, gv, wv) {
			out = append(out, Diff{Field: k, Found: shown(p, gv), Left: wv, Absent: !present})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Field < out[j].Field })
	return out
}

// Same reports whether every field of want has the same value in got
// (Fields finds none); a want without fields is never the same, as it
// proves nothing.
func Same(t *odata.EntityType, got, want map[string]any) bool {
	if len(want) == 0 {
		return false
	}
	for k, wv := range want {
		if !Value(property(t, k), got[k], wv) {
			return false
		}
	}
	return true
}

// SameJSON is Same for an entity and the fields wanted as JSON bodies
// (what a read answers, what the journal keeps): false when either is
// not a JSON object.
func SameJSON(t *odata.EntityType, entity, want []byte) bool {
	if len(want) == 0 {
		return false
	}
	got, err := odata.DecodeEntity(entity)
	if err != nil {
		return false
	}
	w, err := odata.DecodeEntity(want)
	if err != nil {
		return false
	}
	return Same(t, got, w)
}

// shown is a server's value as its field's type reads it, for a person:
// an Int64 or Decimal given as a string (IEEE754Compatible) is shown as
// the number, as what was written is. Anything else is shown as it came.
func shown(p *odata.Property, v any) any {
	if s, ok := v.(string); ok && p != nil {
		switch p.Type {
		case odata.EdmInt64, odata.EdmDecimal:
			if _, err := odata.ParseDecimal(s, '.'); err == nil {
				return json.Number(strings.TrimSpace(s))
			}
		}
	}
	return v
}

func property(t *odata.EntityType, name string) *odata.Property {
	if t == nil {
		return nil
	}
	return t.Property(name)
}

// TextIn reports whether the content of text want is in text held: a text
// sub-form (docs/service.md, Text sub-forms) holds the whole text, and
// servers read it back normalised (odata.TextContent), so a text written is
// found by its content, never by its bytes. An empty text is found nowhere.
func TextIn(held, want string) bool {
	w := odata.TextContent(want)
	return w != "" && strings.Contains(odata.TextContent(held), w)
}

// SameText reports whether two texts say the same (odata.TextContent).
func SameText(a, b string) bool { return odata.TextContent(a) == odata.TextContent(b) }

// TextInJSON is TextIn for a text sub-form's body as read and the body
// written: the TEXT of want is in the TEXT of held.
func TextInJSON(held, want []byte) bool {
	var h, w struct{ TEXT string }
	if json.Unmarshal(held, &h) != nil || json.Unmarshal(want, &w) != nil {
		return false
	}
	return TextIn(h.TEXT, w.TEXT)
}

// LineMatch pairs the lines wanted with the lines a document holds.
type LineMatch struct {
	// Held[i] is the held line wanted line i is paired with, -1 when none.
	Held []int
	// Missing are the wanted lines no held line is the same as; Extra the
	// held lines no wanted line took. Both in order.
	Missing, Extra []int
}

// Complete reports whether every wanted line was found and nothing is
// left over.
func (m LineMatch) Complete() bool { return len(m.Missing) == 0 && len(m.Extra) == 0 }

// Lines pairs each wanted line with a distinct held line whose fields are
// all the same (Same, typed by t, the lines' type): as many as can be
// paired, the first fitting held line preferred, so that lines alike in
// every field written (two of one part) each find their own.
func Lines(t *odata.EntityType, held, want []map[string]any) LineMatch {
	fits := make([][]int, len(want))
	for i, w := range want {
		for j, h := range held {
			if Same(t, h, w) {
				fits[i] = append(fits[i], j)
			}
		}
	}
	return pair(len(held), fits)
}

// Differs are the fields of want that got holds with another value (or
// not at all), by Same's rule, in name order.
func Differs(t *odata.EntityType, got, want map[string]any) []string {
	var out []string
	for k, wv := range want {
		if !Value(property(t, k), got[k], wv) {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// Near pairs, after Lines, a wanted line left missing with a held line
// left over that holds every field of it but one, when each is the
// other's only such line: the server put its own value in that field (a
// name it fills from a reference). Only for lines of a document the run
// made, where every line is one it sent. It returns m with those pairs
// made and, by wanted line, the field each differs in.
func Near(t *odata.EntityType, held, want []map[string]any, m LineMatch) (LineMatch, map[int]string) {
	near := map[int][]int{}  // missing wanted line → extra held lines one field off
	taken := map[int][]int{} // extra held line → missing wanted lines one field off
	field := map[[2]int]string{}
	for _, i := range m.Missing {
		if len(want[i]) < 2 {
			continue // one field, left out, leaves nothing to pair on
		}
		for _, j := range m.Extra {
			if d := Differs(t, held[j], want[i]); len(d) == 1 {
				near[i] = append(near[i], j)
				taken[j] = append(taken[j], i)
				field[[2]int{i, j}] = d[0]
			}
		}
	}
	if len(near) == 0 {
		return m, nil
	}
	out := LineMatch{Held: slices.Clone(m.Held)}
	differs := map[int]string{}
	for i, js := range near {
		if len(js) == 1 && len(taken[js[0]]) == 1 {
			out.Held[i] = js[0]
			differs[i] = field[[2]int{i, js[0]}]
		}
	}
	paired := map[int]bool{}
	for i, j := range out.Held {
		if j >= 0 {
			paired[j] = true
		} else {
			out.Missing = append(out.Missing, i)
		}
	}
	for _, j := range m.Extra {
		if !paired[j] {
			out.Extra = append(out.Extra, j)
		}
	}
	return out, differs
}

// LinesJSON is Lines for lines as JSON bodies; a line that is not a JSON
// object is the same as none.
func LinesJSON(t *odata.EntityType, held, want []json.RawMessage) LineMatch {
	return Lines(t, DecodeAll(held), DecodeAll(want))
}

// DecodeAll decodes lines as JSON bodies, one a line: nil for one that is
// not a JSON object.
func DecodeAll(raws []json.RawMessage) []map[string]any {
	out := make([]map[string]any, len(raws))
	for i, r := range raws {
		out[i], _ = odata.DecodeEntity(r)
	}
	return out
}

// pair is a maximum matching of wanted lines to held ones (fits[i]: the
// held lines wanted line i may take), by augmenting paths: a wanted line
// that finds its fitting lines taken moves an earlier one to another it
// fits, so a greedy first choice never leaves a line unpaired that could
// be paired.
func pair(nHeld int, fits [][]int) LineMatch {
	m := LineMatch{Held: make([]int, len(fits))}
	owner := make([]int, nHeld) // held line → wanted line, -1 free
	for j := range owner {
		owner[j] = -1
	}
	var try func(i int, seen []bool) bool
	try = func(i int, seen []bool) bool {
		for _, j := range fits[i] {
			if seen[j] {
				continue
			}
			seen[j] = true
			if owner[j] < 0 || try(owner[j], seen) {
				owner[j] = i
				return true
			}
		}
		return false
	}
	for i := range fits {
		try(i, make([]bool, nHeld))
	}
	for i := range m.Held {
		m.Held[i] = -1
	}
	for j, i := range owner {
		if i < 0 {
			m.Extra = append(m.Extra, j)
		} else {
			m.Held[i] = j
		}
	}
	for i, j := range m.Held {
		if j < 0 {
			m.Missing = append(m.Missing, i)
		}
	}
	return m
}
