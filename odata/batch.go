package odata

import (
	"encoding/json"
	"fmt"
	"strings"
)

// BatchRequest is one sub-request of a $batch (docs/service.md, Batch), in
// either format.
type BatchRequest struct {
	ID     string
	Method string
	// URL is relative to the service root, or starts with $<id> to refer to
	// the entity another sub-request created.
	URL       string
	Headers   map[string]string
	Body      json.RawMessage
	DependsOn []string
	// AtomicityGroup is accepted by servers but never rolled back
	// (docs/service.md, Batch).
	AtomicityGroup string
}

// BatchResponse is the outcome of one sub-request.
type BatchResponse struct {
	ID      string
	Status  int
	Headers map[string]string
	Body    json.RawMessage
	// AtomicityGroup is the changeset a multipart answer came in, if any.
	AtomicityGroup string
}

// MatchResponses pairs a $batch's answers with its requests (docs/service.md,
// Batch). For each request, in order, it gives the one answer that is its
// own, or nil when there is no answer to trust. An answer is a request's own
// by, in this order:
//
//   - its id: the answer's Content-ID is the request's;
//   - the id with a suffix: before 22.1 a real server answers request g1
//     as g1-r1, inside a changesetresponse part (docs/servers.md, Writing
//     and batches);
//   - its position, for a GET only (whose part on those servers has no
//     Content-ID): an answer without an id is the answer to the GET at the
//     same place, provided every answer matched by id sits at its own
//     request's place too. A write's answer without an id stays unmatched:
//     nothing is guessed about what a write did.
//
// Two answers for one request, or a position that the answers with ids
// contradict, leave the request without an answer: which of "201 Created"
// and "400" holds? problem says how the answer broke the protocol (an id
// twice, an id never asked for, more or fewer answers than requests; the
// first few of each), or is "". The forms of an id real servers use are no
// problem.
//
// Nothing else is guessed: a request without a trusted answer may or may
// not have taken effect, and its caller treats it as in doubt. Before this,
// the last of two answers won, and a record the server had committed was
// journaled as failed and sent again by --retry-failed.
func MatchResponses(reqs []BatchRequest, resps []BatchResponse) (matched []*BatchResponse, problem string) {
	var problems []string
	asked := make(map[string]int, len(reqs))
	for i, r := range reqs {
		asked[r.ID] = i
	}
	owner := make([]int, len(resps)) // the request each answer names, -1 for none
	for i, r := range resps {
		owner[i] = -1
		if j, ok := asked[r.ID]; ok && r.ID != "" {
			owner[i] = j
		}
	}
	// An id with a suffix names its request only when no request has
	// that id itself; it counts as a second answer beside an exact one.
	for i, r := range resps {
		if owner[i] < 0 {
			if j, ok := asked[idWithoutSuffix(r.ID)]; ok && r.ID != "" {
				owner[i] = j
			}
		}
	}
	inPlace := true // every answer with an id is at its request's place
	for i, j := range owner {
		if j >= 0 && j != i {
			inPlace = false
		}
	}
	for i, r := range resps {
		if owner[i] < 0 && r.ID == "" && inPlace && i < len(reqs) && strings.EqualFold(reqs[i].Method, "GET") {
			owner[i] = i
		}
	}

	matched = make([]*BatchResponse, len(reqs))
	twice := make([]bool, len(reqs))
	for i, j := range owner {
		switch {
		case j < 0 && resps[i].ID == "" && !inPlace:
			problems = append(problems, "an answer without an id, among answers out of order")
		case j < 0 && resps[i].ID == "" && i < len(reqs) && !strings.EqualFold(reqs[i].Method, "GET"):
			problems = append(problems, fmt.Sprintf("an answer without an id in the place of %s %q, a write", reqs[i].Method, reqs[i].ID))
		case j < 0:
			problems = append(problems, fmt.Sprintf("an answer with id %q, never asked for", resps[i].ID))
		case twice[j]:
		case matched[j] != nil:
			twice[j] = true
			matched[j] = nil
			problems = append(problems, fmt.Sprintf("id %q answered more than once", reqs[j].ID))
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
		if m == nil && !twice[i] {
			problems = append(problems, fmt.Sprintf("no answer for id %q", reqs[i].ID))
		}
	}
	const shown = 3
	if len(problems) > shown {
		problems = append(problems[:shown], fmt.Sprintf("%d more", len(problems)-shown))
	}
	return matched, strings.Join(problems, "; ")
}

// idWithoutSuffix returns g1 for g1-r1 (a "-r" and digits at the end), else
// "".
func idWithoutSuffix(id string) string {
	i := strings.LastIndex(id, "-r")
	if i <= 0 || i+2 == len(id) {
		return ""
	}
	for _, c := range id[i+2:] {
		if c < '0' || c > '9' {
			return ""
		}
	}
	return id[:i]
}
