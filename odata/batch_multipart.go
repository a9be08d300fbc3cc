package odata

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/migrate-tool/migrate/internal/diag"
)

// The multipart/mixed $batch format (docs/service.md, Batch, before 22.1 the
// only response format): each part is Content-Type application/http holding
// one HTTP message; an atomicity group is a nested multipart/mixed part (a
// changeset). dependsOn has no multipart form: requests run in order and a
// URL starting with $<id> refers to the part whose Content-ID is <id>.

const maxPartHeaders = 100

// NewBoundary returns a fresh random multipart boundary.
func NewBoundary() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "batch_" + hex.EncodeToString(b[:])
}

// MultipartBatchContentType is the Content-Type of a multipart $batch request
// or response with that boundary. With continueOnError it carries the
// odata.continue-on-error parameter (a multipart batch stops at the first
// error by default).
func MultipartBatchContentType(boundary string, continueOnError bool) string {
	ct := "multipart/mixed;boundary=" + boundary
	if continueOnError {
		ct += ";odata.continue-on-error=true"
	}
	return ct
}

// ContinueOnError reads the continue-on-error preference from a Prefer header
// ("odata.continue-on-error", optionally "=true"/"=false") and from the
// odata.continue-on-error parameter of a Content-Type. set is false when
// neither says anything; Prefer wins over the parameter.
func ContinueOnError(contentType, prefer string) (on, set bool) {
	for _, p := range strings.Split(prefer, ",") {
		name, val, _ := strings.Cut(strings.TrimSpace(p), "=")
		name = strings.ToLower(strings.TrimSpace(name))
		if name == "odata.continue-on-error" || name == "continue-on-error" {
			val = strings.ToLower(strings.Trim(strings.TrimSpace(val), `"`))
			return val != "false", true
		}
	}
	if contentType != "" {
		if _, params, err := mime.ParseMediaType(contentType); err == nil {
			if v, ok := params["odata.continue-on-error"]; ok {
				return !strings.EqualFold(v, "false"), true
			}
		}
	}
	return false, false
}

func validBoundary(b string) error {
	if b == "" || len(b) > 70 {
		return fmt.Errorf("multipart batch: boundary %q must be 1 to 70 characters", b)
	}
	for i := 0; i < len(b); i++ {
		c := b[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || strings.IndexByte("'()+_,-./:=?", c) >= 0) {
			return fmt.Errorf("multipart batch: boundary %q: character %q is not allowed", b, c)
		}
	}
	return nil
}

// changesetBoundary derives a changeset boundary from an atomicity group
// name; decoding gives the group name back when it is boundary-safe.
func changesetBoundary(group string) string {
	if len(group) <= 60 && validBoundary(group) == nil {
		return "changeset_" + group
	}
	sum := sha256.Sum256([]byte(group))
	return "changeset_" + hex.EncodeToString(sum[:8])
}

func noCRLF(s string) bool { return !strings.ContainsAny(s, "\r\n") }

// EncodeMultipartBatch writes a multipart/mixed $batch request body. Requests
// with an AtomicityGroup that follow each other form one changeset. With
// continueOnError every sub-request's Content-Type carries
// odata.continue-on-error=true (as the contract's example carries =false,
// docs/service.md, Batch); send
// the HTTP header from MultipartBatchContentType as well.
func EncodeMultipartBatch(w io.Writer, boundary string, reqs []BatchRequest, continueOnError bool) error {
	if err := validBoundary(boundary); err != nil {
		return err
	}
	var buf bytes.Buffer
	err := writeGroups(&buf, boundary, len(reqs), func(i int) string { return reqs[i].AtomicityGroup },
		func(b string, i int) error { return writeRequestPart(&buf, b, i+1, reqs[i], continueOnError) })
	if err != nil {
		return err
	}
	_, err = w.Write(buf.Bytes())
	return err
}

// writeGroups writes n parts and the closing delimiter; parts that follow
// each other with the same non-empty group go into one changeset, a
// nested multipart/mixed part.
func writeGroups(buf *bytes.Buffer, boundary string, n int, group func(int) string, write func(boundary string, i int) error) error {
	for i := 0; i < n; {
		g := group(i)
		if g == "" {
			buf.WriteString("--" + boundary + "\r\n")
			if err := write(boundary, i); err != nil {
				return err
			}
			i++
			continue
		}
		cs := changesetBoundary(g)
		buf.WriteString("--" + boundary + "\r\nContent-Type: multipart/mixed;boundary=" + cs + "\r\n\r\n")
		for ; i < n && group(i) == g; i++ {
			buf.WriteString("--" + cs + "\r\n")
			if err := write(cs, i); err != nil {
				return err
			}
		}
		buf.WriteString("--" + cs + "--\r\n")
	}
	buf.WriteString("--" + boundary + "--\r\n")
	return nil
}

func writeRequestPart(buf *bytes.Buffer, boundary string, n int, r BatchRequest, continueOnError bool) error {
	if !isToken(r.Method) || r.URL == "" || strings.ContainsAny(r.URL, " \t\r\n") || !noCRLF(r.ID) {
		return fmt.Errorf("multipart batch: request %d (id %q): needs a method and a URL without spaces", n, r.ID)
	}
	headers := copyHeaders(r.Headers)
	if continueOnError && (len(bytes.TrimSpace(r.Body)) > 0 || headerLookup(headers, "Content-Type") != "") {
		setHeader(headers, "Content-Type", withContinueOnError(headerLookup(headers, "Content-Type")))
	}
	writePartHeaders(buf, r.ID)
	buf.WriteString(strings.ToUpper(r.Method) + " " + r.URL + " HTTP/1.1\r\n")
	return writeMessageTail(buf, boundary, n, r.ID, headers, r.Body)
}

func writePartHeaders(buf *bytes.Buffer, id string) {
	buf.WriteString("Content-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n")
	if id != "" {
		buf.WriteString("Content-ID: " + id + "\r\n")
	}
	buf.WriteString("\r\n")
}

func writeMessageTail(buf *bytes.Buffer, boundary string, n int, id string, headers map[string]string, body []byte) error {
	names := slices.Sorted(maps.Keys(headers))
	for _, k := range names {
		if !isToken(k) || !noCRLF(headers[k]) {
			return fmt.Errorf("multipart batch: part %d (id %q): header %q cannot be written", n, id, k)
		}
		buf.WriteString(k + ": " + headers[k] + "\r\n")
	}
	buf.WriteString("\r\n")
	if bytes.Contains(body, []byte("--"+boundary)) {
		return fmt.Errorf("multipart batch: part %d (id %q): the body contains the boundary %q; choose another", n, id, boundary)
	}
	buf.Write(body)
	buf.WriteString("\r\n")
	return nil
}

func copyHeaders(h map[string]string) map[string]string {
	out := make(map[string]string, len(h)+1)
	for k, v := range h {
		out[k] = v
	}
	return out
}

func setHeader(h map[string]string, name, value string) {
	for k := range h {
		if strings.EqualFold(k, name) {
			delete(h, k)
		}
	}
	h[name] = value
}

func withContinueOnError(ct string) string {
	if ct == "" {
		ct = "application/json"
	}
	var kept []string
	for _, p := range strings.Split(ct, ";") {
		if !strings.HasPrefix(strings.ToLower(strings.TrimSpace(p)), "odata.continue-on-error") {
			kept = append(kept, p)
		}
	}
	return strings.Join(kept, ";") + ";odata.continue-on-error=true"
}

// EncodeMultipartBatchResponse writes a multipart/mixed $batch response body:
// one application/http part per response, with Content-ID and a status line
// such as "HTTP/1.1 201 Created"; responses that follow each other with the
// same AtomicityGroup go into one changeset (a changesetresponse part).
func EncodeMultipartBatchResponse(w io.Writer, boundary string, resps []BatchResponse) error {
	if err := validBoundary(boundary); err != nil {
		return err
	}
	var buf bytes.Buffer
	err := writeGroups(&buf, boundary, len(resps), func(i int) string { return resps[i].AtomicityGroup },
		func(b string, i int) error {
			r := resps[i]
			if r.Status < 100 || r.Status > 999 || !noCRLF(r.ID) {
				return fmt.Errorf("multipart batch: response %d (id %q): status %d cannot be written", i+1, r.ID, r.Status)
			}
			writePartHeaders(&buf, r.ID)
			text := http.StatusText(r.Status)
			if text == "" {
				text = "Status " + strconv.Itoa(r.Status)
			}
			fmt.Fprintf(&buf, "HTTP/1.1 %d %s\r\n", r.Status, text)
			return writeMessageTail(&buf, b, i+1, r.ID, r.Headers, r.Body)
		})
	if err != nil {
		return err
	}
	_, err = w.Write(buf.Bytes())
	return err
}

// DecodeMultipartBatchRequest reads a multipart/mixed $batch request body.
// Changesets are flattened, their requests carrying the changeset as
// AtomicityGroup. Lines may end in CRLF or a bare LF. The request line is
// parsed here (net/http.ReadRequest refuses "POST $1/X HTTP/1.1").
func DecodeMultipartBatchRequest(r io.Reader, boundary string) ([]BatchRequest, error) {
	var out []BatchRequest
	err := decodeMultipart(r, boundary, func(p *httpPart) error {
		method, target, err := parseRequestLine(p.first)
		if err != nil {
			return p.errorf(p.firstOff, "%v", err)
		}
		out = append(out, BatchRequest{ID: p.id, Method: method, URL: target, Headers: p.headers, Body: p.body, AtomicityGroup: p.group})
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// DecodeMultipartBatchResponse reads a multipart/mixed $batch response body.
// Changesets are flattened; each part's Content-ID becomes the response's ID.
func DecodeMultipartBatchResponse(r io.Reader, boundary string) ([]BatchResponse, error) {
	var out []BatchResponse
	err := decodeMultipart(r, boundary, func(p *httpPart) error {
		status, err := parseStatusLine(p.first)
		if err != nil {
			return p.errorf(p.firstOff, "%v", err)
		}
		out = append(out, BatchResponse{ID: p.id, Status: status, Headers: p.headers, Body: p.body, AtomicityGroup: p.group})
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// httpPart is one application/http part, split into its pieces.
type httpPart struct {
	data     []byte // the whole batch body, for line numbers
	part     int
	id       string
	group    string
	first    string // request or status line
	firstOff int
	headers  map[string]string
	body     json.RawMessage
}

func (p *httpPart) errorf(off int, format string, args ...any) error {
	return &BatchSyntaxError{Format: "multipart", Part: p.part, Line: lineAt(p.data, int64(off)), Msg: fmt.Sprintf(format, args...)}
}

func decodeMultipart(r io.Reader, boundary string, emit func(*httpPart) error) error {
	if err := validBoundary(boundary); err != nil {
		return &BatchSyntaxError{Format: "multipart", Msg: strings.TrimPrefix(err.Error(), "multipart batch: ")}
	}
	data, err := readBatchBody(r, "multipart")
	if err != nil {
		return err
	}
	parts, err := splitParts(data, 0, len(data), boundary, 0)
	if err != nil {
		return err
	}
	count := 0
	for i, sp := range parts {
		part := i + 1
		hdr, bodyOff, err := readHeaderBlock(data, sp.start, sp.end, part)
		if err != nil {
			return err
		}
		mt, params, err := partMediaType(hdr)
		if err != nil {
			return &BatchSyntaxError{Format: "multipart", Part: part, Line: lineAt(data, int64(sp.start)), Msg: err.Error()}
		}
		if mt == "multipart/mixed" {
			cs := params["boundary"]
			if err := validBoundary(cs); err != nil {
				return &BatchSyntaxError{Format: "multipart", Part: part, Line: lineAt(data, int64(sp.start)), Msg: "changeset: " + strings.TrimPrefix(err.Error(), "multipart batch: ")}
			}
			inner, err := splitParts(data, bodyOff, sp.end, cs, part)
			if err != nil {
				return err
			}
			group := strings.TrimPrefix(cs, "changeset_")
			for j, ip := range inner {
				ihdr, ibody, err := readHeaderBlock(data, ip.start, ip.end, part)
				if err != nil {
					return err
				}
				imt, _, err := partMediaType(ihdr)
				if err != nil || imt != "application/http" {
					return &BatchSyntaxError{Format: "multipart", Part: part, Line: lineAt(data, int64(ip.start)), Msg: fmt.Sprintf("changeset part %d: a changeset holds only application/http parts", j+1)}
				}
				if count++; count > MaxBatchParts {
					return &BatchSyntaxError{Format: "multipart", Part: part, Msg: fmt.Sprintf("more than %d requests (%v)", MaxBatchParts, ErrBatchTooLarge)}
				}
				hp, err := parseHTTPPart(data, ibody, ip.end, part, ihdr)
				if err != nil {
					return err
				}
				hp.group = group
				if err := emit(hp); err != nil {
					return err
				}
			}
			continue
		}
		if mt != "application/http" {
			return &BatchSyntaxError{Format: "multipart", Part: part, Line: lineAt(data, int64(sp.start)), Msg: fmt.Sprintf("Content-Type %q: want application/http or a multipart/mixed changeset", mt)}
		}
		if count++; count > MaxBatchParts {
			return &BatchSyntaxError{Format: "multipart", Part: part, Msg: fmt.Sprintf("more than %d requests (%v)", MaxBatchParts, ErrBatchTooLarge)}
		}
		hp, err := parseHTTPPart(data, bodyOff, sp.end, part, hdr)
		if err != nil {
			return err
		}
		if err := emit(hp); err != nil {
			return err
		}
	}
	return nil
}

// partMediaType returns the part's media type; a part without Content-Type
// is taken as application/http.
func partMediaType(h map[string]string) (string, map[string]string, error) {
	ct := headerLookup(h, "Content-Type")
	if ct == "" {
		return "application/http", nil, nil
	}
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil {
		return "", nil, fmt.Errorf("Content-Type %q: %v", ct, err)
	}
	return mt, params, nil
}

type span struct{ start, end int }

// splitParts finds the parts of data[from:to] delimited by boundary. Each
// span is the part's content without the line break before the next
// delimiter. Delimiters are recognised only at the start of a line.
func splitParts(data []byte, from, to int, boundary string, outer int) ([]span, error) {
	delim := "--" + boundary
	fail := func(off int, part int, msg string) error {
		if outer > 0 {
			return &BatchSyntaxError{Format: "multipart", Part: outer, Line: lineAt(data, int64(off)), Msg: "changeset: " + msg}
		}
		return &BatchSyntaxError{Format: "multipart", Part: part, Line: lineAt(data, int64(off)), Msg: msg}
	}
	var parts []span
	cur := -1 // start of the current part's content; -1 before the first delimiter
	for pos := from; pos < to; {
		end := bytes.IndexByte(data[pos:to], '\n')
		next := to
		if end >= 0 {
			end += pos
			next = end + 1
		} else {
			end = to
		}
		line := bytes.TrimRight(data[pos:end], " \t\r")
		if bytes.HasPrefix(line, []byte(delim)) {
			rest := line[len(delim):]
			closing := string(rest) == "--"
			if len(rest) == 0 || closing {
				if cur >= 0 {
					stop := pos
					if stop > cur && data[stop-1] == '\n' {
						stop--
						if stop > cur && data[stop-1] == '\r' {
							stop--
						}
					}
					parts = append(parts, span{cur, stop})
					if len(parts) > MaxBatchParts {
						return nil, fail(pos, len(parts), fmt.Sprintf("more than %d parts (%v)", MaxBatchParts, ErrBatchTooLarge))
					}
				}
				if closing {
					return parts, nil
				}
				cur = next
			}
		}
		pos = next
	}
	if cur < 0 {
		return nil, fail(from, 0, fmt.Sprintf("no boundary line %q found", delim))
	}
	return nil, fail(to, len(parts)+1, fmt.Sprintf("no closing boundary line %q", delim+"--"))
}

// readHeaderBlock reads MIME-style header lines from data[start:end] up to an
// empty line (or the end), returning the headers and the offset after them.
func readHeaderBlock(data []byte, start, end, part int) (map[string]string, int, error) {
	h := make(map[string]string)
	var last string
	pos := start
	for pos < end {
		nl := bytes.IndexByte(data[pos:end], '\n')
		next := end
		lineEnd := end
		if nl >= 0 {
			lineEnd = pos + nl
			next = lineEnd + 1
		}
		if next-start > MaxPartHeaderBytes {
			return nil, 0, &BatchSyntaxError{Format: "multipart", Part: part, Line: lineAt(data, int64(start)), Msg: fmt.Sprintf("header block longer than %d bytes (%v)", MaxPartHeaderBytes, ErrBatchTooLarge)}
		}
		line := bytes.TrimRight(data[pos:lineEnd], "\r")
		if len(line) == 0 {
			return h, next, nil
		}
		if line[0] == ' ' || line[0] == '\t' {
			if last == "" {
				return nil, 0, &BatchSyntaxError{Format: "multipart", Part: part, Line: lineAt(data, int64(pos)), Msg: "continuation line before any header"}
			}
			h[last] += " " + strings.TrimSpace(string(line))
		} else {
			name, value, ok := strings.Cut(string(line), ":")
			name = strings.TrimSpace(name)
			if !ok || !isToken(name) {
				return nil, 0, &BatchSyntaxError{Format: "multipart", Part: part, Line: lineAt(data, int64(pos)), Msg: fmt.Sprintf("header line %q: want Name: value", diag.Cut(string(line), 60))}
			}
			if len(h) >= maxPartHeaders {
				return nil, 0, &BatchSyntaxError{Format: "multipart", Part: part, Line: lineAt(data, int64(pos)), Msg: fmt.Sprintf("more than %d headers (%v)", maxPartHeaders, ErrBatchTooLarge)}
			}
			value = strings.TrimSpace(value)
			found := false
			for k := range h {
				if strings.EqualFold(k, name) {
					h[k] += ", " + value
					last, found = k, true
					break
				}
			}
			if !found {
				h[name] = value
				last = name
			}
		}
		pos = next
	}
	return h, end, nil
}

func parseHTTPPart(data []byte, start, end, part int, mimeHeaders map[string]string) (*httpPart, error) {
	p := &httpPart{data: data, part: part, id: strings.Trim(headerLookup(mimeHeaders, "Content-ID"), "<> ")}
	// Skip blank lines before the request or status line.
	pos := start
	for pos < end && (data[pos] == '\r' || data[pos] == '\n') {
		pos++
	}
	if pos >= end {
		return nil, p.errorf(start, "the part holds no HTTP message")
	}
	nl := bytes.IndexByte(data[pos:end], '\n')
	lineEnd, next := end, end
	if nl >= 0 {
		lineEnd, next = pos+nl, pos+nl+1
	}
	if lineEnd-pos > MaxPartHeaderBytes {
		return nil, p.errorf(pos, "first line longer than %d bytes (%v)", MaxPartHeaderBytes, ErrBatchTooLarge)
	}
	p.first = string(bytes.TrimRight(data[pos:lineEnd], "\r"))
	p.firstOff = pos
	h, bodyOff, err := readHeaderBlock(data, next, end, part)
	if err != nil {
		return nil, err
	}
	if len(h) > 0 {
		p.headers = h
	}
	if body := data[bodyOff:end]; len(bytes.TrimSpace(body)) > 0 {
		p.body = append(json.RawMessage(nil), body...)
	}
	return p, nil
}

// parseRequestLine reads "METHOD URL HTTP/1.1".
func parseRequestLine(line string) (method, target string, err error) {
	f := strings.Split(line, " ")
	if len(f) != 3 {
		return "", "", fmt.Errorf("request line %q: want METHOD URL HTTP/1.1", diag.Cut(line, 80))
	}
	if !isToken(f[0]) {
		return "", "", fmt.Errorf("request line %q: %q is not an HTTP method", diag.Cut(line, 80), diag.Cut(f[0], 20))
	}
	if f[1] == "" || strings.ContainsFunc(f[1], func(r rune) bool { return r < ' ' || r == 0x7f }) {
		return "", "", fmt.Errorf("request line %q: empty or invalid URL", diag.Cut(line, 80))
	}
	if !strings.HasPrefix(f[2], "HTTP/") {
		return "", "", fmt.Errorf("request line %q: %q is not an HTTP version", diag.Cut(line, 80), diag.Cut(f[2], 20))
	}
	return strings.ToUpper(f[0]), f[1], nil
}

// parseStatusLine reads "HTTP/1.1 201 Created".
func parseStatusLine(line string) (int, error) {
	proto, rest, _ := strings.Cut(line, " ")
	code, _, _ := strings.Cut(rest, " ")
	if !strings.HasPrefix(proto, "HTTP/") || len(code) != 3 {
		return 0, fmt.Errorf("status line %q: want HTTP/1.1 CODE TEXT", diag.Cut(line, 80))
	}
	n, err := strconv.Atoi(code)
	if err != nil || n < 100 {
		return 0, fmt.Errorf("status line %q: %q is not a status code", diag.Cut(line, 80), code)
	}
	return n, nil
}
