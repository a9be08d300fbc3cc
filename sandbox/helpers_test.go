package sandbox_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/migrate-tool/migrate/odata/odatatest"
	"github.com/migrate-tool/migrate/sandbox"
)

// tc is a test client of one sandbox.
type tc struct {
	t    *testing.T
	sb   *sandbox.Server
	srv  *httptest.Server
	base string // service root URL
	auth string // Authorization header
}

func start(t *testing.T, opts sandbox.Options) *tc {
	t.Helper()
	sb, err := sandbox.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(sb)
	t.Cleanup(func() {
		srv.Close()
		sb.Close()
	})
	return &tc{t: t, sb: sb, srv: srv, base: srv.URL + sandbox.BasePath, auth: basic("demo", "demo")}
}

func basic(user, pass string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass))
}

type resp struct {
	status int
	header http.Header
	body   []byte
}

func (r resp) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("status %d, body not a JSON object: %v\n%s", r.status, err, r.body)
	}
	return m
}

func (r resp) String() string { return string(r.body) }

// do sends method to base+path with an optional JSON body (a string is
// sent as is) and header pairs.
func (c *tc) do(method, path string, body any, hdr ...string) resp {
	c.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			c.t.Fatal(err)
		}
		rd = bytes.NewReader(j)
	}
	url := path
	if !strings.HasPrefix(path, "http") {
		url = c.base + path
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		c.t.Fatal(err)
	}
	if c.auth != "" {
		req.Header.Set("Authorization", c.auth)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	res, err := c.srv.Client().Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return resp{status: res.StatusCode, header: res.Header, body: b}
}

// must asserts the status and returns the response.
func (c *tc) must(status int, method, path string, body any, hdr ...string) resp {
	c.t.Helper()
	r := c.do(method, path, body, hdr...)
	if r.status != status {
		c.t.Fatalf("%s %s: status %d, want %d\n%s", method, path, r.status, status, r.body)
	}
	return r
}

// seed creates a customer, a family and two parts.
func (c *tc) seed() {
	c.t.Helper()
	c.must(201, "POST", "/CUSTOMERS", map[string]any{"CUSTNAME": "C100", "CUSTDES": "Acme Ltd"})
	c.must(201, "POST", "/FAMILY_LOG", map[string]any{"FAMILYNAME": "F1", "FAMILYDESC": "Fasteners"})
	c.must(201, "POST", "/LOGPART", map[string]any{"PARTNAME": "P1", "PARTDES": "Bolt M6", "FAMILYNAME": "F1", "PRICE": 1.25})
	c.must(201, "POST", "/LOGPART", map[string]any{"PARTNAME": "P2", "PARTDES": "Nut M6"})
}

func field(m map[string]any, path ...string) any {
	var v any = m
	for _, p := range path {
		mm, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = mm[p]
	}
	return v
}

func httpServer(h http.Handler) *httptest.Server { return httptest.NewServer(h) }

// newClock is an injectable clock tests move by hand (Advance).
func newClock() *odatatest.Clock {
	return odatatest.NewClock(time.Date(2026, 3, 14, 9, 30, 0, 0, time.UTC))
}

// quirkIf is Options.Quirks with quirk on, or none when on is false: a
// test's case of the real server's behaviour and its case of the spec's.
func quirkIf(on bool, quirk string) map[string]bool {
	if !on {
		return nil
	}
	return map[string]bool{quirk: true}
}
