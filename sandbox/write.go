package sandbox

import (
	"encoding/base64"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"maps"
	"mime"
	"net/http"
	"regexp"
	"slices"
	"strings"

	"github.com/migrate-tool/migrate/internal/diag"
	"github.com/migrate-tool/migrate/odata"
)

// Writes follow the screens: each record is checked whole before it is
// stored, but a deep insert stores the parent before its children and
// nothing is undone when a child fails (docs/service.md, Batch: no rollback).

var typeWords = map[odata.EdmType]string{
	odata.EdmString: "string", odata.EdmInt64: "integer", odata.EdmDecimal: "decimal number",
	odata.EdmDateTimeOffset: "date-time with offset (YYYY-MM-DDThh:mm:ss+hh:mm)", odata.EdmBoolean: "boolean",
}

// prepare checks body's fields against t and returns the record's new
// values (old values with the body applied) and the sub-form parts of body.
func (c *call) prepare(t *odata.EntityType, old map[string]any, body map[string]any, create bool) (map[string]any, map[string]any, *apiError) {
	s := c.s
	ru := s.rule(t)
	vals := make(map[string]any, len(t.Properties))
	for k, v := range old {
		vals[k] = v
	}
	navs := map[string]any{}
	fail := func(key string, args ...any) (map[string]any, map[string]any, *apiError) {
		echo := make(map[string]any, len(body))
		for k, v := range body {
			if t.Property(k) != nil {
				echo[k] = v
			}
		}
		return nil, nil, c.screenErr(http.StatusBadRequest, t, echo, key, args...)
	}
	unknown := ""
	for k, v := range body {
		if strings.Contains(k, "@") {
			continue // annotations such as @odata.type
		}
		if t.Navigation(k) != nil {
			navs[k] = v
			continue
		}
		if t.Property(k) == nil && (unknown == "" || k < unknown) {
			unknown = k // the first by name, so the message is stable
		}
	}
	if unknown != "" {
		return fail("unknown", unknown, t.Name)
	}
	for _, p := range t.Properties {
		v, present := body[p.Name]
		if !present {
			continue
		}
		if !p.Writable() {
			return fail("readOnly", p.Name)
		}
		if str, isStr := v.(string); isStr && p.Type == odata.EdmDecimal && !s.version.AtLeast(22, 0) && localeDecimal.MatchString(str) {
			// docs/service.md, Service root and Versions: before 22.0 a
			// decimal may use the locale's comma.
			v = json.Number(strings.Replace(str, ",", ".", 1))
		}
		nv, ok := normalize(p, v)
		if !ok {
			return fail("badType", p.Name, shortJSON(v), typeWords[p.Type])
		}
		if str, isStr := nv.(string); isStr && p.MaxLength > 0 && runeLen(str) > p.MaxLength {
			return fail("tooLong", p.Name, p.MaxLength)
		}
		if allowed, ok := ru.allowed[p.Name]; ok {
			sv, _ := nv.(string)
			if !slices.Contains(allowed, sv) {
				return fail("notAllowed", p.Name, sv, quoteList(allowed))
			}
		}
		if !create && t.IsKey(p.Name) && odata.CompareValues(nv, old[p.Name]) != 0 {
			return fail("readOnly", p.Name)
		}
		if nv == nil {
			delete(vals, p.Name)
		} else {
			vals[p.Name] = nv
		}
	}
	for _, r := range ru.refs {
		v, _ := vals[r.field].(string)
		if _, given := body[r.field]; v == "" || !given && !create {
			continue
		}
		tb := c.co.data[r.set]
		target := tb.rows[v]
		if target == nil || len(tb.typ.Key) != 1 {
			return fail("missing", r.field, v, r.set)
		}
		for dst, src := range r.fill {
			if x, ok := target.vals[src]; ok {
				vals[dst] = x
			} else {
				delete(vals, dst)
			}
		}
	}
	for _, p := range t.Properties {
		if !p.Mandatory || p.Computed || create && p.Name == ru.numbered {
			continue
		}
		_, given := body[p.Name]
		if !create && !given {
			continue
		}
		if v, ok := vals[p.Name]; !ok || v == nil || v == "" {
			return fail("required", p.Name)
		}
	}
	return vals, navs, nil
}

func quoteList(list []string) string {
	q := make([]string, len(list))
	for i, x := range list {
		if x == "" {
			q[i] = "blank"
		} else {
			q[i] = "'" + x + "'"
		}
	}
	return strings.Join(q, ", ")
}

func shortJSON(v any) string {
	if str, ok := v.(string); ok {
		return diag.Quote(str, 40)
	}
	return diag.Cut(fmt.Sprint(v), 40)
}

// assignAuto gives a new record its auto-unique Int64 fields.
func (c *call) assignAuto(t *odata.EntityType, vals map[string]any) {
	for _, p := range t.Properties {
		if p.Computed && p.Type == odata.EdmInt64 && p.Name != "FILESIZE" {
			c.co.counters[t.Name+"."+p.Name]++
			vals[p.Name] = c.co.counters[t.Name+"."+p.Name]
		}
	}
}

func (c *call) refused(t *odata.EntityType, vals map[string]any) *apiError {
	if c.s.opts.RefuseKey == nil {
		return nil
	}
	if msg := c.s.opts.RefuseKey(t.Name, refuseKeyString(t, vals)); msg != "" {
		return c.screenText(http.StatusBadRequest, t, vals, msg)
	}
	return nil
}

// create serves POST to an entity set or a collection sub-form.
func (c *call) create(tg *target, in map[string]any) (*result, *apiError) {
	var rec *record
	var path string
	var aerr *apiError
	if tg.nav == nil {
		rec, aerr = c.createTop(tg.tb, in)
		if rec != nil {
			path = tg.set.Name + formatKey(tg.t.Key, keyValues(tg.t, rec.vals))
		}
	} else {
		rec, aerr = c.createLine(tg.t, tg.parent, tg.nav, in)
		if rec != nil {
			path = c.childPath(tg, rec)
		}
	}
	if aerr != nil {
		return nil, aerr
	}
	res := jsonResult(http.StatusCreated, c.writeAnswer(tg.t, rec, path, in))
	res.header = http.Header{"Content-Type": res.header["Content-Type"], "Odata-Version": res.header["Odata-Version"],
		"Location": {c.base + "/" + odata.EscapePath(path)}} // a URI: keys escaped as the client escapes them
	return res, nil
}

// writeAnswer is the record after a write; from 21.1 with the sub-forms the
// request wrote (docs/service.md, Writes).
func (c *call) writeAnswer(t *odata.EntityType, rec *record, path string, in map[string]any) obj {
	var exp []*expandItem
	if c.s.version.ParentChildResponse() {
		for _, n := range t.Navigations {
			if _, ok := in[n.Name]; ok {
				exp = append(exp, &expandItem{nav: n, exp: c.allExpand(c.s.meta.Type(n.Type), in[n.Name])})
			}
		}
	}
	ctx := c.base + "/$metadata#" + path + "/$entity"
	if i := strings.LastIndexByte(path, '('); i > 0 {
		ctx = c.base + "/$metadata#" + path[:i] + "/$entity"
	}
	return append(obj{{"@odata.context", ctx}}, c.render(t, rec, path, nil, exp, false)...)
}

// allExpand expands, below a written sub-form, the sub-forms the body wrote.
func (c *call) allExpand(t *odata.EntityType, body any) []*expandItem {
	if t == nil {
		return nil
	}
	seen := map[string]bool{}
	var items []map[string]any
	switch b := body.(type) {
	case []any:
		for _, x := range b {
			if m, ok := x.(map[string]any); ok {
				items = append(items, m)
			}
		}
	case map[string]any:
		items = append(items, b)
	}
	var out []*expandItem
	for _, m := range items {
		for _, n := range t.Navigations {
			if _, ok := m[n.Name]; ok && !seen[n.Name] {
				seen[n.Name] = true
				out = append(out, &expandItem{nav: n, exp: c.allExpand(c.s.meta.Type(n.Type), m[n.Name])})
			}
		}
	}
	return out
}

func (c *call) createTop(tb *table, in map[string]any) (*record, *apiError) {
	t := tb.typ
	ru := c.s.rule(t)
	vals, navs, aerr := c.prepare(t, nil, in, true)
	if aerr != nil {
		return nil, aerr
	}
	if ru.numbered != "" {
		if v, _ := vals[ru.numbered].(string); v == "" {
			// The next free number: a document keyed by hand may hold one.
			key := t.Name + "#" + ru.numbered
			for {
				c.co.counters[key]++
				vals[ru.numbered] = fmt.Sprintf("%s%02d%06d", ru.prefix, c.s.now().Year()%100, c.co.counters[key])
				if tb.rows[keyString(t, vals)] == nil {
					break
				}
			}
		}
	}
	for _, k := range t.Key {
		if v, ok := vals[k]; !ok || v == nil || v == "" {
			return nil, c.screenErr(http.StatusBadRequest, t, vals, "required", k)
		}
	}
	if e := c.refused(t, vals); e != nil {
		return nil, e
	}
	ks := keyString(t, vals)
	if tb.rows[ks] != nil {
		// A POST of a key that exists: 409 with the screen's message.
		return nil, c.screenErr(http.StatusConflict, t, vals, "exists", formatKey(t.Key, keyValues(t, vals)))
	}
	c.assignAuto(t, vals)
	rec := newRecord()
	rec.vals = vals
	tb.rows[ks] = rec
	return rec, c.writeNavs(t, rec, navs)
}

// writeNavs writes the sub-form parts of a body below rec: lines are
// created (or, carrying the key of an existing line, updated).
func (c *call) writeNavs(t *odata.EntityType, rec *record, navs map[string]any) *apiError {
	for _, name := range slices.Sorted(maps.Keys(navs)) {
		nav := t.Navigation(name)
		nt := c.s.meta.Type(nav.Type)
		if nt == nil {
			continue
		}
		if !nav.Collection {
			m, ok := navs[name].(map[string]any)
			if !ok {
				return protoErr(http.StatusBadRequest, "BadRequest", "%s is a single-object sub-form: give an object", name)
			}
			if _, aerr := c.writeSingleObj(nt, rec, nav, m); aerr != nil {
				return aerr
			}
			continue
		}
		list, ok := navs[name].([]any)
		if !ok {
			return protoErr(http.StatusBadRequest, "BadRequest", "%s is a collection sub-form: give an array of lines", name)
		}
		for _, x := range list {
			m, ok := x.(map[string]any)
			if !ok {
				return protoErr(http.StatusBadRequest, "BadRequest", "%s: every line must be a JSON object", name)
			}
			if line := c.findLine(nt, rec, nav, m); line != nil {
				if aerr := c.updateRecord(nt, line, m); aerr != nil {
					return aerr
				}
				continue
			}
			if _, aerr := c.createLine(nt, rec, nav, m); aerr != nil {
				return aerr
			}
		}
	}
	return nil
}

func (c *call) findLine(t *odata.EntityType, parent *record, nav *odata.NavigationProperty, m map[string]any) *record {
	sf := parent.subs[nav.Name]
	if sf == nil {
		return nil
	}
	vals := map[string]any{}
	for _, k := range t.Key {
		p := t.Property(k)
		if p == nil {
			return nil
		}
		v, ok := normalize(p, m[k])
		if !ok || v == nil {
			return nil
		}
		vals[k] = v
	}
	want := keyString(t, vals)
	for _, l := range sf.lines {
		if keyString(t, l.vals) == want {
			return l
		}
	}
	return nil
}

func (c *call) createLine(t *odata.EntityType, parent *record, nav *odata.NavigationProperty, in map[string]any) (*record, *apiError) {
	in, aerr := c.attachmentIn(t, in, true)
	if aerr != nil {
		return nil, aerr
	}
	vals, navs, aerr := c.prepare(t, nil, in, true)
	if aerr != nil {
		return nil, aerr
	}
	sf := parent.sub(nav.Name)
	// Lines get increasing integer keys (KLINE, EXTFILENUM, ...).
	if len(t.Key) == 1 && t.Property(t.Key[0]) != nil && t.Property(t.Key[0]).Type == odata.EdmInt64 {
		if _, ok := vals[t.Key[0]]; !ok {
			var max int64
			for _, l := range sf.lines {
				if n, _ := l.vals[t.Key[0]].(int64); n > max {
					max = n
				}
			}
			vals[t.Key[0]] = max + 1
		}
	}
	for _, k := range t.Key {
		if v, ok := vals[k]; !ok || v == nil || v == "" {
			return nil, c.screenErr(http.StatusBadRequest, t, vals, "required", k)
		}
	}
	ks := keyString(t, vals)
	for _, l := range sf.lines {
		if keyString(t, l.vals) == ks {
			return nil, c.screenErr(http.StatusConflict, t, vals, "exists", formatKey(t.Key, keyValues(t, vals)))
		}
	}
	if e := c.refused(t, vals); e != nil {
		return nil, e
	}
	c.assignAuto(t, vals)
	c.attachmentStamp(t, vals, true)
	rec := newRecord()
	rec.vals = vals
	insertLine(t, sf, rec)
	return rec, c.writeNavs(t, rec, navs)
}

// update serves PATCH of a record (top level or line).
func (c *call) update(tg *target, in map[string]any) (*result, *apiError) {
	if aerr := c.updateRecord(tg.t, tg.rec, in); aerr != nil {
		return nil, aerr
	}
	return jsonResult(http.StatusOK, c.writeAnswer(tg.t, tg.rec, tg.path, in)), nil
}

func (c *call) updateRecord(t *odata.EntityType, rec *record, in map[string]any) *apiError {
	in, aerr := c.attachmentIn(t, in, false)
	if aerr != nil {
		return aerr
	}
	vals, navs, aerr := c.prepare(t, rec.vals, in, false)
	if aerr != nil {
		return aerr
	}
	if e := c.refused(t, vals); e != nil {
		return e
	}
	c.attachmentStamp(t, vals, false)
	rec.vals = vals
	return c.writeNavs(t, rec, navs)
}

func (c *call) delete(tg *target) (*result, *apiError) {
	switch {
	case tg.nav == nil && tg.rec != nil:
		delete(tg.tb.rows, keyString(tg.t, tg.rec.vals))
	case tg.nav != nil && tg.nav.Collection && tg.rec != nil:
		sf := tg.parent.subs[tg.nav.Name]
		for i, l := range sf.lines {
			if l == tg.rec {
				sf.lines = append(sf.lines[:i], sf.lines[i+1:]...)
				break
			}
		}
	case tg.nav != nil && !tg.nav.Collection:
		if tg.rec == nil {
			return nil, c.notFound(tg.t, tg.path)
		}
		tg.parent.subs[tg.nav.Name].one = nil
	default:
		return nil, protoErr(http.StatusMethodNotAllowed, "MethodNotAllowed", "DELETE needs one record: %s names a collection", tg.path)
	}
	return &result{status: http.StatusNoContent, header: http.Header{"Odata-Version": {"4.0"}}}, nil
}

// writeSingle serves POST and PATCH of a single-object sub-form (a text or
// a ship-to address): both create or change it.
func (c *call) writeSingle(tg *target, in map[string]any) (*result, *apiError) {
	rec, aerr := c.writeSingleObj(tg.t, tg.parent, tg.nav, in)
	if aerr != nil {
		return nil, aerr
	}
	out := append(obj{{"@odata.context", c.base + "/$metadata#" + tg.path + "/$entity"}}, c.render(tg.t, rec, tg.path, nil, nil, false)...)
	return jsonResult(http.StatusOK, out), nil
}

var localeDecimal = regexp.MustCompile(`^-?[0-9]+(,[0-9]+)?$`)

var htmlTag = regexp.MustCompile(`</?[A-Za-z][^<>]*>`)

func (c *call) writeSingleObj(t *odata.EntityType, parent *record, nav *odata.NavigationProperty, in map[string]any) (*record, *apiError) {
	sf := parent.sub(nav.Name)
	kind := c.s.rule(t).text
	if kind == notText {
		var old map[string]any
		if sf.one != nil {
			old = sf.one.vals
		}
		vals, navs, aerr := c.prepare(t, old, in, sf.one == nil)
		if aerr != nil {
			return nil, aerr
		}
		if sf.one == nil {
			sf.one = newRecord()
		}
		sf.one.vals = vals
		return sf.one, c.writeNavs(t, sf.one, navs)
	}
	// docs/service.md, Text sub-forms: TEXT, APPEND, SIGNATURE.
	for k := range in {
		if k != "TEXT" && k != "APPEND" && k != "SIGNATURE" && !strings.Contains(k, "@") {
			return nil, c.screenErr(http.StatusBadRequest, t, nil, "unknown", k, t.Name)
		}
	}
	text, ok := in["TEXT"].(string)
	if !ok {
		return nil, c.screenErr(http.StatusBadRequest, t, nil, "required", "TEXT")
	}
	appendText, _ := in["APPEND"].(bool)
	signature, _ := in["SIGNATURE"].(bool)
	for _, f := range []string{"APPEND", "SIGNATURE"} {
		if v, given := in[f]; given && v != nil {
			if _, isBool := v.(bool); !isBool {
				return nil, c.screenErr(http.StatusBadRequest, t, nil, "badType", f, shortJSON(v), typeWords[odata.EdmBoolean])
			}
		}
	}
	if !c.s.version.TextSubforms() { // before 20.0: the text is replaced
		appendText, signature = false, false
	}
	if kind == textPlain {
		if htmlTag.MatchString(text) {
			return nil, c.screenText(http.StatusBadRequest, t, nil, c.lang.text("badType", "TEXT", "HTML", "plain text (this form takes text without tags)"))
		}
		signature = false // text-only forms: SIGNATURE is always false
	}
	if signature {
		text += "<p>" + xmlEscape(c.user) + "</p>"
	}
	old := ""
	if sf.one != nil {
		old, _ = sf.one.vals["TEXT"].(string)
	}
	if appendText && old != "" {
		if kind == textPlain {
			text = old + "\n" + text
		} else {
			text = old + text
		}
	}
	sf.one = newRecord()
	sf.one.vals["TEXT"] = text
	return sf.one, nil
}

// attachmentIn checks the attachment fields of a write to EXTFILES_SUBFORM
// (docs/service.md, Attachments) and returns the body with SUFFIX without its
// period.
func (c *call) attachmentIn(t *odata.EntityType, in map[string]any, create bool) (map[string]any, *apiError) {
	if t.Name != "EXTFILES_SUBFORM" || t.Property("EXTFILENAME") == nil {
		return in, nil
	}
	out := make(map[string]any, len(in)+2)
	for k, v := range in {
		out[k] = v
	}
	delete(out, "FILESIZE") // computed by the server
	if sfx, given := in["SUFFIX"]; given {
		if !c.s.version.AttachmentSuffix() {
			return nil, c.screenErr(http.StatusBadRequest, t, in, "readOnly", "SUFFIX")
		}
		s, ok := sfx.(string)
		if !ok || len(s) < 2 || s[0] != '.' {
			return nil, c.screenText(http.StatusBadRequest, t, in, c.lang.text("badType", "SUFFIX", shortJSON(sfx), "file extension with a leading period, e.g. .pdf"))
		}
		out["SUFFIX"] = s[1:]
	}
	name, given := in["EXTFILENAME"].(string)
	if !given {
		if create {
			return nil, c.screenErr(http.StatusBadRequest, t, in, "required", "EXTFILENAME")
		}
		return out, nil
	}
	if strings.HasPrefix(name, "data:") {
		meta, data, ok := strings.Cut(name[len("data:"):], ",")
		mt, isB64 := strings.CutSuffix(meta, ";base64")
		raw, err := base64.StdEncoding.DecodeString(data)
		if !ok || !isB64 || err != nil {
			return nil, c.screenErr(http.StatusBadRequest, t, in, "badType", "EXTFILENAME", "…", "data URI (data:<mime-type>;base64,<data>)")
		}
		out["FILESIZE"] = int64(len(raw))
		if _, has := out["SUFFIX"]; !has {
			out["SUFFIX"] = suffixFor(mt)
		}
		return out, nil
	}
	if c.s.version.DataURIAttachments() {
		return nil, c.screenErr(http.StatusBadRequest, t, in, "badType", "EXTFILENAME", shortJSON(name), "data URI (data:<mime-type>;base64,<data>)")
	}
	return out, nil
}

// suffixFor derives a file extension from a MIME type.
func suffixFor(mt string) string {
	switch mt {
	case "application/pdf":
		return "pdf"
	case "text/plain":
		return "txt"
	case "image/jpeg":
		return "jpg"
	}
	if exts, _ := mime.ExtensionsByType(mt); len(exts) > 0 {
		return strings.TrimPrefix(exts[0], ".")
	}
	if _, sub, ok := strings.Cut(mt, "/"); ok {
		return sub
	}
	return ""
}

// attachmentStamp fills the fields the server sets on an attachment.
func (c *call) attachmentStamp(t *odata.EntityType, vals map[string]any, create bool) {
	if t.Name != "EXTFILES_SUBFORM" {
		return
	}
	now := c.s.now().Format("2006-01-02T15:04:05-07:00")
	if create {
		if _, ok := vals["CURDATE"]; !ok && t.Property("CURDATE") != nil {
			vals["CURDATE"] = now
		}
		if t.Property("USERLOGIN") != nil {
			vals["USERLOGIN"] = c.user
		}
	}
	if t.Property("UDATE") != nil {
		vals["UDATE"] = now
	}
	if t.Property("LUSERLOGIN") != nil {
		vals["LUSERLOGIN"] = c.user
	}
}

func xmlEscape(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}
