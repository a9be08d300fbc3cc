package odata_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/migrate-tool/migrate/internal/golden"
	"github.com/migrate-tool/migrate/odata"
)

// sampleRequests is a batch as the executor builds it (docs/service.md,
// Batch): a parent, a child addressed by $<id> and depending on it, a read.
func sampleRequests() []odata.BatchRequest {
	return []odata.BatchRequest{
		{ID: "1", Method: "POST", URL: "ORDERS", Headers: map[string]string{"content-type": "application/json", "odata-version": "4.0"},
			Body: json.RawMessage(`{"CUSTNAME":"C100","ORDNAME":"SO1"}`)},
		{ID: "2", Method: "POST", URL: "$1/ORDERITEMS_SUBFORM", Headers: map[string]string{"content-type": "application/json"},
			Body: json.RawMessage(`{"PARTNAME":"P1","TQUANT":2.5}`), DependsOn: []string{"1"}},
		{ID: "3", Method: "GET", URL: "CUSTOMERS('C100')"},
	}
}

func sampleResponses() []odata.BatchResponse {
	return []odata.BatchResponse{
		{ID: "1", Status: 201, Headers: map[string]string{"content-type": "application/json", "location": "ORDERS('SO1')"},
			Body: json.RawMessage(`{"ORDNAME":"SO1","CUSTNAME":"C100"}`)},
		{ID: "2", Status: 400, Headers: map[string]string{"content-type": "application/json"},
			Body: json.RawMessage(`{"FORM":{"@TYPE":"ORDERITEMS_SUBFORM","InterfaceErrors":{"text":"Part P1 not found"}}}`)},
		{ID: "3", Status: 424},
	}
}

func TestJSONBatchGolden(t *testing.T) {
	t.Parallel()
	var req, resp bytes.Buffer
	if err := odata.EncodeJSONBatch(&req, sampleRequests()); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "testdata/batch/request.json", req.Bytes())
	if err := odata.EncodeJSONBatchResponse(&resp, sampleResponses()); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "testdata/batch/response.json", resp.Bytes())
}

func TestJSONBatchRoundTrip(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	in := sampleRequests()
	in[0].AtomicityGroup = "g1"
	if err := odata.EncodeJSONBatch(&buf, in); err != nil {
		t.Fatal(err)
	}
	got, err := odata.DecodeJSONBatchRequest(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, in) {
		t.Errorf("round trip:\n got %+v\nwant %+v", got, in)
	}

	buf.Reset()
	rin := sampleResponses()
	if err := odata.EncodeJSONBatchResponse(&buf, rin); err != nil {
		t.Fatal(err)
	}
	rgot, err := odata.DecodeJSONBatchResponse(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(rgot, rin) {
		t.Errorf("round trip:\n got %+v\nwant %+v", rgot, rin)
	}
}

// A body under a non-JSON content type travels as a JSON string (OData 4.01).
func TestJSONBatchNonJSONBody(t *testing.T) {
	t.Parallel()
	xml := `<FORM TYPE="FAMILY_LOG"><InterfaceErrors><text>bad</text></InterfaceErrors></FORM>`
	in := []odata.BatchResponse{{ID: "a", Status: 400, Headers: map[string]string{"Content-Type": "application/xml"}, Body: json.RawMessage(xml)}}
	var buf bytes.Buffer
	if err := odata.EncodeJSONBatchResponse(&buf, in); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"body":"<FORM TYPE=\"FAMILY_LOG\">`) {
		t.Errorf("body not written as a string: %s", buf.String())
	}
	got, err := odata.DecodeJSONBatchResponse(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if string(got[0].Body) != xml {
		t.Errorf("body = %q, want %q", got[0].Body, xml)
	}
}

func TestJSONBatchOmitsEmptyFields(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	if err := odata.EncodeJSONBatch(&buf, []odata.BatchRequest{{ID: "1", Method: "GET", URL: "LOGPART"}}); err != nil {
		t.Fatal(err)
	}
	if got, want := buf.String(), `{"requests":[{"id":"1","method":"GET","url":"LOGPART"}]}`+"\n"; got != want {
		t.Errorf("got %s want %s", got, want)
	}
}

func TestBatchHeaderLookupIgnoresCase(t *testing.T) {
	t.Parallel()
	r := odata.BatchResponse{Headers: map[string]string{"location": "ORDERS('SO1')"}}
	if got := r.Header("Location"); got != "ORDERS('SO1')" {
		t.Errorf("Header(Location) = %q", got)
	}
}

func TestDecodeJSONBatchErrors(t *testing.T) {
	t.Parallel()
	tests := []batchSyntaxCase{
		{"not json", "{\n\"requests\": [,]}", false, 0, 2, "not valid JSON"},
		{"no requests", `{"reqs":[]}`, false, 0, 0, `no "requests"`},
		{"no method", `{"requests":[{"id":"1","url":"X"},{"id":"2","url":"Y"}]}`, false, 1, 0, `no "method"`},
		{"bad method", `{"requests":[{"id":"1","method":"GET","url":"X"},{"id":"2","method":"P O","url":"Y"}]}`, false, 2, 0, "not an HTTP method"},
		{"no url", `{"requests":[{"id":"1","method":"GET"}]}`, false, 1, 0, `no "url"`},
		{"duplicate id", `{"requests":[{"id":"1","method":"GET","url":"X"},{"id":"1","method":"GET","url":"X"}]}`, false, 2, 0, "id used twice"},
		{"header not string", `{"requests":[{"id":"1","method":"GET","url":"X","headers":{"a":1}}]}`, false, 1, 0, "headers"},
		{"requests not array", `{"requests":{}}`, false, 0, 1, "an array"},
		{"no responses", `{"requests":[]}`, true, 0, 0, `no "responses"`},
		{"bad status", `{"responses":[{"id":"1","status":2}]}`, true, 1, 0, "not an HTTP status"},
		{"status string", `{"responses":[{"id":"1","status":"200"}]}`, true, 1, 0, "status"},
	}
	checkBatchSyntax(t, tests, func(in string, resp bool) error {
		var err error
		if resp {
			_, err = odata.DecodeJSONBatchResponse(strings.NewReader(in))
		} else {
			_, err = odata.DecodeJSONBatchRequest(strings.NewReader(in))
		}
		return err
	})
}

// batchSyntaxCase is a batch body that a decoder must refuse with a
// *BatchSyntaxError at part and line whose message holds contains.
type batchSyntaxCase struct {
	name     string
	in       string
	resp     bool // decode in as a response, not a request
	part     int
	line     int
	contains string
}

// checkBatchSyntax runs each case through decode (a request or response
// decoder of one batch format) and checks where the error points.
func checkBatchSyntax(t *testing.T, tests []batchSyntaxCase, decode func(in string, resp bool) error) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := decode(tt.in, tt.resp)
			var se *odata.BatchSyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("error %v: want a *BatchSyntaxError", err)
			}
			if se.Part != tt.part || se.Line != tt.line || !strings.Contains(se.Msg, tt.contains) {
				t.Errorf("got %q (part %d line %d); want part %d line %d containing %q", se.Error(), se.Part, se.Line, tt.part, tt.line, tt.contains)
			}
		})
	}
}

func TestDecodeJSONBatchTooMany(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString(`{"responses":[`)
	for i := 0; i <= odata.MaxBatchParts; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"status":200}`)
	}
	b.WriteString(`]}`)
	_, err := odata.DecodeJSONBatchResponse(strings.NewReader(b.String()))
	if !errors.Is(err, odata.ErrBatchTooLarge) && !strings.Contains(err.Error(), odata.ErrBatchTooLarge.Error()) {
		t.Fatalf("err = %v, want batch too large", err)
	}
}

func FuzzDecodeJSONBatchResponse(f *testing.F) {
	var buf bytes.Buffer
	_ = odata.EncodeJSONBatchResponse(&buf, sampleResponses())
	f.Add(buf.Bytes())
	f.Add([]byte(`{"responses":[]}`))
	f.Add([]byte(`{"responses":[{"id":"1","status":201,"headers":{"location":"X"},"body":"text"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		resps, err := odata.DecodeJSONBatchResponse(bytes.NewReader(data))
		if err != nil {
			if resps != nil {
				t.Fatal("responses returned with an error")
			}
			return
		}
		// What decodes encodes, and decodes to the same again.
		var out bytes.Buffer
		if err := odata.EncodeJSONBatchResponse(&out, resps); err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		again, err := odata.DecodeJSONBatchResponse(&out)
		if err != nil {
			t.Fatalf("re-decode: %v\n%s", err, out.String())
		}
		if len(again) != len(resps) {
			t.Fatalf("re-decode: %d responses, want %d", len(again), len(resps))
		}
		for i := range again {
			if again[i].ID != resps[i].ID || again[i].Status != resps[i].Status {
				t.Fatalf("response %d changed: %+v -> %+v", i, resps[i], again[i])
			}
		}
	})
}

func FuzzDecodeJSONBatchRequest(f *testing.F) {
	var buf bytes.Buffer
	_ = odata.EncodeJSONBatch(&buf, sampleRequests())
	f.Add(buf.Bytes())
	f.Add([]byte(`{"requests":[{"id":"1","method":"GET","url":"X"},{"id":"1","method":"GET","url":"X"}]}`))
	f.Add([]byte(`{"requests":[{"id":"1","method":"POST","url":"X","headers":{"content-type":"text/plain"},"body":"hi"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		reqs, err := odata.DecodeJSONBatchRequest(bytes.NewReader(data))
		if err != nil {
			var se *odata.BatchSyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("error of type %T: %v", err, err)
			}
			return
		}
		var out bytes.Buffer
		if err := odata.EncodeJSONBatch(&out, reqs); err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		again, err := odata.DecodeJSONBatchRequest(&out)
		if err != nil || len(again) != len(reqs) {
			t.Fatalf("re-decode: %v (%d of %d)\n%s", err, len(again), len(reqs), out.String())
		}
	})
}
