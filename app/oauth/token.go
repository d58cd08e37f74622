package oauth

import (
	"context"
	"fmt"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// TokenInput is the body of POST /connections/{id}/oauth-token: a token
// obtained out of band. ExpiresIn (seconds) and ExpiresAt (RFC 3339) are
// alternatives.
type TokenInput struct {
	AccessToken  string `json:"access_token"`
	RefreshToken string `json:"refresh_token"`
	ExpiresIn    *int64 `json:"expires_in"`
	ExpiresAt    string `json:"expires_at"`
}

// StoreToken validates and stores a token obtained out of band on
// connection id, as the callback stores one (the driver's Authorized hook
// included), and returns the connection's token expiry (nil when
// unknown).
func (s *Service) StoreToken(ctx context.Context, id int64, in TokenInput) (*time.Time, error) {
	s.init()
	conn, d, err := s.oauthConnection(ctx, id, "connection_id")
	if err != nil {
		return nil, err
	}
	fields := map[string]string{}
	if in.AccessToken == "" && in.RefreshToken == "" {
		fields["access_token"] = "Give an access_token, a refresh_token or both."
		fields["refresh_token"] = fields["access_token"]
	}
	if len(in.AccessToken) > 8192 {
		fields["access_token"] = "Too long."
	}
	if len(in.RefreshToken) > 8192 {
		fields["refresh_token"] = "Too long."
	}
	if in.RefreshToken != "" && pinned(conn, core.KeyRefreshToken) {
		fields["refresh_token"] = "The refresh token is pinned by a constant and cannot be changed here."
	}
	tok := &core.OAuthToken{AccessToken: in.AccessToken, RefreshToken: in.RefreshToken}
	switch {
	case in.ExpiresIn != nil && in.ExpiresAt != "":
		fields["expires_at"] = "Give expires_in or expires_at, not both."
	case in.ExpiresIn != nil:
		if *in.ExpiresIn < 1 || *in.ExpiresIn > 10*365*24*3600 {
			fields["expires_in"] = "Must be a number of seconds from 1 to 315360000."
		} else {
			tok.Expiry = s.now().Add(time.Duration(*in.ExpiresIn) * time.Second)
		}
	case in.ExpiresAt != "":
		t, err := time.Parse(time.RFC3339, in.ExpiresAt)
		if err != nil {
			fields["expires_at"] = "Must be a time in RFC 3339 form, e.g. 2026-01-02T15:04:05Z."
		} else {
			tok.Expiry = t
		}
	}
	if (in.ExpiresIn != nil || in.ExpiresAt != "") && in.AccessToken == "" && fields["expires_at"] == "" && fields["expires_in"] == "" {
		fields["access_token"] = "An expiry needs the access_token it belongs to."
	}
	if err := core.Invalid(fields); err != nil {
		return nil, err
	}
	if err := s.storeToken(ctx, conn, d, tok); err != nil {
		return nil, err
	}
	if tok.Expiry.IsZero() {
		return nil, nil
	}
	e := tok.Expiry.UTC()
	return &e, nil
}

// storeToken runs the driver's Authorized hook when there is an access
// token, then stores the token, the refresh token (kept when tok has
// none, never written when pinned), the expiry and the hook's settings in
// one write, and marks the connection authorized. The connection's
// needs_authorization ends here.
func (s *Service) storeToken(ctx context.Context, conn *core.Connection, d *core.Driver, tok *core.OAuthToken) error {
	return s.storeTokenWith(ctx, conn, d, tok, nil)
}

// storeTokenWith is storeToken with more settings (extra, stored as
// given) in the same write.
func (s *Service) storeTokenWith(ctx context.Context, conn *core.Connection, d *core.Driver, tok *core.OAuthToken, extra core.Settings) error {
	patch := extra.Clone()
	if patch == nil {
		patch = core.Settings{}
	}
	if tok.AccessToken != "" && d.Authorized != nil {
		probe := *conn
		probe.Settings = conn.Settings.Clone()
		probe.Settings[core.KeyAccessToken] = tok.AccessToken
		extra, err := d.Authorized(ctx, &probe, tok.AccessToken, s.Env)
		if err != nil {
			return core.Errorf(core.EINVALID, "The provider did not accept the token: %s", redact(err.Error(), tok.AccessToken, tok.RefreshToken))
		}
		for k, v := range extra {
			if str, ok := v.(string); ok && sensitive(d, k) {
				enc, err := s.encrypt(str)
				if err != nil {
					return fmt.Errorf("store token of connection %d: %w", conn.ID, err)
				}
				v = enc
			}
			patch[k] = v
		}
	}
	if tok.AccessToken != "" {
		enc, err := s.encrypt(tok.AccessToken)
		if err != nil {
			return fmt.Errorf("store token of connection %d: %w", conn.ID, err)
		}
		patch[core.KeyAccessToken] = enc
		if tok.Expiry.IsZero() {
			patch[core.KeyTokenExpiry] = nil
		} else {
			patch[core.KeyTokenExpiry] = tok.Expiry.UTC().Format(time.RFC3339)
		}
	}
	if tok.RefreshToken != "" && !pinned(conn, core.KeyRefreshToken) {
		enc, err := s.encrypt(tok.RefreshToken)
		if err != nil {
			return fmt.Errorf("store token of connection %d: %w", conn.ID, err)
		}
		patch[core.KeyRefreshToken] = enc
	}
	if err := s.State.UpdateConnectionSettings(ctx, conn.ID, patch, core.OAuthAuthorized); err != nil {
		return fmt.Errorf("store token of connection %d: %w", conn.ID, err)
	}
	return nil
}
