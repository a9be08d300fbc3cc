package odata

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"html"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Error is an error answer of the service: a screen error (docs/service.md,
// Errors, XML FORM/InterfaceErrors or its JSON form), a standard OData JSON
// error, a proxy's HTML page, or anything else, with the HTTP status.
type Error struct {
	Status int
	// Entity is the FORM's TYPE: the entity whose screen refused.
	Entity string
	// Values are the field values the screen echoed back (docs/service.md,
	// Errors).
	Values map[string]string
	// Messages are the screen's messages, in the URL's language.
	Messages []string
	// Code is the OData error code, when the body had one.
	Code string
	// RetryAfter is the Retry-After header's wait; 0 when absent.
	RetryAfter time.Duration
	// HTML is true when a proxy (or anything) answered with a web page.
	HTML bool
	// Snippet is the start of an unrecognised body (or the HTML page's
	// title), never the whole body.
	Snippet string
}

// HTMLMessage is the message of an HTML answer.
const HTMLMessage = "the server answered with an HTML page (a proxy?)"

// snippetLen caps how much of an unknown body an error carries.
const snippetLen = 200

func (e *Error) Error() string {
	var b strings.Builder
	if e.Entity != "" {
		b.WriteString(e.Entity)
		b.WriteString(": ")
	}
	switch {
	case len(e.Messages) > 0:
		b.WriteString(strings.Join(e.Messages, "; "))
	case e.Snippet != "":
		b.WriteString("unexpected answer: ")
		b.WriteString(strconv.Quote(e.Snippet))
	default:
		if t := http.StatusText(e.Status); t != "" {
			b.WriteString(t)
		} else {
			b.WriteString("error")
		}
	}
	if e.HTML && e.Snippet != "" && len(e.Messages) > 0 {
		fmt.Fprintf(&b, ": %q", e.Snippet)
	}
	if e.Code != "" {
		fmt.Fprintf(&b, " [code %s]", e.Code)
	}
	fmt.Fprintf(&b, " (HTTP %d", e.Status)
	if e.RetryAfter > 0 {
		fmt.Fprintf(&b, ", retry after %s", e.RetryAfter)
	}
	b.WriteString(")")
	return b.String()
}

// Kind classifies an error answer by the status codes of real servers
// (docs/servers.md, Status codes).
type Kind int

const (
	KindOther       Kind = iota
	KindScreen           // 400: a screen refused (also "screen not open to the API")
	KindAuth             // 401: bad credentials
	KindForbidden        // 403: the user may not use this screen through the API
	KindNotFound         // 404
	KindConflict         // 409: a POST of a key that exists
	KindThrottled        // 429: too many calls; see RetryAfter
	KindServerError      // 5xx
)

var kindNames = [...]string{"other", "screen error", "unauthorized", "forbidden", "not found", "key exists", "throttled", "server error"}

func (k Kind) String() string {
	if k < 0 || int(k) >= len(kindNames) {
		return "kind(" + strconv.Itoa(int(k)) + ")"
	}
	return kindNames[k]
}

// statusKinds are the kinds a single status makes; every 5xx is
// KindServerError.
var statusKinds = map[int]Kind{400: KindScreen, 401: KindAuth, 403: KindForbidden, 404: KindNotFound, 409: KindConflict, 429: KindThrottled}

// Kind classifies e by its status.
func (e *Error) Kind() Kind {
	if k, ok := statusKinds[e.Status]; ok {
		return k
	}
	if e.Status >= 500 && e.Status <= 599 {
		return KindServerError
	}
	return KindOther
}

// KindOf returns the Kind of the *Error inside err, or KindOther.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind()
	}
	return KindOther
}

func IsScreenError(err error) bool  { return KindOf(err) == KindScreen }
func IsUnauthorized(err error) bool { return KindOf(err) == KindAuth }
func IsForbidden(err error) bool    { return KindOf(err) == KindForbidden }
func IsNotFound(err error) bool     { return KindOf(err) == KindNotFound }
func IsConflict(err error) bool     { return KindOf(err) == KindConflict }
func IsThrottled(err error) bool    { return KindOf(err) == KindThrottled }
func IsServerError(err error) bool  { return KindOf(err) == KindServerError }

// ParseError reads an error answer. It never fails: what it cannot read
// becomes a Snippet. A nil header is allowed.
func ParseError(status int, h http.Header, body []byte) *Error {
	return parseErrorAt(status, h, body, time.Now())
}

func parseErrorAt(status int, h http.Header, body []byte, now time.Time) *Error {
	e := &Error{Status: status}
	if h != nil {
		e.RetryAfter = parseRetryAfter(h.Get("Retry-After"), now)
	}
	ct := ""
	if h != nil {
		ct = strings.ToLower(h.Get("Content-Type"))
	}
	trimmed := bytes.TrimSpace(bytes.TrimPrefix(body, []byte("\xef\xbb\xbf")))
	switch {
	case len(trimmed) == 0:
		return e
	case strings.Contains(ct, "text/html") || looksHTML(trimmed):
		e.HTML = true
		e.Messages = []string{HTMLMessage}
		e.Snippet = htmlTitle(trimmed)
		return e
	case trimmed[0] == '<':
		if parseFormXML(trimmed, e) {
			return e
		}
	case trimmed[0] == '{':
		if parseErrorJSON(trimmed, e) {
			return e
		}
	}
	e.Snippet = snippet(trimmed)
	return e
}

// parseRetryAfter reads seconds or an HTTP-date (RFC 9110 10.2.3).
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		if n <= 0 {
			return 0
		}
		if n > 24*3600 {
			n = 24 * 3600 // a day is already absurd; keep the arithmetic sane
		}
		return time.Duration(n) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return min(d.Round(time.Second), 24*time.Hour)
		}
	}
	return 0
}

var htmlStart = regexp.MustCompile(`(?i)^(<\?xml[^>]*>\s*)?(<!--.*?-->\s*)*(<!doctype\s+html|<html[\s>]|<head[\s>]|<body[\s>]|<title[\s>])`)

func looksHTML(b []byte) bool {
	if len(b) > 1024 {
		b = b[:1024]
	}
	return htmlStart.Match(b)
}

var titleRE = regexp.MustCompile(`(?is)<title[^>]*>(.*?)</title>`)

func htmlTitle(b []byte) string {
	m := titleRE.FindSubmatch(b)
	if m == nil {
		return ""
	}
	return snippet([]byte(strings.Join(strings.Fields(html.UnescapeString(string(m[1]))), " ")))
}

// snippet returns the start of b as printable text.
func snippet(b []byte) string {
	cut := false
	if len(b) > snippetLen {
		b, cut = b[:snippetLen], true
	}
	var s strings.Builder
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		if r == utf8.RuneError && n == 1 && len(b) < utf8.UTFMax && cut {
			break // a rune cut by the limit
		}
		b = b[n:]
		switch {
		case r == '\n' || r == '\r' || r == '\t':
			r = ' '
		case r < ' ' || r == 0x7f || r == utf8.RuneError:
			r = '?'
		}
		s.WriteRune(r)
	}
	out := strings.Join(strings.Fields(s.String()), " ")
	if cut {
		out += "..."
	}
	return out
}

// parseFormXML reads the body of docs/service.md, Errors: <FORM
// TYPE="X"><X>field values</X>
// <InterfaceErrors><text>message</text>...</InterfaceErrors></FORM>.
func parseFormXML(b []byte, e *Error) bool {
	dec := xml.NewDecoder(bytes.NewReader(b))
	dec.Strict = false
	var root *xml.StartElement
	for root == nil {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		if se, ok := tok.(xml.StartElement); ok {
			root = &se
		}
	}
	if !strings.EqualFold(root.Name.Local, "FORM") {
		return false
	}
	entity := ""
	for _, a := range root.Attr {
		if strings.EqualFold(a.Name.Local, "TYPE") {
			entity = strings.TrimSpace(a.Value)
		}
	}
	var (
		msgs   []string
		values map[string]string
		path   []string // element names below FORM
		text   strings.Builder
	)
	for {
		tok, err := dec.Token()
		if err != nil {
			break // a truncated body still gives what was read
		}
		switch t := tok.(type) {
		case xml.StartElement:
			path = append(path, t.Name.Local)
			text.Reset()
		case xml.CharData:
			text.Write(t)
		case xml.EndElement:
			if len(path) == 0 {
				continue
			}
			name := path[len(path)-1]
			switch {
			case len(path) >= 2 && strings.EqualFold(path[0], "InterfaceErrors") && strings.EqualFold(name, "text"):
				if m := screenLines(text.String()); m != "" {
					msgs = append(msgs, m)
				}
			case len(path) == 1 && strings.EqualFold(name, "InterfaceErrors"):
				// A bare message without text elements.
				if m := screenLines(text.String()); m != "" && len(msgs) == 0 {
					msgs = append(msgs, m)
				}
			case len(path) == 2 && !strings.EqualFold(path[0], "InterfaceErrors"):
				if values == nil {
					values = map[string]string{}
				}
				values[name] = strings.TrimSpace(text.String())
			}
			text.Reset()
			path = path[:len(path)-1]
		}
	}
	if entity == "" && len(msgs) == 0 {
		return false
	}
	e.Entity, e.Messages, e.Values = entity, msgs, values
	return true
}

// screenLines reads a screen message: real servers write a line break as
// a literal "/n" (docs/servers.md, Status codes); each line is trimmed, empty
// lines go.
func screenLines(m string) string {
	lines := strings.Split(strings.ReplaceAll(m, "/n", "\n"), "\n")
	kept := lines[:0]
	for _, l := range lines {
		if l = strings.TrimSpace(l); l != "" {
			kept = append(kept, l)
		}
	}
	return strings.Join(kept, "\n")
}

// parseErrorJSON reads the JSON screen error and the standard OData error.
func parseErrorJSON(b []byte, e *Error) bool {
	var doc map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if dec.Decode(&doc) != nil {
		return false
	}
	if raw, ok := doc["FORM"]; ok {
		return parseFormJSON(raw, e)
	}
	if raw, ok := doc["error"]; ok {
		return parseODataError(raw, e)
	}
	return false
}

func parseFormJSON(raw json.RawMessage, e *Error) bool {
	var form map[string]json.RawMessage
	if json.Unmarshal(raw, &form) != nil {
		return false
	}
	var entity string
	if t, ok := form["@TYPE"]; ok {
		entity = jsonText(t)
	} else if t, ok := form["TYPE"]; ok {
		entity = jsonText(t)
	}
	var msgs []string
	for _, ie := range jsonList(form["InterfaceErrors"]) {
		var obj map[string]json.RawMessage
		if json.Unmarshal(ie, &obj) != nil {
			if s := screenLines(jsonText(ie)); s != "" {
				msgs = append(msgs, s)
			}
			continue
		}
		for _, t := range jsonList(obj["text"]) {
			if s := screenLines(jsonText(t)); s != "" {
				msgs = append(msgs, s)
			}
		}
	}
	var values map[string]string
	for k, v := range form {
		if k == "InterfaceErrors" || strings.HasPrefix(k, "@") || k == "TYPE" {
			continue
		}
		var fields map[string]json.RawMessage
		if json.Unmarshal(v, &fields) != nil {
			continue
		}
		for fk, fv := range fields {
			if strings.HasPrefix(fk, "@") {
				continue
			}
			if values == nil {
				values = map[string]string{}
			}
			values[fk] = jsonText(fv)
		}
	}
	if entity == "" && len(msgs) == 0 {
		return false
	}
	e.Entity, e.Messages, e.Values = entity, msgs, values
	return true
}

func parseODataError(raw json.RawMessage, e *Error) bool {
	var oe struct {
		Code    json.RawMessage `json:"code"`
		Message json.RawMessage `json:"message"`
		Details []struct {
			Code    json.RawMessage `json:"code"`
			Message json.RawMessage `json:"message"`
			Target  json.RawMessage `json:"target"`
		} `json:"details"`
	}
	if json.Unmarshal(raw, &oe) != nil {
		return false
	}
	e.Code = jsonText(oe.Code)
	if m := jsonText(oe.Message); m != "" {
		e.Messages = append(e.Messages, m)
	}
	for _, d := range oe.Details {
		m := jsonText(d.Message)
		if m == "" {
			continue
		}
		if t := jsonText(d.Target); t != "" {
			m = t + ": " + m
		}
		e.Messages = append(e.Messages, m)
	}
	return e.Code != "" || len(e.Messages) > 0
}

// jsonList returns the elements of an array, or the value itself.
func jsonList(raw json.RawMessage) []json.RawMessage {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var list []json.RawMessage
	if raw[0] == '[' && json.Unmarshal(raw, &list) == nil {
		return list
	}
	return []json.RawMessage{raw}
}

// jsonText gives a scalar as text; an object's "#text", "value" or "$"
// member (XML-to-JSON converters and OData 3's {"lang","value"}).
func jsonText(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	switch raw[0] {
	case '"':
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return strings.TrimSpace(s)
		}
	case '{':
		var obj map[string]json.RawMessage
		if json.Unmarshal(raw, &obj) == nil {
			for _, k := range []string{"#text", "value", "$", "text"} {
				if v, ok := obj[k]; ok {
					return jsonText(v)
				}
			}
		}
		return ""
	case '[':
		return ""
	}
	return string(raw) // number, true, false
}

// FormValue is one submitted field a screen error echoes (docs/service.md,
// Errors).
type FormValue struct{ Name, Value string }

// ScreenErrorXML writes the body of docs/service.md, Errors: FORM
// TYPE=entity, an element named after the entity with the submitted values
// (in the order given: the form's) and InterfaceErrors with one text element
// per message. Names that cannot be XML element names are left out. The
// sandbox answers with it, the client's ParseError reads it.
func ScreenErrorXML(entity string, values []FormValue, messages []string) []byte {
	var b bytes.Buffer
	b.WriteString(`<?xml version="1.0" encoding="utf-8"?>` + "\n")
	b.WriteString(`<FORM TYPE="` + attr(entity) + `">`)
	if isXMLName(entity) {
		b.WriteString("<" + entity + ">")
		for _, v := range values {
			if isXMLName(v.Name) {
				b.WriteString("<" + v.Name + ">" + attr(v.Value) + "</" + v.Name + ">")
			}
		}
		b.WriteString("</" + entity + ">")
	}
	b.WriteString("<InterfaceErrors>")
	for _, m := range messages {
		b.WriteString("<text>" + attr(m) + "</text>")
	}
	b.WriteString("</InterfaceErrors></FORM>\n")
	return b.Bytes()
}

func isXMLName(s string) bool {
	if s == "" || strings.HasPrefix(strings.ToLower(s), "xml") {
		return false
	}
	for i, r := range s {
		ok := r == '_' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r > 0x7f && r != utf8.RuneError
		if i > 0 {
			ok = ok || r >= '0' && r <= '9' || r == '-' || r == '.'
		}
		if !ok {
			return false
		}
	}
	return true
}

// ScreenErrorJSON writes the JSON form of a screen error newer servers
// send: text is a string for one message and a list for several.
func ScreenErrorJSON(entity string, messages []string) []byte {
	var text any = messages
	if len(messages) == 1 {
		text = messages[0]
	} else if messages == nil {
		text = []string{}
	}
	doc := map[string]any{"FORM": map[string]any{
		"@TYPE":           entity,
		"InterfaceErrors": map[string]any{"@XmlFormat": "0", "text": text},
	}}
	b, _ := json.Marshal(doc) // maps of strings always marshal
	return b
}

// ODataErrorJSON writes the standard OData JSON error body.
func ODataErrorJSON(code, message string) []byte {
	b, _ := json.Marshal(map[string]any{"error": map[string]string{"code": code, "message": message}})
	return b
}

// Refused reports an error that proves a request (a $batch) was not
// processed at all: the server answered it with a 4xx (other than a
// timeout). Anything else after sending may have reached the server.
func Refused(err error) (*Error, bool) {
	var ind *InDoubtError
	if errors.As(err, &ind) {
		return nil, false
	}
	var oe *Error
	if errors.As(err, &oe) && oe.Status >= 400 && oe.Status < 500 && oe.Status != 408 {
		return oe, true
	}
	return nil, false
}
