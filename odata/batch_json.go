package odata

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Limits of the $batch codecs. A server accepts at most 100 (or 1,000)
// operations (docs/service.md, Limits); the codecs allow more so that a
// server can refuse an oversized batch with its own message, but never an
// unbounded amount.
const (
	// MaxBatchParts is the most sub-requests or responses one batch body may hold.
	MaxBatchParts = 10000
	// MaxBatchBytes is the largest batch body the decoders read.
	MaxBatchBytes = 256 << 20
	// MaxPartHeaderBytes is the largest header block of one multipart part
	// (its MIME headers, and separately the headers of the HTTP message in it).
	MaxPartHeaderBytes = 64 << 10
)

// BatchSyntaxError reports a malformed $batch body: which format, which part
// (1-based; 0 when the error concerns the body as a whole) and which line of
// the body (1-based; 0 when unknown).
type BatchSyntaxError struct {
	Format string // "json" or "multipart"
	Part   int
	Line   int
	Msg    string
}

func (e *BatchSyntaxError) Error() string {
	var b strings.Builder
	b.WriteString(e.Format)
	b.WriteString(" batch")
	if e.Part > 0 {
		fmt.Fprintf(&b, ": part %d", e.Part)
	}
	if e.Line > 0 {
		fmt.Fprintf(&b, ": line %d", e.Line)
	}
	b.WriteString(": ")
	b.WriteString(e.Msg)
	return b.String()
}

// ErrBatchTooLarge is wrapped by the errors of a body past MaxBatchBytes or
// MaxBatchParts.
var ErrBatchTooLarge = errors.New("batch too large")

// Header returns the value of the sub-request's header name, matched without
// regard to case (JSON batches write "content-type", multipart "Content-Type").
func (r BatchRequest) Header(name string) string { return headerLookup(r.Headers, name) }

// Header returns the value of the response's header name, matched without
// regard to case.
func (r BatchResponse) Header(name string) string { return headerLookup(r.Headers, name) }

func headerLookup(h map[string]string, name string) string {
	if v, ok := h[name]; ok {
		return v
	}
	for k, v := range h {
		if strings.EqualFold(k, name) {
			return v
		}
	}
	return ""
}

type jsonBatchRequest struct {
	ID             string            `json:"id"`
	Method         string            `json:"method"`
	URL            string            `json:"url"`
	Headers        map[string]string `json:"headers,omitempty"`
	Body           json.RawMessage   `json:"body,omitempty"`
	DependsOn      []string          `json:"dependsOn,omitempty"`
	AtomicityGroup string            `json:"atomicityGroup,omitempty"`
}

type jsonBatchResponse struct {
	ID      string            `json:"id,omitempty"`
	Status  int               `json:"status"`
	Headers map[string]string `json:"headers,omitempty"`
	Body    json.RawMessage   `json:"body,omitempty"`
}

// EncodeJSONBatch writes a JSON $batch request body (docs/service.md, Batch):
// {"requests":[{"id","method","url","headers","body","dependsOn","atomicityGroup"}]}.
// Empty fields are omitted. A body that is not JSON (its content-type is not
// JSON) is written as a JSON string, as OData 4.01 JSON batches do.
//
// It is written by hand, as json.Encoder without HTML escaping writes
// jsonBatchRequest (the same bytes), because every call of a load sends one.
func EncodeJSONBatch(w io.Writer, reqs []BatchRequest) error {
	n := 64
	for _, r := range reqs {
		n += 64 + len(r.URL) + len(r.Body)
	}
	b := make([]byte, 0, n)
	b = append(b, `{"requests":[`...)
	for i, r := range reqs {
		if r.Method == "" || r.URL == "" {
			return fmt.Errorf("json batch: request %d (id %q): method and url are required", i+1, r.ID)
		}
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"id":`...)
		b = appendJSONString(b, r.ID)
		b = append(b, `,"method":`...)
		b = appendJSONString(b, r.Method)
		b = append(b, `,"url":`...)
		b = appendJSONString(b, r.URL)
		b = appendJSONHeaders(b, r.Headers)
		if body := jsonBody(r.Body, headerLookup(r.Headers, "Content-Type")); len(body) > 0 {
			b = append(b, `,"body":`...)
			b = append(b, body...)
		}
		if len(r.DependsOn) > 0 {
			b = append(b, `,"dependsOn":[`...)
			for j, d := range r.DependsOn {
				if j > 0 {
					b = append(b, ',')
				}
				b = appendJSONString(b, d)
			}
			b = append(b, ']')
		}
		if r.AtomicityGroup != "" {
			b = append(b, `,"atomicityGroup":`...)
			b = appendJSONString(b, r.AtomicityGroup)
		}
		b = append(b, '}')
	}
	b = append(b, "]}\n"...)
	_, err := w.Write(b)
	return err
}

// appendJSONHeaders writes a "headers" member (none for no headers), its
// names in order, as encoding/json writes a map.
func appendJSONHeaders(b []byte, h map[string]string) []byte {
	if len(h) == 0 {
		return b
	}
	names := make([]string, 0, len(h))
	for k := range h {
		names = append(names, k)
	}
	sort.Strings(names)
	b = append(b, `,"headers":{`...)
	for j, k := range names {
		if j > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, k)
		b = append(b, ':')
		b = appendJSONString(b, h[k])
	}
	return append(b, '}')
}

// EncodeJSONBatchResponse writes a JSON $batch response body:
// {"responses":[{"id","status","headers","body"}]}. It is written by hand,
// not through reflection, because a server answers many of them.
func EncodeJSONBatchResponse(w io.Writer, resps []BatchResponse) error {
	b := make([]byte, 0, 64+256*len(resps))
	b = append(b, `{"responses":[`...)
	for i, r := range resps {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '{')
		if r.ID != "" {
			b = append(b, `"id":`...)
			b = appendJSONString(b, r.ID)
			b = append(b, ',')
		}
		b = append(b, `"status":`...)
		b = strconv.AppendInt(b, int64(r.Status), 10)
		b = appendJSONHeaders(b, r.Headers)
		if body := jsonBody(r.Body, headerLookup(r.Headers, "Content-Type")); len(body) > 0 {
			b = append(b, `,"body":`...)
			b = append(b, body...)
		}
		b = append(b, '}')
	}
	b = append(b, "]}\n"...)
	_, err := w.Write(b)
	return err
}

// appendJSONString writes s as encoding/json writes it with HTML escaping
// off. Printable ASCII without a quote or backslash, most of what a body
// holds, is written as it is: that is what the encoder would write, without
// an encoder per string (FuzzMarshalBody holds the two together).
func appendJSONString(b []byte, s string) []byte {
	if !plainJSON(s) {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(s) // a string always encodes
		return append(b, bytes.TrimSuffix(buf.Bytes(), []byte{'\n'})...)
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// jsonBody returns b as it goes into a JSON batch: as is when it is JSON, as
// a JSON string otherwise.
func jsonBody(b json.RawMessage, contentType string) json.RawMessage {
	t := bytes.TrimSpace(b)
	if len(t) == 0 {
		return nil
	}
	if isJSONContentType(contentType) {
		if compactJSON(t) {
			return t // what json.Compact would give: bodies mostly come compact
		}
		var compact bytes.Buffer
		if json.Compact(&compact, t) == nil {
			return compact.Bytes()
		}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(string(b))
	return bytes.TrimSuffix(buf.Bytes(), []byte{'\n'})
}

// isJSONContentType reports whether ct names JSON; an empty type counts as
// JSON, the default of a JSON batch.
func isJSONContentType(ct string) bool {
	if ct == "" || strings.HasPrefix(ct, "application/json") && (len(ct) == 16 || ct[16] == ';' || ct[16] == ' ') {
		return true
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return strings.Contains(strings.ToLower(ct), "json")
	}
	return mt == "application/json" || strings.HasSuffix(mt, "+json")
}

// DecodeJSONBatchRequest reads a JSON $batch request body (docs/service.md,
// Batch). Each request needs a method and a url; ids, when given, are unique.
func DecodeJSONBatchRequest(r io.Reader) ([]BatchRequest, error) {
	data, err := readBatchBody(r, "json")
	if err != nil {
		return nil, err
	}
	// One pass into the typed form; only when it fails, a second pass
	// element by element finds the request to blame.
	var typed struct {
		Requests *[]jsonBatchRequest `json:"requests"`
	}
	if reqs, ok := scanJSONBatchRequests(data); ok {
		typed.Requests = &reqs
	} else if json.Unmarshal(data, &typed) != nil {
		var in struct {
			Requests *[]json.RawMessage `json:"requests"`
		}
		if err := json.Unmarshal(data, &in); err != nil {
			return nil, jsonSyntaxError(data, 0, err)
		}
		if in.Requests != nil {
			for i, raw := range *in.Requests {
				var q jsonBatchRequest
				if err := json.Unmarshal(raw, &q); err != nil {
					return nil, jsonSyntaxError(data, i+1, err)
				}
			}
		}
		return nil, &BatchSyntaxError{Format: "json", Msg: "not a batch request body"}
	}
	if typed.Requests == nil {
		return nil, &BatchSyntaxError{Format: "json", Msg: `no "requests" array in the body`}
	}
	reqs := *typed.Requests
	if len(reqs) > MaxBatchParts {
		return nil, &BatchSyntaxError{Format: "json", Msg: fmt.Sprintf("%d requests: more than %d (%v)", len(reqs), MaxBatchParts, ErrBatchTooLarge)}
	}
	out := make([]BatchRequest, 0, len(reqs))
	seen := make(map[string]bool, len(reqs))
	for i, q := range reqs {
		bad := func(msg string) error {
			return &BatchSyntaxError{Format: "json", Part: i + 1, Msg: fmt.Sprintf("request id %q: %s", q.ID, msg)}
		}
		switch {
		case q.Method == "":
			return nil, bad(`no "method"`)
		case !isToken(q.Method):
			return nil, bad(fmt.Sprintf("method %q is not an HTTP method", q.Method))
		case q.URL == "":
			return nil, bad(`no "url"`)
		case q.ID != "" && seen[q.ID]:
			return nil, bad("id used twice")
		}
		if q.ID != "" {
			seen[q.ID] = true
		}
		out = append(out, BatchRequest{
			ID: q.ID, Method: strings.ToUpper(q.Method), URL: q.URL, Headers: q.Headers,
			Body:      bodyFromJSON(q.Body, headerLookup(q.Headers, "Content-Type")),
			DependsOn: q.DependsOn, AtomicityGroup: q.AtomicityGroup,
		})
	}
	return out, nil
}

// DecodeJSONBatchResponse reads a JSON $batch response body.
func DecodeJSONBatchResponse(r io.Reader) ([]BatchResponse, error) {
	data, err := readBatchBody(r, "json")
	if err != nil {
		return nil, err
	}
	return decodeJSONBatchResponse(data)
}

// decodeJSONBatchResponse is DecodeJSONBatchResponse of a body in hand,
// no larger than MaxBatchBytes.
func decodeJSONBatchResponse(data []byte) ([]BatchResponse, error) {
	if out, ok := scanJSONBatchResponse(data); ok {
		return out, nil
	}
	// Not the plain road: encoding/json decides, and words the error.
	return decodeJSONBatchResponseSlow(data)
}

func decodeJSONBatchResponseSlow(data []byte) ([]BatchResponse, error) {
	var in struct {
		Responses *[]json.RawMessage `json:"responses"`
	}
	if err := json.Unmarshal(data, &in); err != nil {
		return nil, jsonSyntaxError(data, 0, err)
	}
	if in.Responses == nil {
		return nil, &BatchSyntaxError{Format: "json", Msg: `no "responses" array in the body`}
	}
	if len(*in.Responses) > MaxBatchParts {
		return nil, &BatchSyntaxError{Format: "json", Msg: fmt.Sprintf("%d responses: more than %d (%v)", len(*in.Responses), MaxBatchParts, ErrBatchTooLarge)}
	}
	out := make([]BatchResponse, 0, len(*in.Responses))
	for i, raw := range *in.Responses {
		var q jsonBatchResponse
		if err := json.Unmarshal(raw, &q); err != nil {
			return nil, jsonSyntaxError(data, i+1, err)
		}
		if q.Status < 100 || q.Status > 999 {
			return nil, &BatchSyntaxError{Format: "json", Part: i + 1, Msg: fmt.Sprintf("response id %q: status %d is not an HTTP status", q.ID, q.Status)}
		}
		out = append(out, BatchResponse{
			ID: q.ID, Status: q.Status, Headers: q.Headers,
			Body: bodyFromJSON(q.Body, headerLookup(q.Headers, "Content-Type")),
		})
	}
	return out, nil
}

// scanJSONBatchResponse reads a JSON $batch answer in one pass (jsonScan),
// each body a slice of data; false when the answer is anything but plainly
// valid (a member spelt in another case or given twice, a value of another
// type, a status out of range), which encoding/json then decodes or words.
func scanJSONBatchResponse(data []byte) ([]BatchResponse, bool) {
	p := jsonScan{s: string(data), ok: true}
	out := []BatchResponse{}
	ok := p.envelope("responses", func() bool {
		if len(out) == MaxBatchParts {
			return false
		}
		r, ok := p.batchResponse(data)
		out = append(out, r)
		return ok
	})
	return out, ok
}

// envelope reads a $batch body, {"NAME":[...]}, as encoding/json fills the
// one member NAME of a struct, elem reading each element; false when NAME
// is missing, spelt in another case, given twice or not an array, or
// anything follows the object.
func (p *jsonScan) envelope(name string, elem func() bool) bool {
	seen := false
	ok := p.object(func(k string) bool {
		if k != name {
			return !strings.EqualFold(k, name) && p.skip(1)
		}
		if seen || p.peek() != '[' {
			return false
		}
		seen = true
		return p.array(elem)
	})
	return ok && seen && p.peek() == 0 && p.i == len(p.s)
}

// responseMembers are the members of a response jsonBatchResponse reads.
var responseMembers = []string{"id", "status", "headers", "body"}

// batchResponse reads one response of a JSON $batch answer.
func (p *jsonScan) batchResponse(data []byte) (BatchResponse, bool) {
	var r BatchResponse
	var body json.RawMessage
	status := false
	ok := p.members(responseMembers, func(n int) bool {
		var ok bool
		switch n {
		case 0:
			r.ID, ok = p.str()
		case 1:
			var lit string
			if lit, ok = p.num(); ok {
				var err error
				r.Status, err = strconv.Atoi(lit)
				ok = err == nil && r.Status >= 100 && r.Status <= 999
			}
			status = true
		case 2:
			r.Headers, ok = p.headers()
		case 3:
			body, ok = p.raw(data)
		}
		return ok
	})
	if !ok || !status {
		return r, false
	}
	r.Body = bodyFromJSON(body, headerLookup(r.Headers, "Content-Type"))
	return r, true
}

// requestMembers are the members of a request jsonBatchRequest reads.
var requestMembers = []string{"id", "method", "url", "headers", "body", "dependsOn", "atomicityGroup"}

// scanJSONBatchRequests reads the requests of a JSON $batch body in one
// pass, as json.Unmarshal fills them; false on anything but the plain road
// (as scanJSONBatchResponse), which encoding/json then reads or words.
func scanJSONBatchRequests(data []byte) ([]jsonBatchRequest, bool) {
	p := jsonScan{s: string(data), ok: true}
	out := []jsonBatchRequest{}
	ok := p.envelope("requests", func() bool {
		var q jsonBatchRequest
		ok := p.members(requestMembers, func(n int) bool {
			var ok bool
			switch n {
			case 0:
				q.ID, ok = p.str()
			case 1:
				q.Method, ok = p.str()
			case 2:
				q.URL, ok = p.str()
			case 3:
				q.Headers, ok = p.headers()
			case 4:
				q.Body, ok = p.raw(data)
			case 5:
				ok = p.peek() == '[' && p.array(func() bool {
					d, ok := p.str()
					q.DependsOn = append(q.DependsOn, d)
					return ok
				})
				if ok && q.DependsOn == nil {
					q.DependsOn = []string{}
				}
			case 6:
				q.AtomicityGroup, ok = p.str()
			}
			return ok
		})
		out = append(out, q)
		return ok && len(out) <= MaxBatchParts
	})
	return out, ok
}

// members reads an object of which names are read by read(i), i the
// name's place; other members are skipped. False for a member spelt in
// another case (encoding/json takes it for the name) or given twice.
func (p *jsonScan) members(names []string, read func(i int) bool) bool {
	var seen uint64
	return p.peek() == '{' && p.object(func(k string) bool {
		n := slices.Index(names, k)
		if n < 0 {
			for _, m := range names {
				if strings.EqualFold(k, m) {
					return false
				}
			}
			return p.skip(2)
		}
		if seen&(1<<n) != 0 {
			return false
		}
		seen |= 1 << n
		return read(n)
	})
}

// headers reads an object of texts; false for null or a name given twice.
func (p *jsonScan) headers() (map[string]string, bool) {
	h := map[string]string{}
	ok := p.peek() == '{' && p.object(func(k string) bool {
		_, dup := h[k]
		v, ok := p.str()
		h[k] = v
		return ok && !dup
	})
	return h, ok
}

// raw reads one value as a slice of data, the text p reads.
func (p *jsonScan) raw(data []byte) (json.RawMessage, bool) {
	p.ws()
	start := p.i
	ok := p.skip(2)
	return json.RawMessage(data[start:p.i:p.i]), ok
}

// bodyFromJSON undoes jsonBody: a JSON string under a non-JSON content type
// is the body's text.
func bodyFromJSON(b json.RawMessage, contentType string) json.RawMessage {
	if len(b) == 0 || string(b) == "null" {
		return nil
	}
	if !isJSONContentType(contentType) && b[0] == '"' {
		var s string
		if json.Unmarshal(b, &s) == nil {
			return json.RawMessage(s)
		}
	}
	return b
}

func readBatchBody(r io.Reader, format string) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxBatchBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%s batch: reading the body: %w", format, err)
	}
	if len(data) > MaxBatchBytes {
		return nil, &BatchSyntaxError{Format: format, Msg: fmt.Sprintf("body larger than %d bytes (%v)", MaxBatchBytes, ErrBatchTooLarge)}
	}
	return data, nil
}

// jsonSyntaxError turns a encoding/json error into one that names the line.
func jsonSyntaxError(data []byte, part int, err error) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	line := 0
	msg := err.Error()
	switch {
	case errors.As(err, &se):
		line = lineAt(data, se.Offset)
		msg = "not valid JSON: " + se.Error()
	case errors.As(err, &te):
		if part == 0 {
			line = lineAt(data, te.Offset)
		}
		field := te.Field
		if field == "" {
			field = "the body"
		}
		msg = fmt.Sprintf("%s: a JSON %s where %s belongs", field, te.Value, jsonKind(te.Type.Kind().String()))
	}
	return &BatchSyntaxError{Format: "json", Part: part, Line: line, Msg: msg}
}

func jsonKind(k string) string {
	switch k {
	case "string":
		return "a string"
	case "int", "int64":
		return "an integer"
	case "map", "struct":
		return "an object"
	case "slice":
		return "an array"
	}
	return k
}

func lineAt(data []byte, off int64) int {
	if off < 0 {
		return 0
	}
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	return bytes.Count(data[:off], []byte{'\n'}) + 1
}

// isToken reports whether s is an HTTP token (a method name).
func isToken(s string) bool {
	if s == "" || len(s) > 32 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}
