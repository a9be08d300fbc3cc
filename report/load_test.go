package report

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/migrate-tool/migrate/executor"
	"github.com/migrate-tool/migrate/internal/workbook"
	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/odata/odatatest"
	"github.com/migrate-tool/migrate/plan"
	"github.com/migrate-tool/migrate/sandbox"
)

// The runs whose journals the reports read: a plan and its sources
// written to a folder, prepared as the command line does and applied to a
// sandbox, through the engine's own API.

// target is a sandbox served over HTTP and a client of it whose pauses
// (backoff, Retry-After) pass at once on its clock.
type target struct {
	sb     *sandbox.Server
	url    string
	client *odata.Client
	clock  *odatatest.Clock
}

func newTarget(t *testing.T, opts sandbox.Options) *target {
	t.Helper()
	clock := odatatest.NewClock(time.Date(2026, 11, 3, 9, 0, 0, 0, time.UTC))
	if opts.Now == nil {
		opts.Now = clock.Now
	}
	sb, err := sandbox.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(sb)
	t.Cleanup(srv.Close)
	url := srv.URL + sandbox.BasePath
	client, err := odata.NewClient(odata.Config{BaseURL: url, Auth: odata.BasicAuth{User: "demo", Password: "demo"},
		HTTPClient: srv.Client(), Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	return &target{sb: sb, url: url, client: client, clock: clock}
}

// run is a prepared plan and the options it is applied with.
type run struct {
	*executor.Prepared
	executor.Options
}

// prepare writes files (plan.yaml and its sources) to a folder and
// prepares the plan against the sandbox's metadata.
func (tg *target) prepare(t *testing.T, files map[string]string) run {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
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
	return run{pr, executor.Options{Client: tg.client, Journal: filepath.Join(dir, "run.journal"), Target: tg.url, ToolVersion: "test", Now: tg.clock.Now}}
}

// apply applies r; an error fails the test.
func (r run) apply(t *testing.T) *executor.Summary {
	t.Helper()
	sum, err := executor.Apply(context.Background(), r.Prepared, r.Options)
	if err != nil {
		t.Fatal(err)
	}
	return sum
}

// load prepares files and applies them.
func (tg *target) load(t *testing.T, files map[string]string) (run, *executor.Summary) {
	t.Helper()
	r := tg.prepare(t, files)
	return r, r.apply(t)
}

// ordersFiles are a plan that loads parts P1 to Pn, customer C1 and the
// orders of rows (OrderNo,Customer,Part,Qty: a row a line; customer
// "skip" skips the row), the server numbering each order (DETAILS holds
// its number in the rows), and its sources.
func ordersFiles(parts int, deep bool, rows ...string) map[string]string {
	var ps strings.Builder
	ps.WriteString("Part,Description\n")
	for i := 1; i <= parts; i++ {
		fmt.Fprintf(&ps, "P%d,part P%d\n", i, i)
	}
	return map[string]string{"plan.yaml": fmt.Sprintf(`version: 1
name: orders
sources:
  parts: {file: parts.csv}
  customers: {file: customers.csv}
  order_rows: {file: orders.csv}
steps:
  - name: parts
    entity: LOGPART
    source: parts
    fields: {PARTNAME: row.Part, PARTDES: row.Description}
  - name: customers
    entity: CUSTOMERS
    source: customers
    fields: {CUSTNAME: row.Code, CUSTDES: row.Name}
  - name: orders
    entity: ORDERS
    source: order_rows
    when: row.Customer != "skip"
    group_by: row.OrderNo
    id: row.OrderNo
    deep_insert: %v
    after: [parts, customers]
    fields: {CUSTNAME: row.Customer, DETAILS: row.OrderNo}
    subforms:
      - name: ORDERITEMS_SUBFORM
        source: group
        fields: {PARTNAME: row.Part, TQUANT: row.Qty}
`, deep),
		"parts.csv": ps.String(), "customers.csv": "Code,Name\nC1,Acme\n",
		"orders.csv": "OrderNo,Customer,Part,Qty\n" + strings.Join(rows, "\n") + "\n"}
}

// entities are the sandbox's entities of set by a key field.
func (tg *target) entities(set, key string) map[string]map[string]any {
	out := map[string]map[string]any{}
	for _, ent := range tg.sb.Snapshot()[set] {
		out[fmt.Sprint(ent[key])] = ent
	}
	return out
}

// lines are a collection sub-form of an entity of the sandbox's Snapshot.
func lines(ent map[string]any, nav string) []map[string]any {
	l, _ := ent[nav].([]map[string]any)
	return l
}

func stepOf(s *executor.Summary, name string) executor.StepSummary {
	for _, x := range s.Steps {
		if x.Name == name {
			return x
		}
	}
	return executor.StepSummary{}
}

// readCSV reads a CSV we wrote: it starts with a UTF-8 BOM, for Excel
// to read Hebrew.
func readCSV(t *testing.T, path string) [][]string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(data, []byte(workbook.BOM)) {
		t.Errorf("%s does not start with a UTF-8 BOM", path)
	}
	rows, err := csv.NewReader(bytes.NewReader(bytes.TrimPrefix(data, []byte(workbook.BOM)))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return rows
}
