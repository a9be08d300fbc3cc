package odata

import (
	"encoding/json"
	"fmt"
	"strings"
)

// BatchRequest is one sub-request of a $batch (spec 4.5), in either format.
type BatchRequest struct {
	ID     string
	Method string
	// URL is relative to the service root, or starts with $<id> to refer to
	// the entity another sub-request created.
	URL       string
	Headers   map[string]string
	Body      json.RawMessage
	DependsOn []string
	// AtomicityGroup is accepted by servers but never rolled back (spec 4.5).
	AtomicityGroup string
}

// BatchResponse is the outcome of one sub-request.
type BatchResponse struct {
	ID      string
	Status  int
	Headers map[string]string
	Body    json.RawMessage
}

// MatchResponses pairs a $batch's answers with its requests by id (spec
// 4.5). For each request, in order, it gives the one answer that carries
// its id, or nil when there is no answer to trust: none, or more than one
// (which of "201 Created" and "400" holds?). problem says how the answer
// broke the protocol (an id twice, an id never asked for, more or fewer
// answers than requests; the first few of each), or is "".
//
// Nothing is guessed: a request without a trusted answer may or may not
// have taken effect, and its caller treats it as in doubt. Before this,
// the last of two answers won, and a record the server had committed was
// journaled as failed and sent again by --retry-failed (issue 12).
func MatchResponses(reqs []BatchRequest, resps []BatchResponse) (matched []*BatchResponse, problem string) {
	var problems []string
	asked := make(map[string]int, len(reqs))
	for i, r := range reqs {
		asked[r.ID] = i
	}
	matched = make([]*BatchResponse, len(reqs))
	twice := map[string]bool{}
	for i := range resps {
		id := resps[i].ID
		j, ok := asked[id]
		switch {
		case !ok:
			problems = append(problems, fmt.Sprintf("an answer with id %q, never asked for", id))
		case twice[id]:
		case matched[j] != nil:
			twice[id] = true
			matched[j] = nil
			problems = append(problems, fmt.Sprintf("id %q answered more than once", id))
		default:
			matched[j] = &resps[i]
		}
	}
	if len(resps) != len(reqs) {
		noun := "answers"
		if len(resps) == 1 {
			noun = "answer"
		}
		problems = append(problems, fmt.Sprintf("%d %s to %d requests", len(resps), noun, len(reqs)))
	}
	for i, m := range matched {
		if m == nil && !twice[reqs[i].ID] {
			problems = append(problems, fmt.Sprintf("no answer for id %q", reqs[i].ID))
		}
	}
	const shown = 3
	if len(problems) > shown {
		problems = append(problems[:shown], fmt.Sprintf("%d more", len(problems)-shown))
	}
	return matched, strings.Join(problems, "; ")
}
