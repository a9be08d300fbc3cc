package odata

import (
	"strings"
	"testing"
)

// TestMatchResponses: each request gets the one answer with its id; an id
// answered twice, or not at all, gives that request no answer (the caller
// holds it in doubt), whatever the statuses say, and the problem says why.
func TestMatchResponses(t *testing.T) {
	t.Parallel()
	reqs := []BatchRequest{{ID: "1", Method: "POST"}, {ID: "2", Method: "GET"}, {ID: "3", Method: "PATCH"}}
	ans := func(id string, status int) BatchResponse { return BatchResponse{ID: id, Status: status} }
	tests := []struct {
		name    string
		resps   []BatchResponse
		want    []int // the status matched per request, 0 for none
		problem string
	}{
		{"one each", []BatchResponse{ans("1", 201), ans("2", 201), ans("3", 400)}, []int{201, 201, 400}, ""},
		{"in another order", []BatchResponse{ans("3", 400), ans("1", 201), ans("2", 204)}, []int{201, 204, 400}, ""},
		{"an id twice, the second failed", []BatchResponse{ans("1", 201), ans("2", 201), ans("2", 400), ans("3", 201)}, []int{201, 0, 201},
			`id "2" answered more than once; 4 answers to 3 requests`},
		{"an id twice, the first failed", []BatchResponse{ans("2", 400), ans("1", 201), ans("2", 201), ans("3", 201)}, []int{201, 0, 201},
			`id "2" answered more than once`},
		{"an id three times", []BatchResponse{ans("1", 201), ans("1", 201), ans("1", 201), ans("2", 201), ans("3", 201)}, []int{0, 201, 201},
			`id "1" answered more than once; 5 answers to 3 requests`},
		{"an id never asked for in place of one", []BatchResponse{ans("1", 201), ans("9", 201), ans("3", 201)}, []int{201, 0, 201},
			`an answer with id "9", never asked for; no answer for id "2"`},
		{"an id never asked for besides", []BatchResponse{ans("1", 201), ans("2", 201), ans("3", 201), ans("g1-r1", 201)}, []int{201, 201, 201},
			`an answer with id "g1-r1", never asked for; 4 answers to 3 requests`},
		// Before 22.1 (docs/servers.md, Writing and batches): g1 is answered
		// as g1-r1, a GET's part has no id and is known by its place.
		{"ids with a suffix", []BatchResponse{ans("1-r1", 201), ans("2-r1", 201), ans("3-r12", 400)}, []int{201, 201, 400}, ""},
		{"ids with a suffix, in another order", []BatchResponse{ans("3-r1", 400), ans("1-r1", 201), ans("2-r1", 204)}, []int{201, 204, 400}, ""},
		{"an answer without an id, in its place", []BatchResponse{ans("1", 201), ans("", 200), ans("3-r1", 201)}, []int{201, 200, 201}, ""},
		{"answers without ids only: the GET's by its place, never a write's", []BatchResponse{ans("", 201), ans("", 200), ans("", 400)}, []int{0, 200, 0},
			`an answer without an id in the place of POST "1", a write; an answer without an id in the place of PATCH "3", a write; no answer for id "1"; 1 more`},
		{"fewer answers without ids: the batch stopped", []BatchResponse{ans("1-r1", 201), ans("", 404)}, []int{201, 404, 0},
			`2 answers to 3 requests; no answer for id "3"`},
		{"an answer without an id among answers out of order", []BatchResponse{ans("3", 201), ans("", 200), ans("1", 201)}, []int{201, 0, 201},
			`an answer without an id, among answers out of order; no answer for id "2"`},
		{"an id and its suffixed form: ambiguous", []BatchResponse{ans("1", 201), ans("2", 201), ans("2-r1", 400), ans("3", 201)}, []int{201, 0, 201},
			`id "2" answered more than once; 4 answers to 3 requests`},
		{"two suffixed forms of one id: ambiguous", []BatchResponse{ans("1-r1", 201), ans("2-r1", 201), ans("2-r2", 400), ans("3-r1", 201)}, []int{201, 0, 201},
			`id "2" answered more than once; 4 answers to 3 requests`},
		{"an answer without an id besides: not placed twice", []BatchResponse{ans("1", 201), ans("2", 201), ans("3", 201), ans("", 200)}, []int{201, 201, 201},
			`an answer with id "", never asked for; 4 answers to 3 requests`},
		{"a write's answer without an id, in its place: in doubt", []BatchResponse{ans("", 201), ans("2", 200), ans("3", 200)}, []int{0, 200, 200},
			`an answer without an id in the place of POST "1", a write; no answer for id "1"`},
		{"a suffix that is not -rN", []BatchResponse{ans("1", 201), ans("2-x1", 201), ans("3", 201)}, []int{201, 0, 201},
			`an answer with id "2-x1", never asked for; no answer for id "2"`},
		{"fewer answers", []BatchResponse{ans("1", 201)}, []int{201, 0, 0},
			`1 answer to 3 requests; no answer for id "2"; no answer for id "3"`},
		{"none", nil, []int{0, 0, 0}, `0 answers to 3 requests; no answer for id "1"; no answer for id "2"; 1 more`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			matched, problem := MatchResponses(reqs, tc.resps)
			for i, m := range matched {
				got := 0
				if m != nil {
					got = m.Status
					if m.ID != reqs[i].ID && m.ID != "" && !strings.HasPrefix(m.ID, reqs[i].ID+"-r") {
						t.Errorf("request %s matched the answer of %s", reqs[i].ID, m.ID)
					}
				}
				if got != tc.want[i] {
					t.Errorf("request %s: status %d, want %d", reqs[i].ID, got, tc.want[i])
				}
			}
			if !strings.HasPrefix(problem, tc.problem) || (tc.problem == "") != (problem == "") {
				t.Errorf("problem %q, want %q", problem, tc.problem)
			}
		})
	}
}

// TestMatchVendorMultipartAnswer: the answer of a server before 22.1 as the
// vendor's example writes it (docs/servers.md, Writing and batches): the
// write's part inside a changesetresponse with Content-ID g1-r1, a GET's part
// without Content-ID. Each request gets its own answer; nothing is in doubt.
func TestMatchVendorMultipartAnswer(t *testing.T) {
	t.Parallel()
	body := strings.ReplaceAll(`--batchresponse_1
Content-Type: multipart/mixed; boundary=changesetresponse_a1

--changesetresponse_a1
Content-Type: application/http
Content-Transfer-Encoding: binary
Content-ID: g1-r1

HTTP/1.1 201 Created
Content-Type: application/json;odata.metadata=minimal
Location: https://host/odata/Priority/tabula.ini/demo/ORDERS(%27SO26000001%27)

{"ORDNAME":"SO26000001"}
--changesetresponse_a1--
--batchresponse_1
Content-Type: application/http
Content-Transfer-Encoding: binary

HTTP/1.1 200 OK
Content-Type: application/json;odata.metadata=minimal

{"CUSTNAME":"C1"}
--batchresponse_1--
`, "\n", "\r\n")
	resps, err := DecodeMultipartBatchResponse(strings.NewReader(body), "batchresponse_1")
	if err != nil {
		t.Fatal(err)
	}
	reqs := []BatchRequest{{ID: "g1", Method: "POST", URL: "ORDERS"}, {ID: "g2", Method: "GET", URL: "CUSTOMERS('C1')"}}
	matched, problem := MatchResponses(reqs, resps)
	if problem != "" || matched[0] == nil || matched[1] == nil {
		t.Fatalf("matched %v, problem %q", matched, problem)
	}
	if matched[0].Status != 201 || matched[0].AtomicityGroup == "" || !strings.Contains(matched[0].Header("Location"), "SO26000001") {
		t.Errorf("g1: %+v", matched[0])
	}
	if matched[1].Status != 200 || !strings.Contains(string(matched[1].Body), "C1") {
		t.Errorf("g2: %+v", matched[1])
	}
}
