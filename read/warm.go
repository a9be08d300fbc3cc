package read

import (
	"net/http"
	"strconv"
	"sync"

	"github.com/migrate-tool/migrate/odata"
)

// Reads of what the server holds. Two things real servers do make an
// answer to a GET mean less than it says (docs/servers.md):
//
//   - before 22.1 the answers of a $batch carry ids of another form (g1-r1,
//     none for a GET): Answers gives them back in request order under
//     the requests' own ids, or nil when the answer cannot be trusted;
//   - a cold form answers 404 to its first GET since the server started: a
//     404 is no proof of absence until a warm-up (GET SET?$top=1) and a
//     second try agree, which ConfirmAbsent sees to.

// Answers pairs a read batch's answers with its requests
// (odata.MatchResponses) and gives them the requests' ids, in request
// order. It returns nil, and what broke the protocol, when a request has
// no answer it can trust.
func Answers(reqs []odata.BatchRequest, got []odata.BatchResponse) ([]odata.BatchResponse, string) {
	matched, problem := odata.MatchResponses(reqs, got)
	out := make([]odata.BatchResponse, len(reqs))
	for i, m := range matched {
		if m == nil {
			return nil, problem
		}
		out[i] = *m
		out[i].ID = reqs[i].ID
	}
	return out, ""
}

// Warmth remembers the entity sets known to be warm in one run: a 404 from
// one of them is the truth. The zero value is ready to use and safe for
// concurrent use.
type Warmth struct {
	mu   sync.Mutex
	sets map[string]bool
}

// ConfirmAbsent takes the answers to GETs (in request order) and asks again
// those that answered 404 from an entity set not known to be warm
// (ToConfirm): first GET SET?$top=1 for each such set, whatever it
// answers, then the reads themselves once more; their second answers
// replace the first. read sends a batch of GETs and returns the answers
// in request order, as Answers gives them. A set is warm once it answered
// 200 or was warmed up, so each set costs at most one warm-up per run.
func (w *Warmth) ConfirmAbsent(reqs []odata.BatchRequest, got []odata.BatchResponse, read func([]odata.BatchRequest) ([]odata.BatchResponse, error)) ([]odata.BatchResponse, error) {
	again, warmUps := w.ToConfirm(reqs, got)
	if len(again) == 0 {
		return got, nil
	}
	if err := w.WarmUp(warmUps, read); err != nil {
		return nil, err
	}
	retry := make([]odata.BatchRequest, len(again))
	for k, i := range again {
		retry[k] = reqs[i]
		retry[k].ID = strconv.Itoa(k + 1)
	}
	second, err := read(retry)
	if err != nil {
		return nil, err
	}
	out := append([]odata.BatchResponse(nil), got...)
	for k, i := range again {
		out[i] = second[k]
		out[i].ID = reqs[i].ID
	}
	return out, nil
}

// ToConfirm notes the sets whose GETs answered 200 (got, in the order of
// reqs) warm, and returns the GETs ConfirmAbsent asks again (their
// indexes in reqs: those that answered 404 from a set not known warm) and
// the warm-ups it sends first, one per such set. The sets are warm only
// once WarmUp (or Warmed) says so.
func (w *Warmth) ToConfirm(reqs []odata.BatchRequest, got []odata.BatchResponse) (again []int, warmUps []odata.BatchRequest) {
	cold := map[string]bool{}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.sets == nil {
		w.sets = map[string]bool{}
	}
	for i, g := range got {
		set := odata.EntitySetOf(reqs[i].URL)
		if reqs[i].Method != http.MethodGet || set == "" {
			continue
		}
		switch {
		case g.Status == http.StatusOK:
			w.sets[set] = true
		case g.Status == http.StatusNotFound && (!w.sets[set] || cold[set]):
			again = append(again, i)
			if !cold[set] {
				cold[set] = true
				warmUps = append(warmUps, odata.BatchRequest{ID: strconv.Itoa(len(warmUps) + 1), Method: http.MethodGet, URL: set + "?$top=1"})
			}
		}
	}
	return again, warmUps
}

// Warmed takes the sets of warm-ups for warm, as WarmUp does once it sent
// them: a dry run, which predicts apply's warm-ups without sending them.
func (w *Warmth) Warmed(warmUps []odata.BatchRequest) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.sets == nil {
		w.sets = map[string]bool{}
	}
	for _, r := range warmUps {
		w.sets[odata.EntitySetOf(r.URL)] = true
	}
}

// WarmUp sends the warm-ups (GET SET?$top=1) and from then on takes the
// sets for warm (Warmed). What they answer does not matter: being asked
// warms a form.
func (w *Warmth) WarmUp(warmUps []odata.BatchRequest, read func([]odata.BatchRequest) ([]odata.BatchResponse, error)) error {
	if _, err := read(warmUps); err != nil {
		return err
	}
	w.Warmed(warmUps)
	return nil
}

// Answered notes the answer of a request to url: a set that answered
// anything but 404 is warm. It reports whether a 404 from url is the
// truth (its set known warm).
func (w *Warmth) Answered(url string, status int) (truth bool) {
	set := odata.EntitySetOf(url)
	if set == "" {
		return true
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.sets == nil {
		w.sets = map[string]bool{}
	}
	if status != http.StatusNotFound {
		w.sets[set] = true
	}
	return w.sets[set]
}
