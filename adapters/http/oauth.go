package http

import (
	"context"
	"net/http"
	"time"

	"github.com/gorilla/mux"

	"github.com/mailsvc/mailsvc/app/oauth"
	"github.com/mailsvc/mailsvc/core"
)

// OAuthService is what the OAuth routes need.
type OAuthService interface {
	Authorize(ctx context.Context, in oauth.AuthorizeInput) (string, error)
	Callback(ctx context.Context, provider string, in oauth.CallbackInput) string
	StoreToken(ctx context.Context, id int64, in oauth.TokenInput) (*time.Time, error)
	RefreshNow(ctx context.Context, id int64) (*oauth.RefreshResult, error)
	RefreshHistory(ctx context.Context, id int64, offset, limit int) ([]core.RefreshAttempt, int, error)
}

// oauthProviders matches the providers in a route path; any other is an
// unknown route (404).
const oauthProviders = "{provider:google|microsoft|zoho}"

// oauthRoutes registers the spec's OAuth routes and the connection token
// routes. The callback is authenticated by its state (single use, bound to
// the user and connection, 10 minutes), not by the auth wrapper: the
// provider's redirect carries no REST nonce. A request that does carry
// another user's credentials is refused (docs/api.md).
func (s *Server) oauthRoutes(api *mux.Router) {
	s.private(api, "GET", "/oauth/"+oauthProviders+"/authorize", s.oauthAuthorize)
	api.Handle("/oauth/"+oauthProviders+"/callback", http.HandlerFunc(s.oauthCallback)).Methods("GET")
	s.private(api, "POST", "/connections/{id}/oauth-token", s.oauthStoreToken)
	s.private(api, "POST", "/connections/{id}/oauth-refresh-now", s.oauthRefreshNow)
	s.private(api, "GET", "/connections/{id}/oauth-refresh-history", s.oauthRefreshHistory)
}

// baseURL is scheme://host of the request as the client reached it.
func (s *Server) baseURL(r *http.Request) string {
	scheme := "http"
	if s.secure(r) {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

func (s *Server) oauthAuthorize(w http.ResponseWriter, r *http.Request) error {
	to, err := s.OAuth.Authorize(r.Context(), oauth.AuthorizeInput{
		User:           UserFrom(r.Context()),
		Provider:       mux.Vars(r)["provider"],
		ConnectionID:   r.URL.Query().Get("connection_id"),
		RequestBaseURL: s.baseURL(r),
	})
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	if r.URL.Query().Get("format") == "json" {
		// The admin screens, signed in over Basic auth, cannot follow a
		// redirect they did not see: they get the address to open instead.
		writeJSON(w, http.StatusOK, map[string]any{"authorize_url": to})
		return nil
	}
	http.Redirect(w, r, to, http.StatusFound)
	return nil
}

func (s *Server) oauthCallback(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	s.completeOAuth(w, r, s.OAuth, mux.Vars(r)["provider"], oauth.CallbackInput{
		Code:             q.Get("code"),
		State:            q.Get("state"),
		Error:            q.Get("error"),
		ErrorDescription: q.Get("error_description"),
	})
}

// OAuthCompleter completes a provider's callback and returns where to
// send the browser (oauth.Service.Callback, oauth.OneClick.Callback).
type OAuthCompleter interface {
	Callback(ctx context.Context, provider string, in oauth.CallbackInput) string
}

// completeOAuth completes the callback in of provider with c and sends
// the browser to the page it returns, uncached and without a referrer.
// in gains the request's base URL and the logged-in user: credentials
// that fail (a cookie without a nonce, as a provider's redirect brings)
// count as no user, the state authenticates.
func (s *Server) completeOAuth(w http.ResponseWriter, r *http.Request, c OAuthCompleter, provider string, in oauth.CallbackInput) {
	in.RequestBaseURL = s.baseURL(r)
	if u := s.optionalUser(r); u != nil {
		in.UserID = u.ID
	}
	to := c.Callback(r.Context(), provider, in)
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Referrer-Policy", "no-referrer")
	http.Redirect(w, r, to, http.StatusFound)
}

func (s *Server) oauthStoreToken(w http.ResponseWriter, r *http.Request) error {
	return respondIDBody(s.decodeJSON, w, r, func(ctx context.Context, id int64, body oauth.TokenInput) (map[string]any, error) {
		exp, err := s.OAuth.StoreToken(ctx, id, body)
		if err != nil {
			return nil, err
		}
		return map[string]any{"success": true, "expires_at": exp}, nil
	})
}

func (s *Server) oauthRefreshNow(w http.ResponseWriter, r *http.Request) error {
	return respondID(w, r, s.OAuth.RefreshNow)
}

func (s *Server) oauthRefreshHistory(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(mux.Vars(r)["id"])
	if err != nil {
		return err
	}
	p, err := parsePage(r)
	if err != nil {
		return err
	}
	items, total, err := s.OAuth.RefreshHistory(r.Context(), id, p.Offset(), p.PerPage)
	if err != nil {
		return err
	}
	writeList(w, items, total, p)
	return nil
}
