package oauth

import (
	"context"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/mailsvc/mailsvc/core"
)

// Error flags a callback puts in oauth_error on the admin page.
const (
	ErrInvalidState     = "invalid_state"     // unknown, used, expired or another provider's state
	ErrUserMismatch     = "user_mismatch"     // a logged-in user other than the one who started
	ErrMissingCode      = "missing_code"      // neither code nor error in the query
	ErrConnection       = "connection_gone"   // the connection was deleted or changed driver
	ErrExchangeFailed   = "exchange_failed"   // the token endpoint refused the code or was down
	ErrTokenRejected    = "token_rejected"    // the driver's check of the new token failed
	ErrStoreFailed      = "store_failed"      // the token could not be stored
	ErrProviderRejected = "provider_rejected" // the provider's own error had an unusual code
)

// CallbackInput is the query of a provider's callback, plus who is
// logged in (UserID 0: nobody) and the request's base URL.
type CallbackInput struct {
	Code, State, Error, ErrorDescription string
	UserID                               int64
	RequestBaseURL                       string
}

var errorCode = regexp.MustCompile(`^[a-z_]{1,64}$`)

// Callback completes an authorization and returns where to send the
// browser: the admin page with oauth=success&provider=..&connection_id=N,
// or oauth=error&oauth_error=<flag>. The state is the credential: a bad,
// used, expired or other-provider state is refused before any token
// request, and a logged-in user other than the one who started the flow
// is refused. On success the code is exchanged with the stored PKCE
// verifier and redirect URI and the tokens are stored in one write.
func (s *Service) Callback(ctx context.Context, provider string, in CallbackInput) string {
	s.init()
	fail := func(flag string, connID int64) string { return s.adminURL(in.RequestBaseURL, provider, connID, flag) }
	if !KnownProvider(provider) || in.State == "" {
		return fail(ErrInvalidState, 0)
	}
	st, err := s.States.ConsumeOAuthState(ctx, stateKey(provider, in.State))
	if err != nil {
		if core.ErrorCode(err) != core.ENOTFOUND {
			s.Logger.Error("oauth callback: read state", "provider", provider, "err", err)
		}
		return fail(ErrInvalidState, 0)
	}
	if st.Provider != provider || !s.now().Before(st.ExpiresAt) {
		return fail(ErrInvalidState, 0)
	}
	if in.UserID != 0 && in.UserID != st.UserID {
		return fail(ErrUserMismatch, 0)
	}
	if in.Error != "" {
		flag := in.Error
		if !errorCode.MatchString(flag) {
			flag = ErrProviderRejected
		}
		return fail(flag, st.ConnectionID)
	}
	if in.Code == "" {
		return fail(ErrMissingCode, st.ConnectionID)
	}
	conn, d, err := s.oauthConnection(ctx, st.ConnectionID, "connection_id")
	if err != nil || d.OAuthProvider != provider {
		return fail(ErrConnection, st.ConnectionID)
	}
	verifier, err := s.decrypt(st.CodeVerifier)
	if err != nil {
		s.Logger.Error("oauth callback: decrypt the PKCE verifier", "connection_id", conn.ID, "err", err)
		return fail(ErrInvalidState, st.ConnectionID)
	}
	tok, err := s.Client.Exchange(ctx, conn, st.RedirectURI, in.Code, verifier)
	if err != nil {
		s.Logger.Warn("oauth callback: code exchange failed", "connection_id", conn.ID, "provider", provider,
			"err", redact(err.Error(), append(connSecrets(conn), in.Code, verifier)...))
		if core.IsInvalidGrant(err) {
			return fail("invalid_grant", conn.ID)
		}
		return fail(ErrExchangeFailed, conn.ID)
	}
	if err := s.storeToken(ctx, conn, d, tok); err != nil {
		s.Logger.Warn("oauth callback: store token", "connection_id", conn.ID,
			"err", redact(err.Error(), tok.AccessToken, tok.RefreshToken))
		if core.ErrorCode(err) == core.EINVALID {
			return fail(ErrTokenRejected, conn.ID)
		}
		return fail(ErrStoreFailed, conn.ID)
	}
	return s.adminURL(in.RequestBaseURL, provider, conn.ID, "")
}

// adminURL returns the admin page with the callback's flags; flag "" is
// success.
func (s *Service) adminURL(requestBase, provider string, connID int64, flag string) string {
	base := s.AdminURL
	if base == "" {
		base = s.publicURL(requestBase) + "/admin/"
	}
	u, err := url.Parse(base)
	if err != nil {
		u = &url.URL{Path: "/"}
	}
	q := u.Query()
	if flag == "" {
		q.Set("oauth", "success")
	} else {
		q.Set("oauth", "error")
		q.Set("oauth_error", flag)
	}
	if KnownProvider(provider) {
		q.Set("provider", provider)
	}
	if connID > 0 {
		q.Set("connection_id", strconv.FormatInt(connID, 10))
	}
	u.RawQuery = q.Encode()
	return strings.TrimSpace(u.String())
}
