package odata

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Defaults of Config.
const (
	DefaultTimeout          = 3 * time.Minute // hosted servers drop a request past 3 minutes
	DefaultMaxResponseBytes = 256 << 20
	DefaultRetries          = 4
	// MaxPageSize is the row cap of a response on a default installation
	// (MAXAPILINES, docs/servers.md, Reading); GetAll never asks for more.
	MaxPageSize = 2000
)

// ErrResponseTooLarge is wrapped when an answer passes MaxResponseBytes.
var ErrResponseTooLarge = errors.New("response larger than the configured limit")

// Authenticator signs a request (Basic, PAT, or a bearer token from
// odata/auth). It must never put the secret anywhere but the request.
type Authenticator interface {
	Authorize(req *http.Request) error
	Method() string
}

// Renewer is an Authenticator whose credential can be fetched again (an
// OAuth2 client-credentials token). When the server answers 401 to a
// request it signed, the client calls Renew with that request and, when it
// says true, sends the request once more, signed anew: a 401 means the
// server carried nothing out, so a write sent again is not a write twice.
type Renewer interface {
	Authenticator
	// Renew drops the credential that signed refused, so that the next
	// Authorize gets a new one; false when there is none to get.
	Renew(refused *http.Request) bool
}

// AuthorizeError is a request that could not be signed (a token endpoint
// that refused the client credentials, a token that expired): nothing was
// sent, and sending again would not help, so it is not retried.
type AuthorizeError struct {
	Method string
	Err    error
}

func (e *AuthorizeError) Error() string { return "authentication (" + e.Method + "): " + e.Err.Error() }

// Unwrap returns the authenticator's error.
func (e *AuthorizeError) Unwrap() error { return e.Err }

// BasicAuth is the deprecated user name and password (docs/service.md,
// Authentication).
type BasicAuth struct{ User, Password string }

func (a BasicAuth) Authorize(req *http.Request) error {
	req.SetBasicAuth(a.User, a.Password)
	return nil
}
func (a BasicAuth) Method() string { return "basic" }

// String and GoString keep the password out of logs and %v/%#v output.
func (a BasicAuth) String() string {
	return fmt.Sprintf("BasicAuth{User: %q, Password: [redacted]}", a.User)
}
func (a BasicAuth) GoString() string { return a.String() }

// PATAuth is a personal access token. docs/servers.md, Authentication: it
// goes as Basic credentials, the token as user name and the literal PAT as
// password.
type PATAuth struct{ Token string }

// PATPassword is the password that marks Basic credentials as a personal
// access token; the sandbox reads it as the client writes it.
const PATPassword = "PAT"

func (a PATAuth) Authorize(req *http.Request) error {
	req.SetBasicAuth(a.Token, PATPassword)
	return nil
}
func (a PATAuth) Method() string   { return "pat" }
func (a PATAuth) String() string   { return "PATAuth{Token: [redacted]}" }
func (a PATAuth) GoString() string { return a.String() }

// Clock is time as the client sees it; tests inject one so that backoff
// and rate limiting need no real sleeping.
type Clock interface {
	Now() time.Time
	// Sleep waits d or until ctx is done (then it returns ctx.Err()).
	Sleep(ctx context.Context, d time.Duration) error
}

// RealClock is the wall clock, the client's unless Options name another.
type RealClock struct{}

// Now is time.Now.
func (RealClock) Now() time.Time { return time.Now() }

// Sleep waits d or until ctx is done.
func (RealClock) Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// CallInfo describes one HTTP exchange for Config.Hook. It holds no
// header and no body, so no secret.
type CallInfo struct {
	Method   string
	Path     string // relative to the service root, with the query
	Attempt  int    // 1 for the first try
	Status   int    // 0 when no answer came
	Duration time.Duration
	Err      error
}

// Config says how to reach and treat the service.
type Config struct {
	// BaseURL is the service root, https://HOST/odata/Priority/tabula.ini/COMPANY.
	BaseURL string
	// Language, when > 0, is put after the configuration file
	// (docs/service.md, Service root).
	Language int
	Auth     Authenticator
	// HTTPClient is used as given (tests pass httptest's); otherwise one is
	// built that verifies TLS against the system pool plus CACertFile.
	HTTPClient *http.Client
	// Timeout bounds every call (each attempt); default 3 minutes.
	Timeout    time.Duration
	CACertFile string
	// AppID and AppKey are sent as X-App-Id and X-App-Key when set
	// (per-application licences).
	AppID, AppKey string
	// MaxResponseBytes caps an answer's body; default 256 MiB.
	MaxResponseBytes int64
	// CallsPerMinute spaces calls evenly (0: no limit); MaxConcurrent caps
	// calls in flight (0: no limit). Both hold across goroutines.
	CallsPerMinute int
	MaxConcurrent  int
	// Retries is how many times a retryable failure is tried again: 0 means
	// DefaultRetries, a negative number none.
	Retries int
	Clock   Clock
	// Hook, when set, is called after every HTTP exchange, from the
	// goroutine that made the call: it must be safe for concurrent use.
	Hook func(CallInfo)
	// Dialect is the kind of service (default DialectPriority). Under
	// DialectOData the client calls none of the ERP's functions, BaseURL is
	// any service root (no language, no company), a JSON $batch is
	// announced as OData 4.01, and writes carry If-Match with the ETag last
	// read (docs/other-services.md).
	Dialect Dialect
}

// InDoubtError says a write may have reached the server but its outcome is
// unknown (a lost connection, a timeout, a 5xx from a gateway or on a
// batch). Do not resend it: reconcile by reading the server first.
type InDoubtError struct {
	Op  string
	Err error
}

func (e *InDoubtError) Error() string {
	return e.Op + ": outcome unknown, the request may have reached the server (read before resending): " + e.Err.Error()
}

func (e *InDoubtError) Unwrap() error { return e.Err }

// NotSentError says a batch was not sent at all: what had to come before
// it (the warm-up of a cold form) failed. Nothing of it took effect; send
// it again when the server answers.
type NotSentError struct {
	Op  string
	Err error
}

func (e *NotSentError) Error() string { return e.Op + ": not sent: " + e.Err.Error() }

func (e *NotSentError) Unwrap() error { return e.Err }

// Client talks to one service root.
type Client struct {
	cfg     Config
	root    string
	hc      *http.Client
	clock   Clock
	retries int
	sem     chan struct{}
	limit   *limiter

	mu       sync.Mutex
	version  *Version
	verKnown bool
	// forms are the entity sets known warm (warmBeforeWrites, readWarm);
	// warmMu makes a batch wait while another warms forms up.
	warmMu sync.Mutex
	forms  Forms
	// etags are the entities' ETags, under DialectOData.
	etags etags
	// multipart: the service refused a JSON $batch and took a multipart
	// one (DialectOData): every later batch is sent so.
	multipart atomic.Bool
}

// NewClient checks cfg and builds a client. TLS verification is always on;
// a CACertFile adds a CA (self-signed on-premise servers), it never turns
// checks off.
func NewClient(cfg Config) (*Client, error) {
	if cfg.Dialect == "" {
		cfg.Dialect = DialectPriority
	}
	var root string
	var err error
	switch {
	case cfg.Dialect.Standard() && cfg.Language != 0:
		return nil, errors.New("odata client: a language code is the ERP's URL segment; the odata dialect has none")
	case cfg.Dialect.Standard():
		root, err = standardRoot(cfg.BaseURL)
	default:
		root, err = ServiceRoot(cfg.BaseURL, cfg.Language)
	}
	if err != nil {
		return nil, err
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.MaxResponseBytes <= 0 {
		cfg.MaxResponseBytes = DefaultMaxResponseBytes
	}
	c := &Client{cfg: cfg, root: root, clock: cfg.Clock, retries: cfg.Retries}
	if c.clock == nil {
		c.clock = RealClock{}
	}
	if c.retries == 0 {
		c.retries = DefaultRetries
	} else if c.retries < 0 {
		c.retries = 0
	}
	c.hc = cfg.HTTPClient
	if c.hc == nil {
		if c.hc, err = newHTTPClient(cfg.CACertFile); err != nil {
			return nil, err
		}
	} else if cfg.CACertFile != "" {
		return nil, errors.New("odata client: give either HTTPClient or CACertFile, not both")
	}
	c.hc = withRedirectPolicy(c.hc)
	if t, ok := c.hc.Transport.(*http.Transport); ok && t.TLSClientConfig != nil && t.TLSClientConfig.InsecureSkipVerify {
		return nil, errors.New("odata client: TLS certificate checks cannot be switched off; give the server's CA in CACertFile")
	}
	if cfg.MaxConcurrent > 0 {
		c.sem = make(chan struct{}, cfg.MaxConcurrent)
	}
	if cfg.CallsPerMinute > 0 {
		c.limit = newLimiter(cfg.CallsPerMinute, c.clock)
	}
	return c, nil
}

func newHTTPClient(caFile string) (*http.Client, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12}
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, fmt.Errorf("CA certificate file: %w", err)
		}
		pool, err := x509.SystemCertPool()
		if err != nil || pool == nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%s: no PEM certificate in it; give a file with -----BEGIN CERTIFICATE----- blocks", caFile)
		}
		tr.TLSClientConfig.RootCAs = pool
	}
	return &http.Client{Transport: tr, CheckRedirect: CheckRedirect}, nil
}

// Root returns the service root the client uses (with the language code).
func (c *Client) Root() string { return c.root }

// Dialect is the kind of service the client speaks to.
func (c *Client) Dialect() Dialect { return c.cfg.Dialect }

// SetMetadata gives the client the service's metadata, which keys the
// entities whose ETags it remembers (DialectOData); Metadata sets it too.
func (c *Client) SetMetadata(md *Metadata) { c.etags.setMetadata(md) }

// ForCompany is a client of another company of the same installation (the
// service root's last segment replaced). It shares this client's
// connections, credentials, calls in flight and pace: the server counts
// calls per user, whatever company they address, so loads of several
// companies at once stay within one budget.
func (c *Client) ForCompany(company string) (*Client, error) {
	if c.cfg.Dialect.Standard() {
		return nil, errors.New("another company is a segment of the ERP's URL; the odata dialect has no companies")
	}
	base, err := CompanyURL(c.cfg.BaseURL, company)
	if err != nil {
		return nil, err
	}
	root, err := ServiceRoot(base, c.cfg.Language)
	if err != nil {
		return nil, err
	}
	n := &Client{cfg: c.cfg, root: root, hc: c.hc, clock: c.clock, retries: c.retries, sem: c.sem, limit: c.limit}
	n.cfg.BaseURL = base
	c.mu.Lock()
	n.version, n.verKnown = c.version, c.verKnown
	c.mu.Unlock()
	return n, nil
}

// limiter keeps a client's calls within CallsPerMinute as the server counts
// them: no more than that many in any minute, measured from when the
// server could have seen each (docs/servers.md, Limits of hosted
// installations: past the limit the call is refused with 429). Every attempt
// of every call goes through it, the start-up calls (version, metadata, login
// name) as much as a load's batches, so one client is one budget.
//
// Calls are spaced evenly (a token bucket of depth one, so a burst of
// goroutines still leaves at the pace). Even spacing alone drew a 429
// about once a minute at exactly the server's rate: the server sees a call
// when it arrives, and the first call of a run arrives late (a new
// connection, TLS), so the call a minute of sends later arrived less than
// a minute after it. So a call also waits until a minute has passed since
// the call CallsPerMinute before it was answered: the server had seen that
// one by then, so the window the server counts never holds one too many,
// whatever the latency.
type limiter struct {
	mu       sync.Mutex
	next     time.Time
	interval time.Duration
	clock    Clock
	recent   []*callSlot // the last CallsPerMinute calls, a ring
	head     int         // the oldest
}

// callSlot is one call the limiter let through: done is closed, and at
// set, when it was answered (or failed).
type callSlot struct {
	at   time.Time
	done chan struct{}
}

// maxWindowCalls bounds the calls the limiter remembers: past it (no
// server allows that many a minute) calls are only spaced, and a plan's
// calls_per_minute cannot make it allocate without bound.
const maxWindowCalls = 10_000

func newLimiter(perMinute int, clock Clock) *limiter {
	l := &limiter{interval: time.Minute / time.Duration(perMinute), clock: clock}
	if perMinute <= maxWindowCalls {
		l.recent = make([]*callSlot, perMinute)
	}
	return l
}

// wait returns when a call may be sent; the caller calls the release it
// returns once the call was answered or failed.
func (l *limiter) wait(ctx context.Context) (release func(), err error) {
	for {
		l.mu.Lock()
		var old *callSlot
		if l.recent != nil {
			old = l.recent[l.head]
		}
		if old != nil {
			select {
			case <-old.done:
			default:
				// The call a window ago is still in flight: its answer
				// says when it was surely seen.
				l.mu.Unlock()
				select {
				case <-old.done:
					continue
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}
		}
		now := l.clock.Now()
		at := l.next
		if at.Before(now) {
			at = now
		}
		if old != nil && at.Before(old.at.Add(time.Minute)) {
			at = old.at.Add(time.Minute)
		}
		l.next = at.Add(l.interval)
		slot := &callSlot{done: make(chan struct{})}
		if l.recent != nil {
			l.recent[l.head] = slot
			l.head = (l.head + 1) % len(l.recent)
		}
		l.mu.Unlock()
		release = func() {
			slot.at = l.clock.Now()
			close(slot.done)
		}
		if d := at.Sub(now); d > 0 {
			traceWait(ctx, Wait{For: d, RateLimit: true})
			if err := l.clock.Sleep(ctx, d); err != nil {
				release()
				return nil, err
			}
		} else if err := ctx.Err(); err != nil {
			release()
			return nil, err
		}
		return release, nil
	}
}

// Wait is a pause the client takes before a call.
type Wait struct {
	For time.Duration
	// RateLimit: the pause is the rate limit's, the client's own pace
	// (Config.CallsPerMinute) or a 429's Retry-After; otherwise it is the
	// backoff before retrying a failure.
	RateLimit bool
}

type waitTraceKey struct{}

// WithWaitTrace returns a context whose calls tell fn of every pause before
// taking it, as net/http/httptrace tells of a request's events: the caller
// can say why nothing moves without the client printing anything.
func WithWaitTrace(ctx context.Context, fn func(Wait)) context.Context {
	return context.WithValue(ctx, waitTraceKey{}, fn)
}

func traceWait(ctx context.Context, w Wait) {
	if fn, ok := ctx.Value(waitTraceKey{}).(func(Wait)); ok && w.For > 0 {
		fn(w)
	}
}

// request is one logical call; do may send it several times.
type request struct {
	method string
	path   string // relative to the root, may hold a query
	body   []byte
	header map[string]string
	// kind decides retries: reads are retried on transport errors and
	// gateway errors; writes and batches only when provably not sent or 429.
	write bool
	batch bool
}

type response struct {
	status int
	header http.Header
	body   []byte
	// renewed: the answer was 401 and the authenticator has a new
	// credential for the next try (Renewer).
	renewed bool
}

func (r *request) op() string { return r.method + " " + r.path }

// CallStats is what the calls made with a context cost: HTTP attempts,
// how many the server answered 429, and the time waited before retrying
// (Retry-After, backoff; not the client's own pace, which WithWaitTrace
// also tells of). The executor journals it per batch for the run report's
// chart.
type CallStats struct {
	Attempts, Throttled int
	Waited              time.Duration
}

type callStatsKey struct{}

// WithCallStats returns a context whose calls add to s. Use one per
// goroutine: s is not locked.
func WithCallStats(ctx context.Context, s *CallStats) context.Context {
	return context.WithValue(ctx, callStatsKey{}, s)
}

// CallStatsOf is the CallStats ctx's calls add to, nil when none.
func CallStatsOf(ctx context.Context) *CallStats {
	s, _ := ctx.Value(callStatsKey{}).(*CallStats)
	return s
}

// do sends r with retries, rate limits, the size cap and the timeout.
func (c *Client) do(ctx context.Context, r *request) (*response, error) {
	stats, _ := ctx.Value(callStatsKey{}).(*CallStats)
	if stats == nil {
		stats = new(CallStats)
	}
	renewed := false
	for attempt := 0; ; attempt++ {
		resp, err := c.once(ctx, r, attempt+1)
		stats.Attempts++
		if resp != nil && resp.status == http.StatusTooManyRequests {
			stats.Throttled++
		}
		retry, wait, throttled := false, time.Duration(0), false
		var authErr *AuthorizeError
		switch {
		case errors.As(err, &authErr):
			return nil, fmt.Errorf("%s: %w", r.op(), authErr)
		case resp != nil && resp.renewed && !renewed:
			// The credential was refused once, a new one is at hand: the
			// server carried nothing out, so the call goes again, now,
			// and counts no retry.
			renewed = true
			attempt--
			continue
		case err != nil:
			if ctx.Err() != nil {
				// The caller gave up; a write may still have been sent.
				if r.write && !notSent(err) {
					return nil, &InDoubtError{Op: r.op(), Err: ctx.Err()}
				}
				return nil, fmt.Errorf("%s: %w", r.op(), ctx.Err())
			}
			var re *RedirectError
			if errors.As(err, &re) {
				// A redirect answer means the request was not carried out.
				return nil, fmt.Errorf("%s: %w", r.op(), re)
			}
			if isCertError(err) {
				return nil, fmt.Errorf("%s: the server's certificate is not trusted (give its CA in CACertFile): %w", r.op(), err)
			}
			if errors.Is(err, ErrResponseTooLarge) {
				if r.write {
					return nil, &InDoubtError{Op: r.op(), Err: err}
				}
				return nil, fmt.Errorf("%s: %w", r.op(), err)
			}
			if r.write && !notSent(err) {
				return nil, &InDoubtError{Op: r.op(), Err: err}
			}
			retry = true
		case resp.status == http.StatusTooManyRequests:
			e := ParseError(resp.status, resp.header, resp.body)
			err, retry, wait, throttled = e, true, e.RetryAfter, true
		case resp.status >= 200 && resp.status <= 299:
			if c.cfg.Dialect.Standard() && !r.batch && (r.write || keyedPath(r.path)) {
				// A page of a whole set (an export's) is not kept: the
				// writes that need ETags read their entities by key or
				// in a $batch.
				c.etags.learn(r.method, r.path, resp.status, resp.header.Get, resp.body)
			}
			return resp, nil
		default:
			e := ParseError(resp.status, resp.header, resp.body)
			gateway := resp.status == 502 || resp.status == 503 || resp.status == 504
			switch {
			case r.batch && resp.status >= 500:
				// Some sub-requests may have run: nothing is rolled back
				// (docs/service.md, Batch).
				return nil, &InDoubtError{Op: r.op(), Err: e}
			case r.write && gateway:
				// A gateway's answer says nothing of what the server behind it did.
				return nil, &InDoubtError{Op: r.op(), Err: e}
			case !r.write && resp.status >= 500:
				// docs/design.md, The executor: reads are retried on any 5xx;
				// a read changes nothing.
				err, retry = e, true
			default:
				return nil, e
			}
		}
		if !retry || attempt >= c.retries {
			var e *Error
			if errors.As(err, &e) {
				return nil, e
			}
			return nil, fmt.Errorf("%s: %w", r.op(), err)
		}
		if b := backoff(attempt); wait < b {
			wait = b
		}
		if wait > 5*time.Minute {
			wait = 5 * time.Minute
		}
		stats.Waited += wait
		traceWait(ctx, Wait{For: wait, RateLimit: throttled})
		if err := c.clock.Sleep(ctx, wait); err != nil {
			return nil, fmt.Errorf("%s: %w", r.op(), err)
		}
	}
}

// backoff is 0.5s, 1s, 2s, ... capped at 30s.
func backoff(attempt int) time.Duration {
	d := 500 * time.Millisecond << min(attempt, 6)
	return min(d, 30*time.Second)
}

// notSent reports failures that prove the request never left: the
// connection was never made.
func notSent(err error) bool {
	var ns notSentError
	if errors.As(err, &ns) {
		return true
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return true
	}
	var dns *net.DNSError
	return errors.As(err, &dns) || errors.Is(err, syscall.ECONNREFUSED)
}

func isCertError(err error) bool {
	var ua x509.UnknownAuthorityError
	var ci x509.CertificateInvalidError
	var he x509.HostnameError
	var tv *tls.CertificateVerificationError
	return errors.As(err, &ua) || errors.As(err, &ci) || errors.As(err, &he) || errors.As(err, &tv)
}

// once is one attempt.
func (c *Client) once(ctx context.Context, r *request, attempt int) (*response, error) {
	if c.sem != nil {
		select {
		case c.sem <- struct{}{}:
			defer func() { <-c.sem }()
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	// The pace is taken last, right before sending: a call that waited
	// for a slot after its turn would go closer to the next one.
	if c.limit != nil {
		release, err := c.limit.wait(ctx)
		if err != nil {
			return nil, err
		}
		defer release()
	}
	start := c.clock.Now()
	resp, err := c.send(ctx, r)
	if c.cfg.Hook != nil {
		info := CallInfo{Method: r.method, Path: r.path, Attempt: attempt, Duration: c.clock.Now().Sub(start), Err: err}
		if resp != nil {
			info.Status = resp.status
		}
		c.cfg.Hook(info)
	}
	return resp, err
}

func (c *Client) send(ctx context.Context, r *request) (*response, error) {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	var body io.Reader
	if r.body != nil {
		body = bytes.NewReader(r.body)
	}
	req, err := http.NewRequestWithContext(ctx, r.method, c.root+"/"+strings.TrimPrefix(r.path, "/"), body)
	if err != nil {
		return nil, notSentError{fmt.Errorf("bad request path %q: %v", r.path, err)}
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("OData-Version", "4.0")
	req.Header.Set("OData-MaxVersion", "4.0")
	if r.body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.cfg.Dialect.Standard() && !r.batch {
		if m := c.etags.ifMatch(r.method, r.path); m != "" {
			req.Header.Set("If-Match", m)
		}
	}
	for k, v := range r.header {
		req.Header.Set(k, v)
	}
	if c.cfg.AppID != "" {
		req.Header.Set("X-App-Id", c.cfg.AppID)
	}
	if c.cfg.AppKey != "" {
		req.Header.Set("X-App-Key", c.cfg.AppKey)
	}
	if c.cfg.Auth != nil {
		if err := c.cfg.Auth.Authorize(req); err != nil {
			return nil, notSentError{&AuthorizeError{Method: c.cfg.Auth.Method(), Err: err}}
		}
	}
	hr, err := c.hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer hr.Body.Close()
	renewed := false
	if rn, ok := c.cfg.Auth.(Renewer); ok && hr.StatusCode == http.StatusUnauthorized {
		renewed = rn.Renew(req)
	}
	data, err := io.ReadAll(io.LimitReader(hr.Body, c.cfg.MaxResponseBytes+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > c.cfg.MaxResponseBytes {
		return nil, fmt.Errorf("%w (%d bytes)", ErrResponseTooLarge, c.cfg.MaxResponseBytes)
	}
	return &response{status: hr.StatusCode, header: hr.Header, body: data, renewed: renewed}, nil
}

// notSentError marks a failure before anything went on the wire.
type notSentError struct{ err error }

func (e notSentError) Error() string { return e.err.Error() }
func (e notSentError) Unwrap() error { return e.err }

// decodeJSON reads a 2xx JSON answer into out (nil: discard), numbers as
// json.Number when out holds interfaces. An HTML page (a proxy's login
// page with 200) is reported as such.
func decodeJSON(resp *response, out any) error {
	if out == nil {
		return nil
	}
	ct := resp.header.Get("Content-Type")
	if strings.Contains(strings.ToLower(ct), "text/html") || looksHTML(bytes.TrimSpace(resp.body)) {
		return ParseError(resp.status, resp.header, resp.body)
	}
	dec := json.NewDecoder(bytes.NewReader(resp.body))
	dec.UseNumber()
	if err := dec.Decode(out); err != nil {
		return fmt.Errorf("the answer is not the JSON expected (%s): %q", jsonErrText(err), snippet(resp.body))
	}
	return nil
}

func withQuery(path string, q Query) string {
	if enc := q.Encode(); enc != "" {
		sep := "?"
		if strings.Contains(path, "?") {
			sep = "&"
		}
		return path + sep + enc
	}
	return path
}

// Get reads path with the query options into out (a pointer; nil discards).
// Paths are relative to the service root and must already be escaped:
// write keys in them with PathKey.
func (c *Client) Get(ctx context.Context, path string, q Query, out any) error {
	resp, err := c.do(ctx, &request{method: http.MethodGet, path: withQuery(path, q)})
	if err != nil {
		return err
	}
	return decodeJSON(resp, out)
}

// GetSized is Get that also says how many bytes the answer's body held:
// what a reader that keeps its pages within a memory budget sizes the
// next page by.
func (c *Client) GetSized(ctx context.Context, path string, q Query, out any) (int, error) {
	resp, err := c.do(ctx, &request{method: http.MethodGet, path: withQuery(path, q)})
	if err != nil {
		return 0, err
	}
	return len(resp.body), decodeJSON(resp, out)
}

// Post creates (docs/service.md, Writes); out receives the created entity.
func (c *Client) Post(ctx context.Context, path string, body []byte, out any) error {
	return c.write(ctx, http.MethodPost, path, body, out)
}

// Patch updates (docs/service.md, Writes); out receives the updated entity.
func (c *Client) Patch(ctx context.Context, path string, body []byte, out any) error {
	return c.write(ctx, http.MethodPatch, path, body, out)
}

// Delete deletes (docs/service.md, Writes).
func (c *Client) Delete(ctx context.Context, path string) error {
	_, err := c.do(ctx, &request{method: http.MethodDelete, path: path, write: true})
	return err
}

func (c *Client) write(ctx context.Context, method, path string, body []byte, out any) error {
	if body == nil {
		body = []byte("{}")
	}
	resp, err := c.do(ctx, &request{method: method, path: path, body: body, write: true})
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(resp.body)) == 0 {
		return nil // 204 No Content
	}
	if err := decodeJSON(resp, out); err != nil {
		// The write succeeded; only its echo is unreadable.
		return &InDoubtError{Op: method + " " + path, Err: err}
	}
	return nil
}

// LinkPath turns a link the server gave (@odata.nextLink: absolute, or
// relative to the service root) into a path for Get. A link outside this
// client's service root is refused: credentials go only where they were
// given, and a page of another service is no page of this read.
func (c *Client) LinkPath(link string) (string, error) {
	base, err := url.Parse(c.root + "/")
	if err != nil {
		return "", err
	}
	ref, err := url.Parse(link)
	if err != nil {
		return "", fmt.Errorf("the server's next link %q is not a URL: %v", snippet([]byte(link)), err)
	}
	abs := base.ResolveReference(ref).String()
	path, ok := strings.CutPrefix(abs, base.String())
	if !ok || path == "" {
		return "", fmt.Errorf("the server's next link %q leads outside the service root %s: not followed", snippet([]byte(link)), c.root)
	}
	return path, nil
}

// valueOf reads {"value": "..."} answers of the service functions.
func (c *Client) valueOf(ctx context.Context, path string) (string, error) {
	var out struct {
		Value json.RawMessage `json:"value"`
	}
	if err := c.Get(ctx, path, Query{}, &out); err != nil {
		return "", err
	}
	var s string
	if err := json.Unmarshal(out.Value, &s); err != nil {
		return "", fmt.Errorf("GET %s: value is not a string: %q", path, snippet(out.Value))
	}
	return s, nil
}

// versionFunctions answer the system version: the contract's name first
// (docs/service.md, Queries), then the one real servers also answer to
// (docs/servers.md, Connection).
var versionFunctions = []string{"GetSystemVersion()", "GetPriorityVersion()"}

// Version reads the system version once and caches it; Version.From names
// the function that answered. Any failure of one function means trying the
// other. When both are missing (404, or 400 as some servers answer), the
// server is older than 22.0: Version returns Version{} and VersionKnown
// reports false. Any other failure of both is returned and not cached.
func (c *Client) Version(ctx context.Context) (Version, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.version != nil {
		return *c.version, nil
	}
	if c.cfg.Dialect.Standard() {
		// No version function: the standard's features (StandardVersion).
		v := StandardVersion
		c.version, c.verKnown = &v, true
		return v, nil
	}
	var failure error
	for _, fn := range versionFunctions {
		s, err := c.valueOf(ctx, fn)
		if err == nil {
			var v Version
			if v, err = ParseVersion(s); err == nil {
				v.From = fn
				c.version, c.verKnown = &v, true
				return v, nil
			}
			err = fmt.Errorf("GET %s: %w", fn, err)
		} else if IsNotFound(err) || IsScreenError(err) {
			continue
		}
		if failure == nil {
			failure = err
		}
	}
	if failure != nil {
		return Version{}, failure
	}
	c.version, c.verKnown = &Version{}, false
	return Version{}, nil
}

// VersionKnown reports whether the version was read or set; false before
// Version ran and when the server is older than 22.0.
func (c *Client) VersionKnown() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.verKnown
}

// SetVersion overrides the version (a flag, a plan, a test).
func (c *Client) SetVersion(v Version) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.version, c.verKnown = &v, true
}

// ODataVersion reads GetODataVersion() ("4.0"). A service of the odata
// dialect has no such function: it is taken to speak 4.0, and its
// $metadata is read to prove that it answers.
func (c *Client) ODataVersion(ctx context.Context) (string, error) {
	if c.cfg.Dialect.Standard() {
		if _, _, err := c.Metadata(ctx); err != nil {
			return "", err
		}
		return "4.0", nil
	}
	return c.valueOf(ctx, "GetODataVersion()")
}

// LoginName reads GetLoginName: the user the service sees; "" from a
// service of the odata dialect, which has no such function.
func (c *Client) LoginName(ctx context.Context) (string, error) {
	if c.cfg.Dialect.Standard() {
		return "", nil
	}
	return c.valueOf(ctx, "GetLoginName")
}

// Metadata reads and parses $metadata, returning the raw document too so
// that callers can cache it (it can take a minute to generate).
func (c *Client) Metadata(ctx context.Context) (*Metadata, []byte, error) {
	resp, err := c.do(ctx, &request{method: http.MethodGet, path: "$metadata", header: map[string]string{"Accept": "application/xml"}})
	if err != nil {
		return nil, nil, err
	}
	if looksHTML(bytes.TrimSpace(resp.body)) {
		return nil, nil, ParseError(resp.status, resp.header, resp.body)
	}
	m, err := ParseMetadata(bytes.NewReader(resp.body))
	if err != nil {
		return nil, resp.body, fmt.Errorf("GET $metadata: %w", err)
	}
	if c.cfg.Dialect.Standard() {
		c.SetMetadata(m)
	}
	return m, resp.body, nil
}

// MetadataFor reads GetMetadataFor(entity='X') (docs/service.md, Queries,
// from 25.0), X being both the entity set and its type's name. A cold entity
// may not be prepared, and has been seen answering another entity's type
// (docs/servers.md, Metadata): it reads X?$top=1 first, takes only the type
// named X, and after a refusal or another type warms X up and asks once more.
func (c *Client) MetadataFor(ctx context.Context, entity string) (*EntityType, []byte, error) {
	if c.cfg.Dialect.Standard() {
		return nil, nil, errors.New("GetMetadataFor is the ERP's function; a service of the odata dialect has $metadata only")
	}
	lit, _ := FormatLiteral(entity)
	path := "GetMetadataFor(entity=" + escapePathKey(lit) + ")"
	get := func() (*EntityType, []byte, error) {
		resp, err := c.do(ctx, &request{method: http.MethodGet, path: path, header: map[string]string{"Accept": "application/xml"}})
		if err != nil {
			return nil, nil, err
		}
		if looksHTML(bytes.TrimSpace(resp.body)) {
			return nil, nil, ParseError(resp.status, resp.header, resp.body)
		}
		t, err := ParseEntityTypeNamed(bytes.NewReader(resp.body), entity)
		if err != nil {
			return nil, resp.body, fmt.Errorf("GET %s: %w", path, err)
		}
		return t, resp.body, nil
	}
	if err := c.warm(ctx, entity); err != nil {
		return nil, nil, err
	}
	t, raw, err := get()
	if err == nil {
		return t, raw, nil
	}
	switch KindOf(err) {
	case KindAuth, KindForbidden, KindThrottled:
		return nil, raw, err
	}
	var ide *InDoubtError
	if errors.As(err, &ide) || ctx.Err() != nil {
		return nil, raw, err
	}
	if werr := c.warm(ctx, entity); werr != nil {
		return nil, raw, fmt.Errorf("%w (and %v)", err, werr)
	}
	return get()
}

// warm reads SET?$top=1, which prepares a cold form: one not used since the
// server started can answer 404 to its first GET (docs/servers.md,
// Reading: cold forms), so a 404 is asked once more.
func (c *Client) warm(ctx context.Context, set string) error {
	err := c.Get(ctx, set, Query{Top: 1}, nil)
	if IsNotFound(err) {
		err = c.Get(ctx, set, Query{Top: 1}, nil)
	}
	if err != nil {
		return fmt.Errorf("warming %s up with GET %s?$top=1: %w", set, set, err)
	}
	return nil
}

// ClearEntityMetadata asks the server to rebuild an entity's metadata
// (docs/service.md, Metadata, from 22.0); "" clears all entities.
func (c *Client) ClearEntityMetadata(ctx context.Context, entity string) error {
	var body []byte
	if entity != "" {
		body, _ = json.Marshal(map[string]string{"Entity": entity})
	}
	_, err := c.do(ctx, &request{method: http.MethodPost, path: "ClearEntityMetadata", body: body, write: true})
	return err
}

// BatchOptions choose the $batch format and error handling.
type BatchOptions struct {
	// ContinueOnError asks the server to run the remaining sub-requests
	// after one fails. It is always sent, true or false.
	ContinueOnError bool
	// Multipart sends multipart/mixed instead of JSON.
	Multipart bool
}

// Batch sends one $batch (docs/service.md, Batch) and returns the
// sub-responses. The answer is read in whatever format the server chose:
// servers before 22.1 answer multipart/mixed even to JSON. Only a 429 or a
// request that provably never left is retried; any other failure once the
// batch may have reached the server is an *InDoubtError, since nothing is
// rolled back.
func (c *Client) Batch(ctx context.Context, reqs []BatchRequest, opts BatchOptions) ([]BatchResponse, error) {
	if len(reqs) == 0 {
		return nil, nil
	}
	c.mu.Lock()
	v, known := c.version, c.verKnown
	c.mu.Unlock()
	if known && v != nil && len(reqs) > v.BatchLimit() {
		return nil, fmt.Errorf("POST $batch: %d operations, more than the %d version %s allows (docs/service.md, Batch)", len(reqs), v.BatchLimit(), v)
	}
	if err := c.warmBeforeWrites(ctx, reqs); err != nil {
		return nil, err
	}
	standard := c.cfg.Dialect.Standard()
	if standard {
		reqs = c.withIfMatch(reqs)
		opts.Multipart = opts.Multipart || c.multipart.Load()
	}
	r, err := batchRequest(reqs, opts, c.cfg.Dialect)
	if err != nil {
		return nil, err
	}
	r.write, r.batch = true, true
	resp, err := c.do(ctx, r)
	if err != nil && standard && !opts.Multipart && jsonBatchRefused(err) {
		// The JSON batch format is OData 4.01's; a 4.0 service may take
		// only multipart. The refusal of the whole batch ran none of it.
		opts.Multipart = true
		if r, err = batchRequest(reqs, opts, c.cfg.Dialect); err != nil {
			return nil, err
		}
		r.write, r.batch = true, true
		if resp, err = c.do(ctx, r); err == nil {
			c.multipart.Store(true)
		}
	}
	if err != nil {
		return nil, err
	}
	out, err := decodeBatchResponse(resp)
	if err != nil {
		return nil, &InDoubtError{Op: "POST $batch", Err: err}
	}
	if standard {
		matched, _ := MatchResponses(reqs, out)
		for i, m := range matched {
			if m != nil {
				c.etags.learn(reqs[i].Method, reqs[i].URL, m.Status, m.Header, m.Body)
			}
		}
	}
	c.readWarm(reqs, out)
	return out, nil
}

// jsonBatchRefused reports a whole JSON $batch refused in a way that says
// the format may be what the service does not take: 400, 404 (no JSON batch
// handler), 406 or 415. Nothing of a batch refused whole with a 4xx ran; a
// batch in doubt is never sent again.
func jsonBatchRefused(err error) bool {
	var e *Error
	var doubt *InDoubtError
	if errors.As(err, &doubt) || !errors.As(err, &e) {
		return false
	}
	switch e.Status {
	case http.StatusBadRequest, http.StatusNotFound, http.StatusNotAcceptable, http.StatusUnsupportedMediaType:
		return true
	}
	return false
}

// withIfMatch is reqs with If-Match on each write of an entity that has
// none (etags), the caller's requests and headers left as they were.
func (c *Client) withIfMatch(reqs []BatchRequest) []BatchRequest {
	var out []BatchRequest
	for i, r := range reqs {
		m := c.etags.ifMatch(r.Method, r.URL)
		if m == "" || r.Header("If-Match") != "" {
			continue
		}
		if out == nil {
			out = slices.Clone(reqs)
		}
		h := make(map[string]string, len(r.Headers)+1)
		for k, v := range r.Headers {
			h[k] = v
		}
		h["if-match"] = m
		out[i].Headers = h
	}
	if out == nil {
		return reqs
	}
	return out
}

// batchRequest is the POST $batch that carries reqs, in the format opts
// chooses. It is a read (retried as reads are) until the caller says it
// writes.
func batchRequest(reqs []BatchRequest, opts BatchOptions, dialect Dialect) (*request, error) {
	coe := "false"
	if opts.ContinueOnError {
		coe = "true"
	}
	var body bytes.Buffer
	h := map[string]string{"Prefer": "odata.continue-on-error=" + coe}
	if opts.Multipart {
		boundary := NewBoundary()
		if err := EncodeMultipartBatch(&body, boundary, reqs, opts.ContinueOnError); err != nil {
			return nil, fmt.Errorf("POST $batch: %w", err)
		}
		ct := MultipartBatchContentType(boundary, opts.ContinueOnError)
		if !strings.Contains(ct, "continue-on-error") {
			ct += ";odata.continue-on-error=" + coe
		}
		h["Content-Type"] = ct
		h["Accept"] = "multipart/mixed"
	} else {
		if err := EncodeJSONBatch(&body, reqs); err != nil {
			return nil, fmt.Errorf("POST $batch: %w", err)
		}
		h["Content-Type"] = "application/json;odata.continue-on-error=" + coe
		h["Accept"] = "application/json, multipart/mixed;q=0.5"
		if dialect.Standard() {
			// The JSON batch format is OData 4.01's; a standard service
			// answers multipart, without Content-IDs, where the request
			// also accepts it (docs/other-services.md).
			h["OData-Version"], h["OData-MaxVersion"] = "4.01", "4.01"
			h["Accept"] = "application/json"
		}
	}
	return &request{method: http.MethodPost, path: "$batch", body: body.Bytes(), header: h}, nil
}

// readWarm notes the sets a batch's reads found warm: a GET answered 200
// (a step's watermark read, a reconciliation's) leaves its set warm, and
// the first write to it needs no warm-up of its own.
func (c *Client) readWarm(reqs []BatchRequest, got []BatchResponse) { c.forms.Answered(reqs, got) }

// Forms remembers the entity sets known warm in one client's life (a
// cold form answers 404 to its first request, a POST included: see
// docs/servers.md, Reading): one a read answered 200, or that was
// warmed up. The client warms, before a batch that writes, the sets it
// writes to that are not known warm (ColdWrites); the dry run predicts
// those warm-up calls by the same rule. The zero value is ready to use
// and safe for concurrent use.
type Forms struct {
	mu   sync.Mutex
	warm map[string]bool
}

// Answered learns from the answers to reqs: a set a GET of which answered
// 200 is warm.
func (f *Forms) Answered(reqs []BatchRequest, got []BatchResponse) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !slices.ContainsFunc(reqs, func(r BatchRequest) bool {
		set := EntitySetOf(r.URL)
		return r.Method == http.MethodGet && set != "" && !f.warm[set]
	}) {
		return // nothing to learn: no need to pair the answers (a write batch's usual case)
	}
	matched, _ := MatchResponses(reqs, got)
	for i, m := range matched {
		if m != nil && m.Status == http.StatusOK && reqs[i].Method == http.MethodGet {
			f.warmLocked(EntitySetOf(reqs[i].URL))
		}
	}
}

// ColdWrites are the entity sets reqs write to that are not known warm,
// in the order of reqs, each once; none for a batch of reads.
func (f *Forms) ColdWrites(reqs []BatchRequest) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, r := range reqs {
		set := EntitySetOf(r.URL)
		if r.Method == http.MethodGet || set == "" || f.warm[set] || slices.Contains(out, set) {
			continue
		}
		out = append(out, set)
	}
	return out
}

// Warmed notes sets as warm.
func (f *Forms) Warmed(sets ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, s := range sets {
		f.warmLocked(s)
	}
}

func (f *Forms) warmLocked(set string) {
	if set == "" {
		return
	}
	if f.warm == nil {
		f.warm = map[string]bool{}
	}
	f.warm[set] = true
}

// warmBeforeWrites prepares the forms a batch writes to: a server answers
// 404 to the first request to a form not used since it started
// (docs/servers.md, Reading: cold forms), a POST included, and a record
// refused so would count as failed. Before the first batch that writes to an
// entity set, this client reads SET?$top=1 for it, in one $batch for all the
// sets of the batch; what the reads answer does not matter (being asked warms
// a form). A warm-up the server did not take, after a read's retries, is
// the batch's error, and the batch is not sent: on a cold form its writes
// would be refused. Each set is warmed once in a client's life, so a run
// pays one call for it, however many batches it sends.
func (c *Client) warmBeforeWrites(ctx context.Context, reqs []BatchRequest) error {
	if c.cfg.Dialect.Standard() {
		return nil // cold forms are the ERP's (docs/servers.md, Reading)
	}
	if !slices.ContainsFunc(reqs, func(r BatchRequest) bool { return r.Method != http.MethodGet }) {
		return nil // reads only: the warm-ups themselves, or reads that confirm a 404
	}
	// Held while warming, so that a batch sent meanwhile waits for the
	// forms to be ready instead of finding them cold.
	c.warmMu.Lock()
	defer c.warmMu.Unlock()
	cold := c.forms.ColdWrites(reqs)
	var warmUps []BatchRequest
	for _, set := range cold {
		warmUps = append(warmUps, BatchRequest{ID: strconv.Itoa(len(warmUps) + 1), Method: http.MethodGet, URL: set + "?$top=1"})
	}
	if len(warmUps) == 0 {
		return nil
	}
	// Sent as a read (retried on a dropped connection or a 5xx, as reads
	// are): a form is warm once the server took the call, whatever the
	// answer's body says. A warm-up the server never took leaves the form
	// cold, and the write is not sent onto it.
	r, err := batchRequest(warmUps, BatchOptions{ContinueOnError: true}, c.cfg.Dialect)
	if err != nil {
		return err
	}
	if _, err := c.do(ctx, r); err != nil {
		return &NotSentError{Op: "POST $batch", Err: fmt.Errorf("warming up %s before writing to it: %w", warmUps[0].URL, err)}
	}
	c.forms.Warmed(cold...)
	return nil
}

// EntitySetOf is the entity set a request URL (relative to the service
// root) addresses: "ORDERS" of "ORDERS('SO1')/ORDERITEMS_SUBFORM" or of
// "ORDERS?$filter=…"; "" for a reference to another sub-request ($1/…),
// a function (GetLoginName()) or an absolute URL.
func EntitySetOf(url string) string {
	end := strings.IndexAny(url, "(/?")
	if end < 0 {
		end = len(url)
	}
	set := url[:end]
	if set == "" || strings.HasPrefix(set, "$") || strings.Contains(set, ":") || strings.HasPrefix(url[end:], "()") {
		return ""
	}
	return set
}

func decodeBatchResponse(resp *response) ([]BatchResponse, error) {
	ct := resp.header.Get("Content-Type")
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil {
		// No usable Content-Type: sniff.
		t := bytes.TrimSpace(resp.body)
		if len(t) > 0 && t[0] == '{' {
			mt = "application/json"
		} else {
			return nil, fmt.Errorf("the batch answer has Content-Type %q: %q", ct, snippet(resp.body))
		}
	}
	switch {
	case mt == "application/json":
		if len(resp.body) <= MaxBatchBytes { // the body in hand, not copied again
			return decodeJSONBatchResponse(resp.body)
		}
		return DecodeJSONBatchResponse(bytes.NewReader(resp.body))
	case mt == "multipart/mixed":
		if params["boundary"] == "" {
			return nil, errors.New("the multipart batch answer has no boundary")
		}
		return DecodeMultipartBatchResponse(bytes.NewReader(resp.body), params["boundary"])
	case mt == "text/html":
		return nil, ParseError(resp.status, resp.header, resp.body)
	}
	return nil, fmt.Errorf("the batch answer is %s, neither JSON nor multipart/mixed: %q", mt, snippet(resp.body))
}
