package executor

import (
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/migrate-tool/migrate/journal"
	"github.com/migrate-tool/migrate/odata"
)

// packer fills batches greedily, up to limit sub-requests each, and, when
// maxBytes is set, up to about maxBytes of bodies (a share of the memory
// budget: a batch of 100 documents of 100 KB each is 10 MB to send and as
// much to read back). A unit that fits travels whole; one larger than the
// room left sends what fits (its root first: units are depth-first) and
// the rest follows, in units addressed by the keys the server returns,
// once that batch is answered. A unit larger than maxBytes alone goes in a
// batch of its own.
type packer struct {
	limit    int
	sizer    *batchSizer // when set, the limit it gives now (calls near the server's budget shrink it)
	maxBytes int
	cur      []*op
	curBytes int
	later    []unit // units to enqueue after cur's response
	emit     func(batch []*op, later []unit) error
}

// bytesOf is what u's bodies weigh (a deep insert's children counted in
// their parent's body and again in their own: an upper bound).
func bytesOf(u unit) int {
	n := 0
	for _, o := range u {
		n += len(o.body)
	}
	return n
}

func (p *packer) add(u unit) error {
	if len(u) == 0 {
		return nil
	}
	limit := p.limit
	if p.sizer != nil {
		limit = p.sizer.size()
	}
	n := 0
	if p.maxBytes > 0 {
		n = bytesOf(u)
		if len(p.cur) > 0 && p.curBytes+n > p.maxBytes {
			if err := p.flush(); err != nil {
				return err
			}
		}
	}
	room := limit - len(p.cur)
	if len(u) <= room {
		p.cur = append(p.cur, u...)
		p.curBytes += n
		if len(p.cur) >= limit {
			return p.flush()
		}
		return nil
	}
	if len(u) <= limit {
		if err := p.flush(); err != nil {
			return err
		}
		p.cur = append(p.cur, u...)
		p.curBytes = n
		return nil
	}
	// Larger than a batch: fill the room with its head.
	if room <= 0 { // full, or fuller than a shrunk limit
		if err := p.flush(); err != nil {
			return err
		}
		room = limit
	}
	head, rest := u[:room], u[room:]
	p.cur = append(p.cur, head...)
	p.later = append(p.later, splitUnits(rest)...)
	return p.flush()
}

func (p *packer) flush() error {
	if len(p.cur) == 0 {
		return nil
	}
	b, later := p.cur, p.later
	p.cur, p.later, p.curBytes = nil, nil, 0
	return p.emit(b, later)
}

// splitUnits cuts the tail of a split unit into units: an op whose parent
// is not in the tail starts one; its subtree follows it contiguously.
func splitUnits(rest unit) []unit {
	in := make(map[*op]bool, len(rest))
	for _, o := range rest {
		in[o] = true
	}
	var out []unit
	for _, o := range rest {
		if o.parent == nil || !in[o.parent] {
			out = append(out, unit{o})
			continue
		}
		out[len(out)-1] = append(out[len(out)-1], o)
	}
	return out
}

// assemble gives the ops of one batch their ids and URLs. A child whose
// parent is in the same batch is addressed $<parent id>/<nav> and depends
// on it (docs/service.md, Batch); one whose parent was created earlier is
// addressed by the parent's path.
func assemble(batch []*op, seq int) []odata.BatchRequest {
	reqs := make([]odata.BatchRequest, len(batch))
	for i, o := range batch {
		o.id = strconv.Itoa(i + 1)
		o.batch = seq
		r := odata.BatchRequest{ID: o.id, Method: o.method, Body: o.body}
		switch {
		case o.parent == nil || o.url != "":
			r.URL = o.url
		case o.parent.batch == seq && !o.parent.done && o.parent.kind == journal.OpCreate:
			// docs/service.md, Batch: $<id> stands for the entity that
			// sub-request creates.
			r.URL = odata.Reference(o.parent.id, o.nav)
			r.DependsOn = []string{o.parent.id}
		case o.parent.batch == seq && !o.parent.done:
			// A PATCHed parent: addressed by its key, after it.
			r.URL = o.parent.abs + "/" + o.nav
			r.DependsOn = []string{o.parent.id}
		default:
			r.URL = o.parent.abs + "/" + o.nav
		}
		if len(o.body) > 0 {
			r.Headers = bodyHeaders
		}
		reqs[i] = r
	}
	return reqs
}

// standardSingles sends each single-object sub-form written on its own
// (not carried in its parent's deep insert) as a standard service takes it:
// a PATCH of the parent holding it, since such a service refuses a POST to
// a single-valued navigation (405; docs/other-services.md). The journal
// keeps the op as it is (a POST to PARENT/NAV); the caller's reqs are left
// as they were.
func standardSingles(batch []*op, reqs []odata.BatchRequest) []odata.BatchRequest {
	var out []odata.BatchRequest
	for i, o := range batch {
		if !o.single || reqs[i].Method != http.MethodPost || len(o.body) == 0 {
			continue
		}
		parent, ok := strings.CutSuffix(reqs[i].URL, "/"+o.nav)
		if !ok {
			continue
		}
		body, err := odata.MarshalBody(map[string]any{o.nav: o.body})
		if err != nil {
			continue
		}
		if out == nil {
			out = slices.Clone(reqs)
		}
		out[i].Method, out[i].URL, out[i].Body = http.MethodPatch, parent, body
	}
	if out == nil {
		return reqs
	}
	return out
}

// bodyHeaders are the headers of a sub-request with a body; shared by every
// one of them, so nothing may write to it.
var bodyHeaders = map[string]string{"content-type": "application/json", "odata-version": "4.0"}
