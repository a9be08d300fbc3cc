package auth

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/migrate-tool/migrate/internal/atomicfile"
)

// Hosts the user approved: a plan or a journal from
// someone else names an address, and the credentials of this shell's
// environment must not follow it there. Credentials go to the host of
// MIGRATE_TARGET or --target (the CLI decides that), the hosts of the
// login cache (the user logged in there), and hosts approved once, kept in
// a file beside the login cache: one host a line.

// trustedHostsFile is the name of the approved hosts' file, beside the
// token cache's folder.
const trustedHostsFile = "trusted-hosts"

// TrustedHostsPath is the file of approved hosts for the token cache in dir
// ("" for the default): DIR/../trusted-hosts, os.UserConfigDir()/migrate/
// trusted-hosts by default.
func TrustedHostsPath(dir string) (string, error) {
	dir, err := cacheDirOr(dir)
	if err != nil {
		return "", err
	}
	return filepath.Join(filepath.Dir(dir), trustedHostsFile), nil
}

// Host is the host of a service URL as approvals name it: the host name in
// lower case, with its port when the URL gives one ("erp.example.com",
// "127.0.0.1:8080", "[::1]:8080"). "" when the URL has no host.
func Host(serviceURL string) string {
	u, err := url.Parse(strings.TrimSpace(serviceURL))
	if err != nil || u.Hostname() == "" {
		return ""
	}
	h := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	if p := u.Port(); p != "" {
		return net.JoinHostPort(h, p)
	}
	if strings.Contains(h, ":") {
		return "[" + h + "]"
	}
	return h
}

// NormalizeHost reads a host as the user writes it (--trust-host, the
// approved hosts' file): a host name or address, with or without a port;
// a URL is taken for its host. It returns "" for what is no host.
func NormalizeHost(s string) string {
	s = strings.TrimSpace(s)
	if s == "" || strings.ContainsAny(s, " \t/?#@") && !strings.Contains(s, "://") {
		return ""
	}
	if strings.Contains(s, "://") {
		return Host(s)
	}
	return Host("https://" + s)
}

// HostApproved reports whether approved (hosts as NormalizeHost gives
// them) holds the host of serviceURL: the same host name with no port
// (any port of it) or with the URL's port, the scheme's default when the
// URL gives none.
func HostApproved(approved []string, serviceURL string) bool {
	u, err := url.Parse(strings.TrimSpace(serviceURL))
	if err != nil || u.Hostname() == "" {
		return false
	}
	name := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[strings.ToLower(u.Scheme)]
	}
	for _, a := range approved {
		h, p, err := net.SplitHostPort(a)
		if err != nil {
			h, p = strings.Trim(a, "[]"), ""
		}
		if h == name && (p == "" || p == port) {
			return true
		}
	}
	return false
}

// TrustedHosts is every host the user approved on this machine: those of
// the approved hosts' file, then the hosts of the tokens in the login
// cache (dir, "" for the default). A cache that cannot be read approves
// nothing: a missing folder is no error.
func TrustedHosts(dir string) ([]string, error) {
	path, err := TrustedHostsPath(dir)
	if err != nil {
		return nil, err
	}
	hosts, err := readTrustedHosts(path)
	if err != nil {
		return nil, err
	}
	cache, err := cacheDirOr(dir)
	if err != nil {
		return nil, err
	}
	files, _ := filepath.Glob(filepath.Join(cache, "*.json"))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		var c cacheFile
		if json.Unmarshal(data, &c) != nil || c.AccessToken == "" {
			continue
		}
		if h := Host(c.Target); h != "" {
			hosts = append(hosts, h)
		}
	}
	return hosts, nil
}

func readTrustedHosts(path string) ([]string, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, &Error{Kind: ErrCache, Message: fmt.Sprintf("cannot read the approved hosts %s", path), Err: err}
	}
	var hosts []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if h := NormalizeHost(line); h != "" {
			hosts = append(hosts, h)
		}
	}
	return hosts, nil
}

// TrustHost remembers host (as NormalizeHost reads it) as approved, in the
// file beside the login cache in dir ("" for the default): the folder 0700,
// the file 0600, written whole through a temporary file renamed into place.
func TrustHost(dir, host string) error {
	h := NormalizeHost(host)
	if h == "" {
		return newError(ErrConfig, "%q is no host name: give a host such as erp.example.com or erp.example.com:8443", host)
	}
	path, err := TrustedHostsPath(dir)
	if err != nil {
		return err
	}
	hosts, err := readTrustedHosts(path)
	if err != nil {
		return err
	}
	if slices.Contains(hosts, h) {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return &Error{Kind: ErrCache, Message: fmt.Sprintf("cannot create the folder of the approved hosts %s", filepath.Dir(path)), Err: err}
	}
	var b strings.Builder
	b.WriteString("# Hosts migrate may send this machine's credentials to (migrate --trust-host).\n")
	for _, x := range append(hosts, h) {
		b.WriteString(x + "\n")
	}
	if err := atomicfile.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		return &Error{Kind: ErrCache, Message: fmt.Sprintf("cannot write the approved hosts %s", path), Err: err}
	}
	return nil
}
