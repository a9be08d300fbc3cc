package sandbox_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/read"
	"github.com/migrate-tool/migrate/sandbox"
)

// The project's own client against the sandbox, in both batch formats and
// on both sides of 22.1: the two agree on the wire.
func TestClientAgainstSandbox(t *testing.T) {
	t.Parallel()
	for _, version := range []string{"21.1", "25.1"} {
		for _, multipart := range []bool{false, true} {
			c := start(t, sandbox.Options{SystemVersion: version})
			c.seed()
			cl, err := odata.NewClient(odata.Config{BaseURL: c.base, Auth: odata.BasicAuth{User: "demo", Password: "demo"}, HTTPClient: c.srv.Client()})
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			if name, err := cl.LoginName(ctx); err != nil || name != "demo" {
				t.Fatalf("login name %q %v", name, err)
			}
			rs, err := cl.Batch(ctx, []odata.BatchRequest{
				post("1", "ORDERS", `{"CUSTNAME":"C100"}`),
				post("2", "$1/ORDERITEMS_SUBFORM", `{"PARTNAME":"P1","TQUANT":3}`, "1"),
				post("3", "$1/ORDERITEMS_SUBFORM", `{"PARTNAME":"NOPE","TQUANT":3}`, "1"),
				post("4", "CUSTOMERS", `{"CUSTNAME":"C200","CUSTDES":"Second"}`),
			}, odata.BatchOptions{ContinueOnError: true, Multipart: multipart})
			if err != nil {
				t.Fatalf("%s multipart=%v: %v", version, multipart, err)
			}
			if got := statuses(rs); got != "1:201 2:201 3:400 4:201" {
				t.Errorf("%s multipart=%v: %s", version, multipart, got)
			}
			e := odata.ParseError(rs[2].Status, nil, rs[2].Body)
			if !odata.IsScreenError(e) || len(e.Messages) != 1 {
				t.Errorf("%s multipart=%v: screen error in a batch: %+v (%s)", version, multipart, e, rs[2].Body)
			}
			var line map[string]any
			if err := json.Unmarshal(rs[1].Body, &line); err != nil || line["KLINE"] != float64(1) || line["PDES"] != "Bolt M6" {
				t.Errorf("line %s", rs[1].Body)
			}
		}
	}
}

// The client's version detection, paging and filters against the sandbox.
func TestClientReadsSandbox(t *testing.T) {
	t.Parallel()
	c := start(t, sandbox.Options{SystemVersion: "23.1", RowCap: 7})
	for i := 0; i < 23; i++ {
		c.must(201, "POST", "/ABILITIES", map[string]any{"ABILITYCODE": string(rune('A'+i)) + "X", "ABILITYDES": "d"})
	}
	cl, err := odata.NewClient(odata.Config{BaseURL: c.base, Auth: odata.PATAuth{Token: "demo-pat"}, HTTPClient: c.srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	v, err := cl.Version(ctx)
	if err != nil || v.String() != "23.1" {
		t.Errorf("version %v %v", v, err)
	}
	count := func(q read.Query) (int, error) {
		q.Set, q.Type = "ABILITIES", sandbox.DemoMetadata().EntitySet("ABILITIES").Type
		p, err := read.Pages(cl, q)
		if err != nil {
			return 0, err
		}
		n := 0
		for {
			rows, err := p.Next(ctx)
			if err != nil || rows == nil {
				return n, err
			}
			n += len(rows)
		}
	}
	if n, err := count(read.Query{Select: []string{"ABILITYCODE"}, PageSize: 5}); err != nil || n != 23 {
		t.Errorf("pages: %d rows, %v", n, err)
	}
	if n, err := count(read.Query{Filter: "ABILITYCODE ge 'CX' and ABILITYCODE lt 'FX'"}); err != nil || n != 3 {
		t.Errorf("filtered pages: %d rows, %v", n, err)
	}
	if n, err := count(read.Query{PageSize: 5, Max: 7}); err != nil || n != 7 {
		t.Errorf("at most 7: %d rows, %v", n, err)
	}
}
