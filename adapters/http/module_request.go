package http

import (
	"net/http"

	"github.com/mailsvc/mailsvc/app/oauth"
	"github.com/mailsvc/mailsvc/core"
)

// BaseURL returns scheme://host of the request as the client reached it
// (the scheme as the server's trusted proxies report it).
func (rt *Routes) BaseURL(r *http.Request) string { return rt.s.baseURL(r) }

// CompleteOAuth completes a module's OAuth callback in of provider with
// c, as the manual flow's callback route does: in gains the request's base
// URL and the logged-in user, and the browser is sent to the page c
// returns, uncached and without a referrer.
func (rt *Routes) CompleteOAuth(w http.ResponseWriter, r *http.Request, c OAuthCompleter, provider string, in oauth.CallbackInput) {
	rt.s.completeOAuth(w, r, c, provider, in)
}

// OptionalUser returns the user a request authenticates as, or nil when
// it carries no credentials or credentials that fail (a public route
// such as an OAuth callback, which the provider's redirect reaches
// without a nonce).
func (rt *Routes) OptionalUser(r *http.Request) *core.User { return rt.s.optionalUser(r) }

func (s *Server) optionalUser(r *http.Request) *core.User {
	if s.Auth == nil {
		return nil
	}
	u, err := s.Auth.Authenticate(r, s.secure(r))
	if err != nil {
		return nil
	}
	return u
}
