package odata_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/migrate-tool/migrate/internal/golden"
	"github.com/migrate-tool/migrate/odata"
)

const testBoundary = "batch_36522ad7-fc75-4b56-8c71-56071383e77b"

// multipartRequests are sampleRequests without dependsOn (no multipart form)
// and with an atomicity group around the second and third.
func multipartRequests() []odata.BatchRequest {
	reqs := sampleRequests()
	reqs[1].DependsOn = nil
	reqs[1].AtomicityGroup = "cs1"
	reqs[2].AtomicityGroup = "cs1"
	return reqs
}

func TestMultipartBatchGolden(t *testing.T) {
	t.Parallel()
	var req, resp bytes.Buffer
	if err := odata.EncodeMultipartBatch(&req, testBoundary, multipartRequests(), false); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "testdata/batch/request.multipart", req.Bytes())
	if err := odata.EncodeMultipartBatchResponse(&resp, testBoundary, sampleResponses()); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "testdata/batch/response.multipart", resp.Bytes())
	if !bytes.Contains(resp.Bytes(), []byte("Content-ID: 1\r\n\r\nHTTP/1.1 201 Created\r\n")) {
		t.Errorf("response part lacks Content-ID and status line:\n%s", resp.String())
	}
}

// The golden files decode to what made them.
func TestMultipartBatchGoldenDecodes(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join("testdata", "batch", "request.multipart"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := odata.DecodeMultipartBatchRequest(bytes.NewReader(data), testBoundary)
	if err != nil {
		t.Fatal(err)
	}
	if want := multipartRequests(); !reflect.DeepEqual(got, want) {
		t.Errorf("decoded:\n got %+v\nwant %+v", got, want)
	}
	data, err = os.ReadFile(filepath.Join("testdata", "batch", "response.multipart"))
	if err != nil {
		t.Fatal(err)
	}
	rgot, err := odata.DecodeMultipartBatchResponse(bytes.NewReader(data), testBoundary)
	if err != nil {
		t.Fatal(err)
	}
	if want := sampleResponses(); !reflect.DeepEqual(rgot, want) {
		t.Errorf("decoded:\n got %+v\nwant %+v", rgot, want)
	}
}

func TestMultipartContinueOnError(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	if err := odata.EncodeMultipartBatch(&buf, testBoundary, sampleRequests()[:1], true); err != nil {
		t.Fatal(err)
	}
	got, err := odata.DecodeMultipartBatchRequest(&buf, testBoundary)
	if err != nil {
		t.Fatal(err)
	}
	if on, set := odata.ContinueOnError(got[0].Header("Content-Type"), ""); !on || !set {
		t.Errorf("content type %q does not carry continue-on-error", got[0].Header("Content-Type"))
	}
	tests := []struct {
		ct, prefer string
		on, set    bool
	}{
		{"", "", false, false},
		{"", "odata.continue-on-error", true, true},
		{"", "return=minimal, odata.continue-on-error=false", false, true},
		{"application/json;odata.continue-on-error=false", "", false, true},
		{odata.MultipartBatchContentType("b", true), "", true, true},
		{odata.MultipartBatchContentType("b", false), "", false, false},
	}
	for _, tt := range tests {
		if on, set := odata.ContinueOnError(tt.ct, tt.prefer); on != tt.on || set != tt.set {
			t.Errorf("ContinueOnError(%q, %q) = %v, %v; want %v, %v", tt.ct, tt.prefer, on, set, tt.on, tt.set)
		}
	}
}

// A hand-written batch as real clients send it: bare LF, a preamble, angle
// brackets around Content-ID, a $<id> URL and an absolute URL.
func TestDecodeMultipartBatchRequestTolerant(t *testing.T) {
	t.Parallel()
	body := "preamble to ignore\n" +
		"--b1\n" +
		"Content-Type: application/http\n" +
		"Content-ID: <1>\n" +
		"\n" +
		"POST FAMILY_LOG HTTP/1.1\n" +
		"Content-Type: application/json\n" +
		"\n" +
		"{\"FAMILYNAME\":\"F1\"}\n" +
		"--b1\n" +
		"content-type: application/http\n" +
		"content-id: 2\n" +
		"\n" +
		"POST $1/FAMILY_LOGPART_SUBFORM HTTP/1.1\n" +
		"\n" +
		"{}\n" +
		"--b1   \n" +
		"Content-Type: application/http\n" +
		"\n" +
		"GET https://host/odata/Priority/tabula.ini/demo/LOGPART?$top=1 HTTP/1.1\n" +
		"--b1--\n" +
		"epilogue"
	got, err := odata.DecodeMultipartBatchRequest(strings.NewReader(body), "b1")
	if err != nil {
		t.Fatal(err)
	}
	want := []odata.BatchRequest{
		{ID: "1", Method: "POST", URL: "FAMILY_LOG", Headers: map[string]string{"Content-Type": "application/json"}, Body: json.RawMessage(`{"FAMILYNAME":"F1"}`)},
		{ID: "2", Method: "POST", URL: "$1/FAMILY_LOGPART_SUBFORM", Body: json.RawMessage(`{}`)},
		{ID: "", Method: "GET", URL: "https://host/odata/Priority/tabula.ini/demo/LOGPART?$top=1"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
}

func TestMultipartRoundTripChangesets(t *testing.T) {
	t.Parallel()
	in := []odata.BatchRequest{
		{ID: "a", Method: "DELETE", URL: "CUSTOMERS('X')"},
		{ID: "b", Method: "POST", URL: "CUSTOMERS", Headers: map[string]string{"Content-Type": "application/json"}, Body: json.RawMessage(`{"CUSTNAME":"Y"}`), AtomicityGroup: "g 1/with spaces & more"},
		{ID: "c", Method: "PATCH", URL: "CUSTOMERS('Y')", Headers: map[string]string{"Content-Type": "application/json"}, Body: json.RawMessage(`{"CUSTDES":"y"}`), AtomicityGroup: "g 1/with spaces & more"},
		{ID: "d", Method: "GET", URL: "CUSTOMERS", AtomicityGroup: "g2"},
	}
	var buf bytes.Buffer
	if err := odata.EncodeMultipartBatch(&buf, "outer", in, false); err != nil {
		t.Fatal(err)
	}
	got, err := odata.DecodeMultipartBatchRequest(&buf, "outer")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 4 {
		t.Fatalf("%d requests, want 4", len(got))
	}
	if got[0].AtomicityGroup != "" || got[1].AtomicityGroup == "" || got[1].AtomicityGroup != got[2].AtomicityGroup || got[3].AtomicityGroup != "g2" {
		t.Errorf("groups: %q %q %q %q", got[0].AtomicityGroup, got[1].AtomicityGroup, got[2].AtomicityGroup, got[3].AtomicityGroup)
	}
	for i := range in {
		in[i].AtomicityGroup = got[i].AtomicityGroup
	}
	if !reflect.DeepEqual(got, in) {
		t.Errorf("got  %+v\nwant %+v", got, in)
	}
}

func TestEncodeMultipartRefuses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		boundary string
		req      odata.BatchRequest
		contains string
	}{
		{"empty boundary", "", odata.BatchRequest{Method: "GET", URL: "X"}, "1 to 70"},
		{"bad boundary", "a\"b", odata.BatchRequest{Method: "GET", URL: "X"}, "not allowed"},
		{"space in url", "b", odata.BatchRequest{Method: "GET", URL: "X Y"}, "without spaces"},
		{"body holds boundary", "b", odata.BatchRequest{Method: "POST", URL: "X", Body: json.RawMessage(`"--b"`)}, "contains the boundary"},
		{"header injection", "b", odata.BatchRequest{Method: "GET", URL: "X", Headers: map[string]string{"A": "x\r\nB: y"}}, "cannot be written"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := odata.EncodeMultipartBatch(&bytes.Buffer{}, tt.boundary, []odata.BatchRequest{tt.req}, false)
			if err == nil || !strings.Contains(err.Error(), tt.contains) {
				t.Errorf("err = %v, want it to contain %q", err, tt.contains)
			}
		})
	}
}

func TestDecodeMultipartErrors(t *testing.T) {
	t.Parallel()
	part := func(first string) string {
		return "--b\r\nContent-Type: application/http\r\n\r\n" + first + "\r\n\r\n"
	}
	tests := []batchSyntaxCase{
		{"no boundary", "hello\r\n", false, 0, 1, "no boundary line"},
		{"no closing", part("GET X HTTP/1.1"), false, 1, 6, "no closing boundary"},
		{"bad request line", part("GET X") + "--b--\r\n", false, 1, 4, "want METHOD URL HTTP/1.1"},
		{"bad method", part("G(T X HTTP/1.1") + "--b--\r\n", false, 1, 4, "not an HTTP method"},
		{"bad version", part("GET X FTP/1") + "--b--\r\n", false, 1, 4, "not an HTTP version"},
		{"second part bad", part("GET X HTTP/1.1") + part("nonsense") + "--b--\r\n", false, 2, 9, "request line"},
		{"bad header", "--b\r\nContent-Type: application/http\r\nno colon here\r\n\r\nGET X HTTP/1.1\r\n--b--\r\n", false, 1, 3, "want Name: value"},
		{"wrong content type", "--b\r\nContent-Type: text/plain\r\n\r\nGET X HTTP/1.1\r\n--b--\r\n", false, 1, 2, "want application/http"},
		{"empty part", "--b\r\nContent-Type: application/http\r\n\r\n--b--\r\n", false, 1, 3, "no HTTP message"},
		{"changeset without boundary", "--b\r\nContent-Type: multipart/mixed\r\n\r\n--b--\r\n", false, 1, 2, "changeset"},
		{"changeset not closed", "--b\r\nContent-Type: multipart/mixed;boundary=cs\r\n\r\n--cs\r\nContent-Type: application/http\r\n\r\nGET X HTTP/1.1\r\n--b--\r\n", false, 1, 7, "changeset: no closing boundary"},
		{"nested changeset", "--b\r\nContent-Type: multipart/mixed;boundary=cs\r\n\r\n--cs\r\nContent-Type: multipart/mixed;boundary=x\r\n\r\n--cs--\r\n--b--\r\n", false, 1, 5, "only application/http"},
		{"bad status line", part("HTTP/1.1 OK") + "--b--\r\n", true, 1, 4, "want HTTP/1.1 CODE TEXT"},
		{"status too low", part("HTTP/1.1 099 Low") + "--b--\r\n", true, 1, 4, "not a status code"},
	}
	checkBatchSyntax(t, tests, func(in string, resp bool) error {
		var err error
		if resp {
			_, err = odata.DecodeMultipartBatchResponse(strings.NewReader(in), "b")
		} else {
			_, err = odata.DecodeMultipartBatchRequest(strings.NewReader(in), "b")
		}
		return err
	})
}

func TestDecodeMultipartLimits(t *testing.T) {
	t.Parallel()
	t.Run("header block", func(t *testing.T) {
		t.Parallel()
		in := "--b\r\nContent-Type: application/http\r\nX-Long: " + strings.Repeat("a", odata.MaxPartHeaderBytes) + "\r\n\r\nGET X HTTP/1.1\r\n--b--\r\n"
		_, err := odata.DecodeMultipartBatchRequest(strings.NewReader(in), "b")
		if err == nil || !strings.Contains(err.Error(), "header block longer") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("parts", func(t *testing.T) {
		t.Parallel()
		var b strings.Builder
		for i := 0; i <= odata.MaxBatchParts; i++ {
			b.WriteString("--b\r\n\r\nGET X HTTP/1.1\r\n")
		}
		b.WriteString("--b--\r\n")
		_, err := odata.DecodeMultipartBatchRequest(strings.NewReader(b.String()), "b")
		if err == nil || !strings.Contains(err.Error(), odata.ErrBatchTooLarge.Error()) {
			t.Errorf("err = %v", err)
		}
	})
}

func TestNewBoundary(t *testing.T) {
	t.Parallel()
	a, b := odata.NewBoundary(), odata.NewBoundary()
	if a == b || !strings.HasPrefix(a, "batch_") {
		t.Errorf("boundaries %q, %q", a, b)
	}
	var buf bytes.Buffer
	if err := odata.EncodeMultipartBatch(&buf, a, sampleRequests(), false); err != nil {
		t.Errorf("fresh boundary refused: %v", err)
	}
}

func fuzzMultipartSeeds(f *testing.F, response bool) {
	var buf bytes.Buffer
	if response {
		_ = odata.EncodeMultipartBatchResponse(&buf, "b", sampleResponses())
	} else {
		_ = odata.EncodeMultipartBatch(&buf, "b", multipartRequests(), true)
	}
	f.Add(buf.Bytes())
	f.Add([]byte("--b\nContent-Type: application/http\n\nGET X HTTP/1.1\n--b--\n"))
	f.Add([]byte("--b\r\nContent-Type: multipart/mixed;boundary=c\r\n\r\n--c\r\n\r\nHTTP/1.1 204 No Content\r\n--c--\r\n--b--"))
}

func FuzzDecodeMultipartBatchResponse(f *testing.F) {
	fuzzMultipartSeeds(f, true)
	f.Fuzz(func(t *testing.T, data []byte) {
		resps, err := odata.DecodeMultipartBatchResponse(bytes.NewReader(data), "b")
		if err != nil {
			var se *odata.BatchSyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("error of type %T: %v", err, err)
			}
			return
		}
		for _, r := range resps {
			if r.Status < 100 || r.Status > 999 {
				t.Fatalf("status %d accepted", r.Status)
			}
		}
	})
}

func FuzzDecodeMultipartBatchRequest(f *testing.F) {
	fuzzMultipartSeeds(f, false)
	f.Fuzz(func(t *testing.T, data []byte) {
		reqs, err := odata.DecodeMultipartBatchRequest(bytes.NewReader(data), "b")
		if err != nil {
			var se *odata.BatchSyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("error of type %T: %v", err, err)
			}
			return
		}
		// What decodes re-encodes (with a boundary the bodies do not hold)
		// to the same requests.
		for i := range reqs {
			if bytes.Contains(reqs[i].Body, []byte("--zz")) {
				return
			}
		}
		var out bytes.Buffer
		if err := odata.EncodeMultipartBatch(&out, "zz", reqs, false); err != nil {
			return // e.g. a header value the encoder will not write
		}
		again, err := odata.DecodeMultipartBatchRequest(&out, "zz")
		if err != nil {
			t.Fatalf("re-decode: %v\n%q", err, out.String())
		}
		if len(again) != len(reqs) {
			t.Fatalf("re-decode: %d requests, want %d", len(again), len(reqs))
		}
		for i := range again {
			if again[i].Method != reqs[i].Method || again[i].URL != reqs[i].URL || again[i].ID != reqs[i].ID {
				t.Fatalf("request %d changed: %+v -> %+v", i, reqs[i], again[i])
			}
		}
	})
}
