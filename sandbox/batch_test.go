package sandbox_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime"
	"strings"
	"testing"

	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/sandbox"
)

func jsonBatch(t *testing.T, reqs []odata.BatchRequest) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := odata.EncodeJSONBatch(&buf, reqs); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// batch posts reqs in the format asked and decodes the answer in whatever
// format it came.
func (c *tc) batch(format string, reqs []odata.BatchRequest, hdr ...string) (string, []odata.BatchResponse) {
	c.t.Helper()
	var body []byte
	ct := "application/json"
	if format == "multipart" {
		var buf bytes.Buffer
		if err := odata.EncodeMultipartBatch(&buf, "b1", reqs, false); err != nil {
			c.t.Fatal(err)
		}
		body, ct = buf.Bytes(), "multipart/mixed;boundary=b1"
	} else {
		body = jsonBatch(c.t, reqs)
	}
	r := c.must(200, "POST", "/$batch", body, append([]string{"Content-Type", ct}, hdr...)...)
	mt, params, err := mime.ParseMediaType(r.header.Get("Content-Type"))
	if err != nil {
		c.t.Fatal(err)
	}
	var out []odata.BatchResponse
	if mt == "multipart/mixed" {
		out, err = odata.DecodeMultipartBatchResponse(bytes.NewReader(r.body), params["boundary"])
		format = "multipart"
	} else {
		out, err = odata.DecodeJSONBatchResponse(bytes.NewReader(r.body))
		format = "json"
	}
	if err != nil {
		c.t.Fatalf("decoding the batch answer: %v\n%s", err, r.body)
	}
	return format, out
}

func post(id, url string, body string, deps ...string) odata.BatchRequest {
	return odata.BatchRequest{ID: id, Method: "POST", URL: url, Headers: map[string]string{"content-type": "application/json"},
		Body: json.RawMessage(body), DependsOn: deps}
}

func statuses(rs []odata.BatchResponse) string {
	var s []string
	for _, r := range rs {
		s = append(s, fmt.Sprintf("%s:%d", r.ID, r.Status))
	}
	return strings.Join(s, " ")
}

// docs/service.md, Batch: $<id> references, Location, dependsOn and 424, in
// JSON.
func TestSpec4_5JSONBatchReferences(t *testing.T) {
	t.Parallel()
	c := start(t, sandbox.Options{})
	c.seed()
	format, rs := c.batch("json", []odata.BatchRequest{
		post("1", "ORDERS", `{"CUSTNAME":"C100"}`),
		post("2", "$1/ORDERITEMS_SUBFORM", `{"PARTNAME":"P1","TQUANT":2}`, "1"),
		post("3", "$1/ORDERITEMS_SUBFORM", `{"PARTNAME":"BAD","TQUANT":2}`, "1"),
		post("4", "FAMILY_LOG", `{"FAMILYNAME":"F9","FAMILYDESC":"x"}`, "3"),
		{ID: "5", Method: "GET", URL: "$1/ORDERITEMS_SUBFORM", DependsOn: []string{"2"}},
		post("6", "ORDERS", `{"CUSTNAME":"NOPE"}`),
		post("7", "$6/ORDERITEMS_SUBFORM", `{"PARTNAME":"P1","TQUANT":1}`),
	})
	if format != "json" {
		t.Errorf("22.1+: a JSON batch gets a JSON answer, got %s", format)
	}
	if got, want := statuses(rs), "1:201 2:201 3:400 4:424 5:200 6:400 7:424"; got != want {
		t.Fatalf("statuses %s, want %s", got, want)
	}
	if loc := rs[0].Header("Location"); !strings.HasSuffix(loc, "/ORDERS('SO26000001')") && !strings.Contains(loc, "/ORDERS('SO") {
		t.Errorf("location %q", loc)
	}
	var lines struct{ Value []map[string]any }
	if err := json.Unmarshal(rs[4].Body, &lines); err != nil || len(lines.Value) != 1 || lines.Value[0]["PDES"] != "Bolt M6" {
		t.Errorf("GET $1/...: %s", rs[4].Body)
	}
	if !strings.Contains(string(rs[2].Body), "BAD") {
		t.Errorf("screen error of 3: %s", rs[2].Body)
	}
	snap := c.sb.Snapshot()
	if len(snap["ORDERS"]) != 1 || len(snap["FAMILY_LOG"]) != 1 {
		t.Errorf("only order 1 and F1 exist: %v", snap)
	}
	if st := c.sb.Stats(); st.Batches != 1 || st.Subrequests != 7 {
		t.Errorf("stats %+v", st)
	}
}

// docs/service.md, Batch: continue-on-error, the default of each format, and
// no rollback.
func TestSpec4_5ContinueOnErrorAndNoRollback(t *testing.T) {
	t.Parallel()
	reqs := func(p string) []odata.BatchRequest {
		return []odata.BatchRequest{
			post("1", "CUSTOMERS", `{"CUSTNAME":"`+p+`1","CUSTDES":"ok"}`),
			post("2", "CUSTOMERS", `{"CUSTNAME":"`+p+`2"}`), // mandatory CUSTDES missing
			post("3", "CUSTOMERS", `{"CUSTNAME":"`+p+`3","CUSTDES":"ok"}`),
		}
	}
	tests := []struct {
		name, format string
		hdr          []string
		want         string
		created      int
	}{
		{"json default continues", "json", nil, "1:201 2:400 3:201", 2},
		{"json prefer off", "json", []string{"Prefer", "odata.continue-on-error=false"}, "1:201 2:400", 1},
		{"multipart default stops", "multipart", nil, "1:201 2:400", 1},
		{"multipart prefer", "multipart", []string{"Prefer", "odata.continue-on-error"}, "1:201 2:400 3:201", 2},
		{"multipart content-type parameter", "multipart", []string{"Content-Type", "multipart/mixed;boundary=b1;odata.continue-on-error=true"}, "1:201 2:400 3:201", 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := start(t, sandbox.Options{})
			_, rs := c.batch(tt.format, reqs("C"), tt.hdr...)
			if got := statuses(rs); got != tt.want {
				t.Errorf("statuses %s, want %s", got, tt.want)
			}
			// No rollback: what succeeded before the failure stays.
			if n := len(c.sb.Snapshot()["CUSTOMERS"]); n != tt.created {
				t.Errorf("%d customers, want %d", n, tt.created)
			}
		})
	}
	t.Run("sub-request content-type parameter", func(t *testing.T) {
		t.Parallel()
		c := start(t, sandbox.Options{})
		rq := reqs("C")
		for i := range rq {
			rq[i].Headers["content-type"] = "application/json;odata.continue-on-error=false"
		}
		if _, rs := c.batch("json", rq); statuses(rs) != "1:201 2:400" {
			t.Errorf("statuses %s", statuses(rs))
		}
	})
	t.Run("atomicity group not rolled back", func(t *testing.T) {
		t.Parallel()
		c := start(t, sandbox.Options{})
		rq := reqs("A")
		for i := range rq {
			rq[i].AtomicityGroup = "g1"
		}
		_, rs := c.batch("multipart", rq, "Prefer", "odata.continue-on-error")
		if statuses(rs) != "1:201 2:400 3:201" || len(c.sb.Snapshot()["CUSTOMERS"]) != 2 {
			t.Errorf("statuses %s, customers %d", statuses(rs), len(c.sb.Snapshot()["CUSTOMERS"]))
		}
	})
}

// docs/service.md, Batch: multipart batches with Content-ID references.
func TestSpec4_5MultipartBatch(t *testing.T) {
	t.Parallel()
	c := start(t, sandbox.Options{})
	c.seed()
	format, rs := c.batch("multipart", []odata.BatchRequest{
		post("1", "FAMILY_LOG", `{"FAMILYNAME":"F2","FAMILYDESC":"Nuts"}`),
		post("2", "$1/FAMILY_LOGPART_SUBFORM", `{"PARTNAME":"P2"}`),
		{ID: "3", Method: "GET", URL: c.base + "/FAMILY_LOG('F2')?$expand=FAMILY_LOGPART_SUBFORM"},
		{ID: "4", Method: "PATCH", URL: "LOGPART('P2')", Headers: map[string]string{"Content-Type": "application/json"}, Body: json.RawMessage(`{"BARCODE":"123"}`)},
		{ID: "5", Method: "DELETE", URL: "LOGPART('P1')"},
	})
	if format != "multipart" {
		t.Errorf("a multipart batch gets a multipart answer, got %s", format)
	}
	if got := statuses(rs); got != "1:201 2:201 3:200 4:200 5:204" {
		t.Fatalf("statuses %s", got)
	}
	if !strings.Contains(string(rs[2].Body), `"PART":2`) || !strings.Contains(string(rs[1].Body), `"PARTDES":"Nut M6"`) {
		t.Errorf("family lines: %s / %s", rs[1].Body, rs[2].Body)
	}
}

// docs/service.md, Batch and Versions: the answer format by version and Accept.
func TestSpec9BatchResponseFormat(t *testing.T) {
	t.Parallel()
	tests := []struct {
		version, accept, want string
	}{
		{"22.0", "", "multipart"},
		{"22.1", "", "json"},
		{"25.1", "multipart/mixed", "multipart"},
		{"25.1", "application/json, multipart/mixed;q=0.5", "json"},
		{"25.1", "application/json;q=0.4, multipart/mixed", "multipart"},
	}
	for _, tt := range tests {
		c := start(t, sandbox.Options{SystemVersion: tt.version})
		var hdr []string
		if tt.accept != "" {
			hdr = []string{"Accept", tt.accept}
		}
		format, rs := c.batch("json", []odata.BatchRequest{{ID: "a", Method: "GET", URL: "CUSTOMERS"}}, hdr...)
		if format != tt.want || len(rs) != 1 || rs[0].ID != "a" || rs[0].Status != 200 {
			t.Errorf("%s accept %q: %s %+v, want %s", tt.version, tt.accept, format, rs, tt.want)
		}
	}
}

// docs/service.md, Batch and Limits: forward and unknown references, the size
// limit.
func TestSpec8BatchRefusals(t *testing.T) {
	t.Parallel()
	many := func(n int) []odata.BatchRequest {
		var rq []odata.BatchRequest
		for i := 0; i < n; i++ {
			rq = append(rq, odata.BatchRequest{ID: fmt.Sprint(i + 1), Method: "GET", URL: "CURRENCIES"})
		}
		return rq
	}
	tests := []struct {
		name, version string
		reqs          []odata.BatchRequest
		status        int
		text          string
	}{
		{"forward dependsOn", "25.1", []odata.BatchRequest{post("1", "CUSTOMERS", `{}`, "2"), post("2", "CUSTOMERS", `{}`)}, 400, "not an earlier request"},
		{"unknown dependsOn", "25.1", []odata.BatchRequest{post("1", "CUSTOMERS", `{}`, "9")}, 400, "not an earlier request"},
		{"forward $ref", "25.1", []odata.BatchRequest{post("1", "$2/ORDERITEMS_SUBFORM", `{}`), post("2", "ORDERS", `{}`)}, 400, "$2"},
		{"100 allowed from 21.0", "21.0", many(100), 200, ""},
		{"101 refused from 21.0", "21.0", many(101), 400, "at most 100"},
		{"1000 allowed before 21.0", "20.1", many(1000), 200, ""},
		{"1001 refused before 21.0", "20.1", many(1001), 400, "at most 1000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := start(t, sandbox.Options{SystemVersion: tt.version})
			r := c.do("POST", "/$batch", jsonBatch(t, tt.reqs))
			if r.status != tt.status || !strings.Contains(r.String(), tt.text) {
				t.Errorf("status %d %s; want %d with %q", r.status, r.body, tt.status, tt.text)
			}
			if tt.status == 400 && len(c.sb.Snapshot()["CUSTOMERS"]) != 0 {
				t.Error("a refused batch ran")
			}
		})
	}
	c := start(t, sandbox.Options{})
	c.must(400, "POST", "/$batch", "{not json", "Content-Type", "application/json")
	c.must(400, "POST", "/$batch", "x", "Content-Type", "text/plain")
	c.must(400, "POST", "/$batch", "--b1\r\n\r\nGET X\r\n--b1--\r\n", "Content-Type", "multipart/mixed;boundary=b1")
	_, rs := c.batch("json", []odata.BatchRequest{{ID: "1", Method: "POST", URL: "$batch", Body: json.RawMessage(`{}`)}})
	if rs[0].Status != 400 {
		t.Errorf("nested $batch: %d", rs[0].Status)
	}
}
