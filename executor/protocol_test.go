package executor

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/migrate-tool/migrate/executor/fixture"
	"github.com/migrate-tool/migrate/journal"
	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/read"
	"github.com/migrate-tool/migrate/sandbox"
	"github.com/migrate-tool/migrate/transform"
)

// TestMalformedBatchAnswersAreInDoubt: a $batch answer that breaks the
// protocol decides nothing about the sub-requests it leaves unclear: they
// are in doubt, never taken as failed and sent again. The server commits
// every order, but its answer to the first batch of orders names one order's
// id twice (failed after committed, or the other way round, or twice alike),
// names an id never asked for instead, leaves it out, or leaves its id empty;
// in JSON and in multipart. The first apply journals that order in doubt, not
// failed (once the last answer won and --retry-failed sent a committed order
// again), and stops; the second reconciles it and ends exact: every order
// once, with its line.
func TestMalformedBatchAnswersAreInDoubt(t *testing.T) {
	t.Parallel()
	failed := odata.BatchResponse{Status: 400, Headers: map[string]string{"Content-Type": "application/json"},
		Body: json.RawMessage(`{"error":{"code":"400","message":"refused (test)"}}`)}
	shapes := []struct {
		name   string
		mangle func(resps []odata.BatchResponse, id string) []odata.BatchResponse
	}{
		{"same id twice, the second failed", func(rs []odata.BatchResponse, id string) []odata.BatchResponse {
			f := failed
			f.ID = id
			return append(rs, f)
		}},
		{"same id twice, the first failed", func(rs []odata.BatchResponse, id string) []odata.BatchResponse {
			f := failed
			f.ID = id
			return append([]odata.BatchResponse{f}, rs...)
		}},
		{"same id twice alike", func(rs []odata.BatchResponse, id string) []odata.BatchResponse {
			return append(rs, rs[answerOf(rs, id)])
		}},
		{"an id never asked for", func(rs []odata.BatchResponse, id string) []odata.BatchResponse {
			rs[answerOf(rs, id)].ID = "99"
			return rs
		}},
		{"fewer answers than requests", func(rs []odata.BatchResponse, id string) []odata.BatchResponse {
			i := answerOf(rs, id)
			return append(rs[:i:i], rs[i+1:]...)
		}},
		{"an answer without its id", func(rs []odata.BatchResponse, id string) []odata.BatchResponse {
			rs[answerOf(rs, id)].ID = ""
			return rs
		}},
	}
	for _, multipart := range []bool{false, true} {
		for _, sh := range shapes {
			name := "json/" + sh.name
			if multipart {
				name = "multipart/" + sh.name
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				env := newSandbox(t, sandbox.Options{})
				var mangled atomic.Bool
				client := answerProxy(t, env, multipart, func(req []byte, resps []odata.BatchResponse) []odata.BatchResponse {
					id := firstOrder(req)
					if id == "" || !mangled.CompareAndSwap(false, true) {
						return nil
					}
					return sh.mangle(resps, id)
				})

				var orders []transform.Result
				for i := range 4 {
					orders = append(orders, orderWithLines(fmt.Sprintf("O%d", i+1), i+2, "C1", "P1"))
				}
				p, f := ordersPlan(orders...)
				o := env.opts(t, p, f)
				o.Client = client
				o.BatchSize = 4 // two orders with a line each per batch

				sum, err := runApply(context.Background(), o)
				if !errors.Is(err, ErrInDoubt) || !mangled.Load() {
					t.Fatalf("first apply: %v (mangled %v), want ErrInDoubt", err, mangled.Load())
				}
				st, lerr := journal.Load(o.Journal)
				if lerr != nil {
					t.Fatal(lerr)
				}
				if c := st.Counts("orders"); c.Failed != 0 || c.InDoubt == 0 {
					t.Fatalf("after the malformed answer: %+v (summary %+v), want in doubt and nothing failed", c, sum.Steps)
				}

				sum, err = runApply(context.Background(), o)
				if err != nil || !sum.Complete {
					t.Fatalf("second apply: %v, complete %v, undecided %v", err, sum != nil && sum.Complete, sum.Undecided)
				}
				got := env.entities("ORDERS", "DETAILS")
				if n := len(env.sb.Snapshot()["ORDERS"]); n != 4 || len(got) != 4 {
					t.Fatalf("the sandbox holds %d orders (%d distinct), want 4", n, len(got))
				}
				for id, ord := range got {
					if n := len(lines(ord, "ORDERITEMS_SUBFORM")); n != 1 {
						t.Errorf("%s has %d lines, want 1", id, n)
					}
				}
				st = loadJournal(t, o.Journal)
				if c := st.Counts("orders"); c != (journal.Counts{Committed: 4}) {
					t.Errorf("the journal at the end: %+v, want 4 committed", c)
				}
			})
		}
	}
}

// TestMalformedReadAnswerStopsTheRun: reads (of upsert's current entities,
// of reconciliation) are tried again after an answer that breaks the
// protocol; when every attempt breaks it, the run stops as interrupted
// (exit 4), having written nothing on the strength of such an answer.
func TestMalformedReadAnswerStopsTheRun(t *testing.T) {
	t.Parallel()
	env := newSandbox(t, sandbox.Options{})
	var reads atomic.Int64
	client := answerProxy(t, env, false, func(req []byte, resps []odata.BatchResponse) []odata.BatchResponse {
		if !strings.Contains(string(req), `"method":"GET"`) {
			return nil
		}
		reads.Add(1)
		return append(resps, resps...)
	})
	s := step("customers", "CUSTOMERS")
	s.Mode = "upsert"
	p := testPlan(s)
	f := &fakeRecords{Results: map[string][]transform.Result{
		"customers": {rec("customers", "CUSTOMERS", "C1", 2, map[string]any{"CUSTNAME": "C1", "CUSTDES": "Acme"})}}}
	o := env.opts(t, p, f)
	o.Client = client
	_, err := runApply(context.Background(), o)
	if !errors.Is(err, ErrInterrupted) || !strings.Contains(err.Error(), `id "1" answered more than once`) {
		t.Fatalf("apply: %v, want interrupted by the malformed answer", err)
	}
	if n := reads.Load(); n != read.Attempts {
		t.Errorf("%d reads, want %d attempts", n, read.Attempts)
	}
	if n := len(env.sb.Snapshot()["CUSTOMERS"]); n != 0 {
		t.Errorf("the sandbox holds %d customers: something was written", n)
	}
}

func answerOf(rs []odata.BatchResponse, id string) int {
	for i, r := range rs {
		if r.ID == id {
			return i
		}
	}
	panic("no answer with id " + id)
}

// firstOrder is the id of the first POST of an order in a JSON $batch
// request body, or "".
func firstOrder(body []byte) string {
	reqs, err := odata.DecodeJSONBatchRequest(bytes.NewReader(body))
	if err != nil {
		return ""
	}
	for _, r := range reqs {
		if r.Method == "POST" && r.URL == "ORDERS" {
			return r.ID
		}
	}
	return ""
}

// answerProxy is a client of a server in front of env's sandbox that
// passes every call through, except that mangle may rewrite the answers to
// a $batch: given the request body and the sandbox's answers, it returns
// the answers to send instead (as JSON, or multipart), or nil.
func answerProxy(t *testing.T, env *sandboxEnv, multipart bool, mangle func(req []byte, resps []odata.BatchResponse) []odata.BatchResponse) *httpClient {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		rec := httptest.NewRecorder()
		env.sb.ServeHTTP(rec, r)
		if rec.Code == http.StatusOK && strings.HasSuffix(r.URL.Path, "/$batch") {
			resps, err := odata.DecodeJSONBatchResponse(bytes.NewReader(rec.Body.Bytes()))
			if err != nil {
				t.Errorf("the sandbox's answer: %v", err)
			} else if out := mangle(body, resps); out != nil {
				writeBatchAnswer(t, w, out, multipart)
				return
			}
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		w.Write(rec.Body.Bytes())
	}))
	t.Cleanup(srv.Close)
	return fixture.NewClient(srv.URL+sandbox.BasePath, srv.Client())
}

func writeBatchAnswer(t *testing.T, w http.ResponseWriter, resps []odata.BatchResponse, multipart bool) {
	var buf bytes.Buffer
	if multipart {
		b := odata.NewBoundary()
		if err := odata.EncodeMultipartBatchResponse(&buf, b, resps); err != nil {
			t.Error(err)
		}
		w.Header().Set("Content-Type", odata.MultipartBatchContentType(b, false))
	} else {
		if err := odata.EncodeJSONBatchResponse(&buf, resps); err != nil {
			t.Error(err)
		}
		w.Header().Set("Content-Type", "application/json")
	}
	w.Write(buf.Bytes())
}
