package auth

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"os"
	"time"

	"github.com/migrate-tool/migrate/odata"
)

// HTTPClient returns a client that always verifies the server's certificate.
// caCertFile, when not empty, is a PEM file of CA certificates added to the
// system pool, for on-premise servers whose certificate comes from their own
// CA. timeout 0 means no overall timeout.
func HTTPClient(caCertFile string, timeout time.Duration) (*http.Client, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if caCertFile != "" {
		pem, err := os.ReadFile(caCertFile)
		if err != nil {
			return nil, &Error{Kind: ErrConfig, Message: fmt.Sprintf("cannot read the CA certificate file %s", caCertFile), Err: err}
		}
		pool, err := x509.SystemCertPool()
		if err != nil || pool == nil {
			// No system pool (some minimal containers): the custom CA alone.
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, newError(ErrConfig, "%s: no PEM certificate found; give a file with one or more \"-----BEGIN CERTIFICATE-----\" blocks", caCertFile)
		}
		cfg.RootCAs = pool
	}
	tr.TLSClientConfig = cfg
	return &http.Client{Transport: tr, Timeout: timeout, CheckRedirect: odata.CheckRedirect}, nil
}
