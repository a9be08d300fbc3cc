package authtest

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"time"
)

// TokenServer is an OAuth2 token endpoint of the client credentials grant
// (RFC 6749 section 4.4) and the service's side of it: ServeHTTP issues
// tokens to the one client it knows, Guard lets through only requests
// that carry one of them, still valid. A token expires after TTL by Now,
// or, when Uses is set, after it has let that many requests through: the
// service then answers 401 invalid_token, as a real one does with a token
// whose time is over.
type TokenServer struct {
	ClientID, Secret string
	// TTL is the lifetime issued (expires_in); 0: none is given and only
	// Uses ends a token.
	TTL  time.Duration
	Uses int
	Now  func() time.Time // nil: time.Now

	mu      sync.Mutex
	tokens  map[string]*issued
	issued  int
	refused int      // requests Guard refused
	scopes  []string // the scope of each token request
}

type issued struct {
	expires time.Time
	uses    int
}

func (s *TokenServer) now() time.Time {
	if s.Now == nil {
		return time.Now()
	}
	return s.Now()
}

// Issued is how many tokens were issued.
func (s *TokenServer) Issued() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.issued
}

// Refused is how many requests Guard refused.
func (s *TokenServer) Refused() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.refused
}

// Scopes are the scope parameters of the token requests, in order.
func (s *TokenServer) Scopes() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.scopes...)
}

// ServeHTTP is the token endpoint: POST, a form with grant_type
// client_credentials, the client's id and secret as a Basic header or in
// the form.
func (s *TokenServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		tokenError(w, http.StatusMethodNotAllowed, "invalid_request", "use POST")
		return
	}
	if err := r.ParseForm(); err != nil {
		tokenError(w, http.StatusBadRequest, "invalid_request", "malformed form body")
		return
	}
	id, secret := r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	if u, p, ok := r.BasicAuth(); ok {
		id, secret = u, p
	}
	if id != s.ClientID || subtle.ConstantTimeCompare([]byte(secret), []byte(s.Secret)) != 1 {
		w.Header().Set("WWW-Authenticate", `Basic realm="token"`)
		tokenError(w, http.StatusUnauthorized, "invalid_client", "unknown client or wrong client secret")
		return
	}
	if g := r.PostForm.Get("grant_type"); g != "client_credentials" {
		tokenError(w, http.StatusBadRequest, "unsupported_grant_type", "grant_type must be client_credentials")
		return
	}
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	tok := base64.RawURLEncoding.EncodeToString(b)
	s.mu.Lock()
	if s.tokens == nil {
		s.tokens = map[string]*issued{}
	}
	it := &issued{}
	if s.TTL > 0 {
		it.expires = s.now().Add(s.TTL)
	}
	s.tokens[tok] = it
	s.issued++
	s.scopes = append(s.scopes, r.PostForm.Get("scope"))
	s.mu.Unlock()
	answer := map[string]any{"access_token": tok, "token_type": "Bearer"}
	if s.TTL > 0 {
		answer["expires_in"] = int64(s.TTL / time.Second)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_ = json.NewEncoder(w).Encode(answer)
}

func tokenError(w http.ResponseWriter, status int, code, desc string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": code, "error_description": desc})
}

// Guard passes to next the requests that carry a valid token, without
// their Authorization header (next signs them as it needs), and answers
// the others 401.
func (s *TokenServer) Guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		scheme, tok, _ := strings.Cut(r.Header.Get("Authorization"), " ")
		s.mu.Lock()
		it := s.tokens[strings.TrimSpace(tok)]
		ok := strings.EqualFold(scheme, "Bearer") && it != nil &&
			(it.expires.IsZero() || s.now().Before(it.expires)) && (s.Uses == 0 || it.uses < s.Uses)
		if ok {
			it.uses++
		} else {
			s.refused++
		}
		s.mu.Unlock()
		if !ok {
			w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token", error_description="the token is unknown or expired"`)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"error":{"code":"401","message":"the bearer token is unknown or expired"}}`))
			return
		}
		r.Header.Del("Authorization")
		next.ServeHTTP(w, r)
	})
}
