package executor

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/migrate-tool/migrate/compare"
	"github.com/migrate-tool/migrate/journal"
	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/reconcile"
	"github.com/migrate-tool/migrate/transform"
)

// The lines of a delta load (docs/cli.md, Delta loads): the journal keeps,
// with each committed record, what each of its first-level sub-form
// children was written with (journal.WroteKid: a line's key as the server
// gave it and its fields as sent, a text's hash). A line of the sources
// now is matched with a line as loaded by its key fields, when the source
// gives every one of them, else by its place among the lines of its
// sub-form as loaded (the first with the first). A line whose fields
// changed is patched by its key, the changed fields only, its before-image
// read first; a line new in the sources is added to its parent's
// sub-form; a line gone from the sources is listed, never deleted. A text
// whose content changed is replaced whole (APPEND false: docs/service.md,
// Text sub-forms), the text the server held its before-image; a text new
// in the sources is added the same way; one gone is listed, never deleted.
// Another single-object sub-form (a ship-to address: its fields as sent
// are kept) is compared field by field and its changed fields patched on
// PARENT/NAV, the values the server held its before-image. A line's own
// single-object sub-forms (its text) are kept below it (WroteKid.Kids) and
// sent as a record's are, below the line by its key.

// DeltaLine is one line of a changed record: changed (Fields, patched by
// its key), new (added to its parent's sub-form), or gone from the sources
// (listed, never deleted); or one of its single-object sub-forms (a text,
// a ship-to address), or a line's.
type DeltaLine struct {
	Nav string
	// Parent names the line a line's own sub-form is of (NAV(KEY)); ""
	// for the record's.
	Parent string
	// Single is set for a single-object sub-form (a ship-to address, a
	// text): it has no key, and is addressed as PARENT/NAV.
	Single bool
	// Text is set for a text sub-form (a single object): its one field is
	// TEXT, compared by its content.
	Text bool
	// Key is the line's key as the server gave it ("" for a new line).
	Key string
	// Loc is the line's source row now ("" for a gone line).
	Loc       string
	New, Gone bool
	// Fields are the fields written differently now: was -> now; of a new
	// line, every field (was null).
	Fields []DeltaField

	path  string
	child *transform.Child
	was   journal.WroteKid
	// pnav and pkey are the sub-form and key of Parent.
	pnav, pkey string
}

// sends reports whether apply --delta sends the line: a new line, or a
// changed one the journal knows the key of (a single object has none).
func (l DeltaLine) sends() bool {
	return l.New || len(l.Fields) > 0 && (l.Key != "" || l.Single) && !l.Gone
}

// Name is the line as a listing names it: NAV(KEY), or NAV for a new one
// or a single object; a line's own sub-form below it (NAV(KEY)/NAV).
func (l DeltaLine) Name() string {
	name := l.Nav
	if l.Key != "" {
		name += "(" + l.Key + ")"
	}
	if l.Parent != "" {
		name = l.Parent + "/" + name
	}
	return name
}

// wroteKids is what a finished record's first-level sub-form children were
// written with, as the journal keeps it (journal.WroteKid): each line's
// key as the server gave it, its fields as sent and what the server filled
// in their place; each text's hash.
func wroteKids(w *work) json.RawMessage {
	cs := w.rec.Children
	if len(cs) == 0 {
		return nil
	}
	var ops []*op
	if w.root != nil {
		ops = w.root.kids
	}
	out := make([]journal.WroteKid, len(cs))
	for i, c := range cs {
		k := wroteKid(strconv.Itoa(i), c)
		if !c.Single && i < len(ops) && ops[i].nav == c.Nav && ops[i].ok() {
			k.Key, k.Filled = ops[i].key, ops[i].got
		}
		out[i] = k
	}
	return journal.EncodeKids(out)
}

// wroteKid is the child c at path as the journal keeps what it was written
// with (journal.WroteKid); a line's key and what the server filled in are
// the caller's to add.
func wroteKid(path string, c *transform.Child) journal.WroteKid {
	k := journal.WroteKid{Path: path, Nav: c.Nav, Single: c.Single, Wrote: wroteFields(c.Fields), Hash: kidHash(c)}
	if c.Single {
		k.TextHash = textHash(c.Fields["TEXT"])
		return k
	}
	for i, g := range c.Children {
		if g.Single {
			k.Kids = append(k.Kids, wroteKid(path+"."+strconv.Itoa(i), g))
		}
	}
	return k
}

// kidHash is the hash of what a child was written with that a delta does
// not compare field by field: a text or another single object whole; of a
// line, its long texts and file contents and its own sub-forms but its
// single objects, kept apart (journal.WroteKid.Kids) ("" when it has
// none).
func kidHash(c *transform.Child) string { return childHash(c, false) }

// childHash is kidHash; of a line, with its single objects too (all,
// as journals before WroteKid.Kids hashed it).
func childHash(c *transform.Child, all bool) string {
	fields, kids := c.Fields, c.Children
	if !c.Single {
		fields = nil
		for k, v := range c.Fields {
			if v != nil && !matchable(v) {
				if fields == nil {
					fields = map[string]any{}
				}
				fields[k] = v
			}
		}
		if !all {
			kids = nil
			for _, g := range c.Children {
				if !g.Single {
					kids = append(kids, g)
				}
			}
		}
		if fields == nil && len(kids) == 0 {
			return ""
		}
	}
	h := sha256.New()
	body, _ := odata.MarshalBody(fields)
	fmt.Fprintf(h, "%s %d:%s\n", c.Nav, len(body), body)
	if s := linesHash(kids); s != "" {
		fmt.Fprintf(h, "kids %s\n", s)
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// textHash is what the journal keeps of a text's TEXT to find it changed
// on the server (journal.WroteKid.TextHash): a hash of its content as
// compare reads texts (odata.TextContent); "" for a TEXT that is no string.
func textHash(v any) string {
	s, ok := v.(string)
	if !ok {
		return ""
	}
	h := sha256.Sum256([]byte(odata.TextContent(s)))
	return hex.EncodeToString(h[:8])
}

// textWas is a text as the journal kept it written (long texts are not):
// null when it kept none.
func textWas(k journal.WroteKid) json.RawMessage {
	was, _ := odata.DecodeEntity(k.Wrote)
	return wire(was["TEXT"])
}

// singlesDelta compares the single-object sub-forms of a loaded record (of
// type t), or of one of its lines, with those its rows give now
// (children): a text whose content changed (replaced), one new (added),
// one gone from the sources (listed, never deleted); another single
// object (a ship-to address) by its fields (objectDelta); prefix and next
// are the path a new child takes. What cannot be sent is said.
func singlesDelta(md *odata.Metadata, t *odata.EntityType, kids []journal.WroteKid, children []*transform.Child, prefix string, next *int) (out []DeltaLine, unsent []string) {
	was := map[string]journal.WroteKid{}
	for _, k := range kids {
		if k.Single {
			was[k.Nav] = k
		}
	}
	seen := map[string]bool{}
	for _, c := range children {
		if !c.Single {
			continue
		}
		seen[c.Nav] = true
		k, had := was[c.Nav]
		now, text := c.Fields["TEXT"]
		switch {
		case !text:
			l, why := objectDelta(lineType(md, t, c.Nav), k, had, c, prefix, next)
			if why != "" {
				unsent = append(unsent, why)
			}
			if l != nil {
				out = append(out, *l)
			}
		case !had:
			out = append(out, DeltaLine{Nav: c.Nav, Single: true, Text: true, New: true, Loc: c.Loc.String(), path: prefix + strconv.Itoa(*next), child: c,
				Fields: []DeltaField{{Field: "TEXT", Was: json.RawMessage("null"), Now: wire(now)}}})
			*next++
		case kidHash(c) == k.Hash:
		case k.TextHash == "":
			unsent = append(unsent, fmt.Sprintf("its text %s changed, and the journal keeps nothing of the text it wrote to tell a change made on the server since (loaded by an older version)", c.Nav))
		case textHash(now) == k.TextHash:
			// The same content, written otherwise (APPEND, markup): as the
			// server reads it back, no change.
		default:
			out = append(out, DeltaLine{Nav: c.Nav, Single: true, Text: true, Loc: c.Loc.String(), path: k.Path, child: c, was: k,
				Fields: []DeltaField{{Field: "TEXT", Was: textWas(k), Now: wire(now)}}})
		}
	}
	for _, k := range kids {
		if !k.Single || seen[k.Nav] {
			continue
		}
		if wrote, _ := odata.DecodeEntity(k.Wrote); k.Wrote != nil && wrote["TEXT"] == nil && k.TextHash == "" {
			unsent = append(unsent, fmt.Sprintf("its %s is gone from the sources (never deleted)", k.Nav))
			continue
		}
		out = append(out, DeltaLine{Nav: k.Nav, Single: true, Text: true, Gone: true, path: k.Path, was: k})
	}
	return out, unsent
}

// objectDelta compares a single-object sub-form other than a text (a
// ship-to address; lt its type) with what the journal kept of it (k, when
// had): its fields written differently now, by compare's rule, patched on
// PARENT/NAV; one new in the sources is added (a POST, as a text is).
// What a delta does not send is said instead: a change of its key, of its
// long texts or own sub-forms, or of one the journal keeps none of the
// fields it wrote to (loaded by an older version).
func objectDelta(lt *odata.EntityType, k journal.WroteKid, had bool, c *transform.Child, prefix string, next *int) (*DeltaLine, string) {
	if !had {
		l := &DeltaLine{Nav: c.Nav, Single: true, New: true, Loc: c.Loc.String(), path: prefix + strconv.Itoa(*next), child: c, Fields: allFields(c)}
		*next++
		return l, ""
	}
	if kidHash(c) == k.Hash {
		return nil, ""
	}
	was, err := odata.DecodeEntity(k.Wrote)
	if err != nil || k.Wrote == nil {
		return nil, fmt.Sprintf("its %s changed, and the journal keeps nothing of the fields it wrote to it to tell a change made on the server since (loaded by an older version)", c.Nav)
	}
	fields, keys := changedFields(lt, was, c.Fields)
	switch {
	case len(keys) > 0:
		return nil, fmt.Sprintf("the key (%s) of its %s changed: a delta does not move a sub-form", strings.Join(keys, ", "), c.Nav)
	case len(fields) == 0 && hidden(c):
		return nil, "its " + c.Nav + ": " + hiddenChanged
	case len(fields) == 0:
		return nil, ""
	}
	l := &DeltaLine{Nav: c.Nav, Single: true, Loc: c.Loc.String(), Fields: fields, path: k.Path, child: c, was: k}
	if hidden(c) {
		// Its long texts and own sub-forms are in one hash with the rest:
		// whether they changed too cannot be told apart, and they are not
		// sent. Said, so that a change of them is not lost without a word.
		return l, fmt.Sprintf("its %s: its fields are sent; a long text or its own sub-forms of it are not compared with what was loaded, and a delta does not send them", c.Nav)
	}
	return l, ""
}

// hiddenChanged says why a change of what hidden finds is not sent.
const hiddenChanged = "a long text, a file's contents or its own sub-forms changed: a delta does not send them"

// hidden reports a child holding what a delta does not compare field by
// field: a long text or a file's content, or sub-forms of its own.
func hidden(c *transform.Child) bool {
	if len(c.Children) > 0 {
		return true
	}
	for _, v := range c.Fields {
		if v != nil && !matchable(v) {
			return true
		}
	}
	return false
}

// allFields are the fields of a child new in the sources, in name order:
// each was null.
func allFields(c *transform.Child) []DeltaField {
	var out []DeltaField
	for _, f := range slices.Sorted(maps.Keys(c.Fields)) {
		out = append(out, DeltaField{Field: f, Was: json.RawMessage("null"), Now: wire(c.Fields[f])})
	}
	return out
}

// lineType is the entity type of the lines of t's sub-form nav; nil when
// the metadata does not say.
func lineType(md *odata.Metadata, t *odata.EntityType, nav string) *odata.EntityType {
	if md == nil || t == nil {
		return nil
	}
	if n := t.Navigation(nav); n != nil {
		return md.Type(n.Type)
	}
	return nil
}

// kidsDelta compares a loaded record's first-level sub-form children with
// those its rows give now: the texts and lines changed, new and gone, and
// what of the change a delta does not send (a text of an older journal, a
// line's sub-forms, lines of a record the journal keeps no line of).
func kidsDelta(md *odata.Metadata, t *odata.EntityType, prev *journal.RecordState, rec *transform.Record) ([]DeltaLine, []string) {
	kids, err := journal.DecodeKids(prev.WroteKids)
	if err != nil || kids == nil && prev.LinesHash != "" {
		// Loaded by a version that kept only the lines' hash.
		if linesHash(rec.Children) != prev.LinesHash {
			return nil, []string{"its lines or texts changed: the journal keeps no line of it to patch (loaded by an older version), so a delta sends the entity's fields only"}
		}
		return nil, nil
	}
	next := 0
	for _, k := range kids {
		if i, err := strconv.Atoi(k.Path); err == nil && i >= next {
			next = i + 1
		}
	}
	out, unsent := singlesDelta(md, t, kids, rec.Children, "", &next)
	// Lines, sub-form by sub-form, in the order the sources give them.
	var navs []string
	now, was := map[string][]*transform.Child{}, map[string][]journal.WroteKid{}
	for _, k := range kids {
		if k.Single {
			continue
		}
		if !slices.Contains(navs, k.Nav) {
			navs = append(navs, k.Nav)
		}
		was[k.Nav] = append(was[k.Nav], k)
	}
	for _, c := range rec.Children {
		if c.Single {
			continue
		}
		if !slices.Contains(navs, c.Nav) {
			navs = append(navs, c.Nav)
		}
		now[c.Nav] = append(now[c.Nav], c)
	}
	for _, nav := range navs {
		lt := lineType(md, t, nav)
		pairs := pairLines(lt, now[nav], was[nav])
		taken := make([]bool, len(was[nav]))
		for i, c := range now[nav] {
			j := pairs[i]
			if j < 0 {
				out = append(out, DeltaLine{Nav: nav, Loc: c.Loc.String(), New: true, path: strconv.Itoa(next), child: c, Fields: allFields(c)})
				next++
				continue
			}
			taken[j] = true
			k := was[nav][j]
			fields, keyChanged := lineFields(lt, k, c)
			name := DeltaLine{Nav: nav, Key: k.Key}.Name()
			switch {
			case keyChanged != "":
				unsent = append(unsent, fmt.Sprintf("the key (%s) of line %s changed: a delta does not move a line", keyChanged, name))
				continue
			case len(fields) > 0 && k.Key == "":
				unsent = append(unsent, fmt.Sprintf("a line of %s changed, and the journal keeps no key for it (the server's answer gave none)", nav))
				continue
			}
			if len(fields) > 0 {
				out = append(out, DeltaLine{Nav: nav, Key: k.Key, Loc: c.Loc.String(), Fields: fields, path: k.Path, child: c, was: k})
			}
			own, why := lineSingles(md, lt, k, c)
			out = append(out, own...)
			if why != "" {
				// Said whether or not its fields changed too: a PATCH of
				// them leaves the rest as the journal has it (kidsSent).
				unsent = append(unsent, fmt.Sprintf("line %s: %s", name, why))
			}
		}
		for j, k := range was[nav] {
			if !taken[j] {
				out = append(out, DeltaLine{Nav: nav, Key: k.Key, Gone: true, path: k.Path, was: k})
			}
		}
	}
	return out, unsent
}

// lineSingles compares the own sub-forms of a loaded line (k, of type lt;
// paired with c now): its single objects (its text) as a record's are
// (singlesDelta), addressed below the line by its key; what else of it a
// delta does not compare field by field (its long texts, its own lines),
// and a change of a line the journal keeps no single object of (loaded
// by an older version), is said in why.
func lineSingles(md *odata.Metadata, lt *odata.EntityType, k journal.WroteKid, c *transform.Child) (out []DeltaLine, why string) {
	switch {
	case kidHash(c) == k.Hash:
	case len(k.Kids) == 0 && childHash(c, true) == k.Hash:
		return nil, "" // an older journal's: its text and the rest the same
	case len(k.Kids) == 0:
		return nil, hiddenChanged
	default:
		why = hiddenChanged
	}
	// A new one takes a place after every child the line was loaded with.
	next := len(c.Children) + len(k.Kids)
	for _, g := range k.Kids {
		if i, err := strconv.Atoi(g.Path[strings.LastIndexByte(g.Path, '.')+1:]); err == nil && i >= next {
			next = i + 1
		}
	}
	own, unsent := singlesDelta(md, lt, k.Kids, c.Children, k.Path+".", &next)
	if k.Key == "" && len(own) > 0 {
		// No line to address them below.
		own, unsent = nil, append(unsent, "its own text or sub-form changed, and the journal keeps no key for the line (the server's answer gave none)")
	}
	for i := range own {
		own[i].pnav, own[i].pkey = k.Nav, k.Key
		own[i].Parent = DeltaLine{Nav: k.Nav, Key: k.Key}.Name()
	}
	if len(unsent) > 0 {
		why = strings.Join(append(unsent, why), "; ")
		why = strings.TrimSuffix(why, "; ")
	}
	return own, why
}

// pairLines pairs the lines of a sub-form now with those loaded: by the
// line's key fields when the source gives every one of them for every
// line, else by place. pairs[i] is the loaded line of now[i], -1 for none.
func pairLines(lt *odata.EntityType, now []*transform.Child, was []journal.WroteKid) []int {
	pairs := make([]int, len(now))
	byKey := lt != nil && len(lt.Key) > 0 && len(now) > 0
	for _, c := range now {
		if byKey && odata.EntityKey(lt, c.Fields) == "" {
			byKey = false
		}
	}
	for i, c := range now {
		pairs[i] = -1
		if !byKey {
			if i < len(was) {
				pairs[i] = i
			}
			continue
		}
		key := odata.EntityKey(lt, c.Fields)
		for j, k := range was {
			if k.Key != "" && odata.CanonicalKey(lt, k.Key) == key {
				pairs[i] = j
				break
			}
		}
	}
	return pairs
}

// lineFields are the fields of line c written differently now than the
// journal's line k was; keyChanged names key fields that differ.
func lineFields(lt *odata.EntityType, k journal.WroteKid, c *transform.Child) (fields []DeltaField, keyChanged string) {
	was, _ := odata.DecodeEntity(k.Wrote)
	fields, keys := changedFields(lt, was, c.Fields)
	return fields, strings.Join(keys, ", ")
}

// changedFields are the fields of now (an entity's or a line's, of type t)
// written differently than the journal's was, by compare's rule, and the
// key fields that differ apart. A long text or a file the journal never
// kept is not compared (a line's is kidHash's).
func changedFields(t *odata.EntityType, was, now map[string]any) (fields []DeltaField, keys []string) {
	for _, f := range slices.Sorted(maps.Keys(now)) {
		v := now[f]
		old, kept := was[f]
		if !kept && v != nil && !matchable(v) {
			continue
		}
		var p *odata.Property
		if t != nil {
			p = t.Property(f)
		}
		if compare.Value(p, old, v) {
			continue
		}
		if t != nil && t.IsKey(f) {
			keys = append(keys, f)
			continue
		}
		fields = append(fields, DeltaField{Field: f, Was: wire(old), Now: wire(v)})
	}
	return fields, keys
}

// kidsSent is what a delta's PATCHes and POSTs of lines leave of the
// journal's children (was, RecordEntry.WroteKids): a line patched holds its
// new fields, a line added is one more, with the key the server gave it.
func kidsSent(was json.RawMessage, sent []*op) json.RawMessage {
	kids, err := journal.DecodeKids(was)
	if err != nil || len(sent) == 0 {
		return was
	}
	for _, o := range sent {
		if !o.ok() {
			continue
		}
		c := o.child
		var held json.RawMessage // as the journal keeps it (WroteKid.Held)
		if o.held != nil {
			held, _ = odata.MarshalBody(o.held)
		}
		list, i := kidList(&kids, o.path)
		switch {
		case list == nil:
		case o.kind == journal.OpPatch && i >= 0:
			k := &(*list)[i]
			if o.single {
				*k = wroteKid(k.Path, c)
				k.Held = held
				continue
			}
			// Its Hash stays: what it covers (long texts, its own
			// sub-forms) a PATCH of its fields does not send. What it
			// sent is held no more; what the server held is.
			written := maps.Clone(o.fields) // as the journal takes them: held ones too
			for f := range o.held {
				written[f] = c.Fields[f]
			}
			sent := slices.Collect(maps.Keys(o.fields))
			k.Wrote = journal.Overlay(k.Wrote, wroteFields(written))
			k.Filled = journal.Overlay(journal.Without(k.Filled, slices.Collect(maps.Keys(written))...), o.got)
			k.Held = journal.Overlay(journal.Without(k.Held, sent...), held)
		case o.kind == journal.OpCreate:
			k := wroteKid(o.path, c)
			if !o.single {
				k.Key, k.Filled = o.key, o.got
			}
			k.Held = held
			*list = append(*list, k)
		}
	}
	return encodeKids(kids)
}

// kidList is where the journal keeps the child at path among a record's
// children (kids): the record's list for a first-level path, its line's
// Kids for one below a line; nil when that line is not kept. i is its
// index there, -1 when it is not kept yet.
func kidList(kids *[]journal.WroteKid, path string) (list *[]journal.WroteKid, i int) {
	list = kids
	if dot := strings.LastIndexByte(path, '.'); dot >= 0 {
		j := slices.IndexFunc(*kids, func(k journal.WroteKid) bool { return k.Path == path[:dot] })
		if j < 0 || strings.Contains(path[:dot], ".") {
			return nil, -1
		}
		list = &(*kids)[j].Kids
	}
	return list, slices.IndexFunc(*list, func(k journal.WroteKid) bool { return k.Path == path })
}

// encodeKids is kids as RecordEntry.WroteKids keeps them, in path order
// (a line's own too).
func encodeKids(kids []journal.WroteKid) json.RawMessage {
	slices.SortStableFunc(kids, func(a, b journal.WroteKid) int { return pathCompare(a.Path, b.Path) })
	for _, k := range kids {
		slices.SortStableFunc(k.Kids, func(a, b journal.WroteKid) int { return pathCompare(a.Path, b.Path) })
	}
	return journal.EncodeKids(kids)
}

// pathCompare orders paths of the same depth by their last number.
func pathCompare(a, b string) int {
	i, errA := strconv.Atoi(a[strings.LastIndexByte(a, '.')+1:])
	j, errB := strconv.Atoi(b[strings.LastIndexByte(b, '.')+1:])
	if errA != nil || errB != nil {
		return strings.Compare(a, b)
	}
	return i - j
}

// lineOps are the sub-requests of a changed record's lines, under root (its
// entity, patched or not): a PATCH of each changed line, by its key (of a
// single object, PARENT/NAV), with its changed fields (before: the values
// read), and a POST of each new line or single object (with its own
// sub-forms) to the parent's sub-form. What the server holds already as
// the source gives it (held, by line path) is not sent: a line or text
// with nothing else to send has no sub-request, and the journal keeps it
// as held (journal.WroteKid.Held).
func (sr *stepRun) lineOps(w *work, root *op, lines []DeltaLine, before map[string]map[string]any, held map[string]map[string]any) ([]unit, error) {
	var units []unit
	for _, l := range lines {
		if !l.sends() {
			continue
		}
		ptyp := root.typ
		if l.Parent != "" {
			ptyp = lineType(sr.r.md, root.typ, l.pnav) // a line's own sub-form
		}
		lt := lineType(sr.r.md, ptyp, l.Nav)
		if l.Text {
			o := textOp(w, root, lt, l, before[l.path])
			o.hold(held[l.path], false)
			units = append(units, unit{o})
			continue
		}
		if l.New {
			tmp := &op{}
			if err := sr.b.childOps(w, tmp, ptyp, []*transform.Child{l.child}, "", false); err != nil {
				return nil, err
			}
			o := tmp.kids[0]
			renumber(o, l.path)
			o.parent, o.child = root, l.child
			if l.Parent != "" {
				o.abs = root.abs + "/" + l.Name() // a line's single object
				o.url = o.abs
			}
			root.kids = append(root.kids, o)
			units = append(units, flatten(o, nil))
			continue
		}
		changed := map[string]any{}
		for _, f := range l.Fields {
			if _, ok := held[l.path][f.Field]; !ok {
				changed[f.Field] = l.child.Fields[f.Field]
			}
		}
		o := &op{work: w, path: l.path, nav: l.Nav, single: l.Single, parent: root, kind: journal.OpPatch, method: "PATCH", typ: lt,
			fields: changed, key: l.Key, line: l.Key, loc: l.child.Loc, child: l.child}
		o.abs = root.abs + "/" + l.Name() // a single object: PARENT/NAV
		o.url = o.abs
		o.hold(held[l.path], len(changed) > 0)
		o.body, _ = odata.MarshalBody(changed)
		o.patch = o.body
		o.before, _ = json.Marshal(before[l.path])
		root.kids = append(root.kids, o)
		units = append(units, unit{o})
	}
	return units, nil
}

// hold keeps on o what the server holds already as the source gives it
// (h; nil: nothing), which is not sent; with nothing else to send (rest
// false) o is done without a sub-request.
func (o *op) hold(h map[string]any, rest bool) {
	if h == nil {
		return
	}
	o.held = h
	if !rest {
		o.done, o.status = true, 200
	}
}

// textOp is the sub-request of a text a delta sends under root: the text
// the source gives now, replacing what the server holds (APPEND false:
// docs/service.md, Text sub-forms); a PATCH of a text loaded, a POST of a
// new one, alike to the service. Its before-image is the text the server
// held (held), written back whole by undo.
func textOp(w *work, root *op, lt *odata.EntityType, l DeltaLine, held map[string]any) *op {
	fields := maps.Clone(l.child.Fields)
	if lt == nil || lt.Property("APPEND") != nil {
		fields["APPEND"] = false // a service without it replaces a text PATCHed
	}
	kind, method := journal.OpPatch, "PATCH"
	if l.New {
		kind, method = journal.OpCreate, "POST"
	}
	o := &op{work: w, path: l.path, nav: l.Nav, single: true, parent: root, kind: kind, method: method, typ: lt,
		fields: fields, loc: l.child.Loc, child: l.child}
	o.abs = root.abs + "/" + l.Name()
	if l.Parent != "" {
		o.url = o.abs // a line's text: below the line, by its key
	}
	o.body, _ = odata.MarshalBody(fields)
	if kind == journal.OpPatch {
		o.patch = o.body
		o.before, _ = odata.MarshalBody(map[string]any{"TEXT": held["TEXT"], "APPEND": false})
	}
	root.kids = append(root.kids, o)
	return o
}

// renumber gives a new line built on its own (childOps, path "0") its path
// among its record's children, and its own children theirs.
func renumber(o *op, path string) {
	o.path = path
	for i, k := range o.kids {
		renumber(k, path+"."+strconv.Itoa(i))
	}
}

// linesRead finds, in the record as read (body, with the sub-forms of its
// changed lines expanded), each changed line by its key, each single
// object by its sub-form: what the server holds of it now. A line or a
// single object (other than a text) not found is named; a new single
// object the server holds none of reads as nil.
func linesRead(md *odata.Metadata, t *odata.EntityType, body json.RawMessage, lines []DeltaLine) (map[string]map[string]any, string) {
	var raw map[string]json.RawMessage
	_ = json.Unmarshal(body, &raw)
	// line is the line of sub-form nav with key as read: decoded, and its
	// own sub-forms as read (nil when not found).
	line := func(nav, key string) (map[string]any, map[string]json.RawMessage) {
		lt := lineType(md, t, nav)
		var held []json.RawMessage
		_ = json.Unmarshal(raw[nav], &held)
		for _, one := range held {
			h, err := odata.DecodeEntity(one)
			if err == nil && lt != nil && odata.EntityKey(lt, h) == odata.CanonicalKey(lt, key) {
				var own map[string]json.RawMessage
				_ = json.Unmarshal(one, &own)
				return h, own
			}
		}
		return nil, nil
	}
	out := map[string]map[string]any{}
	for _, l := range lines {
		if !l.sends() || l.New && !l.Single {
			continue
		}
		if !l.Single {
			if out[l.path], _ = line(l.Nav, l.Key); out[l.path] == nil {
				return nil, l.Name()
			}
			continue
		}
		from := raw // a single object of the record, or of its line
		if l.Parent != "" {
			if _, from = line(l.pnav, l.pkey); from == nil {
				return nil, l.Parent
			}
		}
		if l.Text {
			out[l.path] = map[string]any{"TEXT": reconcile.HeldText(from[l.Nav])}
			continue
		}
		held := heldObject(from[l.Nav])
		if held == nil && !l.New {
			return nil, l.Name()
		}
		out[l.path] = held
	}
	return out, ""
}

// heldObject is a single-object sub-form as read expanded: nil for none
// (null, absent, or [] as some servers answer an empty one:
// docs/servers.md, Reading).
func heldObject(raw json.RawMessage) map[string]any {
	var probe map[string]json.RawMessage
	if json.Unmarshal(raw, &probe) != nil || probe == nil {
		return nil
	}
	m, err := odata.DecodeEntity(raw)
	if err != nil {
		return nil
	}
	return m
}

// oursOf is what the journal says a line holds: its fields as sent, with
// what the server filled in their place.
func oursOf(k journal.WroteKid) map[string]any {
	ours := map[string]any{}
	if m, err := odata.DecodeEntity(k.Wrote); err == nil {
		ours = m
	}
	if m, err := odata.DecodeEntity(k.Filled); err == nil && len(k.Filled) > 0 {
		maps.Copy(ours, m)
	}
	return ours
}
