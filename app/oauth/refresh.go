package oauth

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

var _ core.TokenSource = (*Service)(nil)

// leaseTTL bounds how long a crashed replica's refresh blocks the others.
const leaseTTL = 30 * time.Second

// errNeedsAuthorization is what a connection without a usable grant fails with.
var errNeedsAuthorization = errors.New("connection needs authorization")

// tokens is a connection's decrypted token settings.
type tokens struct {
	access, refresh string
	expiry          time.Time // zero: unknown
}

func tokensOf(conn *core.Connection) tokens {
	t := tokens{access: conn.Settings.String(core.KeyAccessToken), refresh: conn.Settings.String(core.KeyRefreshToken)}
	if e, err := time.Parse(time.RFC3339, conn.Settings.String(core.KeyTokenExpiry)); err == nil {
		t.expiry = e
	}
	return t
}

// fresh reports whether t's access token is valid for at least another
// minute (a token of unknown expiry counts as valid until refused).
func (s *Service) fresh(t tokens) bool {
	return t.access != "" && (t.expiry.IsZero() || t.expiry.Sub(s.now()) >= time.Minute)
}

// AccessToken implements core.TokenSource: the stored token while it is
// valid for at least a minute, else a refreshed one (trigger before_send).
// It reads the stored connection every time, keeping no token of its own:
// a token follows the connection's current settings, so one dropped by an
// edit (a changed destination) or by another replica is never sent.
func (s *Service) AccessToken(ctx context.Context, connID int64) (string, error) {
	s.init()
	conn, err := s.readConnection(ctx, connID, false)
	if err != nil {
		return "", err
	}
	if t := tokensOf(conn); s.fresh(t) {
		return t.access, nil
	}
	t, err := s.refresh(ctx, connID, core.RefreshBeforeSend, false, func(c *core.Connection) bool { return !s.fresh(tokensOf(c)) })
	return t.access, err
}

// Refreshed implements core.TokenSource: after the provider refused
// rejected it refreshes (trigger unauthorized), unless the stored token
// already differs from rejected.
func (s *Service) Refreshed(ctx context.Context, connID int64, rejected string) (string, error) {
	s.init()
	t, err := s.refresh(ctx, connID, core.RefreshUnauthorized, false, func(c *core.Connection) bool {
		t := tokensOf(c)
		return t.access == rejected || !s.fresh(t)
	})
	return t.access, err
}

// readConnection returns the effective connection, failing Permanent when
// it needs authorization (unless allowed) and classifying store errors.
func (s *Service) readConnection(ctx context.Context, id int64, allowNeedsAuth bool) (*core.Connection, error) {
	conn, err := s.Connections.Effective(ctx, id)
	if err != nil {
		if core.ErrorCode(err) == core.ENOTFOUND {
			return nil, core.Permanent(err)
		}
		return nil, core.Temporary(err)
	}
	if conn.OAuthStatus == core.OAuthNeedsAuthorization && !allowNeedsAuth {
		return nil, core.Permanent(errNeedsAuthorization)
	}
	if conn.SettingsError != "" {
		return nil, core.Permanent(fmt.Errorf("connection %d: %s", id, conn.SettingsError))
	}
	return conn, nil
}

// refresh refreshes connection id's token when need says so, single
// flight: one refresh per connection at a time in this process (a mutex)
// and across replicas (the lease "oauth-refresh:<id>"). A caller that
// finds the lease taken waits for the other replica and re-reads the
// stored token. need is checked again after each wait, so a token that
// someone else refreshed meanwhile is returned as it is.
func (s *Service) refresh(ctx context.Context, id int64, trigger string, allowNeedsAuth bool, need func(*core.Connection) bool) (tokens, error) {
	mu := s.lock(id)
	mu.Lock()
	defer mu.Unlock()
	conn, err := s.readConnection(ctx, id, allowNeedsAuth)
	if err != nil {
		return tokens{}, err
	}
	if !need(conn) {
		return tokensOf(conn), nil
	}
	if tokensOf(conn).refresh == "" {
		return tokens{}, core.Permanent(fmt.Errorf("%w: it has no refresh token", errNeedsAuthorization))
	}
	if s.Leases != nil {
		name := "oauth-refresh:" + strconv.FormatInt(id, 10)
		wait := s.LeaseWait
		if wait <= 0 {
			wait = 15 * time.Second
		}
		poll := s.LeasePoll
		if poll <= 0 {
			poll = 50 * time.Millisecond
		}
		deadline := time.Now().Add(wait)
		for {
			ok, err := s.Leases.AcquireLease(ctx, name, s.Owner, leaseTTL)
			if err != nil {
				return tokens{}, core.Temporary(fmt.Errorf("refresh connection %d: %w", id, err))
			}
			if ok {
				break
			}
			if time.Now().After(deadline) {
				return tokens{}, core.Temporary(fmt.Errorf("refresh connection %d: another replica is still refreshing it", id))
			}
			select {
			case <-ctx.Done():
				return tokens{}, core.Temporary(ctx.Err())
			case <-time.After(poll):
			}
			if conn, err = s.readConnection(ctx, id, allowNeedsAuth); err != nil {
				return tokens{}, err
			}
			if !need(conn) {
				return tokensOf(conn), nil
			}
		}
		defer func() {
			if _, err := s.Leases.ReleaseLease(context.WithoutCancel(ctx), name, s.Owner); err != nil {
				s.Logger.Warn("oauth: release refresh lease", "connection_id", id, "err", err)
			}
		}()
		// Another replica may have finished just before we got the lease.
		if conn, err = s.readConnection(ctx, id, allowNeedsAuth); err != nil {
			return tokens{}, err
		}
		if !need(conn) {
			return tokensOf(conn), nil
		}
	}
	return s.grant(ctx, conn, trigger)
}

// grant asks the provider for a new access token, stores it (with a
// rotated refresh token in the same write) and records the attempt.
func (s *Service) grant(ctx context.Context, conn *core.Connection, trigger string) (tokens, error) {
	old := tokensOf(conn)
	attempt := &core.RefreshAttempt{ConnectionID: conn.ID, AttemptedAt: s.now(), Trigger: trigger}
	tok, err := s.Client.Refresh(ctx, conn, old.refresh)
	if err != nil {
		msg := redact(err.Error(), connSecrets(conn)...)
		attempt.Outcome, attempt.Error = core.RefreshFailed, msg
		s.record(ctx, attempt)
		if core.IsInvalidGrant(err) {
			s.needsAuthorization(ctx, conn, msg)
			return tokens{}, core.Permanent(fmt.Errorf("%w: the provider refused the refresh token (%s)", errNeedsAuthorization, msg))
		}
		return tokens{}, core.Temporary(fmt.Errorf("refresh the token of connection %d: %s", conn.ID, msg))
	}
	next := tokens{access: tok.AccessToken, refresh: old.refresh, expiry: tok.Expiry}
	patch := core.Settings{}
	enc, err := s.encrypt(tok.AccessToken)
	if err != nil {
		return tokens{}, core.Temporary(fmt.Errorf("refresh connection %d: %w", conn.ID, err))
	}
	patch[core.KeyAccessToken] = enc
	patch[core.KeyTokenExpiry] = nil
	if !tok.Expiry.IsZero() {
		patch[core.KeyTokenExpiry] = tok.Expiry.UTC().Format(time.RFC3339)
	}
	if tok.RefreshToken != "" && tok.RefreshToken != old.refresh && !pinned(conn, core.KeyRefreshToken) {
		enc, err := s.encrypt(tok.RefreshToken)
		if err != nil {
			return tokens{}, core.Temporary(fmt.Errorf("refresh connection %d: %w", conn.ID, err))
		}
		patch[core.KeyRefreshToken] = enc
		next.refresh = tok.RefreshToken
	}
	if err := s.State.UpdateConnectionSettings(ctx, conn.ID, patch, core.OAuthAuthorized); err != nil {
		attempt.Outcome, attempt.Error = core.RefreshFailed, "the new token could not be stored"
		s.record(ctx, attempt)
		return tokens{}, core.Temporary(fmt.Errorf("store the refreshed token of connection %d: %w", conn.ID, err))
	}
	attempt.Outcome = core.RefreshSucceeded
	if !tok.Expiry.IsZero() {
		e := tok.Expiry.UTC()
		attempt.ExpiresAt = &e
	}
	s.record(ctx, attempt)
	return next, nil
}

func (s *Service) record(ctx context.Context, a *core.RefreshAttempt) {
	if s.History == nil {
		return
	}
	if err := s.History.AddRefreshAttempt(context.WithoutCancel(ctx), a); err != nil {
		s.Logger.Warn("oauth: record refresh attempt", "connection_id", a.ConnectionID, "err", err)
	}
}

// needsAuthorization marks conn needs_authorization with the reason as its
// last error and raises oauth_refresh_failed. It runs under the
// connection's refresh lock and lease, after a read that found the
// connection usable, so it runs once per refused grant.
func (s *Service) needsAuthorization(ctx context.Context, conn *core.Connection, msg string) {
	ctx = context.WithoutCancel(ctx)
	if err := s.State.UpdateConnectionSettings(ctx, conn.ID, nil, core.OAuthNeedsAuthorization); err != nil {
		s.Logger.Error("oauth: mark connection needs authorization", "connection_id", conn.ID, "err", err)
	}
	h := core.ConnectionHealth{Status: conn.HealthStatus, CheckedAt: s.now(), Error: "OAuth refresh refused: " + msg}
	if h.Status == "" {
		h.Status = core.HealthUnknown
	}
	if conn.LastCheckedAt != nil {
		h.CheckedAt = *conn.LastCheckedAt
	}
	if err := s.State.UpdateConnectionHealth(ctx, conn.ID, h); err != nil {
		s.Logger.Error("oauth: record the refresh error", "connection_id", conn.ID, "err", err)
	}
	s.alert(ctx, conn, "needs a new authorization", "The provider refused the refresh token ("+msg+"). Authorize the connection again; it is not used until then.")
}

func (s *Service) alert(ctx context.Context, conn *core.Connection, title, msg string) {
	if s.Alerts == nil {
		return
	}
	s.Alerts.Raise(ctx, core.Alert{
		Event: core.EventOAuthRefreshFailed, ConnectionID: conn.ID, ConnectionName: conn.Name,
		Title: fmt.Sprintf("OAuth connection %q %s", conn.Name, title), Message: msg, At: s.now(),
	})
}

// RefreshResult is the answer of POST /connections/{id}/oauth-refresh-now.
type RefreshResult struct {
	Success   bool       `json:"success"`
	ExpiresAt *time.Time `json:"expires_at"`
	Error     string     `json:"error"`
}

// RefreshNow refreshes connection id's token at once (trigger manual),
// also when it needs authorization (a success makes it authorized again).
// A connection without OAuth or without a refresh token is a validation
// error; a provider failure is a result with Success false.
func (s *Service) RefreshNow(ctx context.Context, id int64) (*RefreshResult, error) {
	s.init()
	conn, _, err := s.oauthConnection(ctx, id, "connection_id")
	if err != nil {
		return nil, err
	}
	before := tokensOf(conn)
	if before.refresh == "" {
		return nil, core.InvalidField("refresh_token", "The connection has no refresh token: authorize it first.")
	}
	t, err := s.refresh(ctx, id, core.RefreshManual, true, func(c *core.Connection) bool {
		return tokensOf(c).access == before.access || c.OAuthStatus == core.OAuthNeedsAuthorization
	})
	if err != nil {
		return &RefreshResult{Error: redact(err.Error(), connSecrets(conn)...)}, nil
	}
	out := &RefreshResult{Success: true}
	if !t.expiry.IsZero() {
		e := t.expiry.UTC()
		out.ExpiresAt = &e
	}
	return out, nil
}

// RefreshHistory returns one page of connection id's refresh attempts, newest
// first, and their total; ENOTFOUND for an unknown connection.
func (s *Service) RefreshHistory(ctx context.Context, id int64, offset, limit int) ([]core.RefreshAttempt, int, error) {
	if _, err := s.Connections.Effective(ctx, id); err != nil {
		return nil, 0, err
	}
	items, total, err := s.History.FindRefreshAttempts(ctx, id, offset, limit)
	if err != nil {
		return nil, 0, fmt.Errorf("refresh history of connection %d: %w", id, err)
	}
	if items == nil {
		items = []core.RefreshAttempt{}
	}
	return items, total, nil
}
