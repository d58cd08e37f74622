package http

import (
	"net/http"

	"github.com/mailsvc/mailsvc/core"
)

// BaseURL returns scheme://host of the request as the client reached it
// (the scheme as the server's trusted proxies report it).
func (rt *Routes) BaseURL(r *http.Request) string { return rt.s.baseURL(r) }

// OptionalUser returns the user a request authenticates as, or nil when
// it carries no credentials or credentials that fail (a public route
// such as an OAuth callback, which the provider's redirect reaches
// without a nonce).
func (rt *Routes) OptionalUser(r *http.Request) *core.User {
	if rt.s.Auth == nil {
		return nil
	}
	u, err := rt.s.Auth.Authenticate(r, rt.s.secure(r))
	if err != nil {
		return nil
	}
	return u
}
