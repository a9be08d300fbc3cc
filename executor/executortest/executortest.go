// Package executortest applies a plan and its sources to the sandbox
// through the engine's own API (plan.Load, executor.Prepare,
// executor.Apply), as the command line does: the runs, and the journals
// they leave, of the tests of the packages that read what a run leaves
// (report, export).
package executortest

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/migrate-tool/migrate/executor"
	"github.com/migrate-tool/migrate/executor/fixture"
	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/odata/odatatest"
	"github.com/migrate-tool/migrate/plan"
	"github.com/migrate-tool/migrate/sandbox"
)

// Target is a sandbox served over HTTP and a client of it whose pauses
// (backoff, Retry-After) pass at once on Clock, the sandbox's clock too.
type Target struct {
	Sandbox *sandbox.Server
	URL     string // the service root
	Client  *odata.Client
	Clock   *odatatest.Clock
}

// NewTarget starts a sandbox of opts, closed when the test ends.
func NewTarget(t testing.TB, opts sandbox.Options) *Target {
	t.Helper()
	clock := odatatest.NewClock(time.Date(2026, 11, 3, 9, 0, 0, 0, time.UTC))
	if opts.Now == nil {
		opts.Now = clock.Now
	}
	env := fixture.New(t, opts)
	return &Target{Sandbox: env.SB, URL: env.Target(), Client: fixture.ODataClient(t, env.Srv, odata.Config{Clock: clock}), Clock: clock}
}

// Run is a prepared plan and the options it is applied with (the
// journal in the plan's folder).
type Run struct {
	*executor.Prepared
	executor.Options
}

// Prepare writes files (plan.yaml and its sources) to a folder of the
// test's and prepares the plan against the sandbox's metadata; a
// diagnostic fails the test.
func (tg *Target) Prepare(t testing.TB, files map[string]string) Run {
	t.Helper()
	dir := t.TempDir()
	fixture.WriteFiles(t, dir, files)
	ver, err := odata.ParseVersion("25.1")
	if err != nil {
		t.Fatal(err)
	}
	p, ds := plan.Load(filepath.Join(dir, "plan.yaml"))
	pr, ds := executor.Prepare(context.Background(), executor.Setup{Plan: p, Diagnostics: ds, Metadata: sandbox.DemoMetadata(), Version: ver})
	if len(ds) > 0 {
		t.Fatalf("prepare: %v", ds)
	}
	t.Cleanup(func() { pr.Close() })
	return Run{pr, executor.Options{Client: tg.Client, Journal: filepath.Join(dir, "run.journal"), Target: tg.URL, ToolVersion: "test", Now: tg.Clock.Now}}
}

// Apply applies r; an error fails the test.
func (r Run) Apply(t testing.TB) *executor.Summary {
	t.Helper()
	sum, err := executor.Apply(context.Background(), r.Prepared, r.Options)
	if err != nil {
		t.Fatal(err)
	}
	return sum
}

// Complete applies r; an error, or a run that is not complete, fails the
// test (what names the run in the message).
func (r Run) Complete(t testing.TB, what string) *executor.Summary {
	t.Helper()
	sum, err := executor.Apply(context.Background(), r.Prepared, r.Options)
	if err != nil || !sum.Complete {
		t.Fatalf("%s: %v %+v", what, err, sum)
	}
	return sum
}

// Load prepares files and applies them.
func (tg *Target) Load(t testing.TB, files map[string]string) (Run, *executor.Summary) {
	t.Helper()
	r := tg.Prepare(t, files)
	return r, r.Apply(t)
}

// Entities are the sandbox's entities of set by a key field.
func (tg *Target) Entities(set, key string) map[string]map[string]any {
	out := map[string]map[string]any{}
	for _, ent := range tg.Sandbox.Snapshot()[set] {
		out[fmt.Sprint(ent[key])] = ent
	}
	return out
}

// Lines are a collection sub-form of an entity of the sandbox's Snapshot.
func Lines(ent map[string]any, nav string) []map[string]any {
	l, _ := ent[nav].([]map[string]any)
	return l
}
