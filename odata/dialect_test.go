package odata

import (
	"bytes"
	"context"
	"encoding/json"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

const guid1 = "3a943e5e-c925-4fae-b2d5-9e2f0a36c6d8"

// TestStandardValues: Guid and Date values are written as the standard
// writes them, bare in keys and filters and strings in bodies, and read
// back from keys and answers as the same values.
func TestStandardValues(t *testing.T) {
	t.Parallel()
	lits := []struct {
		v    any
		want string
	}{
		{Guid(guid1), guid1},
		{Date("2026-11-03"), "2026-11-03"},
		{"2026-11-03", "'2026-11-03'"},
	}
	for _, tc := range lits {
		if got, err := FormatLiteral(tc.v); err != nil || got != tc.want {
			t.Errorf("FormatLiteral(%#v) = %q, %v; want %q", tc.v, got, err, tc.want)
		}
	}
	body, err := MarshalBody(map[string]any{"ID": Guid(guid1), "CURDATE": Date("2026-11-03")})
	if want := `{"CURDATE":"2026-11-03","ID":"` + guid1 + `"}`; err != nil || string(body) != want {
		t.Errorf("MarshalBody = %s, %v; want %s", body, err, want)
	}
	keys := []struct {
		key  string
		want any
	}{
		{"(" + guid1 + ")", Guid(guid1)},
		{"(" + strings.ToUpper(guid1) + ")", Guid(strings.ToUpper(guid1))},
		{"(2026-11-03)", Date("2026-11-03")},
		{"(12)", int64(12)},
	}
	for _, tc := range keys {
		parts, err := ParseKey(tc.key)
		if err != nil || len(parts) != 1 || parts[0].Value != tc.want {
			t.Errorf("ParseKey(%s) = %v, %v; want %#v", tc.key, parts, err, tc.want)
			continue
		}
		if k, err := pathKeyOf(parts); err != nil || "("+k+")" != tc.key {
			t.Errorf("PathKey of ParseKey(%s) = %q, %v", tc.key, k, err)
		}
	}
	if _, err := ParseKey("(3a943e5e-c925)"); err == nil {
		t.Error("ParseKey took half a Guid")
	}
	if v, err := DecodeValue(EdmGuid, guid1); err != nil || v != Guid(guid1) {
		t.Errorf("DecodeValue(Edm.Guid) = %#v, %v", v, err)
	}
	if _, err := DecodeValue(EdmGuid, "C1001"); err == nil {
		t.Error("DecodeValue(Edm.Guid) took C1001")
	}
	if v, err := DecodeValue(EdmDate, Date("2026-11-03")); err != nil || !v.(time.Time).Equal(time.Date(2026, 11, 3, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("DecodeValue(Edm.Date) = %v, %v", v, err)
	}
	// A $filter's literals by the field's type: a reconciliation's lookup.
	for _, tc := range []struct {
		t    EdmType
		v    any
		want string
	}{
		{EdmDate, "2026-11-03", "2026-11-03"},
		{EdmDate, Date("2026-11-03"), "2026-11-03"},
		{EdmGuid, guid1, guid1},
		{EdmString, guid1, "'" + guid1 + "'"},
		{EdmDateTimeOffset, "2026-11-03", "2026-11-03T00:00:00+00:00"},
	} {
		if got, err := FormatTypedLiteral(tc.t, tc.v); err != nil || got != tc.want {
			t.Errorf("FormatTypedLiteral(%s, %#v) = %q, %v; want %q", tc.t, tc.v, got, err, tc.want)
		}
	}
	typ := &EntityType{Name: "ORDERS", Key: []string{"ID"}, Properties: []*Property{{Name: "ID", Type: EdmGuid}}}
	if k := EntityKey(typ, map[string]any{"ID": guid1}); k != guid1 {
		t.Errorf("EntityKey of a Guid key = %q, want it bare", k)
	}
}

// TestStandardClient: a client of the odata dialect takes any service
// root, calls none of the ERP's functions, and refuses its URL segments.
func TestStandardClient(t *testing.T) {
	t.Parallel()
	srv, seen := newServer(t, func(w http.ResponseWriter, r *http.Request, _ []byte) {
		http.NotFound(w, r)
	})
	odataCfg := func(c *Config) { c.BaseURL, c.Dialect = srv.URL+"/odata/v4/demo/", DialectOData }
	c, _ := newTestClient(t, srv, odataCfg)
	if c.Root() != srv.URL+"/odata/v4/demo" {
		t.Errorf("Root = %q", c.Root())
	}
	ctx := context.Background()
	v, err := c.Version(ctx)
	if err != nil || !v.Standard || v.String() != "OData 4.0" || !v.JSONBatchResponses() {
		t.Errorf("Version = %+v, %v; want the standard's", v, err)
	}
	if user, err := c.LoginName(ctx); user != "" || err != nil {
		t.Errorf("LoginName = %q, %v", user, err)
	}
	if _, _, err := c.MetadataFor(ctx, "ORDERS"); err == nil {
		t.Error("MetadataFor was asked")
	}
	if _, err := c.ForCompany("other"); err == nil {
		t.Error("ForCompany of the odata dialect")
	}
	if got := seen(); len(got) != 0 {
		t.Errorf("calls made: %v", got)
	}
	if _, err := NewClient(Config{BaseURL: srv.URL + "/odata/v4/demo", Dialect: DialectOData, Language: 3}); err == nil {
		t.Error("a language code under the odata dialect")
	}
	if _, err := ParseDialect("sap"); err == nil {
		t.Error(`ParseDialect("sap")`)
	}
}

// TestStandardBatchHeaders: a JSON $batch of the odata dialect is announced
// as OData 4.01 and accepts JSON only; the ERP's stays as it was.
func TestStandardBatchHeaders(t *testing.T) {
	t.Parallel()
	srv, seen := newServer(t, func(w http.ResponseWriter, r *http.Request, _ []byte) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"responses":[{"id":"1","status":200,"body":{"value":[]}}]}`))
	})
	for _, tc := range []struct {
		dialect         Dialect
		version, accept string
		warmUps         int
	}{
		{DialectOData, "4.01", "application/json", 0},
		{DialectPriority, "4.0", "application/json, multipart/mixed;q=0.5", 1},
	} {
		c, _ := newTestClient(t, srv, func(c *Config) {
			c.Dialect = tc.dialect
			if tc.dialect == DialectOData {
				c.BaseURL = srv.URL + "/odata/v4/demo"
			}
		})
		c.SetVersion(Version{Major: 25, Minor: 1})
		before := len(seen())
		if _, err := c.Batch(context.Background(), []BatchRequest{{ID: "1", Method: "POST", URL: "ORDERS", Body: json.RawMessage(`{}`)}}, BatchOptions{}); err != nil {
			t.Fatal(err)
		}
		got := seen()[before:]
		last := got[len(got)-1]
		if len(got) != 1+tc.warmUps || last.Header.Get("OData-Version") != tc.version || last.Header.Get("Accept") != tc.accept {
			t.Errorf("%s: %d calls, the batch's OData-Version %q, Accept %q; want %d, %q, %q", tc.dialect, len(got),
				last.Header.Get("OData-Version"), last.Header.Get("Accept"), 1+tc.warmUps, tc.version, tc.accept)
		}
	}
}

// TestETags: the client of the odata dialect sends, with each PATCH and
// DELETE of an entity, the ETag it last read of it (from a read, a create,
// the lines nested in either, a PATCH's answer), and * for one it never
// read; a 428 (no If-Match) cannot happen.
func TestETags(t *testing.T) {
	t.Parallel()
	const (
		order2 = "0398151f-3bae-4fb0-b255-1e0464749889"
		line1  = "bb439fd0-7b2f-4403-8f16-65e49681c09c"
		other  = "a172747f-4d7a-4925-8526-80dc2e247504"
	)
	answers := [][]BatchResponse{
		{
			{ID: "1", Status: 200, Body: json.RawMessage(`{"@odata.etag":"W/\"r1\"","ID":"` + guid1 + `","ORDERITEMS_SUBFORM":[{"ID":"` + line1 + `","@odata.etag":"W/\"l1\""}]}`)},
			{ID: "2", Status: 201, Body: json.RawMessage(`{"@odata.etag":"W/\"c2\"","ID":"` + order2 + `"}`)},
		},
		{
			{ID: "1", Status: 200, Body: json.RawMessage(`{"@odata.etag":"W/\"r2\"","ID":"` + guid1 + `","CUSTNAME":"C2"}`)},
			{ID: "2", Status: 204}, {ID: "3", Status: 204}, {ID: "4", Status: 204},
		},
		{{ID: "1", Status: 204}, {ID: "2", Status: 204}},
		{{ID: "1", Status: 200, Body: json.RawMessage(`{"value":[{"@odata.etag":"W/\"f3\"","ID":"` + other + `"}]}`)}},
		{{ID: "1", Status: 204}},
	}
	var ifMatch [][]string
	srv, _ := newServer(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		var req struct {
			Requests []struct {
				Headers map[string]string `json:"headers"`
			} `json:"requests"`
		}
		if err := json.Unmarshal(body, &req); err != nil {
			t.Error(err)
		}
		var got []string
		for _, q := range req.Requests {
			got = append(got, q.Headers["if-match"])
		}
		ans := answers[len(ifMatch)]
		ifMatch = append(ifMatch, got)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"responses": ans})
	})
	c, _ := newTestClient(t, srv, func(c *Config) { c.BaseURL, c.Dialect = srv.URL+"/odata/v4/demo", DialectOData })
	c.SetMetadata(loadMetadata(t, "testdata/metadata/etags.xml"))
	ctx := context.Background()
	send := func(reqs ...BatchRequest) {
		t.Helper()
		for i := range reqs {
			reqs[i].ID = string(rune('1' + i))
		}
		if _, err := c.Batch(ctx, reqs, BatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	send(BatchRequest{Method: "GET", URL: "ORDERS(" + guid1 + ")?$expand=ORDERITEMS_SUBFORM"},
		BatchRequest{Method: "POST", URL: "ORDERS", Body: json.RawMessage(`{}`)})
	send(BatchRequest{Method: "PATCH", URL: "ORDERS(" + guid1 + ")", Body: json.RawMessage(`{"CUSTNAME":"C2"}`)},
		BatchRequest{Method: "DELETE", URL: "ORDERS(" + guid1 + ")/ORDERITEMS_SUBFORM(" + line1 + ")"},
		BatchRequest{Method: "DELETE", URL: "ORDERS(" + other + ")"},
		BatchRequest{Method: "DELETE", URL: "ORDERS(" + order2 + ")"})
	send(BatchRequest{Method: "DELETE", URL: "ORDERS(" + guid1 + ")"},
		BatchRequest{Method: "DELETE", URL: "ORDERS(" + order2 + ")"})
	// A filtered read of the set (an upsert's) gives the ETags of its rows.
	send(BatchRequest{Method: "GET", URL: "ORDERS?$filter=CUSTNAME eq 'C1'"})
	send(BatchRequest{Method: "PATCH", URL: "ORDERS(" + other + ")", Body: json.RawMessage(`{"CUSTNAME":"C3"}`)})
	want := [][]string{
		{"", ""},
		{`W/"r1"`, `W/"l1"`, "*", `W/"c2"`},
		{`W/"r2"`, "*"}, // the PATCH's answer gave the new one; a deleted entity's is forgotten
		{""},
		{`W/"f3"`},
	}
	if len(ifMatch) != len(want) {
		t.Fatalf("%d batches sent", len(ifMatch))
	}
	for i := range want {
		if strings.Join(ifMatch[i], " ") != strings.Join(want[i], " ") {
			t.Errorf("batch %d: If-Match %q, want %q", i+1, ifMatch[i], want[i])
		}
	}
}

// TestETagsBounded: past maxETags an older ETag is forgotten for each new
// one, and the newest is kept.
func TestETagsBounded(t *testing.T) {
	t.Parallel()
	var e etags
	for i := range maxETags + 10 {
		e.put("T('"+strconv.Itoa(i)+"')", "t"+strconv.Itoa(i))
	}
	if len(e.tags) != maxETags {
		t.Errorf("%d ETags kept, want %d", len(e.tags), maxETags)
	}
	last := strconv.Itoa(maxETags + 9)
	if got := e.ifMatch("PATCH", "T('"+last+"')"); got != "t"+last {
		t.Errorf("the newest ETag: %q", got)
	}
}

// TestStandardMultipartFallback: a service of the odata dialect that
// refuses a JSON $batch whole (415) is sent the same batch as multipart,
// and every later batch goes so at once; the ERP's client never falls back.
func TestStandardMultipartFallback(t *testing.T) {
	t.Parallel()
	srv, seen := newServer(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		mt, params, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
		if mt != "multipart/mixed" {
			http.Error(w, `{"error":{"code":"415","message":"multipart only"}}`, http.StatusUnsupportedMediaType)
			return
		}
		reqs, err := DecodeMultipartBatchRequest(bytes.NewReader(body), params["boundary"])
		if err != nil {
			t.Error(err)
		}
		var resps []BatchResponse
		for _, q := range reqs {
			resps = append(resps, BatchResponse{ID: q.ID, Status: 201, Headers: map[string]string{"Content-Type": "application/json"}, Body: json.RawMessage(`{"ID":"` + guid1 + `"}`)})
		}
		w.Header().Set("Content-Type", "multipart/mixed; boundary=b1")
		if err := EncodeMultipartBatchResponse(w, "b1", resps); err != nil {
			t.Error(err)
		}
	})
	batch := []BatchRequest{{ID: "1", Method: "POST", URL: "ORDERS", Body: json.RawMessage(`{}`), Headers: map[string]string{"content-type": "application/json"}}}
	c, _ := newTestClient(t, srv, func(c *Config) { c.BaseURL, c.Dialect = srv.URL+"/odata/v4/demo", DialectOData })
	for range 2 {
		got, err := c.Batch(context.Background(), batch, BatchOptions{})
		if err != nil || len(got) != 1 || got[0].Status != 201 {
			t.Fatalf("Batch = %+v, %v", got, err)
		}
	}
	var kinds []string
	for _, s := range seen() {
		mt, _, _ := mime.ParseMediaType(s.Header.Get("Content-Type"))
		kinds = append(kinds, mt)
	}
	if want := "application/json multipart/mixed multipart/mixed"; strings.Join(kinds, " ") != want {
		t.Errorf("batches sent as %v, want %s", kinds, want)
	}
	p, _ := newTestClient(t, srv, nil)
	p.SetVersion(Version{Major: 25, Minor: 1})
	p.forms.Warmed("ORDERS")
	if _, err := p.Batch(context.Background(), batch, BatchOptions{}); err == nil {
		t.Error("the ERP's client fell back to multipart")
	}
}
