package sandbox

import (
	"bytes"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/migrate-tool/migrate/odata"
)

// batch serves POST $batch (docs/service.md, Batch) in JSON or multipart/mixed.
//
// Sub-requests run in order. dependsOn and $<id> references must point to an
// earlier sub-request (else the whole batch is refused with 400); a
// sub-request whose dependency failed is answered 424 without running. On a
// failure the batch goes on when continue-on-error is in force (Prefer
// header, the odata.continue-on-error parameter of the batch's or a
// sub-request's Content-Type; by default JSON batches continue and multipart
// batches stop, as OData 4.01 says) and stops otherwise. Nothing is ever
// rolled back, atomicity group or not.
func (c *call) batch(method string, hdr http.Header, body []byte) *result {
	s := c.s
	s.nBatches.Add(1)
	if method != http.MethodPost {
		return s.errResult(protoErr(http.StatusMethodNotAllowed, "MethodNotAllowed", "$batch allows POST only"))
	}
	ct := hdr.Get("Content-Type")
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil {
		return s.errResult(protoErr(http.StatusBadRequest, "BadRequest", "$batch: Content-Type %q: want application/json or multipart/mixed;boundary=…", ct))
	}
	var reqs []odata.BatchRequest
	isJSON := mt == "application/json"
	switch {
	case isJSON:
		reqs, err = odata.DecodeJSONBatchRequest(bytes.NewReader(body))
	case mt == "multipart/mixed":
		reqs, err = odata.DecodeMultipartBatchRequest(bytes.NewReader(body), params["boundary"])
	default:
		err = fmt.Errorf("$batch: Content-Type %q: want application/json or multipart/mixed", mt)
	}
	if err != nil {
		return s.errResult(protoErr(http.StatusBadRequest, "BadRequest", "%v", err))
	}
	if limit := s.version.BatchLimit(); len(reqs) > limit {
		return s.errResult(protoErr(http.StatusBadRequest, "BadRequest", "the batch holds %d operations; this server allows at most %d (docs/service.md, Batch)", len(reqs), limit))
	}
	if aerr := checkReferences(reqs); aerr != nil {
		return s.errResult(aerr)
	}
	if carriesWrite(reqs) && s.takeDrop(&s.dropBefore) {
		c.dropped = true // lost before anything ran (DropNextWrites)
		return &result{}
	}
	cont, set := odata.ContinueOnError(ct, hdr.Get("Prefer"))
	for i := 0; !set && i < len(reqs); i++ {
		cont, set = odata.ContinueOnError(reqs[i].Header("Content-Type"), reqs[i].Header("Prefer"))
	}
	if !set {
		cont = isJSON
	}

	status := map[string]int{}
	location := map[string]string{} // id -> path of the created entity
	var out []odata.BatchResponse
	for _, r := range reqs {
		s.nSub.Add(1)
		var res *result
		if dep := failedDependency(r, status); dep != "" {
			res = s.errResult(protoErr(http.StatusFailedDependency, "FailedDependency", "not run: request %s, on which it depends, failed", dep))
		} else {
			res = c.subRequest(r, location)
		}
		if r.ID != "" {
			status[r.ID] = res.status
			if loc := res.header.Get("Location"); loc != "" {
				location[r.ID] = strings.TrimPrefix(loc, c.base+"/")
			}
		}
		h := map[string]string{}
		for k := range res.header {
			h[strings.ToLower(k)] = res.header.Get(k)
		}
		out = append(out, odata.BatchResponse{ID: r.ID, Status: res.status, Headers: h, Body: res.body})
		if res.status >= 400 && !cont {
			break
		}
	}

	var buf bytes.Buffer
	respCT := "application/json;odata.metadata=minimal"
	if s.quirk(QuirkMultipartIDs) && !s.version.JSONBatchResponses() {
		vendorIDs(reqs, out)
	}
	if !isJSON || !s.version.JSONBatchResponses() || prefersMultipart(hdr.Get("Accept")) {
		boundary := "batchresponse_" + strings.TrimPrefix(odata.NewBoundary(), "batch_")
		err = odata.EncodeMultipartBatchResponse(&buf, boundary, out)
		respCT = "multipart/mixed;boundary=" + boundary
	} else {
		err = odata.EncodeJSONBatchResponse(&buf, out)
	}
	if err != nil {
		return s.errResult(protoErr(http.StatusInternalServerError, "InternalError", "writing the batch response: %v", err))
	}
	return &result{status: http.StatusOK, body: buf.Bytes(), header: http.Header{"Content-Type": {respCT}, "Odata-Version": {"4.0"}}}
}

// vendorIDs gives answers the ids of the vendor's own example before 22.1
// (QuirkMultipartIDs): a write's answer comes in a changesetresponse part
// of its own as ID-r1, a GET's answer has no Content-ID.
func vendorIDs(reqs []odata.BatchRequest, out []odata.BatchResponse) {
	for i := range out {
		if reqs[i].Method == http.MethodGet {
			out[i].ID = ""
			continue
		}
		if out[i].ID != "" {
			out[i].ID += "-r1"
		}
		out[i].AtomicityGroup = "response_" + strconv.Itoa(i+1)
	}
}

// refID returns <id> of a URL starting with $<id> (docs/service.md, Batch),
// or "".
func refID(u string) string {
	id, _, _ := odata.SplitReference(u)
	return id
}

// checkReferences refuses a batch whose dependsOn or $<id> names a request
// that is not an earlier one.
func checkReferences(reqs []odata.BatchRequest) *apiError {
	seen := map[string]bool{}
	for i, r := range reqs {
		name := r.ID
		if name == "" {
			name = fmt.Sprintf("#%d", i+1)
		}
		for _, d := range r.DependsOn {
			if !seen[d] {
				return protoErr(http.StatusBadRequest, "BadRequest", "request %s depends on %q, which is not an earlier request of the batch", name, d)
			}
		}
		if id := refID(r.URL); id != "" && !seen[id] {
			return protoErr(http.StatusBadRequest, "BadRequest", "request %s refers to $%s, which is not an earlier request of the batch", name, id)
		}
		if r.ID != "" {
			if seen[r.ID] {
				return protoErr(http.StatusBadRequest, "BadRequest", "request id %q is used twice", r.ID)
			}
			seen[r.ID] = true
		}
	}
	return nil
}

// failedDependency returns the id of a failed request r depends on, by
// dependsOn or by a $<id> reference.
func failedDependency(r odata.BatchRequest, status map[string]int) string {
	deps := r.DependsOn
	if id := refID(r.URL); id != "" {
		deps = append(deps[:len(deps):len(deps)], id)
	}
	for _, d := range deps {
		if st, ran := status[d]; !ran || st >= 400 {
			return d
		}
	}
	return ""
}

// subRequest runs one sub-request, its URL relative to the service root,
// absolute, or starting with $<id>.
func (c *call) subRequest(r odata.BatchRequest, location map[string]string) *result {
	u := r.URL
	if id := refID(u); id != "" {
		loc, ok := location[id]
		if !ok {
			return c.s.errResult(protoErr(http.StatusBadRequest, "BadRequest", "$%s did not create an entity to refer to", id))
		}
		_, rest, _ := odata.SplitReference(u)
		u = loc + rest
	}
	raw, rawQuery, _ := strings.Cut(u, "?")
	if pu, err := url.Parse(raw); err == nil && (pu.Scheme != "" || strings.HasPrefix(raw, "/")) {
		// A batch is one company's: a URL into another is not below its root.
		_, company, rest, _, ok := c.s.splitBase(pu.EscapedPath())
		if !ok || company != c.co.name {
			return c.s.errResult(protoErr(http.StatusNotFound, "NotFound", "%s is not below the service root", u))
		}
		raw = rest
	}
	path, err := url.PathUnescape(raw)
	if err != nil {
		return c.s.errResult(protoErr(http.StatusBadRequest, "BadRequest", "URL %q: %v", u, err))
	}
	if path == "$batch" {
		return c.s.errResult(protoErr(http.StatusBadRequest, "BadRequest", "a $batch cannot be sent inside a $batch"))
	}
	h := http.Header{}
	for k, v := range r.Headers {
		h.Set(k, v)
	}
	return c.exec(r.Method, path, rawQuery, h, r.Body)
}

// prefersMultipart reports whether an Accept header ranks multipart/mixed
// above JSON ("multipart/mixed" forces multipart; "application/json,
// multipart/mixed;q=0.5" does not).
func prefersMultipart(accept string) bool {
	qMulti, qJSON := -1.0, -1.0
	for _, part := range strings.Split(accept, ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		q := 1.0
		if v, ok := params["q"]; ok {
			if f, err := strconv.ParseFloat(v, 64); err == nil {
				q = f
			}
		}
		switch mt {
		case "multipart/mixed":
			qMulti = max(qMulti, q)
		case "application/json", "application/*", "*/*":
			qJSON = max(qJSON, q)
		}
	}
	return qMulti > 0 && qMulti > qJSON
}

// carriesWrite reports whether a batch holds anything but reads.
func carriesWrite(reqs []odata.BatchRequest) bool {
	for _, r := range reqs {
		if r.Method != http.MethodGet {
			return true
		}
	}
	return false
}
