package executortest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/sandbox"
)

// Batcher sends a $batch: executor.Client, which this package does not
// import.
type Batcher interface {
	Batch(ctx context.Context, reqs []odata.BatchRequest, opts odata.BatchOptions) ([]odata.BatchResponse, error)
}

// Client is the product's odata.Client (which warms cold forms before
// writing) with a count of its batches and a way to lose one.
type Client struct {
	url   string
	hc    *http.Client
	Calls atomic.Int64
	// FailNext, when set, makes the next batch that writes look lost after
	// sending (reads, such as a step's watermark, are answered).
	FailNext atomic.Bool

	once sync.Once
	oc   *odata.Client
	err  error
}

// Batch sends reqs through the product's client.
func (c *Client) Batch(ctx context.Context, reqs []odata.BatchRequest, opts odata.BatchOptions) ([]odata.BatchResponse, error) {
	c.once.Do(func() {
		// No retries and no timeout of its own: a test's batch is sent
		// once, as the old hand-written client sent it.
		c.oc, c.err = odata.NewClient(odata.Config{BaseURL: c.url, Auth: odata.BasicAuth{User: "demo", Password: "demo"}, HTTPClient: c.hc, Retries: -1})
	})
	if c.err != nil {
		return nil, c.err
	}
	c.Calls.Add(1)
	resps, err := c.oc.Batch(ctx, reqs, opts)
	writes := slices.ContainsFunc(reqs, func(q odata.BatchRequest) bool { return q.Method != http.MethodGet })
	if err == nil && writes && c.FailNext.CompareAndSwap(true, false) {
		return nil, &odata.InDoubtError{Op: "POST $batch", Err: fmt.Errorf("connection reset (simulated)")}
	}
	return resps, err
}

// Env is a sandbox served by httptest, the client to it and its metadata.
type Env struct {
	SB     *sandbox.Server
	Srv    *httptest.Server
	Client *Client
	MD     *odata.Metadata
	Ver    odata.Version
}

// New is a sandbox of opts behind httptest, closed when t ends.
func New(t testing.TB, opts sandbox.Options) *Env {
	t.Helper()
	return NewBehind(t, opts, func(sb *sandbox.Server) http.Handler { return sb })
}

// NewBehind is New with front's handler (a fault, a gate, a restart)
// between the client and the sandbox.
func NewBehind(t testing.TB, opts sandbox.Options, front func(sb *sandbox.Server) http.Handler) *Env {
	t.Helper()
	sb, err := sandbox.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(front(sb))
	t.Cleanup(srv.Close)
	v := opts.SystemVersion
	if v == "" {
		v = "25.1"
	}
	ver, _ := odata.ParseVersion(v)
	return &Env{SB: sb, Srv: srv, Client: NewClient(srv.URL+sandbox.BasePath, srv.Client()),
		MD: sandbox.DemoMetadata(), Ver: ver}
}

// Target is the service root of the sandbox.
func (e *Env) Target() string { return e.Srv.URL + sandbox.BasePath }

// Behind sends writes to the sandbox as a user would, outside the run.
func (e *Env) Behind(t testing.TB, reqs ...odata.BatchRequest) {
	t.Helper()
	Behind(t, e.Client, reqs...)
}

// Behind sends writes through c as a user would, outside the run.
func Behind(t testing.TB, c Batcher, reqs ...odata.BatchRequest) {
	t.Helper()
	for i := range reqs {
		reqs[i].ID = fmt.Sprint(i + 1)
		if reqs[i].Body != nil {
			reqs[i].Headers = map[string]string{"content-type": "application/json"}
		}
	}
	resps, err := c.Batch(context.Background(), reqs, odata.BatchOptions{ContinueOnError: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range resps {
		if r.Status >= 300 {
			t.Fatalf("behind the run's back: %d %s", r.Status, r.Body)
		}
	}
}

// MetadataOf is undo's way to the metadata (its Options.Metadata): md,
// as the command line would fetch it.
func MetadataOf(md *odata.Metadata) func(context.Context) (*odata.Metadata, error) {
	return func(context.Context) (*odata.Metadata, error) { return md, nil }
}

// Hiding is a client whose answers lack a field, as the service's answers
// lack a field hidden by field-level permissions (docs/servers.md, Reading).
type Hiding struct {
	Batcher
	Field string
}

// Batch sends reqs and strips Field from the answers.
func (h Hiding) Batch(ctx context.Context, reqs []odata.BatchRequest, opts odata.BatchOptions) ([]odata.BatchResponse, error) {
	got, err := h.Batcher.Batch(ctx, reqs, opts)
	for i := range got {
		var v any
		if json.Unmarshal(got[i].Body, &v) == nil {
			got[i].Body, _ = json.Marshal(h.strip(v))
		}
	}
	return got, err
}

func (h Hiding) strip(v any) any {
	switch x := v.(type) {
	case map[string]any:
		delete(x, h.Field)
		for k, e := range x {
			x[k] = h.strip(e)
		}
	case []any:
		for i, e := range x {
			x[i] = h.strip(e)
		}
	}
	return v
}

// LoseOnce passes batches to the client; the first that Lose picks is
// lost in doubt, as a dropped connection loses it: after the server
// committed it, or (Unsent) before it arrived.
type LoseOnce struct {
	Batcher
	Lose   func([]odata.BatchRequest) bool
	Unsent bool
	lost   bool
}

// Batch sends reqs, or loses them once.
func (c *LoseOnce) Batch(ctx context.Context, reqs []odata.BatchRequest, opts odata.BatchOptions) ([]odata.BatchResponse, error) {
	if !c.lost && c.Lose(reqs) {
		c.lost = true
		if !c.Unsent {
			if _, err := c.Batcher.Batch(ctx, reqs, opts); err != nil {
				return nil, err
			}
		}
		return nil, &odata.InDoubtError{Op: "POST $batch", Err: errors.New("connection reset (simulated)")}
	}
	return c.Batcher.Batch(ctx, reqs, opts)
}

// URL is the service root the client sends to.
func (c *Client) URL() string { return c.url }

// Another is a client of its own (its own count) to the same service.
func (c *Client) Another() *Client { return NewClient(c.url, c.hc) }

// NewClient is a client to the service root url through hc.
func NewClient(url string, hc *http.Client) *Client { return &Client{url: url, hc: hc} }

// Entities are the sandbox's entities of set by a key field.
func (e *Env) Entities(set, key string) map[string]map[string]any { return Entities(e.SB, set, key) }

// Entities are sb's entities of set by a key field.
func Entities(sb *sandbox.Server, set, key string) map[string]map[string]any {
	out := map[string]map[string]any{}
	for _, ent := range sb.Snapshot()[set] {
		out[fmt.Sprint(ent[key])] = ent
	}
	return out
}

// ServedMetadata is the $metadata the sandbox behind c serves (under
// real-metadata, with the Scale of each decimal), as the CLI reads it
// before a run.
func ServedMetadata(t testing.TB, c *Client) *odata.Metadata {
	t.Helper()
	oc, err := odata.NewClient(odata.Config{BaseURL: c.url, Auth: odata.BasicAuth{User: "demo", Password: "demo"}, HTTPClient: c.hc, Retries: -1})
	if err != nil {
		t.Fatal(err)
	}
	md, _, err := oc.Metadata(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return md
}
