package executor

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/odata/odatatest"
	"github.com/migrate-tool/migrate/plan"
	"github.com/migrate-tool/migrate/sandbox"
)

// A target lookup reads every page of its entity in the order of
// its key, and refuses a table built from rows the filter should have left
// out (a server that ignored the filter).
func TestTargetLookups(t *testing.T) {
	t.Parallel()
	// 2,500 customers: two pages. Every fifth has agent 017.
	var rows []map[string]any
	for i := 0; i < 2500; i++ {
		agent := "023"
		if i%5 == 0 {
			agent = "017"
		}
		rows = append(rows, map[string]any{"CUSTNAME": fmt.Sprintf("C%04d", i), "CUSTDES": fmt.Sprintf("Name %04d", i), "AGENTCODE": agent})
	}
	tests := []struct {
		name      string
		applies   bool // the server applies $filter
		filter    string
		wantRows  int
		wantPages int
		wantErr   string
	}{
		// A short page is no end: the empty page after it is.
		{"all, two pages", true, "", 2500, 3, ""},
		{"filtered", true, "AGENTCODE eq '017'", 500, 2, ""},
		{"filter ignored", false, "AGENTCODE eq '017'", 0, 1, `the server did not apply the filter "AGENTCODE eq '017'": it answered CUSTOMERS('C0001') with AGENTCODE "023"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			pages := 0
			typ := sandbox.DemoMetadata().EntitySet("CUSTOMERS").Type
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				q := r.URL.Query()
				if got := q.Get("$orderby"); got != "CUSTNAME" {
					t.Errorf("$orderby = %q, want CUSTNAME: pages follow the key", got)
				}
				var top int
				fmt.Sscan(q.Get("$top"), &top)
				var sel []map[string]any
				f, err := odata.ParseFilter(typ, q.Get("$filter"))
				for _, row := range rows {
					if tt.applies && err == nil && !f.Match(row) {
						continue
					}
					sel = append(sel, row)
				}
				sel = sel[:min(top, len(sel))]
				pages++
				w.Header().Set("Content-Type", "application/json")
				json.NewEncoder(w).Encode(map[string]any{"value": sel})
			}))
			defer srv.Close()
			c, err := odata.NewClient(odata.Config{BaseURL: srv.URL + sandbox.BasePath, HTTPClient: srv.Client(), Clock: odatatest.NewClock(time.Now())})
			if err != nil {
				t.Fatal(err)
			}
			read := TargetLookups(c, sandbox.DemoMetadata())
			l := &plan.Lookup{Name: "cust", Entity: "CUSTOMERS", KeyField: "CUSTDES", ValueField: "CUSTNAME", Filter: tt.filter}
			got := map[string]any{}
			err = read(context.Background(), l, func(k, v any) error {
				got[k.(string)] = v
				return nil
			})
			switch {
			case tt.wantErr != "":
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			case err != nil:
				t.Fatal(err)
			}
			if len(got) != tt.wantRows || pages != tt.wantPages {
				t.Errorf("read %d rows in %d pages, want %d in %d", len(got), pages, tt.wantRows, tt.wantPages)
			}
			if tt.filter == "" && got["Name 2499"] != "C2499" {
				t.Errorf("the last row of the second page: %v", got["Name 2499"])
			}
		})
	}
}

// Field-level permissions against the sandbox: a filter on a field the API
// user may not read is ignored (ignored-filters), and the field is missing
// from the answers; the lookup fails naming the filter or the field rather
// than build a table of every row, or of empty values.
func TestTargetLookupsFieldsNotRead(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		hidden  []string
		filter  string
		value   string
		want    map[string]any
		wantErr string
	}{
		{name: "readable", filter: "AGENTCODE eq '017'", value: "CUSTDES",
			want: map[string]any{"C1": "Acme", "C3": "Gamma"}},
		{name: "filter on a field not read", hidden: []string{"CUSTOMERS.AGENTCODE"}, filter: "AGENTCODE eq '017'", value: "CUSTDES",
			wantErr: `the server did not apply the filter "AGENTCODE eq '017'"`},
		{name: "value not read", hidden: []string{"CUSTOMERS.PHONE"}, value: "PHONE",
			wantErr: "CUSTOMERS does not return PHONE on read (a field-level permission)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			// Cold forms too: after a restart the lookup is the first
			// request to CUSTOMERS.
			env := newRestartable(t, sandbox.Options{HiddenFields: tt.hidden, Quirks: map[string]bool{sandbox.QuirkIgnoredFilters: true, sandbox.QuirkColdForms: true}})
			for _, c := range []map[string]any{
				{"CUSTNAME": "C1", "CUSTDES": "Acme", "AGENTCODE": "017", "PHONE": "1"},
				{"CUSTNAME": "C2", "CUSTDES": "Beta", "AGENTCODE": "023", "PHONE": "2"},
				{"CUSTNAME": "C3", "CUSTDES": "Gamma", "AGENTCODE": "017", "PHONE": "3"},
			} {
				if _, err := env.client.Batch(context.Background(), []odata.BatchRequest{{ID: "1", Method: "POST", URL: "CUSTOMERS",
					Body: mustJSON(t, c), Headers: map[string]string{"content-type": "application/json"}}}, BatchOptions); err != nil {
					t.Fatal(err)
				}
			}
			env.restart(t)
			c, err := odata.NewClient(odata.Config{BaseURL: env.srv.URL + sandbox.BasePath, HTTPClient: env.srv.Client(), Clock: odatatest.NewClock(time.Now()),
				Auth: odata.BasicAuth{User: "demo", Password: "demo"}})
			if err != nil {
				t.Fatal(err)
			}
			l := &plan.Lookup{Name: "cust", Entity: "CUSTOMERS", KeyField: "CUSTNAME", ValueField: tt.value, Filter: tt.filter}
			got := map[string]any{}
			err = TargetLookups(c, sandbox.DemoMetadata())(context.Background(), l, func(k, v any) error {
				got[k.(string)] = v
				return nil
			})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q (table %v)", err, tt.wantErr, got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range tt.want {
				if got[k] != v {
					t.Errorf("%s → %v, want %v (table %v)", k, got[k], v, got)
				}
			}
			if len(got) != len(tt.want) {
				t.Errorf("table %v, want %v", got, tt.want)
			}
		})
	}
}
