package oauth

import (
	"context"
	"fmt"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// dueMargin is added to the run interval: a token expiring within it of
// the next run is refreshed now.
const dueMargin = 2 * time.Minute

// DueResult counts what one run of the scheduled refresh did.
type DueResult struct {
	Refreshed int `json:"refreshed"`
	Failed    int `json:"failed"`
}

// RefreshDue is the scheduler's oauth_refresh job: every active OAuth
// connection with a refresh token whose access token expires before the
// next run (now + interval + a margin) is refreshed, with up to
// oauth_refresh_max_retries attempts each (trigger scheduled, a short
// backoff between them, each attempt in the history). A connection that
// still fails raises oauth_refresh_failed once; one refused for good
// (invalid_grant) is moved to needs_authorization, with its own alert,
// and not retried. interval ≤ 0 reads oauth_refresh_interval (minutes).
func (s *Service) RefreshDue(ctx context.Context, interval time.Duration) (DueResult, error) {
	s.init()
	var res DueResult
	settings := map[string]any{}
	if s.Settings != nil {
		got, err := s.Settings.Get(ctx)
		if err != nil {
			return res, fmt.Errorf("oauth refresh: read settings: %w", err)
		}
		settings = got
	}
	st := core.DecodeGeneralSettings(settings)
	if interval <= 0 {
		interval = time.Duration(st.OAuthRefreshInterval) * time.Minute
	}
	retries := int(st.OAuthRefreshMaxRetries)
	backoff := s.RetryBackoff
	if backoff <= 0 {
		backoff = 2 * time.Second
	}
	horizon := s.now().Add(interval + dueMargin)
	due := func(c *core.Connection) bool {
		t := tokensOf(c)
		return t.access == "" || (!t.expiry.IsZero() && t.expiry.Before(horizon))
	}
	conns, _, err := s.Connections.List(ctx, 0, 0)
	if err != nil {
		return res, fmt.Errorf("oauth refresh: list connections: %w", err)
	}
	for _, c := range conns {
		d, ok := core.LookupDriver(c.Driver)
		if !ok || d.OAuthProvider == "" || !c.IsActive || c.OAuthStatus == core.OAuthNeedsAuthorization {
			continue
		}
		conn, err := s.Connections.Effective(ctx, c.ID)
		if err != nil || tokensOf(conn).refresh == "" || !due(conn) {
			continue
		}
		var lastErr error
		for attempt := 1; attempt <= retries; attempt++ {
			if attempt > 1 {
				select {
				case <-ctx.Done():
					return res, ctx.Err()
				case <-time.After(backoff * time.Duration(attempt-1)):
				}
			}
			_, lastErr = s.refresh(ctx, conn.ID, core.RefreshScheduled, false, due)
			if lastErr == nil || !core.IsTemporary(lastErr) {
				break
			}
		}
		switch {
		case lastErr == nil:
			res.Refreshed++
		case core.IsTemporary(lastErr):
			res.Failed++
			s.alert(ctx, conn, "could not refresh its token",
				fmt.Sprintf("%d refresh attempts failed; the last one: %s", retries, redact(lastErr.Error(), connSecrets(conn)...)))
		default:
			res.Failed++
		}
	}
	return res, nil
}
