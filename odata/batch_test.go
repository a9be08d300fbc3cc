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
	reqs := []BatchRequest{{ID: "1"}, {ID: "2"}, {ID: "3"}}
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
		{"an answer without an id", []BatchResponse{ans("1", 201), ans("", 200), ans("3", 201)}, []int{201, 0, 201},
			`an answer with id "", never asked for; no answer for id "2"`},
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
					if m.ID != reqs[i].ID {
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
