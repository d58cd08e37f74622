package apptest

import (
	"context"
	"fmt"
	"net/url"
	"sort"
	"sync"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// OAuthStateStore is an in-memory core.OAuthStateStore. Now, when set,
// is its clock (for expiry tests).
type OAuthStateStore struct {
	Now func() time.Time

	mu   sync.Mutex
	rows map[string]core.OAuthState
}

// NewOAuthStateStore returns an empty store.
func NewOAuthStateStore() *OAuthStateStore {
	return &OAuthStateStore{rows: map[string]core.OAuthState{}}
}

func (s *OAuthStateStore) now() time.Time { return core.NowFrom(s.Now) }

// SaveOAuthState implements core.OAuthStateStore.
func (s *OAuthStateStore) SaveOAuthState(_ context.Context, st *core.OAuthState) error {
	if st.State == "" {
		return core.Errorf(core.EINVALID, "An OAuth state must not be empty.")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rows[st.State] = *st
	return nil
}

// ConsumeOAuthState implements core.OAuthStateStore.
func (s *OAuthStateStore) ConsumeOAuthState(_ context.Context, state string) (*core.OAuthState, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.rows[state]
	delete(s.rows, state)
	if !ok || !s.now().Before(st.ExpiresAt) {
		return nil, core.Errorf(core.ENOTFOUND, "The OAuth state is unknown, used or expired.")
	}
	return &st, nil
}

// Pending returns the stored states, for asserting what was saved.
func (s *OAuthStateStore) Pending() []core.OAuthState {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]core.OAuthState, 0, len(s.rows))
	for _, st := range s.rows {
		out = append(out, st)
	}
	return out
}

// RefreshHistoryStore is an in-memory core.RefreshHistoryStore.
type RefreshHistoryStore struct {
	mu     sync.Mutex
	nextID int64
	rows   []core.RefreshAttempt
}

// AddRefreshAttempt implements core.RefreshHistoryStore.
func (s *RefreshHistoryStore) AddRefreshAttempt(_ context.Context, a *core.RefreshAttempt) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextID++
	a.ID = s.nextID
	if a.AttemptedAt.IsZero() {
		a.AttemptedAt = time.Now().UTC()
	}
	s.rows = append(s.rows, *a)
	return nil
}

// FindRefreshAttempts implements core.RefreshHistoryStore.
func (s *RefreshHistoryStore) FindRefreshAttempts(_ context.Context, connID int64, offset, limit int) ([]core.RefreshAttempt, int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var all []core.RefreshAttempt
	for _, a := range s.rows {
		if a.ConnectionID == connID {
			all = append(all, a)
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].ID > all[j].ID })
	total := len(all)
	if offset >= len(all) {
		return nil, total, nil
	}
	all = all[max(offset, 0):]
	if limit > 0 && limit < len(all) {
		all = all[:limit]
	}
	return all, total, nil
}

// AlertRecorder records raised alerts; it implements core.Alerter.
type AlertRecorder struct {
	mu     sync.Mutex
	raised []core.Alert
}

// Raise implements core.Alerter.
func (a *AlertRecorder) Raise(_ context.Context, al core.Alert) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.raised = append(a.raised, al)
}

// Raised returns the alerts raised so far.
func (a *AlertRecorder) Raised() []core.Alert {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]core.Alert(nil), a.raised...)
}

// Take returns the alerts raised since the last Take and forgets them.
func (a *AlertRecorder) Take() []core.Alert {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := a.raised
	a.raised = nil
	return out
}

// OAuthCall is one call an OAuthClient fake received.
type OAuthCall struct {
	Method       string // AuthCodeURL, Exchange or Refresh
	ConnectionID int64
	RedirectURI  string
	Code         string
	Verifier     string
	RefreshToken string
}

// OAuthClient is a fake core.OAuthClient. AuthCodeURL answers
// https://consent.example/{client_id}?redirect_uri=..&state=..&code_challenge=<verifier>.
// Exchange and Refresh answer with Next (a fresh "access-N" token valid
// for an hour when nil) or fail with Err; Block, when set, is received
// from before Refresh answers. Every call is recorded.
type OAuthClient struct {
	mu sync.Mutex
	// Err fails Exchange and Refresh.
	Err error
	// FailTimes, when > 0, limits Err to that many calls.
	FailTimes int
	// Next, when set, builds the token of the nth (1-based) grant.
	Next  func(n int) *core.OAuthToken
	Block chan struct{}
	calls []OAuthCall
	n     int
}

// AuthCodeURL implements core.OAuthClient.
func (c *OAuthClient) AuthCodeURL(conn *core.Connection, redirectURI, state, verifier string) (string, error) {
	c.record(OAuthCall{Method: "AuthCodeURL", ConnectionID: conn.ID, RedirectURI: redirectURI, Verifier: verifier})
	q := url.Values{"redirect_uri": {redirectURI}, "state": {state}, "code_challenge": {verifier}}
	return "https://consent.example/" + url.PathEscape(conn.Settings.String("client_id")) + "?" + q.Encode(), nil
}

// Exchange implements core.OAuthClient.
func (c *OAuthClient) Exchange(_ context.Context, conn *core.Connection, redirectURI, code, verifier string) (*core.OAuthToken, error) {
	return c.grant(OAuthCall{Method: "Exchange", ConnectionID: conn.ID, RedirectURI: redirectURI, Code: code, Verifier: verifier})
}

// Refresh implements core.OAuthClient.
func (c *OAuthClient) Refresh(ctx context.Context, conn *core.Connection, refreshToken string) (*core.OAuthToken, error) {
	if c.Block != nil {
		select {
		case <-c.Block:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return c.grant(OAuthCall{Method: "Refresh", ConnectionID: conn.ID, RefreshToken: refreshToken})
}

func (c *OAuthClient) record(call OAuthCall) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls = append(c.calls, call)
}

func (c *OAuthClient) grant(call OAuthCall) (*core.OAuthToken, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls = append(c.calls, call)
	if c.Err != nil {
		err := c.Err
		if c.FailTimes > 0 {
			c.FailTimes--
			if c.FailTimes == 0 {
				c.Err = nil
			}
		}
		return nil, err
	}
	c.n++
	if c.Next != nil {
		return c.Next(c.n), nil
	}
	return &core.OAuthToken{AccessToken: fmt.Sprintf("access-%d", c.n), TokenType: "Bearer", Expiry: time.Now().Add(time.Hour)}, nil
}

// Calls returns the calls of one method ("" for all).
func (c *OAuthClient) Calls(method string) []OAuthCall {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []OAuthCall
	for _, call := range c.calls {
		if method == "" || call.Method == method {
			out = append(out, call)
		}
	}
	return out
}
