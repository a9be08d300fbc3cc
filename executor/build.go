package executor

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/migrate-tool/migrate/journal"
	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/reconcile"
	"github.com/migrate-tool/migrate/source"
	"github.com/migrate-tool/migrate/transform"
)

// op is one sub-request to be: an entity, a line, a text object, or a read
// or delete that an update needs.
type op struct {
	work   *work
	path   string // "" the record's entity; "0", "0.2" its children (journal identity)
	nav    string // navigation property of a child
	single bool   // single-object sub-form (docs/service.md, Sub-forms)
	parent *op
	kids   []*op
	kind   journal.OpKind
	method string
	url    string // for a root op: its URL; children are addressed at assembly
	typ    *odata.EntityType
	fields map[string]any
	body   json.RawMessage
	nested int // lines inside its body (deep insert): API transactions besides its own
	// carried: the op travels inside its parent's body (deep insert) and
	// has no sub-request of its own, unless the deep insert fails and the
	// op is found missing (deep.go).
	carried bool
	key     string // key expression (entity or line) when known
	abs     string // path of the entity or line once it exists
	line    string // line key of an existing line (delete)
	// above, on a line added to a document that existed, is the highest
	// key its sub-form held when the document was read (journal.Sub.Above).
	above   string
	before  json.RawMessage
	patch   json.RawMessage // the new values of a PATCH, for reconciliation
	matched json.RawMessage // match(), as journaled
	// got is what the server answered for the fields it did not take as
	// sent (filled), as journaled with the outcome.
	got json.RawMessage
	// held (a delta's line or text) is what the server held already as
	// the source gives it, which is not sent (journal.WroteKid.Held).
	held map[string]any
	loc  source.Location
	// child is the source's line a delta load patches or adds (delta_lines.go).
	child *transform.Child

	// sending
	id     string
	batch  int
	status int
	err    string
	done   bool
}

func (o *op) ok() bool { return o.status >= 200 && o.status < 300 }

// unit is ops in depth-first order whose root's parent is absent or
// already exists on the server: what must travel in one batch if it fits.
type unit []*op

// work is one record being loaded.
type work struct {
	step   *stepRun
	rec    *transform.Record
	id     string
	root   *op
	ops    []*op // every op, for completion
	left   int   // ops without an outcome
	failed bool
	final  bool
	// mark and answered: complete's count of its ops in one batch (the runner's workMu).
	mark, answered int
	// then runs when every op sent so far has its outcome (replace: the
	// new lines after the deletes).
	then []unit
	// held is what an upsert or update found the entity holding already
	// of the fields it writes (journal.RecordEntry.Held).
	held json.RawMessage
	// prev is the record as the journal holds it from an earlier run (nil:
	// none), as the run looked it up before building it.
	prev *journal.RecordState
	// delta is set on a changed record a delta load patches.
	delta *deltaPatch
}

// builder turns records into ops.
type builder struct {
	md   *odata.Metadata
	deep bool
}

// insertOps builds the POST of a record and one op per child, depth first.
func (b *builder) insertOps(w *work) (*op, error) {
	rec := w.rec
	set := b.md.EntitySet(rec.Entity)
	var typ *odata.EntityType
	if set != nil {
		typ = set.Type
	} else {
		typ = b.md.Type(rec.Entity)
	}
	root := &op{work: w, kind: journal.OpCreate, method: "POST", url: rec.Entity, typ: typ, fields: rec.Fields, loc: rec.Loc}
	root.key = odata.EntityKey(typ, rec.Fields)
	deep := b.deep && len(rec.Children) > 0
	if err := b.childOps(w, root, typ, rec.Children, "", deep); err != nil {
		return nil, err
	}
	if deep {
		// The tree is kept, carried inside the root's body: the children's
		// keys come from the answer, and what a failed deep insert left
		// out is sent on its own (deep.go).
		raw, err := odata.MarshalBody(deepBody(rec.Fields, rec.Children))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", rec.Loc, err)
		}
		root.body = raw
		root.nested = countChildren(rec.Children)
		root.carry(true)
		return root, nil
	}
	raw, err := odata.MarshalBody(rec.Fields)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", rec.Loc, err)
	}
	root.body = raw
	return root, nil
}

// carry marks o's descendants as travelling inside o's body (deep insert),
// or, with false, as sub-requests of their own: an existing document's
// lines (upsert) or what a failed deep insert left out.
func (o *op) carry(in bool) {
	if !in {
		o.nested = 0
	}
	for _, k := range o.kids {
		if in {
			k.carried = true
			k.carry(true)
			continue
		}
		k.uncarry()
	}
}

// uncarry makes o a sub-request of its own, and its descendants too.
func (o *op) uncarry() {
	o.carried = false
	if o.body == nil {
		// Built lazily: the deep body's encoding of the same fields
		// succeeded, so this one does.
		o.body, _ = odata.MarshalBody(o.fields)
	}
	o.carry(false)
}

// childOps builds one op per child, depth first; lazy leaves their bodies
// to carry(false), as a deep insert's rarely need them.
func (b *builder) childOps(w *work, parent *op, ptyp *odata.EntityType, kids []*transform.Child, prefix string, lazy bool) error {
	for i, c := range kids {
		path := prefix + strconv.Itoa(i)
		var ctyp *odata.EntityType
		if ptyp != nil {
			if nav := ptyp.Navigation(c.Nav); nav != nil {
				ctyp = b.md.Type(nav.Type)
			}
		}
		var raw []byte
		if !lazy {
			var err error
			if raw, err = odata.MarshalBody(c.Fields); err != nil {
				return fmt.Errorf("%s: %s: %w", c.Loc, c.Nav, err)
			}
		}
		o := &op{work: w, path: path, nav: c.Nav, single: c.Single, parent: parent, kind: journal.OpCreate,
			method: "POST", typ: ctyp, fields: c.Fields, body: raw, loc: c.Loc}
		parent.kids = append(parent.kids, o)
		if err := b.childOps(w, o, ctyp, c.Children, path+".", lazy); err != nil {
			return err
		}
	}
	return nil
}

// deepBody nests children into the parent's body (docs/service.md, Deep
// insert).
func deepBody(fields map[string]any, kids []*transform.Child) map[string]any {
	if len(kids) == 0 {
		return fields
	}
	out := make(map[string]any, len(fields)+2)
	for k, v := range fields {
		out[k] = v
	}
	lists := map[string][]any{}
	for _, c := range kids {
		body := deepBody(c.Fields, c.Children)
		if c.Single {
			out[c.Nav] = body
			continue
		}
		lists[c.Nav] = append(lists[c.Nav], body)
	}
	for nav, l := range lists {
		out[nav] = l
	}
	return out
}

// flatten lists o and its descendants that are sent on their own, depth
// first: parents before children, each subtree contiguous. A deep insert's
// children travel inside it and are not listed.
func flatten(o *op, dst unit) unit {
	dst = append(dst, o)
	for _, k := range o.kids {
		if !k.carried {
			dst = flatten(k, dst)
		}
	}
	return dst
}

// below counts o's descendants, carried or not, that match.
func (o *op) below(match func(*op) bool) int {
	n := 0
	for _, k := range subtree(o, nil)[1:] {
		if match(k) {
			n++
		}
	}
	return n
}

// subtree lists o and every descendant, carried or not, depth first.
func subtree(o *op, dst []*op) []*op {
	dst = append(dst, o)
	for _, k := range o.kids {
		dst = subtree(k, dst)
	}
	return dst
}

// bodyHash is what the journal keeps of a body: enough to tell two apart,
// nothing to read back.
func bodyHash(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:8])
}

// match is what the op leaves on the server: what reconciliation looks for
// if its outcome is lost, and what undo compares with the current state to
// see whether someone changed the record since.
func (o *op) match() json.RawMessage {
	switch o.kind {
	case journal.OpPatch:
		return o.patch
	case journal.OpCreate:
		return matchFields(o.fields)
	}
	return nil
}

// filled is what the server answered, of the fields the op wrote
// (reconcile.Filled), where it did not take them as sent, and of those
// the ones it holds its own value of (reconcile.Fills). Nothing when it
// answered without a body; got is the answer decoded, when outcome
// already did.
func (o *op) filled(got map[string]any, body []byte) (json.RawMessage, []string) {
	if len(o.matched) == 0 || len(body) == 0 || o.single {
		return nil, nil // a text sub-form answers with the whole text; undo leaves texts alone
	}
	if got == nil {
		var err error
		if got, err = odata.DecodeEntity(body); err != nil {
			return nil, nil
		}
	}
	sent := keptOf(o.fields, matchable)
	filled := reconcile.Filled(sent, got)
	if filled == nil {
		return nil, nil
	}
	return filled, reconcile.Fills(o.typ, sent, got)
}

// childAbs is the path of a child once its parent exists.
func childAbs(parent *op, o *op) string {
	if parent.abs == "" {
		return ""
	}
	if o.single {
		return parent.abs + "/" + o.nav
	}
	if o.key == "" {
		return ""
	}
	return parent.abs + "/" + odata.KeySegment(o.nav, o.key)
}
