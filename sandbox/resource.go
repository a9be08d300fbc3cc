package sandbox

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/migrate-tool/migrate/internal/didyoumean"
	"github.com/migrate-tool/migrate/odata"
)

// exec serves one request on a resource path relative to the service root
// (already unescaped). Batches call it once per sub-request.
func (c *call) exec(method, path, rawQuery string, hdr http.Header, body []byte) *result {
	q, err := parseQueryString(rawQuery)
	if err != nil {
		return c.s.errResult(protoErr(http.StatusBadRequest, "BadRequest", "query string: %v", err))
	}
	res, aerr := c.route(method, strings.TrimPrefix(path, "/"), q, hdr, body)
	if aerr != nil {
		return c.s.errResult(aerr)
	}
	return res
}

// parseQueryString splits a query on "&" only: OData's $expand options use
// ";" (which url.ParseQuery refuses).
func parseQueryString(raw string) (url.Values, error) {
	q := url.Values{}
	for _, part := range strings.Split(raw, "&") {
		if part == "" {
			continue
		}
		k, v, _ := strings.Cut(part, "=")
		key, err := url.QueryUnescape(k)
		if err != nil {
			return nil, err
		}
		val, err := url.QueryUnescape(v)
		if err != nil {
			return nil, err
		}
		q[key] = append(q[key], val)
	}
	return q, nil
}

func (c *call) route(method, path string, q url.Values, hdr http.Header, body []byte) (*result, *apiError) {
	s := c.s
	getOnly := func(f func() (*result, *apiError)) (*result, *apiError) {
		if method != http.MethodGet {
			return nil, protoErr(http.StatusMethodNotAllowed, "MethodNotAllowed", "%s allows GET only", path)
		}
		return f()
	}
	switch {
	case path == "":
		return getOnly(c.serviceRoot)
	case path == "$metadata":
		return getOnly(func() (*result, *apiError) {
			var buf bytes.Buffer
			_ = s.served().WriteXML(&buf)
			return &result{status: 200, body: buf.Bytes(), header: http.Header{"Content-Type": {"application/xml"}, "Odata-Version": {"4.0"}}}, nil
		})
	case path == "$batch":
		return nil, protoErr(http.StatusBadRequest, "BadRequest", "a $batch cannot be sent inside a $batch")
	case strings.HasPrefix(path, "GetMetadataFor("):
		return getOnly(func() (*result, *apiError) { return c.metadataFor(path) })
	case path == "GetSystemVersion()" || path == "GetPriorityVersion()":
		if !s.version.AtLeast(22, 0) { // docs/service.md, Versions: the version function is 22.0+
			return nil, protoErr(http.StatusNotFound, "NotFound", "no function %s on this server", path)
		}
		return getOnly(func() (*result, *apiError) {
			return jsonResult(200, obj{{"@odata.context", c.base + "/$metadata#Edm.String"}, {"value", s.opts.SystemVersion + "-sandbox.local"}}), nil
		})
	case path == "GetODataVersion()":
		return getOnly(func() (*result, *apiError) {
			return jsonResult(200, obj{{"@odata.context", c.base + "/$metadata#Edm.String"}, {"value", "4.0"}}), nil
		})
	case path == "GetLoginName" || path == "GetLoginName()":
		return getOnly(func() (*result, *apiError) {
			return jsonResult(200, obj{{"@odata.context", c.base + "/$metadata#Edm.String"}, {"value", c.user}}), nil
		})
	case path == "ClearEntityMetadata":
		return c.clearMetadata(method, body)
	}
	return c.entityOp(method, path, q, hdr, body)
}

func (c *call) serviceRoot() (*result, *apiError) {
	list := make([]any, 0, len(c.s.meta.Sets))
	for _, set := range c.s.meta.Sets {
		list = append(list, obj{{"name", set.Name}, {"kind", "EntitySet"}, {"url", set.Name}})
	}
	return jsonResult(200, obj{{"@odata.context", c.base + "/$metadata"}, {"value", list}}), nil
}

// metadataFor answers GetMetadataFor(entity='X') (docs/service.md, Queries,
// from 25.0).
func (c *call) metadataFor(path string) (*result, *apiError) {
	s := c.s
	if !s.version.GetMetadataFor() {
		return nil, protoErr(http.StatusNotFound, "NotFound", "GetMetadataFor is available from system version 25.0 (this server is %s)", s.version)
	}
	segs, err := odata.ParsePath(path)
	var entity string
	if err == nil && len(segs) == 1 && len(segs[0].Key) == 1 && segs[0].Key[0].Name == "entity" {
		entity, _ = segs[0].Key[0].Value.(string)
	}
	if entity == "" {
		return nil, protoErr(http.StatusBadRequest, "BadRequest", "want GetMetadataFor(entity='NAME')")
	}
	set := s.meta.EntitySet(entity)
	if set == nil {
		if s.meta.Type(entity) != nil {
			return nil, protoErr(http.StatusBadRequest, "BadRequest", "%s is a sub-form: GetMetadataFor answers top-level entities only; ask for its parent", entity)
		}
		return nil, protoErr(http.StatusNotFound, "NotFound", "no entity %s", entity)
	}
	s.prepMu.Lock()
	ready := s.prepared[entity]
	s.prepMu.Unlock()
	answered := entity
	if !ready {
		other := s.otherType(entity)
		if other == nil {
			return nil, protoErr(http.StatusBadRequest, "MetadataNotPrepared", "the metadata of %s is not prepared yet; request GET %s?$top=1 first", entity, entity)
		}
		answered = other.Name
	}
	var buf bytes.Buffer
	m := s.served()
	_ = m.EntitySet(answered).Type.WriteXML(&buf, m.Namespace)
	return &result{status: 200, body: buf.Bytes(), header: http.Header{"Content-Type": {"application/xml"}, "Odata-Version": {"4.0"}}}, nil
}

// clearMetadata answers POST ClearEntityMetadata (docs/service.md, Metadata,
// from 22.0).
func (c *call) clearMetadata(method string, body []byte) (*result, *apiError) {
	s := c.s
	if !s.version.ClearMetadata() {
		return nil, protoErr(http.StatusNotFound, "NotFound", "ClearEntityMetadata is available from system version 22.0 (this server is %s)", s.version)
	}
	if method != http.MethodPost {
		return nil, protoErr(http.StatusMethodNotAllowed, "MethodNotAllowed", "ClearEntityMetadata allows POST only")
	}
	var in struct{ Entity *string }
	if len(bytes.TrimSpace(body)) > 0 {
		if err := json.Unmarshal(body, &in); err != nil {
			return nil, protoErr(http.StatusBadRequest, "BadRequest", "ClearEntityMetadata: want {\"Entity\": \"NAME\"}: %v", err)
		}
	}
	s.prepMu.Lock()
	defer s.prepMu.Unlock()
	if in.Entity == nil {
		s.prepared = map[string]bool{}
	} else {
		if s.meta.EntitySet(*in.Entity) == nil {
			return nil, protoErr(http.StatusBadRequest, "BadRequest", "ClearEntityMetadata: %s is not a top-level entity (sub-forms belong to their parent)", *in.Entity)
		}
		delete(s.prepared, *in.Entity)
	}
	return &result{status: http.StatusNoContent, header: http.Header{"Odata-Version": {"4.0"}}}, nil
}

// target is what a resource path names.
type target struct {
	set    *odata.EntitySet
	tb     *table
	t      *odata.EntityType // type of what is named
	rec    *record           // the record named; nil for a collection or an empty single sub-form
	parent *record           // the record owning the sub-form, for sub-form targets
	nav    *odata.NavigationProperty
	path   string // canonical path of rec (or of the collection)
	brack  bool   // the last segment was written [NAME]
}

func (t *target) collection() bool { return t.rec == nil && (t.nav == nil || t.nav.Collection) }

func (c *call) resolve(path string) (*target, *apiError) {
	s := c.s
	parts, err := parsePath(path)
	if err != nil {
		return nil, protoErr(http.StatusBadRequest, "BadRequest", "%v", err)
	}
	seg := parts[0]
	set := s.meta.EntitySet(seg.name)
	if set == nil {
		msg := fmt.Sprintf("no entity set %s", seg.name)
		if sg := didyoumean.Closest(seg.name, s.meta.SetNames()); sg != "" {
			msg += "; did you mean " + sg + "?"
		}
		return nil, protoErr(http.StatusNotFound, "NotFound", "%s", msg)
	}
	tg := &target{set: set, tb: c.co.data[set.Name], t: set.Type, path: set.Name}
	if seg.hasKey {
		vals, aerr := c.keyVals(tg.t, seg)
		if aerr != nil {
			return nil, aerr
		}
		tg.path = set.Name + formatKey(tg.t.Key, keyValues(tg.t, vals))
		tg.rec = tg.tb.rows[keyString(tg.t, vals)]
		if tg.rec == nil {
			return nil, c.notFound(tg.t, tg.path)
		}
	}
	for i, seg := range parts[1:] {
		if tg.rec == nil {
			return nil, protoErr(http.StatusBadRequest, "BadRequest", "%s: address one record before its sub-form %s", tg.path, seg.name)
		}
		nav := tg.t.Navigation(seg.name)
		if nav == nil {
			return nil, protoErr(http.StatusNotFound, "NotFound", "%s is not a sub-form of %s", seg.name, tg.t.Name)
		}
		nt := s.meta.Type(nav.Type)
		if nt == nil {
			return nil, protoErr(http.StatusNotFound, "NotFound", "sub-form %s has no type", seg.name)
		}
		if s.rule(nt).text != notText {
			// docs/service.md, Text sub-forms and Versions: text sub-forms
			// without brackets from 20.0.
			if s.version.TextSubforms() && seg.brackets {
				return nil, protoErr(http.StatusBadRequest, "BadRequest", "[%s]: from system version 20.0 text sub-forms are addressed without square brackets; drop them", seg.name)
			}
			if !s.version.TextSubforms() && !seg.brackets {
				return nil, protoErr(http.StatusNotFound, "NotFound", "no sub-form %s; before system version 20.0 text sub-forms are addressed as [%s]", seg.name, seg.name)
			}
		} else if seg.brackets {
			return nil, protoErr(http.StatusBadRequest, "BadRequest", "[%s]: only text sub-forms take square brackets", seg.name)
		}
		parent := tg.rec
		tg = &target{set: tg.set, tb: tg.tb, t: nt, parent: parent, nav: nav, path: tg.path + "/" + nav.Name, brack: seg.brackets}
		if !nav.Collection {
			if seg.hasKey {
				return nil, protoErr(http.StatusBadRequest, "BadRequest", "%s is a single-object sub-form and takes no key", nav.Name)
			}
			if sf := parent.subs[nav.Name]; sf != nil {
				tg.rec = sf.one
			}
			if i != len(parts)-2 && tg.rec == nil {
				return nil, c.notFound(nt, tg.path)
			}
			continue
		}
		if !seg.hasKey {
			continue
		}
		vals, aerr := c.keyVals(nt, seg)
		if aerr != nil {
			return nil, aerr
		}
		tg.path += formatKey(nt.Key, keyValues(nt, vals))
		if sf := parent.subs[nav.Name]; sf != nil {
			want := keyString(nt, vals)
			for _, l := range sf.lines {
				if keyString(nt, l.vals) == want {
					tg.rec = l
					break
				}
			}
		}
		if tg.rec == nil {
			return nil, c.notFound(nt, tg.path)
		}
	}
	return tg, nil
}

func (c *call) notFound(t *odata.EntityType, path string) *apiError {
	return &apiError{status: http.StatusNotFound, code: "NotFound", msg: c.lang.text("noRecord", path, t.Name)}
}

// keyVals checks a key expression against the type's key (docs/service.md,
// Keys).
func (c *call) keyVals(t *odata.EntityType, seg segment) (map[string]any, *apiError) {
	vals := map[string]any{}
	bad := func(format string, args ...any) *apiError {
		return protoErr(http.StatusBadRequest, "BadRequest", "%s: "+format, append([]any{seg.name}, args...)...)
	}
	if len(seg.key) == 1 && seg.key[0].Name == "" {
		if len(t.Key) != 1 {
			return nil, bad("the key of %s is composite: write (%s)", t.Name, strings.Join(t.Key, "=…,")+"=…")
		}
		vals[t.Key[0]] = seg.key[0].Value
	} else {
		for _, kp := range seg.key {
			vals[kp.Name] = kp.Value
		}
	}
	for name, v := range vals {
		p := t.Property(name)
		if p != nil && p.Computed || !t.IsKey(name) && len(seg.key) == 1 && seg.key[0].Name == "" {
			// docs/service.md, Keys: an auto-unique key is read-only and
			// cannot address.
			return nil, c.autoKeyErr(t)
		}
		if p == nil || !t.IsKey(name) {
			return nil, bad("%s is not a key field of %s (key: %s)", name, t.Name, strings.Join(t.Key, ", "))
		}
		_, isInt := v.(int64)
		if _, isText := v.(string); !isInt && !isText {
			// docs/service.md, Keys: a key is a quoted string or an integer.
			return nil, bad("key field %s: %v is neither a quoted string nor a whole number", name, v)
		}
		if isInt != (p.Type == odata.EdmInt64) {
			if isInt && c.autoKey(t) != nil {
				return nil, c.autoKeyErr(t)
			}
			return nil, bad("key field %s is %s: write it %s", name, p.Type, map[bool]string{true: "unquoted", false: "in quotes"}[p.Type == odata.EdmInt64])
		}
	}
	if len(vals) != len(t.Key) {
		return nil, bad("the key of %s is %s", t.Name, strings.Join(t.Key, ", "))
	}
	return vals, nil
}

func (c *call) autoKey(t *odata.EntityType) *odata.Property {
	for _, p := range t.Properties {
		if p.Computed && p.Type == odata.EdmInt64 {
			return p
		}
	}
	return nil
}

func (c *call) autoKeyErr(t *odata.EntityType) *apiError {
	name := "the auto-unique key"
	if p := c.autoKey(t); p != nil {
		name = p.Name
	}
	e := c.screenErr(http.StatusBadRequest, t, nil, "readOnly", name)
	e.msg += " " + fmt.Sprintf("Address %s by %s.", t.Name, strings.Join(t.Key, ", "))
	return e
}

// entityOp serves the entity sets and their sub-forms.
func (c *call) entityOp(method, path string, q url.Values, hdr http.Header, body []byte) (*result, *apiError) {
	s := c.s
	if aerr := c.coldForm(path); aerr != nil {
		return nil, aerr
	}
	write := method != http.MethodGet
	switch method {
	case http.MethodGet, http.MethodPost, http.MethodPatch, http.MethodDelete:
	case http.MethodPut:
		return nil, protoErr(http.StatusMethodNotAllowed, "MethodNotAllowed", "PUT is not supported; use PATCH with the fields to change")
	default:
		return nil, protoErr(http.StatusMethodNotAllowed, "MethodNotAllowed", "method %s is not supported", method)
	}
	if write && !s.version.Writes() {
		return nil, protoErr(http.StatusMethodNotAllowed, "MethodNotAllowed", "create, update and delete are available from system version 17.2 (this server is %s)", s.version)
	}
	if write {
		s.mu.Lock()
		defer s.mu.Unlock()
	} else {
		s.mu.RLock()
		defer s.mu.RUnlock()
	}
	tg, aerr := c.resolve(path)
	if aerr != nil {
		return nil, aerr
	}
	if write && s.rule(tg.set.Type).readOnly {
		return nil, &apiError{status: http.StatusForbidden, code: "Forbidden", msg: c.lang.text("notOpen", tg.set.Name)}
	}
	if write && s.unpermitted(tg.set.Name) {
		return nil, c.noPermission(tg.set.Type)
	}
	if !write {
		if tg.nav == nil {
			c.markPrepared(tg.set.Name)
		}
		return c.read(tg, q, hdr)
	}
	var in map[string]any
	if method != http.MethodDelete {
		var aerr *apiError
		if in, aerr = decodeBody(body); aerr != nil {
			return nil, aerr
		}
	}
	s.dirty = true
	c.wrote.Store(true)
	switch {
	case method == http.MethodDelete:
		return c.delete(tg)
	case tg.nav != nil && !tg.nav.Collection:
		return c.writeSingle(tg, in)
	case method == http.MethodPost && tg.collection():
		return c.create(tg, in)
	case method == http.MethodPatch && tg.rec != nil:
		return c.update(tg, in)
	}
	return nil, protoErr(http.StatusMethodNotAllowed, "MethodNotAllowed", "%s is not allowed on %s", method, tg.path)
}

// markPrepared records that an entity was requested, so GetMetadataFor
// answers for it; a read holds the read lock, so this takes its own.
func (c *call) markPrepared(set string) {
	c.s.prepMu.Lock()
	c.s.prepared[set] = true
	c.s.prepMu.Unlock()
}

func decodeBody(body []byte) (map[string]any, *apiError) {
	if in, ok := odata.DecodeObject(body); ok {
		return in, nil // the plain road, in one pass: a deep insert carries every line
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var in map[string]any
	if err := dec.Decode(&in); err != nil || in == nil {
		return nil, protoErr(http.StatusBadRequest, "BadRequest", "the body must be one JSON object with field names as keys")
	}
	if dec.More() {
		return nil, protoErr(http.StatusBadRequest, "BadRequest", "the body holds more than one JSON value")
	}
	return in, nil
}

func (c *call) read(tg *target, q url.Values, hdr http.Header) (*result, *apiError) {
	o, aerr := c.parseQuery(tg.t, q, hdr)
	if aerr != nil {
		return nil, aerr
	}
	ctx := c.base + "/$metadata#" + tg.path
	if tg.collection() {
		var rows []*record
		if tg.nav == nil {
			rows = tg.tb.sortedWhere(o.filter)
		} else if sf := tg.parent.subs[tg.nav.Name]; sf != nil {
			rows = sf.lines
		}
		rows = orderRows(rows, o.order)
		list := make([]any, 0)
		skipped := 0
		for _, r := range rows {
			if o.filter != nil && !o.filter.Match(r.vals) {
				continue
			}
			if skipped < o.skip {
				skipped++
				continue
			}
			if o.top >= 0 && len(list) >= o.top || len(list) >= c.s.opts.RowCap {
				break
			}
			list = append(list, c.render(tg.t, r, c.childPath(tg, r), o.sel, o.exp, o.full))
		}
		if len(o.sel) > 0 {
			ctx += "(" + strings.Join(o.sel, ",") + ")"
		}
		return jsonResult(200, obj{{"@odata.context", ctx}, {"value", list}}), nil
	}
	if tg.rec == nil { // an empty single sub-form
		if c.s.rule(tg.t).text != notText {
			return jsonResult(200, obj{{"@odata.context", ctx + "/$entity"}, {"TEXT", nil}, {"APPEND", nil}, {"SIGNATURE", nil}}), nil
		}
		return nil, c.notFound(tg.t, tg.path)
	}
	out := append(obj{{"@odata.context", ctx + "/$entity"}}, c.render(tg.t, tg.rec, tg.path, o.sel, o.exp, o.full)...)
	return jsonResult(200, out), nil
}

// childPath is the path of r, a member of the collection tg names.
func (c *call) childPath(tg *target, r *record) string {
	return tg.path + formatKey(tg.t.Key, keyValues(tg.t, r.vals))
}

// styleBlock starts every HTML text on read (docs/service.md, Text sub-forms).
const styleBlock = `<style> p,div,li {margin:0cm;font-size:10.0pt;font-family:'Arial';}li > font > p {display: inline-block;}</style>`

var edmAnnotation = map[odata.EdmType]string{
	odata.EdmInt64: "#Int64", odata.EdmDecimal: "#Decimal", odata.EdmDateTimeOffset: "#DateTimeOffset",
}

// render writes one record as a payload (docs/service.md, Payloads).
func (c *call) render(t *odata.EntityType, r *record, path string, sel []string, exp []*expandItem, full bool) obj {
	s := c.s
	out := make(obj, 0, len(t.Properties)+4)
	if full {
		out = append(out, kv{"@odata.type", s.typeRef(t)},
			kv{"@odata.id", c.base + "/" + path}, kv{"@odata.editLink", path})
	}
	ru := s.rule(t)
	fields := t.Properties
	if len(sel) > 0 {
		fields = make([]*odata.Property, 0, len(sel))
		for _, f := range sel {
			fields = append(fields, t.Property(f))
		}
	}
	hidden := s.hidden[t.Name]
	for _, p := range fields {
		if hidden[p.Name] {
			continue // field-level permissions: not in the answer at all
		}
		v := r.vals[p.Name]
		switch {
		case ru.text != notText && (p.Name == "APPEND" || p.Name == "SIGNATURE"):
			v = nil // docs/service.md, Text sub-forms: returned as null on read
		case ru.text == textHTML && p.Name == "TEXT" && v != nil:
			v = s.readBackText(v.(string))
		case p.Name == "EXTFILENAME" && v != nil && !s.version.DataURIAttachments():
			suffix, _ := r.vals["SUFFIX"].(string)
			v = fmt.Sprintf(`..\..\system\mail\sandbox\%v.%s`, r.vals["EXTFILENUM"], suffix)
		default:
			v = s.numberText(p, v)
		}
		if full && v != nil {
			if a := edmAnnotation[p.Type]; a != "" {
				out = append(out, kv{p.Name + "@odata.type", a})
			}
		}
		out = append(out, kv{p.Name, v})
	}
	if full {
		for _, n := range t.Navigations {
			out = append(out, kv{n.Name + "@odata.associationLink", c.base + "/" + path + "/" + n.Name + "/$ref"},
				kv{n.Name + "@odata.navigationLink", c.base + "/" + path + "/" + n.Name})
		}
	}
	for _, e := range exp {
		nt := s.meta.Type(e.nav.Type)
		np := path + "/" + e.nav.Name
		out = append(out, kv{e.nav.Name + "@odata.context", c.base + "/$metadata#" + np})
		sf := r.subs[e.nav.Name]
		if e.nav.Collection {
			list := make([]any, 0)
			if sf != nil {
				for _, l := range sf.lines {
					list = append(list, c.render(nt, l, np+formatKey(nt.Key, keyValues(nt, l.vals)), e.sel, e.exp, full))
				}
			}
			out = append(out, kv{e.nav.Name, list})
		} else if sf != nil && sf.one != nil {
			out = append(out, kv{e.nav.Name, c.render(nt, sf.one, np, e.sel, e.exp, full)})
		} else {
			out = append(out, kv{e.nav.Name, nil})
		}
	}
	return out
}

// kv and obj write JSON objects with their keys in order.
type kv struct {
	k string
	v any
}

type obj []kv

func (o obj) MarshalJSON() ([]byte, error) { return appendJSON(nil, o), nil }

// appendJSON writes the values a payload holds without reflection (the
// sandbox answers tens of thousands of sub-requests a second).
func appendJSON(b []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...)
	case string:
		return appendString(b, x)
	case int64:
		return strconv.AppendInt(b, x, 10)
	case json.Number:
		return append(b, x...)
	case bool:
		return strconv.AppendBool(b, x)
	case obj:
		b = append(b, '{')
		for i, f := range x {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, f.k)
			b = append(b, ':')
			b = appendJSON(b, f.v)
		}
		return append(b, '}')
	case []any:
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSON(b, e)
		}
		return append(b, ']')
	}
	j, err := json.Marshal(v)
	if err != nil {
		return append(b, "null"...)
	}
	return append(b, j...)
}

const hexDigits = "0123456789abcdef"

// appendString writes s as a JSON string (no HTML escaping).
func appendString(b []byte, s string) []byte {
	if !utf8.ValidString(s) {
		j, _ := json.Marshal(s) // U+FFFD for invalid bytes, as encoding/json does
		return append(b, j...)
	}
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		default:
			b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
		start = i + 1
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
