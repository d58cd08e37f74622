// Package oauthfake is a local authorization server that speaks the OAuth
// 2.0 wire formats of Google, Microsoft identity platform v2.0 and Zoho
// Accounts at their real paths, so that pointing a connection's
// oauth_base_url at URL() works for each provider (one fake per provider):
//
//	google     GET /o/oauth2/v2/auth           POST /token
//	microsoft  GET /{tenant}/oauth2/v2.0/authorize  POST /{tenant}/oauth2/v2.0/token
//	zoho       GET /oauth/v2/auth              POST /oauth/v2/token
//
// The authorize endpoint consents at once: it checks the client and the
// request, records it, and answers 302 to redirect_uri with code and
// state (Zoho adds location and accounts-server). The token endpoint
// serves the authorization_code grant (single-use codes bound to the
// client and redirect_uri, PKCE S256 and plain checked when a challenge
// was given) and the refresh_token grant, with each provider's answers:
//
//   - Google: refresh token only with access_type=offline, none on
//     refresh; errors HTTP 400/401 {"error","error_description"}.
//   - Microsoft: refresh token only with the offline_access scope, a new one
//     on every refresh (rotation: the old one stops working here, stricter
//     than Microsoft, to catch a client that does not store it),
//     ext_expires_in; errors {"error","error_description":"AADSTSnnn:
//     ...","error_codes","timestamp","trace_id","correlation_id"}.
//   - Zoho: refresh token only with access_type=offline, none on refresh,
//     api_domain; every error is HTTP 200 {"error": ...}, and a dead code
//     or refresh token is "invalid_code".
//
// Valid tells resource fakes whether a bearer token is one this server
// issued and still live.
package oauthfake

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"

	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/test/fakes/faults"
)

// Authorization is one request the authorize endpoint accepted.
type Authorization struct {
	ClientID            string
	RedirectURI         string
	Scope               string
	State               string
	CodeChallenge       string
	CodeChallengeMethod string
	AccessType          string
	Prompt              string
	Tenant              string // Microsoft: the tenant path segment
	Code                string // the code it issued
}

// issued is a live access token.
type issued struct {
	scope   string
	expires time.Time
}

// grant is what an authorization code or a refresh token stands for.
type grant struct {
	clientID    string
	scope       string
	redirectURI string // codes only
	challenge   string // codes only
	method      string // codes only
	offline     bool   // codes only: a refresh token is due
	expires     time.Time
}

// Server is a running fake authorization server for one provider. Its zero
// value is not usable; call New.
type Server struct {
	provider string
	srv      *httptest.Server
	q        *faults.Queue

	mu             sync.Mutex
	clients        map[string]string // client id → secret
	codes          map[string]*grant
	refreshTokens  map[string]*grant
	accessTokens   map[string]issued
	authorizations []Authorization
	expiresIn      int
	rotate         bool
	apiDomain      string
	exchanges      int
	refreshes      int
}

// New starts a fake of provider (core.ProviderGoogle, ProviderMicrosoft or
// ProviderZoho; it panics on another). Access tokens live 3600 seconds;
// refresh tokens rotate for Microsoft only. Close it when done.
func New(provider string) *Server {
	s := &Server{
		provider:      provider,
		q:             faults.New(),
		clients:       map[string]string{},
		codes:         map[string]*grant{},
		refreshTokens: map[string]*grant{},
		accessTokens:  map[string]issued{},
		expiresIn:     3600,
		rotate:        provider == core.ProviderMicrosoft,
		apiDomain:     "https://www.zohoapis.com",
	}
	mux := http.NewServeMux()
	switch provider {
	case core.ProviderGoogle:
		mux.HandleFunc("GET /o/oauth2/v2/auth", s.handleAuthorize)
		mux.HandleFunc("POST /token", s.handleToken)
	case core.ProviderMicrosoft:
		mux.HandleFunc("GET /{tenant}/oauth2/v2.0/authorize", s.handleAuthorize)
		mux.HandleFunc("POST /{tenant}/oauth2/v2.0/token", s.handleToken)
	case core.ProviderZoho:
		mux.HandleFunc("GET /oauth/v2/auth", s.handleAuthorize)
		mux.HandleFunc("POST /oauth/v2/token", s.handleToken)
	default:
		panic("oauthfake: unknown provider " + provider)
	}
	s.srv = httptest.NewServer(s.q.Wrap(mux))
	return s
}

// URL returns the base URL to set as the connection's oauth_base_url.
func (s *Server) URL() string { return s.srv.URL }

// Provider returns the provider the fake speaks for.
func (s *Server) Provider() string { return s.provider }

// Close releases stalled requests and shuts the server down.
func (s *Server) Close() {
	s.q.Close()
	s.srv.Close()
}

// AddClient registers an app.
func (s *Server) AddClient(clientID, secret string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clients[clientID] = secret
}

// SetExpiresIn sets the lifetime in seconds of the access tokens issued
// from now on.
func (s *Server) SetExpiresIn(seconds int) { faults.Set(&s.mu, &s.expiresIn, seconds) }

// SetRotation turns refresh-token rotation on or off (on by default for
// Microsoft only). With rotation each refresh answers a new refresh token
// and the one used stops working.
func (s *Server) SetRotation(on bool) { faults.Set(&s.mu, &s.rotate, on) }

// SetAPIDomain sets the api_domain of Zoho's token answers.
func (s *Server) SetAPIDomain(u string) { faults.Set(&s.mu, &s.apiDomain, u) }

// Revoke makes a refresh token dead: later refreshes with it answer
// invalid_grant (Zoho: invalid_code). The access tokens it gave stay
// valid until they expire, as with the real servers.
func (s *Server) Revoke(refreshToken string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.refreshTokens, refreshToken)
}

// RevokeAll makes every refresh token issued so far dead, as a user
// withdrawing the app's consent does.
func (s *Server) RevokeAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refreshTokens = map[string]*grant{}
}

// ExpireAccessTokens ends every access token issued so far: Valid then
// answers false for them (a resource fake answers 401).
func (s *Server) ExpireAccessTokens() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.accessTokens = map[string]issued{}
}

// FailNext makes the next n requests, whatever their path, answer status
// with the provider's error shape for an unavailable server.
func (s *Server) FailNext(n, status int) {
	s.q.FailNextWith(n, func(w http.ResponseWriter, _ *http.Request) {
		switch s.provider {
		case core.ProviderMicrosoft:
			writeJSON(w, status, microsoftError("temporarily_unavailable", 50196, "The server is temporarily unavailable."))
		default:
			writeJSON(w, status, map[string]any{"error": "internal_failure", "error_description": "Backend Error"})
		}
	})
}

// StallNext makes the next n requests hang until the client gives up or
// the server closes.
func (s *Server) StallNext(n int) { s.q.StallNext(n) }

// Requests returns how many requests reached the server.
func (s *Server) Requests() int { return s.q.Requests() }

// Exchanges returns how many authorization codes were redeemed.
func (s *Server) Exchanges() int { return s.count(&s.exchanges) }

// Refreshes returns how many refresh_token grants succeeded.
func (s *Server) Refreshes() int { return s.count(&s.refreshes) }

// Authorizations returns the authorize requests accepted so far.
func (s *Server) Authorizations() []Authorization {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Authorization(nil), s.authorizations...)
}

// Valid reports whether accessToken was issued by this server and has not
// expired.
func (s *Server) Valid(accessToken string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.accessTokens[accessToken]
	return ok && time.Now().Before(t.expires)
}

// TokenScope returns the scope granted to a valid access token, so that a
// resource fake can refuse a token issued for another resource (an SMTP
// token at Graph); ok is false when the token is not valid.
func (s *Server) TokenScope(accessToken string) (scope string, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.accessTokens[accessToken]
	if !ok || !time.Now().Before(t.expires) {
		return "", false
	}
	return t.scope, true
}

// Grant issues tokens to a registered client without the authorize step,
// as a token obtained out of band: an access token and a refresh token
// for scope.
func (s *Server) Grant(clientID, scope string) (accessToken, refreshToken string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	accessToken = s.newAccessToken(scope)
	refreshToken = newToken("rt")
	s.refreshTokens[refreshToken] = &grant{clientID: clientID, scope: scope}
	return accessToken, refreshToken
}

// newAccessToken records and returns a new access token for scope; s.mu
// is held.
func (s *Server) newAccessToken(scope string) string {
	t := newToken("at")
	s.accessTokens[t] = issued{scope: scope, expires: time.Now().Add(time.Duration(s.expiresIn) * time.Second)}
	return t
}

// newToken returns a random token with a recognisable prefix.
func newToken(prefix string) string {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return prefix + "-" + hex.EncodeToString(b)
}

// s256 is the PKCE S256 challenge of a verifier.
func s256(verifier string) string {
	sum := sha256.Sum256([]byte(verifier))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// equal compares secrets in constant time.
func equal(a, b string) bool { return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1 }

// microsoftError is Microsoft's error body.
func microsoftError(code string, aadsts int, msg string) map[string]any {
	return map[string]any{
		"error":             code,
		"error_description": fmt.Sprintf("AADSTS%d: %s Trace ID: 00000000-0000-0000-0000-000000000000", aadsts, msg),
		"error_codes":       []int{aadsts},
		"timestamp":         time.Now().UTC().Format("2006-01-02 15:04:05Z"),
		"trace_id":          "00000000-0000-0000-0000-000000000000",
		"correlation_id":    "00000000-0000-0000-0000-000000000000",
	}
}

// scopeHas reports whether a space- or comma-separated scope list holds want.
func scopeHas(scope, want string) bool {
	for _, s := range strings.FieldsFunc(scope, func(r rune) bool { return r == ' ' || r == ',' }) {
		if s == want {
			return true
		}
	}
	return false
}

// count returns the counter n of the server, read under its lock.
func (s *Server) count(n *int) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return *n
}
