package auth

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/migrate-tool/migrate/internal/atomicfile"
)

// Token is an OIDC access token for one target, as Login returns it and the
// cache holds it. It prints redacted and has no exported secret field; the
// cache file holds the access token, never the client secret or id token.
type Token struct {
	Target string
	Expiry time.Time // zero: the server gave no lifetime
	access secret
	id     secret
}

// NewToken returns a bearer token for target.
func NewToken(target, accessToken string, expiry time.Time) *Token {
	return &Token{Target: target, Expiry: expiry, access: newSecret(accessToken)}
}

// AccessToken is the bearer token itself: send it, never print it.
func (t *Token) AccessToken() string { return t.access.get() }

// IDToken is the OIDC id_token of the login ("" for a cached token).
func (t *Token) IDToken() string { return t.id.get() }

// Expired reports whether the token has expired at now.
func (t *Token) Expired(now time.Time) bool {
	return !t.Expiry.IsZero() && !now.Before(t.Expiry)
}

// Authenticator returns a BearerAuth for the token.
func (t *Token) Authenticator(now func() time.Time) *BearerAuth {
	return NewBearerAuth(t.AccessToken(), t.Expiry, t.Target, now)
}

func (t *Token) String() string {
	exp := "none"
	if !t.Expiry.IsZero() {
		exp = t.Expiry.UTC().Format(time.RFC3339)
	}
	return fmt.Sprintf("auth.Token{Target: %q, AccessToken: %s, Expiry: %s}", t.Target, redacted, exp)
}

// GoString is the same redacted text as String.
func (t *Token) GoString() string { return t.String() }

// Format prints the redacted form for every verb.
func (t *Token) Format(f fmt.State, _ rune) { redact(f, t.String()) }

// cacheFile is the on-disk form: what a later run needs, nothing more.
type cacheFile struct {
	Target      string    `json:"target"`
	AccessToken string    `json:"access_token"`
	TokenType   string    `json:"token_type"`
	Expiry      time.Time `json:"expiry,omitzero"`
}

// DefaultCacheDir is os.UserConfigDir()/migrate/tokens.
func DefaultCacheDir() (string, error) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", &Error{Kind: ErrCache, Message: "cannot find the user configuration directory for the token cache; set HOME (or XDG_CONFIG_HOME)", Err: err}
	}
	return filepath.Join(dir, "migrate", "tokens"), nil
}

func cacheDirOr(dir string) (string, error) {
	if dir != "" {
		return dir, nil
	}
	return DefaultCacheDir()
}

// normalizeTarget makes "https://h/x/" and "https://h/x" the same target.
func normalizeTarget(target string) string { return strings.TrimRight(strings.TrimSpace(target), "/") }

// CachePath is the token file for target in dir ("" for DefaultCacheDir):
// DIR/<sha256 of the target URL, hex>.json.
func CachePath(dir, target string) (string, error) {
	dir, err := cacheDirOr(dir)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(normalizeTarget(target)))
	return filepath.Join(dir, hex.EncodeToString(sum[:])+".json"), nil
}

// SaveToken writes tok to the cache in dir ("" for the default): the folder
// with mode 0700, the file with 0600, through a temporary file renamed into
// place so a reader never sees half a token.
func SaveToken(dir string, tok *Token) error {
	path, err := CachePath(dir, tok.Target)
	if err != nil {
		return err
	}
	folder := filepath.Dir(path)
	if err := os.MkdirAll(folder, 0o700); err != nil {
		return &Error{Kind: ErrCache, Message: fmt.Sprintf("cannot create the token cache folder %s", folder), Err: err}
	}
	// MkdirAll leaves an existing folder as it is: tighten it, it is ours.
	if err := os.Chmod(folder, 0o700); err != nil {
		return &Error{Kind: ErrCache, Message: fmt.Sprintf("cannot restrict the token cache folder %s to its owner", folder), Err: err}
	}
	data, err := json.MarshalIndent(cacheFile{
		Target:      normalizeTarget(tok.Target),
		AccessToken: tok.AccessToken(),
		TokenType:   "Bearer",
		Expiry:      tok.Expiry.UTC(),
	}, "", "  ")
	if err != nil {
		return &Error{Kind: ErrCache, Message: "cannot encode the token", Err: err}
	}
	if err := atomicfile.WriteFile(path, append(data, '\n'), 0o600); err != nil {
		return &Error{Kind: ErrCache, Message: fmt.Sprintf("cannot write the token cache %s", path), Err: err}
	}
	return nil
}

// LoadToken reads the cached token for target from dir ("" for the default).
// It returns (nil, nil) when there is none. An expired token is returned as
// it is; the caller decides (Resolve refuses it with ErrExpired).
func LoadToken(dir, target string) (*Token, error) {
	path, err := CachePath(dir, target)
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, &Error{Kind: ErrCache, Message: fmt.Sprintf("cannot read the token cache %s", path), Target: target, Err: err}
	}
	return decodeCache(path, target, data)
}

// decodeCache checks a cache file's content. Its errors name the file and
// never quote its content, which holds a token.
func decodeCache(path, target string, data []byte) (*Token, error) {
	var f cacheFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, newError(ErrCache, "%s: the token cache is damaged (not JSON); run `migrate login` again, or `migrate logout` to remove it", path)
	}
	if f.AccessToken == "" {
		return nil, newError(ErrCache, "%s: the token cache holds no access token; run `migrate login` again", path)
	}
	// A saved artefact refuses to be used against something else
	// (docs/conventions.md, Persistence).
	if normalizeTarget(f.Target) != normalizeTarget(target) {
		return nil, newError(ErrCache, "%s: the cached token is for %q, not %q; run `migrate login` for this target", path, f.Target, normalizeTarget(target))
	}
	if f.TokenType != "" && !strings.EqualFold(f.TokenType, "Bearer") {
		return nil, newError(ErrCache, "%s: the cached token is of type %q, want Bearer; run `migrate login` again", path, f.TokenType)
	}
	return NewToken(f.Target, f.AccessToken, f.Expiry), nil
}

// Logout removes the cached token for target from dir ("" for the default).
// It reports whether there was one.
func Logout(target, dir string) (removed bool, err error) {
	path, err := CachePath(dir, target)
	if err != nil {
		return false, err
	}
	err = os.Remove(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, &Error{Kind: ErrCache, Message: fmt.Sprintf("cannot remove the token cache %s", path), Target: target, Err: err}
	}
	return true, nil
}
