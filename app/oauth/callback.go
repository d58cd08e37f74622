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
	var d *core.Driver
	return s.complete(ctx, provider, in, completion{
		name:     "oauth callback",
		known:    KnownProvider,
		stateKey: stateKey,
		target: func(st *core.OAuthState) (*core.Connection, string) {
			conn, drv, err := s.oauthConnection(ctx, st.ConnectionID, "connection_id")
			if err != nil || drv.OAuthProvider != provider {
				return nil, ErrConnection
			}
			d = drv
			return conn, ""
		},
		store: func(_ *core.OAuthState, conn *core.Connection, tok *core.OAuthToken) (int64, string) {
			if err := s.storeToken(ctx, conn, d, tok); err != nil {
				return conn.ID, s.storeFailed("oauth callback", conn.ID, tok, err)
			}
			return conn.ID, ""
		},
	})
}

// completion is what a flow's callback brings to complete: its states,
// the connection the code is exchanged for, and how the tokens are
// stored.
type completion struct {
	// name starts the flow's log messages.
	name string
	// known reports whether the flow serves provider.
	known func(provider string) bool
	// stateKey is the key of the flow's states.
	stateKey func(provider, state string) string
	// target returns the connection whose settings the exchange uses, or
	// the error flag.
	target func(st *core.OAuthState) (*core.Connection, string)
	// store stores the tokens and returns the authorized connection's id,
	// with the error flag when they could not be stored.
	store func(st *core.OAuthState, target *core.Connection, tok *core.OAuthToken) (int64, string)
}

// complete is the one completion of an authorization's callback: the
// state is verified (known provider, single use, unexpired, the same
// provider, the same user when one is logged in) before any token
// request; the provider's error or a missing code is a flag; the code is
// exchanged with the stored PKCE verifier and redirect URI for f's
// target; f stores the tokens. It returns the admin page with the
// outcome.
func (s *Service) complete(ctx context.Context, provider string, in CallbackInput, f completion) string {
	s.init()
	fail := func(flag string, connID int64) string { return s.adminURL(in.RequestBaseURL, provider, connID, flag) }
	if !f.known(provider) || in.State == "" {
		return fail(ErrInvalidState, 0)
	}
	st, err := s.States.ConsumeOAuthState(ctx, f.stateKey(provider, in.State))
	if err != nil {
		if core.ErrorCode(err) != core.ENOTFOUND {
			s.Logger.Error(f.name+": read state", "provider", provider, "err", err)
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
	target, flag := f.target(st)
	if flag != "" {
		return fail(flag, st.ConnectionID)
	}
	verifier, err := s.decrypt(st.CodeVerifier)
	if err != nil {
		s.Logger.Error(f.name+": decrypt the PKCE verifier", "provider", provider, "connection_id", st.ConnectionID, "err", err)
		return fail(ErrInvalidState, st.ConnectionID)
	}
	tok, err := s.Client.Exchange(ctx, target, st.RedirectURI, in.Code, verifier)
	if err != nil {
		s.Logger.Warn(f.name+": code exchange failed", "connection_id", st.ConnectionID, "provider", provider,
			"err", redact(err.Error(), append(connSecrets(target), in.Code, verifier)...))
		if core.IsInvalidGrant(err) {
			return fail("invalid_grant", st.ConnectionID)
		}
		return fail(ErrExchangeFailed, st.ConnectionID)
	}
	id, flag := f.store(st, target, tok)
	return s.adminURL(in.RequestBaseURL, provider, id, flag)
}

// storeFailed logs tokens that could not be stored for connection id and
// returns the flag: token_rejected when the driver's check refused them,
// else store_failed.
func (s *Service) storeFailed(name string, id int64, tok *core.OAuthToken, err error) string {
	s.Logger.Warn(name+": store token", "connection_id", id, "err", redact(err.Error(), tok.AccessToken, tok.RefreshToken))
	if core.ErrorCode(err) == core.EINVALID {
		return ErrTokenRejected
	}
	return ErrStoreFailed
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
