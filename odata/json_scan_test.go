package odata

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// The scanner is a second reader of what encoding/json reads: on every
// input it takes, it must give what encoding/json gives, and it must leave
// every input it does not take (or that is not valid) to encoding/json.

// entitySamples are bodies as servers answer them, and the corners of the
// grammar the scanner handles itself or hands on.
var entitySamples = []string{
	`{"@odata.context":"x","ORDNAME":"SO1","CUSTNAME":"C1","ORD":1,"CURDATE":null,"ORDERITEMS_SUBFORM":[{"PARTNAME":"B-100","TQUANT":1,"PRICE":12.50,"KLINE":1},{"PARTNAME":"N-200","TQUANT":-2e3,"KLINE":2}]}`,
	` { "A" : "x\"y\\u00e9\/" , "B":[true,false,null,[],{}], "C":{"D":"שלום"} } `,
	`{"A":"bad utf8 ` + "\xff\xfe" + `","B":"tab` + "\t" + `"}`,
	`{"A":1,"A":2}`,
	`{"A":01}`, `{"A":-}`, `{"A":1.}`, `{"A":1e}`, `{"A":"\x"}`, `{"A":"\u12"}`,
	`{"A":1} {"B":2}`, `{"A":1} x`, `{"A":1}` + "\x00", `null`, `[]`, `{`, `{"A"}`, `{"A":1,}`, ``,
	`{"A":[` + strings.Repeat("[", 300) + strings.Repeat("]", 300) + `]}`,
}

// projection keeps the order's name and each line's KLINE and deeper lines.
var projection = &Projection{Fields: []string{"ORDNAME", "KLINE", "C"}, Navs: map[string]*Projection{
	"ORDERITEMS_SUBFORM": {Fields: []string{"KLINE"}, Navs: map[string]*Projection{"X": nil}},
}}

func checkEntityDecode(t *testing.T, data []byte) {
	want, werr := decodeEntitySlow(data)
	got, err := DecodeEntity(data)
	if (err == nil) != (werr == nil) || err != nil && err.Error() != werr.Error() || !reflect.DeepEqual(got, want) {
		t.Fatalf("DecodeEntity(%q) = %#v, %v; encoding/json gives %#v, %v", data, got, err, want, werr)
	}
	if werr != nil {
		return
	}
	want, _ = decodeEntitySlow(data)
	got, err = DecodeEntityOnly(data, projection)
	if err != nil || !reflect.DeepEqual(got, projection.apply(want)) {
		t.Fatalf("DecodeEntityOnly(%q) = %#v, %v; want %#v", data, got, err, projection.apply(want))
	}
}

func TestDecodeEntityAsEncodingJSON(t *testing.T) {
	t.Parallel()
	for _, s := range entitySamples {
		checkEntityDecode(t, []byte(s))
	}
	got, err := DecodeEntityOnly([]byte(entitySamples[0]), projection)
	want := map[string]any{"ORDNAME": "SO1", "ORDERITEMS_SUBFORM": []any{map[string]any{"KLINE": json1}, map[string]any{"KLINE": json2}}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("projected: %#v, %v; want %#v", got, err, want)
	}
}

const json1, json2 = json.Number("1"), json.Number("2")

func FuzzDecodeEntity(f *testing.F) {
	for _, s := range entitySamples {
		f.Add([]byte(s))
	}
	f.Fuzz(checkEntityDecode)
}

// batchSamples are $batch answers the scanner takes, and ones it must
// leave to encoding/json.
var batchSamples = []string{
	`{"responses":[{"id":"1","status":201,"headers":{"location":"ORDERS('SO1')","content-type":"application/json"},"body":{"ORDNAME":"SO1","L":[{"KLINE":1}]}},{"id":"2","status":400,"body":{"error":{"code":"x","message":"y"}}},{"id":"3","status":204}]}`,
	`{"x":[1,{"y":null}],"responses":[]}`,
	`{"responses":[{"id":"1","status":200,"headers":{"content-type":"text/plain"},"body":"plain \"text\""}]}`,
	`{"responses":[{"id":"1","status":200,"headers":{}, "body":null}]}`,
	`{"Responses":[{"id":"1","status":200}]}`,
	`{"responses":[{"ID":"1","status":200}]}`,
	`{"responses":[{"id":"1","status":200,"headers":{"a":"1","a":"2"}}]}`,
	`{"responses":[{"id":"1","status":200,"headers":{"a":1}}]}`,
	`{"responses":[{"id":1,"status":200}]}`,
	`{"responses":[{"id":"1","status":200.0}]}`,
	`{"responses":[{"id":"1","status":2}]}`,
	`{"responses":[{"id":"1"}]}`,
	`{"responses":[null]}`, `{"responses":null}`, `{"responses":[],"responses":[{"id":"1","status":200}]}`,
	`{"responses":[{"id":"1","status":200,"body":{"a":}}]}`, `{"responses":[]} x`,
}

func checkBatchDecode(t *testing.T, data []byte) {
	got, ok := scanJSONBatchResponse(data)
	want, werr := decodeJSONBatchResponseSlow(data)
	if !ok {
		return // encoding/json's alone
	}
	if werr != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("scanned %q as %#v; encoding/json gives %#v, %v", data, got, want, werr)
	}
}

func TestScanJSONBatchResponseAsEncodingJSON(t *testing.T) {
	t.Parallel()
	for _, s := range batchSamples {
		checkBatchDecode(t, []byte(s))
	}
	// The plain answers are the scanner's own, not encoding/json's.
	for _, s := range batchSamples[:4] {
		if _, ok := scanJSONBatchResponse([]byte(s)); !ok {
			t.Errorf("not scanned: %s", s)
		}
	}
	var buf bytes.Buffer
	if err := EncodeJSONBatchResponse(&buf, []BatchResponse{{ID: "1", Status: 201, Body: []byte(`{"A":"é"}`)}}); err != nil {
		t.Fatal(err)
	}
	checkBatchDecode(t, buf.Bytes())
}

func FuzzScanJSONBatchResponse(f *testing.F) {
	for _, s := range batchSamples {
		f.Add([]byte(s))
	}
	f.Fuzz(checkBatchDecode)
}

// checkCompact: a body compactJSON passes as it is must be what
// json.Compact makes of it.
func checkCompact(t *testing.T, b []byte) {
	if !compactJSON(b) {
		return
	}
	var c bytes.Buffer
	if err := json.Compact(&c, b); err != nil || !bytes.Equal(c.Bytes(), b) {
		t.Fatalf("compactJSON(%q) but json.Compact gives %q, %v", b, c.Bytes(), err)
	}
}

func TestCompactJSONAsCompact(t *testing.T) {
	t.Parallel()
	for _, s := range append(entitySamples, `{"A":"x y"}`, `{"A": 1}`, `[1,2]`, `"s"`, `1 2`, `{"A":"\\"}`, `{"A":"\""}`) {
		checkCompact(t, []byte(s))
	}
	for _, s := range []string{`{"A":"x y","B":[1,{"C":null}]}`, `{"A":"\"q\" \\ <é>"}`} {
		if !compactJSON([]byte(s)) {
			t.Errorf("%s: compact, not taken as such", s)
		}
	}
}

func FuzzCompactJSON(f *testing.F) {
	for _, s := range entitySamples {
		f.Add([]byte(s))
	}
	f.Fuzz(checkCompact)
}

// requestSamples are $batch requests the scanner takes, and ones it must
// leave to encoding/json.
var requestSamples = []string{
	`{"requests":[{"id":"1","method":"POST","url":"ORDERS","headers":{"content-type":"application/json"},"body":{"ORDNAME":"SO1","L":[{"P":"x"}]}},{"id":"2","method":"get","url":"X","dependsOn":["1"],"atomicityGroup":"g"}]}`,
	`{"requests":[{"id":"1","method":"GET","url":"X","dependsOn":[]}],"x":{"y":[1]}}`,
	`{"requests":[]}`,
	`{"requests":[{"ID":"1","method":"GET","url":"X"}]}`,
	`{"requests":[{"id":"1","id":"2","method":"GET","url":"X"}]}`,
	`{"requests":[{"id":null,"method":"GET","url":"X"}]}`,
	`{"requests":[{"id":"1","method":"GET","url":"X","dependsOn":null}]}`,
	`{"requests":[{"id":"1","method":"GET","url":"X","headers":{"a":1}}]}`,
	`{"requests":[null]}`, `{"requests":null}`, `{"requests":{}}`, `{"requests":[]} 1`,
}

func checkRequestDecode(t *testing.T, data []byte) {
	got, ok := scanJSONBatchRequests(data)
	if !ok {
		return
	}
	var want struct {
		Requests *[]jsonBatchRequest `json:"requests"`
	}
	err := json.Unmarshal(data, &want)
	if err != nil || want.Requests == nil || !reflect.DeepEqual(got, *want.Requests) {
		t.Fatalf("scanned %q as %#v; encoding/json gives %#v, %v", data, got, want.Requests, err)
	}
}

func TestScanJSONBatchRequestsAsEncodingJSON(t *testing.T) {
	t.Parallel()
	for _, s := range requestSamples {
		checkRequestDecode(t, []byte(s))
	}
	for _, s := range requestSamples[:3] {
		if _, ok := scanJSONBatchRequests([]byte(s)); !ok {
			t.Errorf("not scanned: %s", s)
		}
	}
}

func FuzzScanJSONBatchRequests(f *testing.F) {
	for _, s := range requestSamples {
		f.Add([]byte(s))
	}
	f.Fuzz(checkRequestDecode)
}

// encodeJSONBatchReflect is EncodeJSONBatch as it was, through json.Encoder:
// the hand-written one must write its bytes.
func encodeJSONBatchReflect(reqs []BatchRequest) []byte {
	out := struct {
		Requests []jsonBatchRequest `json:"requests"`
	}{Requests: []jsonBatchRequest{}}
	for _, r := range reqs {
		h := r.Headers
		if len(h) == 0 {
			h = nil
		}
		out.Requests = append(out.Requests, jsonBatchRequest{ID: r.ID, Method: r.Method, URL: r.URL, Headers: h,
			Body: jsonBody(r.Body, headerLookup(r.Headers, "Content-Type")), DependsOn: r.DependsOn, AtomicityGroup: r.AtomicityGroup})
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(out)
	return buf.Bytes()
}

func checkEncodeBatch(t *testing.T, text string, body []byte) {
	reqs := []BatchRequest{
		{ID: "1", Method: "POST", URL: "ORDERS", Headers: map[string]string{"content-type": "application/json", "odata-version": "4.0"}, Body: body},
		{ID: text, Method: "PATCH", URL: "X('" + text + "')", Headers: map[string]string{"Content-Type": "text/plain", text: text}, Body: []byte(text), DependsOn: []string{"1", text}, AtomicityGroup: text},
		{Method: "GET", URL: "Y", Headers: map[string]string{}, DependsOn: []string{}},
	}
	var got bytes.Buffer
	if err := EncodeJSONBatch(&got, reqs); err != nil {
		t.Fatal(err)
	}
	if want := encodeJSONBatchReflect(reqs); !bytes.Equal(got.Bytes(), want) {
		t.Fatalf("EncodeJSONBatch wrote\n%s\njson.Encoder writes\n%s", got.Bytes(), want)
	}
}

func TestEncodeJSONBatchAsEncoder(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"", "SO1", "O'Neil & <Co>", `a "q" \ b`, "tab\there", "שלום", "bad \xff"} {
		for _, b := range append(entitySamples, `{"A": 1}`, "", "plain text") {
			checkEncodeBatch(t, s, []byte(b))
		}
	}
}

func FuzzEncodeJSONBatch(f *testing.F) {
	f.Add("SO1", []byte(`{"A":1}`))
	f.Fuzz(checkEncodeBatch)
}
