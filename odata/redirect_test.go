package odata

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

func TestCheckRedirect(t *testing.T) {
	t.Parallel()
	tests := []struct {
		from, to string
		ok       bool
		reason   string
	}{
		{"https://erp.example.com/odata/a", "https://erp.example.com/odata/b", true, ""},
		{"http://127.0.0.1:8099/odata/a", "http://127.0.0.1:8099/odata/b", true, ""},
		{"http://erp.example.com/odata/a", "https://erp.example.com/odata/a", true, ""},
		{"https://erp.example.com/odata/a", "http://erp.example.com/odata/a", false, "clear text"},
		{"https://erp.example.com/odata/a", "https://evil.example.net/odata/a", false, "another origin"},
		{"https://erp.example.com/odata/a", "https://erp.example.com:8443/odata/a", false, "another origin"},
		{"http://erp.example.com/odata/a", "https://other.example.com/odata/a", false, "another origin"},
	}
	for _, tt := range tests {
		from, _ := url.Parse(tt.from)
		to, _ := url.Parse(tt.to)
		err := CheckRedirect(&http.Request{URL: to}, []*http.Request{{URL: from}})
		if tt.ok != (err == nil) {
			t.Errorf("%s -> %s: err = %v, want ok=%v", tt.from, tt.to, err, tt.ok)
			continue
		}
		if err != nil && !strings.Contains(err.Error(), tt.reason) {
			t.Errorf("%s -> %s: %q does not say %q", tt.from, tt.to, err, tt.reason)
		}
	}
}

// A 307 to another origin must not reach it: the other server would get
// the credentials and the application key.
func TestClientRefusesRedirectToAnotherOrigin(t *testing.T) {
	t.Parallel()
	other, otherLog := newServer(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		writeJSONAnswer(w, 200, map[string]any{"value": []any{}})
	})
	srv, log := newServer(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		http.Redirect(w, r, other.URL+r.URL.Path, http.StatusTemporaryRedirect)
	})
	c, _ := newTestClient(t, srv, func(cfg *Config) { cfg.AppID, cfg.AppKey = "app", "app-key-secret" })
	for _, call := range []func() error{
		func() error { return c.Get(context.Background(), "CUSTOMERS", Query{}, nil) },
		func() error { return c.Post(context.Background(), "CUSTOMERS", []byte(`{"CUSTNAME":"C1"}`), nil) },
	} {
		err := call()
		var re *RedirectError
		if !errors.As(err, &re) {
			t.Fatalf("err = %v, want a RedirectError", err)
		}
		var doubt *InDoubtError
		if errors.As(err, &doubt) {
			t.Errorf("a refused redirect is not in doubt: %v", err)
		}
		if strings.Contains(err.Error(), testPassword) || strings.Contains(err.Error(), "app-key-secret") {
			t.Errorf("secret in the error: %v", err)
		}
	}
	if n := len(otherLog()); n != 0 {
		t.Errorf("the other origin got %d requests, want 0", n)
	}
	if n := len(log()); n != 2 {
		t.Errorf("the target got %d requests, want 2 (a refused redirect is not retried)", n)
	}
}

func TestClientFollowsRedirectOnSameOrigin(t *testing.T) {
	t.Parallel()
	srv, _ := newServer(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		if strings.HasSuffix(r.URL.Path, "/OLD") {
			http.Redirect(w, r, strings.TrimSuffix(r.URL.Path, "OLD")+"CUSTOMERS", http.StatusTemporaryRedirect)
			return
		}
		if r.Header.Get("Authorization") == "" {
			w.WriteHeader(401)
			return
		}
		writeJSONAnswer(w, 200, map[string]any{"value": []any{}})
	})
	c, _ := newTestClient(t, srv, nil)
	if err := c.Get(context.Background(), "OLD", Query{}, nil); err != nil {
		t.Fatal(err)
	}
}

func TestCleartextCredentials(t *testing.T) {
	t.Parallel()
	for target, want := range map[string]bool{
		"http://127.0.0.1:8099/odata/Priority/tabula.ini/demo": false,
		"http://localhost:8099/odata":                          false,
		"http://[::1]:8099/odata":                              false,
		"https://erp.example.com/odata":                        false,
		"http://erp.example.com/odata":                         true,
		"http://10.0.0.5/odata":                                true,
	} {
		if got := CleartextCredentials(target); got != want {
			t.Errorf("CleartextCredentials(%q) = %v, want %v", target, got, want)
		}
	}
}

func TestRedactURL(t *testing.T) {
	t.Parallel()
	got := RedactURL("https://api:s3cret@erp.example.com/odata/Priority/tabula.ini/demo")
	if strings.Contains(got, "s3cret") || !strings.Contains(got, "erp.example.com") {
		t.Errorf("RedactURL = %q", got)
	}
	if got := RedactURL("not a url %%"); got != "not a url %%" {
		t.Errorf("RedactURL changed non-URL text: %q", got)
	}
}
