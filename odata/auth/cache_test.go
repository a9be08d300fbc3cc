package auth

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestCacheFileModes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		prepare func(dir string) // the folder as it was before the first save
	}{
		{"new folder", func(string) {}},
		{"existing folder open to all", func(dir string) {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(dir, 0o777); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(t.TempDir(), "migrate", "tokens")
			tc.prepare(dir)
			tok := NewToken("https://erp.example.com/odata/", "access-1", fixedNow)
			if err := SaveToken(dir, tok); err != nil {
				t.Fatal(err)
			}
			fi, err := os.Stat(dir)
			if err != nil || fi.Mode().Perm() != 0o700 {
				t.Fatalf("folder mode = %v (%v), want 0700", fi.Mode().Perm(), err)
			}
			path, _ := CachePath(dir, tok.Target)
			fi, err = os.Stat(path)
			if err != nil || fi.Mode().Perm() != 0o600 {
				t.Fatalf("file mode = %v (%v), want 0600", fi.Mode().Perm(), err)
			}
			// Replaced atomically: a second save leaves one file and no temporaries.
			tok = NewToken(tok.Target, "access-2", tok.Expiry)
			if err := SaveToken(dir, tok); err != nil {
				t.Fatal(err)
			}
			entries, _ := os.ReadDir(dir)
			if len(entries) != 1 || entries[0].Name() != filepath.Base(path) {
				t.Errorf("folder holds %v, want only %s", entries, filepath.Base(path))
			}
			fi, _ = os.Stat(path)
			if fi.Mode().Perm() != 0o600 {
				t.Errorf("file mode after replace = %v, want 0600", fi.Mode().Perm())
			}
			got, err := LoadToken(dir, "https://erp.example.com/odata") // no trailing slash: same target
			if err != nil || got == nil || got.AccessToken() != "access-2" || !got.Expiry.Equal(fixedNow) {
				t.Fatalf("LoadToken = %v, %v", got, err)
			}
		})
	}
}

func TestCachePathIsSHA256OfTarget(t *testing.T) {
	t.Parallel()
	p, err := CachePath("/x", "https://erp.example.com/odata")
	// echo -n https://erp.example.com/odata | sha256sum
	want := filepath.Join("/x", "c7cd7eb3633def700b37d41f946f6e9d635a9911567b12ec4e9bf089be76736b.json")
	if err != nil || p != want {
		t.Fatalf("CachePath = %q, %v; want %q", p, err, want)
	}
	q, _ := CachePath("/x", "https://erp.example.com/other")
	if p == q {
		t.Errorf("two targets share %s", p)
	}
	if d, err := DefaultCacheDir(); err == nil && !strings.HasSuffix(d, filepath.Join("migrate", "tokens")) {
		t.Errorf("DefaultCacheDir = %q, want .../migrate/tokens", d)
	}
}

func TestLoadTokenRefusals(t *testing.T) {
	t.Parallel()
	const target = "https://erp.example.com/odata"
	for _, tc := range []struct {
		name    string
		content string
		wantMsg string
	}{
		{"not JSON", `{"access_token": "secret-in-damaged-file`, "damaged (not JSON)"},
		{"no token", `{"target": "https://erp.example.com/odata"}`, "holds no access token"},
		{"other target", `{"target": "https://other.example.com/odata", "access_token": "secret-of-other"}`, `is for "https://other.example.com/odata"`},
		{"not bearer", `{"target": "https://erp.example.com/odata", "access_token": "a", "token_type": "mac"}`, `of type "mac"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			path, _ := CachePath(dir, target)
			if err := os.WriteFile(path, []byte(tc.content), 0o600); err != nil {
				t.Fatal(err)
			}
			tok, err := LoadToken(dir, target)
			if tok != nil || !errors.Is(err, ErrCache) || !strings.Contains(err.Error(), tc.wantMsg) || !strings.Contains(err.Error(), path) {
				t.Fatalf("LoadToken = %v, %v; want ErrCache naming %s and saying %q", tok, err, path, tc.wantMsg)
			}
			if strings.Contains(err.Error(), "secret-") {
				t.Errorf("error quotes the file's token: %v", err)
			}
		})
	}
}

func TestLogout(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const target = "https://erp.example.com/odata"
	if removed, err := Logout(target, dir); removed || err != nil {
		t.Fatalf("Logout without a token = %v, %v; want false, nil", removed, err)
	}
	if err := SaveToken(dir, NewToken(target, "a", fixedNow.Add(time.Hour))); err != nil {
		t.Fatal(err)
	}
	if err := SaveToken(dir, NewToken(target+"/other", "b", time.Time{})); err != nil {
		t.Fatal(err)
	}
	if removed, err := Logout(target, dir); !removed || err != nil {
		t.Fatalf("Logout = %v, %v; want true, nil", removed, err)
	}
	if tok, err := LoadToken(dir, target); tok != nil || err != nil {
		t.Errorf("after logout LoadToken = %v, %v; want none", tok, err)
	}
	if tok, _ := LoadToken(dir, target+"/other"); tok == nil {
		t.Errorf("logout removed another target's token")
	}
	// After logout, Resolve no longer finds a token.
	if _, _, err := Resolve(ResolveOptions{Flag: "oidc", Target: target, CacheDir: dir, Env: emptyEnv}); !errors.Is(err, ErrNotLoggedIn) {
		t.Errorf("Resolve after logout: %v, want ErrNotLoggedIn", err)
	}
}
