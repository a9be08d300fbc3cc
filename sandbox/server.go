package sandbox

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math/rand"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/migrate-tool/migrate/odata"
)

// BasePath is the path of the sandbox's service root (without a language
// code; ",2" after tabula.ini selects Hebrew messages).
const BasePath = "/odata/Priority/tabula.ini/demo"

// Options configure a sandbox. The zero value is a 25.1 demo server with user
// demo/demo and the personal access token demo-pat.
type Options struct {
	SystemVersion string          // default "25.1"
	Metadata      *odata.Metadata // nil: the built-in demo schema; else generic rules only (types, MaxLength, Mandatory, keys)
	Users         map[string]string
	Tokens        []string // personal access tokens, sent as Basic: token as user, "PAT" as password
	Latency       time.Duration
	// CallsPerMinute and MaxConcurrent limit each user (0: unlimited);
	// past them the answer is 429 with Retry-After.
	CallsPerMinute, MaxConcurrent int
	// Faults maps "drop-before-commit", "drop-after-commit", "error-500" and
	// "throttle-429" to the rate (0..1) at which API calls suffer them.
	Faults map[string]float64
	Seed   int64
	// Quirks switches on behaviours of real servers beyond the contract
	// (docs/servers.md; quirks.go: QuirkMultipartIDs, …); AllQuirks switches
	// on every one.
	Quirks map[string]bool
	// Unpermitted names the forms (entity sets) the API user has no
	// permission to write: 403, or under QuirkPermission400 a 400 screen
	// error. SetUnpermitted changes them while the server runs.
	Unpermitted []string
	// HiddenFields names fields the API user may not read, as FORM.FIELD
	// (the entity type's name: ORDERS.DETAILS, ORDERITEMS_SUBFORM.PRICE):
	// field-level permissions, from 22.1. Read answers leave them out; a
	// $filter naming one is refused as naming an unknown field, or under
	// QuirkIgnoredFilters ignored.
	HiddenFields []string
	// StatePath persists the data (temporary file and rename) after every
	// call that changed it and on Close, and is reloaded by New, every
	// company's.
	StatePath string
	// Companies names the companies of the installation (the last segment
	// of the service root), each with data of its own; a company not named
	// is refused with 404, as a real installation does. Default: demo.
	// Companies a state file holds are kept besides.
	Companies []string
	// RefuseKey, when it returns non-empty, refuses writing that record with
	// that screen error. key is the key values in key order joined by ",".
	RefuseKey    func(entity, key string) string
	RowCap       int              // rows per response, default 2000, no next link
	Now          func() time.Time // injectable clock
	TokenTTL     time.Duration    // OIDC bearer lifetime, default 1h
	RedirectURIs []string         // registered OIDC redirect URIs (https, exact match)
}

// Fault kinds of Options.Faults.
const (
	FaultDropBeforeCommit = "drop-before-commit"
	FaultDropAfterCommit  = "drop-after-commit"
	FaultError500         = "error-500"
	FaultThrottle429      = "throttle-429"
)

// ParseFault reads a KIND=RATE setting (the --fault flag of migrate sandbox).
func ParseFault(s string) (kind string, rate float64, err error) {
	kind, r, ok := strings.Cut(s, "=")
	if !ok {
		return "", 0, fmt.Errorf("fault %q: want KIND=RATE, e.g. %s=0.05", s, FaultError500)
	}
	rate, err = strconv.ParseFloat(r, 64)
	if err != nil || rate < 0 || rate > 1 {
		return "", 0, fmt.Errorf("fault %q: the rate must be a number from 0 to 1", s)
	}
	switch kind {
	case FaultDropBeforeCommit, FaultDropAfterCommit, FaultError500, FaultThrottle429:
		return kind, rate, nil
	}
	return "", 0, fmt.Errorf("fault %q: unknown kind (want %s, %s, %s or %s)", s, FaultDropBeforeCommit, FaultDropAfterCommit, FaultError500, FaultThrottle429)
}

// Stats counts what the sandbox served.
type Stats struct {
	Calls       int64 // API calls admitted (authenticated and within the limits)
	Batches     int64 // $batch calls
	Subrequests int64 // sub-requests of batches
	Throttled   int64 // 429 answers (limits and faults)
	Faults      int64 // faults injected
}

// Server is the emulated service. It is safe for concurrent use.
type Server struct {
	opts    Options
	version odata.Version
	meta    *odata.Metadata
	rules   map[string]*rules
	now     func() time.Time

	mu        sync.RWMutex
	companies map[string]*company
	names     []string // in the order declared
	dirty     bool

	prepMu   sync.Mutex
	prepared map[string]bool // entities whose metadata GetMetadataFor can answer
	warm     map[string]bool // entity sets used since start (QuirkColdForms)

	limMu    sync.Mutex
	calls    map[string][]time.Time
	inflight map[string]int
	rng      *rand.Rand

	auth *authServer

	permMu sync.Mutex
	denied map[string]bool

	hidden map[string]map[string]bool // entity type → fields the user may not read

	nCalls, nBatches, nSub, nThrottled, nFaults atomic.Int64

	dropWrites, dropBefore atomic.Int64 // DropNextWrites
	faultsOff              atomic.Bool  // WithoutFaults

	latency atomic.Int64 // Options.Latency, then SetLatency's
}

// SetLatency changes Options.Latency, the time added to every $batch
// call, from the next call on: a test slows the server for the part of a
// run its kills must land in, and not for the load before it.
func (s *Server) SetLatency(d time.Duration) { s.latency.Store(int64(d)) }

// DropNextWrites makes the next n calls that carry a write (a POST, PATCH
// or DELETE, alone or inside a $batch) lose their connection, before the
// write takes effect (FaultDropBeforeCommit) or after (FaultDropAfterCommit):
// the drop faults on demand, for a test that needs exactly one batch in
// doubt while the reads around it are answered.
func (s *Server) DropNextWrites(n int, kind string) {
	if kind == FaultDropBeforeCommit {
		s.dropBefore.Store(int64(n))
		return
	}
	s.dropWrites.Store(int64(n))
}

// WithoutFaults runs fn with Options.Faults held off: a test fills the
// company a run starts from by hand, then lets the faults hit the run.
func (s *Server) WithoutFaults(fn func()) {
	s.faultsOff.Store(true)
	defer s.faultsOff.Store(false)
	fn()
}

// takeDrop uses up one drop of DropNextWrites.
func (s *Server) takeDrop(counter *atomic.Int64) bool {
	for {
		n := counter.Load()
		if n <= 0 {
			return false
		}
		if counter.CompareAndSwap(n, n-1) {
			s.nFaults.Add(1)
			return true
		}
	}
}

// New builds a sandbox, loading Options.StatePath when it exists.
func New(opts Options) (*Server, error) {
	if opts.SystemVersion == "" {
		opts.SystemVersion = "25.1"
	}
	v, err := odata.ParseVersion(opts.SystemVersion)
	if err != nil {
		return nil, fmt.Errorf("sandbox: %v", err)
	}
	if opts.Users == nil {
		opts.Users = map[string]string{"demo": "demo"}
	}
	if opts.Tokens == nil {
		opts.Tokens = []string{"demo-pat"}
	}
	if opts.RowCap <= 0 {
		opts.RowCap = 2000
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.TokenTTL <= 0 {
		opts.TokenTTL = time.Hour
	}
	for kind, rate := range opts.Faults {
		switch kind {
		case FaultDropBeforeCommit, FaultDropAfterCommit, FaultError500, FaultThrottle429:
		default:
			return nil, fmt.Errorf("sandbox: unknown fault %q (want %s, %s, %s or %s)", kind, FaultDropBeforeCommit, FaultDropAfterCommit, FaultError500, FaultThrottle429)
		}
		if rate < 0 || rate > 1 {
			return nil, fmt.Errorf("sandbox: fault %s: rate %v is not between 0 and 1", kind, rate)
		}
	}
	if len(opts.Companies) == 0 {
		opts.Companies = []string{DefaultCompany}
	}
	if err := checkCompanies(opts.Companies); err != nil {
		return nil, err
	}
	if err := checkQuirks(opts.Quirks); err != nil {
		return nil, err
	}
	for _, u := range opts.RedirectURIs {
		pu, err := url.Parse(u)
		if err != nil || pu.Scheme != "https" || pu.Host == "" {
			return nil, fmt.Errorf("sandbox: redirect URI %q: must be an absolute https URL (docs/service.md, Authentication)", u)
		}
	}
	s := &Server{
		opts: opts, version: v, now: opts.Now,
		companies: map[string]*company{}, prepared: map[string]bool{}, warm: map[string]bool{},
		calls: map[string][]time.Time{}, inflight: map[string]int{},
		rng: rand.New(rand.NewSource(opts.Seed)),
	}
	s.latency.Store(int64(opts.Latency))
	if opts.Metadata == nil {
		s.meta, s.rules = DemoMetadata(), demoRules()
		if s.quirk(QuirkRealMetadata) {
			annotateReal(s.meta)
		}
	} else {
		s.meta, s.rules = opts.Metadata, genericRules(opts.Metadata)
	}
	for _, set := range s.meta.Sets {
		if set.Type == nil {
			return nil, fmt.Errorf("sandbox: entity set %s has no entity type", set.Name)
		}
	}
	for _, name := range opts.Companies {
		s.newCompany(name)
	}
	if opts.StatePath != "" {
		if fi, err := os.Stat(filepath.Dir(opts.StatePath)); err != nil || !fi.IsDir() {
			return nil, fmt.Errorf("sandbox: state file %s: its directory does not exist", opts.StatePath)
		}
		if err := s.load(); err != nil {
			return nil, err
		}
	}
	s.SetUnpermitted(opts.Unpermitted...)
	if err := s.hideFields(opts.HiddenFields); err != nil {
		return nil, err
	}
	s.auth = newAuthServer(s)
	return s, nil
}

// genericRules finds text sub-forms of a loaded schema by their fields.
func genericRules(m *odata.Metadata) map[string]*rules {
	out := map[string]*rules{}
	for _, t := range m.Types {
		if t.Property("TEXT") != nil && t.Property("APPEND") != nil {
			out[t.Name] = &rules{text: textHTML}
		}
	}
	return out
}

func (s *Server) rule(t *odata.EntityType) *rules {
	if r := s.rules[t.Name]; r != nil {
		return r
	}
	return &rules{}
}

// Snapshot returns the first company's (SnapshotOf), by default demo's:
// every top-level entity set's entities in key order, with
// every sub-form nested under its name (collections as []map[string]any,
// single objects as map[string]any) and values as JSON shows them (numbers
// as float64, dates as strings, unset fields nil).
func (s *Server) Snapshot() map[string][]map[string]any {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.snapshotLocked(s.companies[s.names[0]], true)
}

// Stats returns the counters.
func (s *Server) Stats() Stats {
	return Stats{Calls: s.nCalls.Load(), Batches: s.nBatches.Load(), Subrequests: s.nSub.Load(),
		Throttled: s.nThrottled.Load(), Faults: s.nFaults.Load()}
}

// Close flushes the state to Options.StatePath.
func (s *Server) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.saveLocked()
}

// call is one API request being served: who, in which language, where.
type call struct {
	s    *Server
	user string
	lang lang
	base string // absolute service root URL, e.g. http://host/odata/Priority/tabula.ini,2/demo
	root string // path of the service root
	co   *company
	// wrote is set once the call carries a write (alone or in a $batch).
	wrote atomic.Bool
	// dropped: DropNextWrites chose this batch to be lost before it ran.
	dropped bool
}

// result is an answer before it is written (batches collect them).
type result struct {
	status int
	header http.Header
	body   []byte
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if isAuthPath(r.URL.Path) {
		s.auth.ServeHTTP(w, r)
		return
	}
	root, name, rest, lg, ok := s.splitBase(r.URL.Path)
	if !ok {
		writeResult(w, s.errResult(protoErr(http.StatusNotFound, "NotFound", "no service at %s; the service root is %s", r.URL.Path, BasePath)))
		return
	}
	s.mu.RLock()
	co := s.companies[name]
	s.mu.RUnlock()
	if co == nil {
		writeResult(w, s.errResult(protoErr(http.StatusNotFound, "NotFound", "no company %s on this installation; its companies are %s", name, strings.Join(s.Companies(), ", "))))
		return
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	c := &call{s: s, lang: lg, base: scheme + "://" + r.Host + root, root: root, co: co}
	user, aerr := s.authenticate(r)
	if aerr != nil {
		writeResult(w, s.errResult(aerr))
		return
	}
	c.user = user
	if aerr := s.admit(user); aerr != nil {
		s.nThrottled.Add(1)
		writeResult(w, s.errResult(aerr))
		return
	}
	defer s.release(user)
	s.nCalls.Add(1)

	write := r.Method != http.MethodGet && r.Method != http.MethodHead
	fault := s.pickFault(write)
	switch fault {
	case FaultThrottle429:
		s.nThrottled.Add(1)
		e := protoErr(http.StatusTooManyRequests, "TooManyRequests", "too many requests (injected fault); retry later")
		e.header = http.Header{"Retry-After": {"1"}}
		writeResult(w, s.errResult(e))
		return
	case FaultError500:
		writeResult(w, s.errResult(protoErr(http.StatusInternalServerError, "InternalError", "internal server error (injected fault)")))
		return
	case FaultDropBeforeCommit:
		dropConnection(w)
		return
	}
	if d := time.Duration(s.latency.Load()); d > 0 {
		time.Sleep(d)
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, odata.MaxBatchBytes+1))
	if err != nil {
		writeResult(w, s.errResult(protoErr(http.StatusBadRequest, "BadRequest", "reading the request body: %v", err)))
		return
	}
	if len(body) > odata.MaxBatchBytes {
		writeResult(w, s.errResult(protoErr(http.StatusRequestEntityTooLarge, "TooLarge", "the request body is larger than %d bytes", odata.MaxBatchBytes)))
		return
	}
	if v := r.Header.Get("OData-Version"); v != "" && !strings.HasPrefix(v, "4.") {
		writeResult(w, s.errResult(protoErr(http.StatusBadRequest, "BadRequest", "OData-Version %s is not supported; this service speaks 4.0", v)))
		return
	}
	if write && rest != "$batch" && s.takeDrop(&s.dropBefore) {
		dropConnection(w)
		return
	}
	var res *result
	switch {
	case rest == "$batch" && !s.version.Batch():
		res = s.errResult(protoErr(http.StatusNotFound, "NotFound", "no $batch on this server: it came with 19.1"))
	case rest == "$batch":
		res = c.batch(r.Method, r.Header, body)
	default:
		res = c.exec(r.Method, rest, r.URL.RawQuery, r.Header, body)
	}
	s.mu.Lock()
	serr := s.saveLocked()
	s.mu.Unlock()
	if serr != nil {
		res = s.errResult(protoErr(http.StatusInternalServerError, "InternalError", "%v", serr))
	}
	if c.dropped || fault == FaultDropAfterCommit || c.wrote.Load() && s.takeDrop(&s.dropWrites) {
		dropConnection(w)
		return
	}
	writeResult(w, res)
}

// splitBase takes /odata/Priority/tabula.ini[,N]/COMPANY[/rest] apart.
func (s *Server) splitBase(p string) (root, company, rest string, lg lang, ok bool) {
	const pre = "/odata/Priority/"
	if !strings.HasPrefix(p, pre) {
		return "", "", "", 0, false
	}
	tail := p[len(pre):]
	ini, tail, _ := strings.Cut(tail, "/")
	company, rest, _ = strings.Cut(tail, "/")
	if company == "" {
		return "", "", "", 0, false
	}
	lg = langEnglish
	name, code, hasCode := strings.Cut(ini, ",")
	if name != "tabula.ini" {
		return "", "", "", 0, false
	}
	if hasCode {
		n, err := strconv.Atoi(code)
		if err != nil || n <= 0 || !s.version.Language() { // docs/service.md, Versions: 18.2
			return "", "", "", 0, false
		}
		if n == int(langHebrew) {
			lg = langHebrew
		}
	}
	return pre + ini + "/" + company, company, rest, lg, true
}

func (s *Server) errResult(e *apiError) *result {
	ct, body := s.errorBody(e)
	h := http.Header{"Content-Type": {ct}, "Odata-Version": {"4.0"}}
	for k, v := range e.header {
		h[k] = v
	}
	return &result{status: e.status, header: h, body: body}
}

func writeResult(w http.ResponseWriter, res *result) {
	for k, v := range res.header {
		w.Header()[k] = v
	}
	if len(res.body) > 0 {
		w.Header().Set("Content-Length", strconv.Itoa(len(res.body)))
	}
	w.WriteHeader(res.status)
	_, _ = w.Write(res.body)
}

// dropConnection closes the connection without an answer, as a crashed
// server or a cut network does.
func dropConnection(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic(http.ErrAbortHandler) // net/http closes the connection
	}
	conn, _, err := hj.Hijack()
	if err == nil {
		conn.Close()
	}
}

// authenticate checks Basic (a user or a personal access token) or Bearer
// credentials (docs/service.md, Authentication) and returns the login name.
func (s *Server) authenticate(r *http.Request) (string, *apiError) {
	h := r.Header.Get("Authorization")
	scheme, cred, _ := strings.Cut(h, " ")
	switch {
	case strings.EqualFold(scheme, "Basic"):
		// As odata.BasicAuth and odata.PATAuth write them.
		if user, pass, ok := r.BasicAuth(); ok {
			if pw, ok := s.opts.Users[user]; ok && pw == pass && pass != "" {
				return user, nil
			}
			if pass == odata.PATPassword && s.version.Batch() { // personal access tokens came with 19.1
				for _, t := range s.opts.Tokens {
					if t == user && t != "" {
						return s.patUser(), nil
					}
				}
			}
		}
	case strings.EqualFold(scheme, "Bearer"):
		if user, ok := s.auth.bearerUser(strings.TrimSpace(cred)); ok {
			return user, nil
		}
		e := protoErr(http.StatusUnauthorized, "Unauthorized", "the bearer token is unknown or expired; log in again")
		e.header = http.Header{"Www-Authenticate": {`Bearer realm="sandbox", error="invalid_token"`}}
		return "", e
	}
	e := protoErr(http.StatusUnauthorized, "Unauthorized", "authentication required: Basic credentials, a personal access token or a bearer token")
	e.header = http.Header{"Www-Authenticate": {`Basic realm="sandbox"`, `Bearer realm="sandbox"`}}
	return "", e
}

func (s *Server) patUser() string {
	if _, ok := s.opts.Users["demo"]; ok {
		return "demo"
	}
	if names := slices.Sorted(maps.Keys(s.opts.Users)); len(names) > 0 {
		return names[0]
	}
	return "pat"
}

// admit applies the per-user limits: calls in the last minute and calls in
// flight.
func (s *Server) admit(user string) *apiError {
	s.limMu.Lock()
	defer s.limMu.Unlock()
	now := s.now()
	if n := s.opts.CallsPerMinute; n > 0 {
		window := s.calls[user]
		i := 0
		for i < len(window) && now.Sub(window[i]) >= time.Minute {
			i++
		}
		window = window[i:]
		if len(window) >= n {
			wait := time.Minute - now.Sub(window[0])
			e := protoErr(http.StatusTooManyRequests, "TooManyRequests", "more than %d calls a minute for user %s; retry later", n, user)
			e.header = http.Header{"Retry-After": {strconv.Itoa(int((wait + time.Second - 1) / time.Second))}}
			s.calls[user] = window
			return e
		}
		s.calls[user] = append(window, now)
	}
	if n := s.opts.MaxConcurrent; n > 0 && s.inflight[user] >= n {
		e := protoErr(http.StatusTooManyRequests, "TooManyRequests", "more than %d concurrent calls for user %s; retry later", n, user)
		e.header = http.Header{"Retry-After": {"1"}}
		return e
	}
	s.inflight[user]++
	return nil
}

func (s *Server) release(user string) {
	s.limMu.Lock()
	s.inflight[user]--
	s.limMu.Unlock()
}

// pickFault draws the fault for one call (drops only for writes).
func (s *Server) pickFault(write bool) string {
	if len(s.opts.Faults) == 0 || s.faultsOff.Load() {
		return ""
	}
	s.limMu.Lock()
	defer s.limMu.Unlock()
	for _, kind := range []string{FaultThrottle429, FaultError500, FaultDropBeforeCommit, FaultDropAfterCommit} {
		rate := s.opts.Faults[kind]
		if rate <= 0 || !write && (kind == FaultDropBeforeCommit || kind == FaultDropAfterCommit) {
			continue
		}
		if s.rng.Float64() < rate {
			s.nFaults.Add(1)
			return kind
		}
	}
	return ""
}

// jsonHeader is shared by JSON answers and never changed: an answer that
// needs more headers gets a map of its own.
var jsonHeader = http.Header{"Content-Type": {"application/json;odata.metadata=minimal"}, "Odata-Version": {"4.0"}}

// jsonResult answers a JSON document.
func jsonResult(status int, v any) *result {
	if o, ok := v.(obj); ok {
		return &result{status: status, body: appendJSON(make([]byte, 0, 512), o), header: jsonHeader}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return &result{status: status, body: bytes.TrimRight(buf.Bytes(), "\n"),
		header: http.Header{"Content-Type": {"application/json;odata.metadata=minimal"}, "Odata-Version": {"4.0"}}}
}
