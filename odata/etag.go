package odata

import (
	"net/http"
	"strings"
	"sync"
)

// etags remembers, for a client of the odata dialect, the ETag of every
// entity it read or wrote (@odata.etag in an answer's body, or an ETag
// header), by the entity's path as PathKey spells it, so that a PATCH or
// DELETE of it carries If-Match: a standard service with ETags refuses one
// without (428 Precondition Required). An entity whose ETag it never saw
// is sent with If-Match: *, which changes it whatever its version: the
// engine's own checks stand for the ETag there (undo compares what the
// entity holds before it deletes; docs/other-services.md, ETags).
type etags struct {
	mu   sync.Mutex
	md   *Metadata
	tags map[string]string
}

// setMetadata gives the types that key the entities of answers.
func (e *etags) setMetadata(md *Metadata) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.md = md
}

// ifMatch is the If-Match header a write to url needs: the ETag last seen
// of the entity it addresses, else "*"; "" for a method that needs none.
func (e *etags) ifMatch(method, url string) string {
	if method != http.MethodPatch && method != http.MethodDelete && method != http.MethodPut {
		return ""
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if tag, ok := e.tags[canonicalPath(url)]; ok {
		return tag
	}
	return "*"
}

// learn takes the ETags of what an answered request holds: the entity at
// url (a GET, PATCH or POST answer), the entities of a collection or of a
// POST to one, and the lines nested in them (an $expand, a deep insert).
// A DELETE forgets the entity; a write whose answer names no ETag forgets
// it too, so that the stale one is not sent.
func (e *etags) learn(method, url string, status int, header func(string) string, body []byte) {
	if status < 200 || status > 299 || method == http.MethodGet && status != http.StatusOK {
		return
	}
	path := canonicalPath(url)
	e.mu.Lock()
	defer e.mu.Unlock()
	if method == http.MethodDelete {
		delete(e.tags, path)
		return
	}
	segs, err := ParsePath(path)
	if err != nil || len(segs) == 0 || segs[0].Ref != "" {
		return
	}
	t, last := e.typeAt(segs)
	if t == nil {
		return
	}
	keyed := last.HasKey
	if method == http.MethodPost {
		keyed = false // the answer is the entity created in the collection at url
	}
	ent, ok := DecodeObject(body)
	if !ok {
		if keyed && method != http.MethodGet {
			if tag := header("ETag"); tag != "" {
				e.put(path, tag)
			} else {
				delete(e.tags, path)
			}
		}
		return
	}
	if !keyed {
		if vals, ok := ent["value"].([]any); ok && method == http.MethodGet {
			for _, v := range vals {
				if m, ok := v.(map[string]any); ok {
					e.entity(t, path, m)
				}
			}
			return
		}
		e.entity(t, path, ent)
		return
	}
	e.walk(t, path, ent)
	if _, ok := ent["@odata.etag"]; !ok && method != http.MethodGet {
		if tag := header("ETag"); tag != "" {
			e.put(path, tag)
		} else {
			delete(e.tags, path)
		}
	}
}

// typeAt is the entity type the path's segments end on, and its last
// segment.
func (e *etags) typeAt(segs []Segment) (*EntityType, Segment) {
	if e.md == nil {
		return nil, Segment{}
	}
	set := e.md.EntitySet(segs[0].Name)
	if set == nil {
		return nil, Segment{}
	}
	t := set.Type
	for _, s := range segs[1:] {
		nav := t.Navigation(s.Name)
		if nav == nil {
			return nil, Segment{}
		}
		if t = e.md.Type(nav.Type); t == nil {
			return nil, Segment{}
		}
	}
	return t, segs[len(segs)-1]
}

// entity learns an entity of type t in the collection at coll.
func (e *etags) entity(t *EntityType, coll string, m map[string]any) {
	key := EntityKey(t, m)
	if key == "" {
		return
	}
	e.walk(t, coll+"("+key+")", m)
}

// walk learns the entity m at path and the lines nested in it.
func (e *etags) walk(t *EntityType, path string, m map[string]any) {
	if tag, ok := m["@odata.etag"].(string); ok && tag != "" {
		e.put(path, tag)
	}
	for _, nav := range t.Navigations {
		nt := e.md.Type(nav.Type)
		if nt == nil {
			continue
		}
		switch v := m[nav.Name].(type) {
		case []any:
			for _, line := range v {
				if lm, ok := line.(map[string]any); ok {
					e.entity(nt, path+"/"+nav.Name, lm)
				}
			}
		case map[string]any:
			e.walk(nt, path+"/"+nav.Name, v)
		}
	}
}

// maxETags bounds the ETags kept: past it one already kept is forgotten
// for each new one (its next write goes with If-Match: *), so that a read
// of millions of entities holds no more memory than this.
const maxETags = 100_000

func (e *etags) put(path, tag string) {
	if e.tags == nil {
		e.tags = map[string]string{}
	}
	if _, ok := e.tags[path]; !ok && len(e.tags) >= maxETags {
		for k := range e.tags {
			delete(e.tags, k)
			break
		}
	}
	e.tags[path] = tag
}

// keyedPath reports whether url addresses one entity: its last segment
// has a key.
func keyedPath(url string) bool {
	path, _, _ := strings.Cut(url, "?")
	segs, err := ParsePath(path)
	return err == nil && len(segs) > 0 && segs[len(segs)-1].HasKey
}

// canonicalPath is url without its query, each key spelt as PathKey spells
// it, so that a path the executor wrote and one made from an answer
// compare equal.
func canonicalPath(url string) string {
	path, _, _ := strings.Cut(url, "?")
	path = strings.TrimPrefix(path, "/")
	segs, err := ParsePath(path)
	if err != nil {
		return path
	}
	var b strings.Builder
	for i, s := range segs {
		if i > 0 {
			b.WriteByte('/')
		}
		if s.Ref != "" {
			b.WriteString("$" + s.Ref)
			continue
		}
		b.WriteString(s.Name)
		if s.HasKey {
			k, err := pathKeyOf(s.Key)
			if err != nil {
				return path
			}
			b.WriteString("(" + k + ")")
		}
	}
	return b.String()
}
