package sandbox_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/sandbox"
)

// Each company of the service root's last segment holds its own data: what
// one is given the other does not see, its numbering counts on its own, and
// an undeclared company is refused as a real installation refuses it.
func TestCompanies(t *testing.T) {
	t.Parallel()
	c := start(t, sandbox.Options{Companies: []string{"demo", "test"}, Now: newClock().Now})
	test := c.srv.URL + sandbox.CompanyPath("test")
	c.must(201, "POST", "/CUSTOMERS", map[string]any{"CUSTNAME": "C1", "CUSTDES": "in demo"})
	c.must(201, "POST", test+"/CUSTOMERS", map[string]any{"CUSTNAME": "C2", "CUSTDES": "in test"})
	o1 := c.must(201, "POST", "/ORDERS", map[string]any{"CUSTNAME": "C1"}).json(t)
	o2 := c.must(201, "POST", test+"/ORDERS", map[string]any{"CUSTNAME": "C2"}).json(t)
	if o1["ORDNAME"] != "SO26000001" || o2["ORDNAME"] != "SO26000001" {
		t.Errorf("each company numbers its own orders: demo %v, test %v", o1["ORDNAME"], o2["ORDNAME"])
	}
	c.must(404, "GET", "/CUSTOMERS('C2')", nil)
	c.must(404, "GET", test+"/CUSTOMERS('C1')", nil)
	// A customer of another company is no reference.
	c.must(400, "POST", test+"/ORDERS", map[string]any{"CUSTNAME": "C1"})

	r := c.must(404, "GET", c.srv.URL+sandbox.CompanyPath("prod")+"/CUSTOMERS", nil)
	if !strings.Contains(r.String(), "no company prod") || !strings.Contains(r.String(), "demo, test") {
		t.Errorf("unknown company: %s", r)
	}
	for name, want := range map[string][]string{"demo": {"C1"}, "test": {"C2"}} {
		snap, ok := c.sb.SnapshotOf(name)
		if !ok {
			t.Fatalf("SnapshotOf(%s): no such company", name)
		}
		var got []string
		for _, e := range snap["CUSTOMERS"] {
			got = append(got, e["CUSTNAME"].(string))
		}
		if fmt.Sprint(got) != fmt.Sprint(want) || len(snap["CURRENCIES"]) != 3 {
			t.Errorf("%s holds customers %v and %d currencies, want %v and 3", name, got, len(snap["CURRENCIES"]), want)
		}
	}
	if _, ok := c.sb.SnapshotOf("prod"); ok {
		t.Error("SnapshotOf(prod) found an undeclared company")
	}
}

// A $batch is one company's: a sub-request's absolute URL into another
// company is refused, and nothing of it is written there.
func TestCompanyBatchStaysInItsCompany(t *testing.T) {
	t.Parallel()
	c := start(t, sandbox.Options{Companies: []string{"demo", "test"}})
	_, rs := c.batch("json", []odata.BatchRequest{post("1", c.srv.URL+sandbox.CompanyPath("test")+"/CUSTOMERS", `{"CUSTNAME":"X1","CUSTDES":"x"}`)})
	if len(rs) != 1 || rs[0].Status != 404 || !strings.Contains(string(rs[0].Body), "not below the service root") {
		t.Errorf("batch into another company: %s", statuses(rs))
	}
	if snap, _ := c.sb.SnapshotOf("test"); len(snap["CUSTOMERS"]) != 0 {
		t.Errorf("test company got %v", snap["CUSTOMERS"])
	}
}

// The calls-per-minute budget is the user's, whichever company a call
// addresses (one budget per user, as a real server counts).
func TestCompanyRateLimitPerUser(t *testing.T) {
	t.Parallel()
	clock := newClock()
	c := start(t, sandbox.Options{Companies: []string{"demo", "test"}, CallsPerMinute: 2, Now: clock.Now})
	c.must(200, "GET", "/CUSTOMERS", nil)
	c.must(200, "GET", c.srv.URL+sandbox.CompanyPath("test")+"/CUSTOMERS", nil)
	c.must(429, "GET", c.srv.URL+sandbox.CompanyPath("test")+"/CUSTOMERS", nil)
	clock.Advance(time.Minute)
	c.must(200, "GET", c.srv.URL+sandbox.CompanyPath("test")+"/CUSTOMERS", nil)
}

// The state file keeps every company's data; a version 1 file (one
// company's, before companies) is demo's; a company only the state holds
// is kept.
func TestCompanyState(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "state.json")
	c := start(t, sandbox.Options{Companies: []string{"demo", "test"}, StatePath: path})
	c.must(201, "POST", c.srv.URL+sandbox.CompanyPath("test")+"/CUSTOMERS", map[string]any{"CUSTNAME": "T1", "CUSTDES": "kept"})
	if err := c.sb.Close(); err != nil {
		t.Fatal(err)
	}
	c2 := start(t, sandbox.Options{StatePath: path})
	if got := c2.sb.Companies(); fmt.Sprint(got) != "[demo test]" {
		t.Errorf("companies after a restart without --company: %v", got)
	}
	c2.must(200, "GET", c2.srv.URL+sandbox.CompanyPath("test")+"/CUSTOMERS('T1')", nil)
	c2.must(404, "GET", "/CUSTOMERS('T1')", nil)

	old := filepath.Join(t.TempDir(), "v1.json")
	writeFile(t, old, `{"version":1,"counters":{},"data":{"CUSTOMERS":[{"CUSTNAME":"V1","CUSTDES":"old"}]}}`)
	c3 := start(t, sandbox.Options{StatePath: old})
	c3.must(200, "GET", "/CUSTOMERS('V1')", nil)

	if _, err := sandbox.New(sandbox.Options{Companies: []string{"a/b"}}); err == nil {
		t.Error("a company name with a slash was accepted")
	}
}

func writeFile(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}
