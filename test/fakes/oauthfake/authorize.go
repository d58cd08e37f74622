package oauthfake

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// codeLifetime is how long an authorization code can be redeemed.
const codeLifetime = 10 * time.Minute

// handleAuthorize is the consent screen: it accepts at once and sends the
// browser back to redirect_uri with a code.
func (s *Server) handleAuthorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	a := Authorization{
		ClientID:            q.Get("client_id"),
		RedirectURI:         q.Get("redirect_uri"),
		Scope:               q.Get("scope"),
		State:               q.Get("state"),
		CodeChallenge:       q.Get("code_challenge"),
		CodeChallengeMethod: q.Get("code_challenge_method"),
		AccessType:          q.Get("access_type"),
		Prompt:              q.Get("prompt"),
		Tenant:              r.PathValue("tenant"),
	}
	s.mu.Lock()
	_, known := s.clients[a.ClientID]
	s.mu.Unlock()
	// Like the real consent screens, a bad client or redirect URI gets an
	// error page, not a redirect.
	if !known {
		http.Error(w, "Error 401: invalid_client. The OAuth client was not found.", http.StatusBadRequest)
		return
	}
	back, err := url.Parse(a.RedirectURI)
	if a.RedirectURI == "" || err != nil || !back.IsAbs() {
		http.Error(w, "Error 400: invalid_request. Missing or invalid redirect_uri.", http.StatusBadRequest)
		return
	}
	answer := url.Values{}
	if a.State != "" {
		answer.Set("state", a.State)
	}
	switch {
	case q.Get("response_type") != "code":
		answer.Set("error", "unsupported_response_type")
	case a.Scope == "":
		answer.Set("error", "invalid_scope")
	case a.CodeChallenge != "" && a.CodeChallengeMethod != "S256" && a.CodeChallengeMethod != "plain" && a.CodeChallengeMethod != "":
		answer.Set("error", "invalid_request")
	default:
		a.Code = newToken("code")
		method := a.CodeChallengeMethod
		if method == "" {
			method = "plain"
		}
		offline := a.AccessType == "offline"
		if s.provider == core.ProviderMicrosoft {
			offline = scopeHas(a.Scope, "offline_access")
		}
		s.mu.Lock()
		s.codes[a.Code] = &grant{
			clientID: a.ClientID, scope: a.Scope, redirectURI: a.RedirectURI,
			challenge: a.CodeChallenge, method: method, offline: offline,
			expires: time.Now().Add(codeLifetime),
		}
		s.authorizations = append(s.authorizations, a)
		s.mu.Unlock()
		answer.Set("code", a.Code)
		if s.provider == core.ProviderZoho {
			answer.Set("location", "us")
			answer.Set("accounts-server", s.URL())
		}
	}
	if back.RawQuery != "" {
		back.RawQuery += "&"
	}
	back.RawQuery += answer.Encode()
	http.Redirect(w, r, back.String(), http.StatusFound)
}

// Consent opens authURL (a consent screen URL of this server) without
// following the redirect and returns where the server sends the browser:
// redirect_uri with code and state, or with error. Any other answer is an
// error.
func (s *Server) Consent(ctx context.Context, authURL string) (*url.URL, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
	if err != nil {
		return nil, fmt.Errorf("oauthfake: consent request: %w", err)
	}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(req)
	if err != nil {
		return nil, fmt.Errorf("oauthfake: consent: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusFound {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
		return nil, fmt.Errorf("oauthfake: consent answered HTTP %d: %s", resp.StatusCode, body)
	}
	loc, err := resp.Location()
	if err != nil {
		return nil, fmt.Errorf("oauthfake: consent redirect: %w", err)
	}
	return loc, nil
}
