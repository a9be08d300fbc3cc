// Package authtest plays the user's side of the OIDC login in tests: a
// browser that keeps the authorization server's session cookie, fills in its
// login form and follows the redirect to the tool's loopback listener. The
// auth package's tests and the command line's use it.
package authtest

import (
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"

	"golang.org/x/net/html"
)

// Browser plays the user's browser: it keeps cookies (the session at
// the authorization server), fills in the login form and follows the
// redirects, to the loopback listener too. Redirects to other hosts (a
// registered HTTPS URI) are not followed: lastRedirect holds the address,
// as the browser's address bar would.
type Browser struct {
	client       *http.Client
	User, Pass   string
	LastRedirect string
	Pages        []string // URLs of the pages that were shown
	FormsFilled  int      // login forms the user had to fill in
	// Tamper, when set, changes the authorize address before it is opened.
	Tamper func(u *url.URL)
}

// NewBrowser returns a browser that logs in as user with pass.
func NewBrowser(user, pass string) *Browser {
	jar, _ := cookiejar.New(nil) // never fails without options
	b := &Browser{User: user, Pass: pass}
	b.client = &http.Client{Jar: jar, CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if req.URL.Hostname() != "127.0.0.1" {
			b.LastRedirect = req.URL.String()
			return http.ErrUseLastResponse
		}
		return nil
	}}
	return b
}

// Open is the OpenBrowser hook: it runs the whole user side of the login.
func (b *Browser) Open(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return err
	}
	if b.Tamper != nil {
		b.Tamper(u)
	}
	resp, err := b.client.Get(u.String())
	if err != nil {
		return err
	}
	for range 3 {
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		b.Pages = append(b.Pages, resp.Request.URL.String())
		action, fields, ok := findForm(string(body))
		if !ok {
			if resp.StatusCode >= 400 {
				return fmt.Errorf("%s: HTTP %d: %s", resp.Request.URL, resp.StatusCode, strings.TrimSpace(string(body)))
			}
			return nil
		}
		b.FormsFilled++
		fields.Set("username", b.User)
		fields.Set("password", b.Pass)
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
