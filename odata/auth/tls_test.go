package auth

import (
	"encoding/pem"
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestHTTPClientCustomCA(t *testing.T) {
	t.Parallel()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte("hello"))
	}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake is expected
	srv.StartTLS()
	defer srv.Close()
	dir := t.TempDir()
	caFile := filepath.Join(dir, "ca.pem")
	data := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	if err := os.WriteFile(caFile, data, 0o644); err != nil {
		t.Fatal(err)
	}

	withCA, err := HTTPClient(caFile, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := withCA.Get(srv.URL)
	if err != nil {
		t.Fatalf("with the CA: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("with the CA: HTTP %d", resp.StatusCode)
	}
	if withCA.Timeout != 5*time.Second {
		t.Errorf("timeout = %v", withCA.Timeout)
	}

	without, err := HTTPClient("", 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := without.Get(srv.URL); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("without the CA: %v, want a certificate error", err)
	}
}

func TestHTTPClientBadCAFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	notPEM := filepath.Join(dir, "ca.txt")
	if err := os.WriteFile(notPEM, []byte("not a certificate"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, file, want string }{
		{"missing", filepath.Join(dir, "nope.pem"), "cannot read the CA certificate file"},
		{"not PEM", notPEM, "no PEM certificate found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := HTTPClient(tc.file, 0)
			if c != nil || !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.file) {
				t.Errorf("HTTPClient = %v, %v; want ErrConfig naming the file and saying %q", c, err, tc.want)
			}
		})
	}
}
