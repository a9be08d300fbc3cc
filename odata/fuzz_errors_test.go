package odata

import (
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzParseError feeds untrusted error bodies to ParseError: it must never
// panic, always say something, and never carry more than a snippet.
func FuzzParseError(f *testing.F) {
	for _, b := range seedFiles("testdata/errors/*") {
		f.Add(400, "", b)
	}
	f.Add(429, "text/html", []byte("<html><title>x"))
	f.Add(500, "application/json", []byte(`{"FORM":{"InterfaceErrors":[[1],{"text":[null,{"#text":2}]}]}}`))
	f.Add(400, "", []byte(`{"error":{"message":{"lang":"en","value":"m"}}}`))
	f.Fuzz(func(t *testing.T, status int, ct string, body []byte) {
		h := http.Header{}
		h.Set("Content-Type", ct)
		h.Set("Retry-After", string(body[:min(len(body), 30)]))
		e := ParseError(status, h, body)
		if e == nil {
			t.Fatal("nil error")
		}
		msg := e.Error()
		if msg == "" {
			t.Fatal("empty message")
		}
		if utf8.RuneCountInString(e.Snippet) > snippetLen+3 {
			t.Fatalf("snippet of %d runes", utf8.RuneCountInString(e.Snippet))
		}
		if e.RetryAfter < 0 {
			t.Fatalf("negative Retry-After %v", e.RetryAfter)
		}
		// A message the writer can carry comes back unchanged.
		m := string(body)
		if clean(m) {
			x := ParseError(400, nil, ScreenErrorXML("ORDERS", []FormValue{{"A", m}}, []string{m}))
			if x.Entity != "ORDERS" || len(x.Messages) != 1 || x.Messages[0] != m || x.Values["A"] != m {
				t.Fatalf("XML round trip of %q: %#v", m, x)
			}
			j := ParseError(400, nil, ScreenErrorJSON("ORDERS", []string{m, m}))
			if j.Entity != "ORDERS" || len(j.Messages) != 2 || j.Messages[1] != m {
				t.Fatalf("JSON round trip of %q: %#v", m, j)
			}
		}
	})
}

// clean reports whether s survives XML and trimming: valid UTF-8, no
// control characters, no surrounding space, not empty.
func clean(s string) bool {
	if s == "" || strings.TrimSpace(s) != s || !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if r < ' ' || r == 0x7f || r == 0xFFFD || r >= 0xFFFE || (r >= 0xD800 && r <= 0xDFFF) {
			return false
		}
	}
	return true
}
