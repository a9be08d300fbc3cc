package auth

import (
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// testBrowser plays the user's browser: it keeps cookies (the session at
// the authorization server), fills in the login form and follows the
// redirects, to the loopback listener too. Redirects to other hosts (a
// registered HTTPS URI) are not followed: lastRedirect holds the address,
// as the browser's address bar would.
type testBrowser struct {
	t            *testing.T
	client       *http.Client
	user, pass   string
	lastRedirect string
	pages        []string // URLs of the pages that were shown
	formsFilled  int      // login forms the user had to fill in
	tamper       func(u *url.URL)
}

func newTestBrowser(t *testing.T, user, pass string) *testBrowser {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	b := &testBrowser{t: t, user: user, pass: pass}
	b.client = &http.Client{Jar: jar, CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if req.URL.Hostname() != "127.0.0.1" {
			b.lastRedirect = req.URL.String()
			return http.ErrUseLastResponse
		}
		return nil
	}}
	return b
}

// open is the OpenBrowser hook: it runs the whole user side of the login.
func (b *testBrowser) open(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return err
	}
	if b.tamper != nil {
		b.tamper(u)
	}
	resp, err := b.client.Get(u.String())
	if err != nil {
		return err
	}
	for range 3 {
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		b.pages = append(b.pages, resp.Request.URL.String())
		action, fields, ok := findForm(string(body))
		if !ok {
			if resp.StatusCode >= 400 {
				return fmt.Errorf("%s: HTTP %d: %s", resp.Request.URL, resp.StatusCode, strings.TrimSpace(string(body)))
			}
			return nil
		}
		b.formsFilled++
		fields.Set("username", b.user)
		fields.Set("password", b.pass)
		target, err := resp.Request.URL.Parse(action)
		if err != nil {
			return err
		}
		resp, err = b.client.PostForm(target.String(), fields)
		if err != nil {
			return err
		}
	}
	resp.Body.Close()
	return fmt.Errorf("still a login form after 3 tries")
}

// findForm returns the first form's action and its input fields.
func findForm(page string) (action string, fields url.Values, ok bool) {
	z := html.NewTokenizer(strings.NewReader(page))
	fields = url.Values{}
	for {
		switch z.Next() {
		case html.ErrorToken:
			return action, fields, ok
		case html.StartTagToken, html.SelfClosingTagToken:
			tok := z.Token()
			attr := func(k string) string {
				for _, a := range tok.Attr {
					if a.Key == k {
						return a.Val
					}
				}
				return ""
			}
			switch tok.Data {
			case "form":
				if ok {
					return action, fields, ok // only the first form
				}
				action, ok = attr("action"), true
			case "input":
				if name := attr("name"); name != "" {
					fields.Set(name, attr("value"))
				}
			}
		}
	}
}
