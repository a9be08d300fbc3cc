package auth

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

func TestHostApproved(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		approved []string
		url      string
		want     bool
	}{
		{[]string{"erp.example.com"}, "https://erp.example.com/odata/Priority/tabula.ini/a", true},
		{[]string{"erp.example.com"}, "https://ERP.Example.com.:8443/odata", true}, // any port of the host
		{[]string{"erp.example.com:443"}, "https://erp.example.com/odata", true},   // the scheme's port
		{[]string{"erp.example.com:443"}, "http://erp.example.com/odata", false},
		{[]string{"127.0.0.1:8080"}, "http://127.0.0.1:8081/odata", false},
		{[]string{"127.0.0.1:8080"}, "http://127.0.0.1:8080/odata", true},
		{[]string{"[::1]:8080"}, "http://[::1]:8080/odata", true},
		{[]string{"[::1]"}, "http://[::1]:9/odata", true},
		{[]string{"erp.example.com"}, "https://erp.example.com.evil.test/odata", false},
		{[]string{"erp.example.com"}, "https://evil.test/erp.example.com", false},
		{[]string{"erp.example.com"}, "https://erp.example.com@evil.test/odata", false},
		{nil, "https://erp.example.com/odata", false},
		{[]string{""}, "not a url", false},
	} {
		var norm []string
		for _, a := range c.approved {
			norm = append(norm, NormalizeHost(a))
		}
		if got := HostApproved(norm, c.url); got != c.want {
			t.Errorf("HostApproved(%q, %q) = %v, want %v", c.approved, c.url, got, c.want)
		}
	}
}

func TestNormalizeHost(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"ERP.example.com":                        "erp.example.com",
		" erp.example.com:8443 ":                 "erp.example.com:8443",
		"https://erp.example.com:8443/odata/x":   "erp.example.com:8443",
		"http://user:pw@erp.example.com/odata/x": "erp.example.com",
		"::1":                                    "",
		"[::1]:80":                               "[::1]:80",
		"erp.example.com/odata":                  "",
		"user@erp.example.com":                   "",
		"":                                       "",
		"erp.example.com:port":                   "",
	} {
		if got := NormalizeHost(in); got != want {
			t.Errorf("NormalizeHost(%q) = %q, want %q", in, got, want)
		}
	}
}

// Approvals are remembered beside the token cache, 0600, once each; the
// hosts of cached tokens are approved too.
func TestTrustHost(t *testing.T) {
	t.Parallel()
	cache := filepath.Join(t.TempDir(), "migrate", "tokens")
	if hosts, err := TrustedHosts(cache); err != nil || len(hosts) != 0 {
		t.Fatalf("nothing approved yet: %v, %v", hosts, err)
	}
	for _, h := range []string{"ERP.example.com", "erp.example.com", "127.0.0.1:8080"} {
		if err := TrustHost(cache, h); err != nil {
			t.Fatal(err)
		}
	}
	if err := TrustHost(cache, "a b"); err == nil {
		t.Error("TrustHost accepted a host with a space")
	}
	path, _ := TrustedHostsPath(cache)
	if path != filepath.Join(filepath.Dir(cache), "trusted-hosts") {
		t.Errorf("path %s, want beside the token cache", path)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if m := fi.Mode().Perm(); m != 0o600 && os.PathSeparator == '/' {
		t.Errorf("mode %v, want 0600", m)
	}
	if err := SaveToken(cache, NewToken("https://sso.example.com:9443/odata/Priority/tabula.ini/a", "tok", time.Time{})); err != nil {
		t.Fatal(err)
	}
	hosts, err := TrustedHosts(cache)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"erp.example.com", "127.0.0.1:8080", "sso.example.com:9443"}; !slices.Equal(hosts, want) {
		t.Errorf("trusted hosts %q, want %q", hosts, want)
	}
}
