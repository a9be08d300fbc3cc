package auth

import (
	"context"
	"errors"
	"io"
	"net/url"
	"strings"
	"testing"
)

// The cache file is read back from disk, where anything may have been
// written: decoding never panics, and an error never quotes the content.
func FuzzDecodeCache(f *testing.F) {
	f.Add([]byte(`{"target":"https://erp.example.com/odata","access_token":"a","token_type":"Bearer","expiry":"2026-03-01T09:00:00Z"}`))
	f.Add([]byte(`{"target":"https://erp.example.com/odata","access_token":"a"}`))
	f.Add([]byte(`{"target":"x","access_token":""}`))
	f.Add([]byte(`not json`))
	f.Fuzz(func(t *testing.T, data []byte) {
		const target = "https://erp.example.com/odata"
		tok, err := decodeCache("cache.json", target, data)
		if (tok == nil) == (err == nil) {
			t.Fatalf("decodeCache = %v, %v: want exactly one", tok, err)
		}
		if err != nil {
			if !errors.Is(err, ErrCache) || !strings.HasPrefix(err.Error(), "cache.json: ") {
				t.Fatalf("error %q: want ErrCache naming the file", err)
			}
			return
		}
		if tok.AccessToken() == "" || normalizeTarget(tok.Target) != target {
			t.Fatalf("accepted %v without a token for the target", tok)
		}
	})
}

// What the user pastes is untrusted: parsing never panics, and a pasted
// address is accepted only with this login's state.
func FuzzPasted(f *testing.F) {
	f.Add("https://app.example.com/callback?code=abc&state=S")
	f.Add("https://app.example.com/callback?code=abc&state=other")
	f.Add("?code=abc&state=S")
	f.Add("abc")
	f.Add("https://app.example.com/callback?error=access_denied&error_description=no&state=S")
	f.Add("code=%zz")
	f.Add("")
	f.Fuzz(func(t *testing.T, pasted string) {
		code, err := readPasted(context.Background(), strings.NewReader(pasted+"\n"), io.Discard, "S")
		if (code == "") == (err == nil) {
			t.Fatalf("readPasted(%q) = %q, %v: want exactly one", pasted, code, err)
		}
		if err != nil {
			return
		}
		line := strings.TrimSpace(strings.SplitN(pasted, "\n", 2)[0]) // only the first line is read
		if i := strings.IndexByte(line, '?'); i >= 0 && strings.Contains(line, "code=") {
			q, perr := url.ParseQuery(strings.SplitN(line[i+1:], "#", 2)[0])
			if perr == nil && q.Get("state") != "S" {
				t.Fatalf("accepted %q whose state is %q", pasted, q.Get("state"))
			}
		}
	})
}
