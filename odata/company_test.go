package odata

import (
	"context"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestCompanyURL(t *testing.T) {
	t.Parallel()
	tests := []struct {
		base, company, want, err string
	}{
		{"https://erp.example.com/odata/Priority/tabula.ini/demo", "test", "https://erp.example.com/odata/Priority/tabula.ini/test", ""},
		{"https://erp.example.com/odata/Priority/tabula.ini,2/demo/", "prod", "https://erp.example.com/odata/Priority/tabula.ini,2/prod", ""},
		{"https://erp.example.com/odata/Priority/tabula.ini/demo", "a/b", "", `company "a/b"`},
		{"https://erp.example.com/odata/Priority/tabula.ini/demo", "", "", `company ""`},
		{"erp.example.com/demo", "test", "", "absolute URL"},
	}
	for _, tt := range tests {
		got, err := CompanyURL(tt.base, tt.company)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("CompanyURL(%q, %q) = %q, %v; want an error with %q", tt.base, tt.company, got, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("CompanyURL(%q, %q) = %q, %v; want %q", tt.base, tt.company, got, err, tt.want)
		}
		if c := CompanyOf(got); c != tt.company {
			t.Errorf("CompanyOf(%q) = %q", got, c)
		}
	}
}

// A client of another company addresses that company and spends the same
// budget: three calls at 60 a minute wait twice, whichever company they go
// to.
func TestClientForCompanySharesThePace(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var paths []string
	srv, _ := newServer(t, func(w http.ResponseWriter, r *http.Request, _ []byte) {
		mu.Lock()
		paths = append(paths, r.URL.Path)
		mu.Unlock()
		w.WriteHeader(204)
	})
	demo, clk := newTestClient(t, srv, func(cfg *Config) { cfg.CallsPerMinute = 60 })
	test, err := demo.ForCompany("test")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []*Client{demo, test, demo} {
		if err := c.Get(context.Background(), "X", Query{}, nil); err != nil {
			t.Fatal(err)
		}
	}
	if got := clk.Sleeps(); !reflect.DeepEqual(got, []time.Duration{time.Second, time.Second}) {
		t.Errorf("sleeps = %v, want one budget across companies", got)
	}
	want := []string{"/odata/Priority/tabula.ini/demo/X", "/odata/Priority/tabula.ini/test/X", "/odata/Priority/tabula.ini/demo/X"}
	if !reflect.DeepEqual(paths, want) {
		t.Errorf("paths = %v, want %v", paths, want)
	}
}
