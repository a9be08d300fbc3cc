package odata

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/migrate-tool/migrate/internal/golden"
)

func TestParseErrorBodies(t *testing.T) {
	t.Parallel()
	tests := []struct {
		file   string
		status int
		ct     string
		want   Error
		msg    string // Error() text
	}{
		{"screen.xml", 400, "application/xml", Error{Status: 400, Entity: "FAMILY_LOG",
			Values:   map[string]string{"FAMILYNAME": "PUMPS", "FAMILY": "0", "DEBITFLAG": "Q"},
			Messages: []string{"Specify Y or N."}}, "FAMILY_LOG: Specify Y or N. (HTTP 400)"},
		{"screen_two.xml", 400, "", Error{Status: 400, Entity: "ORDERS",
			Values:   map[string]string{"CUSTNAME": "X", "ORD": "0"},
			Messages: []string{"Line 1- Customer X not found", "שורה 2- חסר מחיר"}},
			"ORDERS: Line 1- Customer X not found; שורה 2- חסר מחיר (HTTP 400)"},
		{"screen_json_string.json", 400, "application/json", Error{Status: 400, Entity: "ORDERS",
			Messages: []string{"Line 1- Customer X not found"}}, "ORDERS: Line 1- Customer X not found (HTTP 400)"},
		{"screen_json_list.json", 400, "application/json", Error{Status: 400, Entity: "ORDERS",
			Values:   map[string]string{"CUSTNAME": "X", "ORD": "0"},
			Messages: []string{"Line 1- a", "Line 2- b", "Line 3- c"}}, "ORDERS: Line 1- a; Line 2- b; Line 3- c (HTTP 400)"},
		// From 19.1 (docs/servers.md, Status codes): JSON, text a list,
		// Hebrew, "/n" for a line break; "/n" in the XML of older servers
		// too.
		{"screen_json_vendor.json", 400, "application/json", Error{Status: 400, Entity: "ORDERS",
			Messages: []string{"שורה 1- הלקוח X לא קיים\nיש לבדוק את הערך", "Line 2- Price is missing"}},
			"ORDERS: שורה 1- הלקוח X לא קיים\nיש לבדוק את הערך; Line 2- Price is missing (HTTP 400)"},
		{"screen_slash_n.xml", 400, "application/xml", Error{Status: 400, Entity: "ORDERS",
			Values:   map[string]string{"CUSTNAME": "X"},
			Messages: []string{"Line 1- Customer X not found\nCheck the value"}}, ""},
		{"odata_error.json", 404, "application/json", Error{Status: 404, Code: "400-1",
			Messages: []string{"Invalid key", "CUSTNAME: too long"}}, "Invalid key; CUSTNAME: too long [code 400-1] (HTTP 404)"},
		{"proxy.html", 502, "text/html", Error{Status: 502, HTML: true, Messages: []string{HTMLMessage}, Snippet: "502 Bad Gateway"},
			`the server answered with an HTML page (a proxy?): "502 Bad Gateway" (HTTP 502)`},
		{"proxy.html", 503, "", Error{Status: 503, HTML: true, Messages: []string{HTMLMessage}, Snippet: "502 Bad Gateway"}, ""},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprint(tc.file, tc.status), func(t *testing.T) {
			t.Parallel()
			body, err := os.ReadFile(filepath.Join("testdata", "errors", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			h := http.Header{}
			if tc.ct != "" {
				h.Set("Content-Type", tc.ct)
			}
			got := ParseError(tc.status, h, body)
			if !reflect.DeepEqual(*got, tc.want) {
				t.Errorf("ParseError =\n%#v\nwant\n%#v", *got, tc.want)
			}
			if tc.msg != "" && got.Error() != tc.msg {
				t.Errorf("Error() = %q, want %q", got.Error(), tc.msg)
			}
		})
	}
}

func TestParseErrorUnknownBody(t *testing.T) {
	t.Parallel()
	body, err := os.ReadFile("testdata/errors/garbage.txt")
	if err != nil {
		t.Fatal(err)
	}
	e := ParseError(500, nil, body)
	if e.HTML || len(e.Messages) != 0 || !strings.HasPrefix(e.Snippet, "Internal failure at stack frame 0x123 000") || !strings.HasSuffix(e.Snippet, "...") {
		t.Fatalf("got %#v", e)
	}
	if len(e.Snippet) > snippetLen+3 {
		t.Errorf("snippet too long: %d", len(e.Snippet))
	}
	if !strings.Contains(e.Error(), "unexpected answer:") || !strings.HasSuffix(e.Error(), "(HTTP 500)") {
		t.Errorf("Error() = %q", e.Error())
	}
	// Bodies that look structured but are not still become snippets.
	for _, b := range []string{`{"x":1}`, `<root/>`, `{"error":"plain"}`, `<FORM>`, `[1,2]`} {
		if e := ParseError(400, nil, []byte(b)); e.Snippet == "" {
			t.Errorf("%s: no snippet in %#v", b, e)
		}
	}
	if e := ParseError(404, nil, nil); e.Error() != "Not Found (HTTP 404)" {
		t.Errorf("empty body: %q", e.Error())
	}
	if e := ParseError(400, nil, []byte("\x00\x01bad\xff")); e.Snippet != "??bad?" {
		t.Errorf("control characters: %q", e.Snippet)
	}
}

func TestRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	tests := []struct {
		in   string
		want time.Duration
	}{
		{"", 0},
		{"30", 30 * time.Second},
		{" 5 ", 5 * time.Second},
		{"-3", 0},
		{"0", 0},
		{"999999999999", 24 * time.Hour},
		{"Sun, 01 Mar 2026 10:01:30 GMT", 90 * time.Second},
		{"Sun, 01 Mar 2026 09:00:00 GMT", 0},
		{"soon", 0},
	}
	for _, tc := range tests {
		if got := parseRetryAfter(tc.in, now); got != tc.want {
			t.Errorf("parseRetryAfter(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
	h := http.Header{"Retry-After": {"12"}}
	e := ParseError(429, h, nil)
	if e.RetryAfter != 12*time.Second || e.Error() != "Too Many Requests (HTTP 429, retry after 12s)" {
		t.Errorf("429: %#v %q", e, e.Error())
	}
}

func TestKinds(t *testing.T) {
	t.Parallel()
	tests := []struct {
		status int
		kind   Kind
		is     func(error) bool
	}{
		{400, KindScreen, IsScreenError},
		{401, KindAuth, IsUnauthorized},
		{403, KindForbidden, IsForbidden},
		{404, KindNotFound, IsNotFound},
		{409, KindConflict, IsConflict},
		{429, KindThrottled, IsThrottled},
		{500, KindServerError, IsServerError},
		{503, KindServerError, IsServerError},
		{418, KindOther, nil},
	}
	for _, tc := range tests {
		err := fmt.Errorf("POST ORDERS: %w", &Error{Status: tc.status})
		if k := KindOf(err); k != tc.kind {
			t.Errorf("%d: KindOf = %v, want %v", tc.status, k, tc.kind)
		}
		if tc.is != nil && !tc.is(err) {
			t.Errorf("%d: predicate false", tc.status)
		}
		if !isStatus(err, tc.status) || isStatus(err, tc.status+1) {
			t.Errorf("%d: IsStatus wrong", tc.status)
		}
	}
	if KindOf(errors.New("x")) != KindOther || isStatus(nil, 400) || IsNotFound(nil) {
		t.Errorf("non-*Error classified")
	}
	if KindThrottled.String() != "throttled" || Kind(99).String() != "kind(99)" {
		t.Errorf("Kind.String wrong")
	}
}

func TestErrorWritersRoundTrip(t *testing.T) {
	t.Parallel()
	vals := []FormValue{{"FAMILY", "0"}, {"FAMILYNAME", "A<&>\"'"}, {"bad name", "skipped"}}
	msgs := []string{"Specify Y or N.", "שגיאה & <b>"}
	x := ScreenErrorXML("FAMILY_LOG", vals, msgs)
	golden.Check(t, "testdata/errors/written_screen.xml", x)
	e := ParseError(400, nil, x)
	want := &Error{Status: 400, Entity: "FAMILY_LOG", Values: map[string]string{"FAMILYNAME": "A<&>\"'", "FAMILY": "0"}, Messages: msgs}
	if !reflect.DeepEqual(e, want) {
		t.Errorf("XML round trip:\n%#v\nwant\n%#v", e, want)
	}

	for _, ms := range [][]string{{"one"}, {"one", "two"}} {
		j := ScreenErrorJSON("ORDERS", ms)
		e := ParseError(400, nil, j)
		if e.Entity != "ORDERS" || !reflect.DeepEqual(e.Messages, ms) {
			t.Errorf("JSON round trip of %v: %#v (%s)", ms, e, j)
		}
	}
	if got := string(ScreenErrorJSON("ORDERS", []string{"Line 1- x"})); got != `{"FORM":{"@TYPE":"ORDERS","InterfaceErrors":{"@XmlFormat":"0","text":"Line 1- x"}}}` {
		t.Errorf("ScreenErrorJSON = %s", got)
	}
	o := ODataErrorJSON("404", "No such entity")
	if string(o) != `{"error":{"code":"404","message":"No such entity"}}` {
		t.Errorf("ODataErrorJSON = %s", o)
	}
	if e := ParseError(404, nil, o); e.Code != "404" || e.Messages[0] != "No such entity" {
		t.Errorf("OData round trip: %#v", e)
	}
}
