package oauth_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/app"
	"github.com/mailsvc/mailsvc/app/oauth"
	"github.com/mailsvc/mailsvc/core"
)

// authorized creates a google connection holding token "old" expiring in
// expiresIn and refresh token "rt-0".
func (f *fixture) authorized(t *testing.T, expiresIn time.Duration) int64 {
	t.Helper()
	return f.googleConn(t, map[string]any{
		core.KeyAccessToken: "old", core.KeyRefreshToken: "rt-0",
		core.KeyTokenExpiry: f.clock.Now().Add(expiresIn).Format(time.RFC3339),
	})
}

func TestAccessTokenRefreshesBeforeExpiry(t *testing.T) {
	tests := []struct {
		name        string
		expiresIn   time.Duration
		want        string
		wantRefresh int
	}{
		{"valid for an hour", time.Hour, "old", 0},
		{"valid for two minutes", 2 * time.Minute, "old", 0},
		{"valid for 30 seconds", 30 * time.Second, "access-1", 1},
		{"expired", -time.Hour, "access-1", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			id := f.authorized(t, tt.expiresIn)
			got, err := f.svc.AccessToken(context.Background(), id)
			if err != nil || got != tt.want {
				t.Fatalf("AccessToken = %q, %v; want %q", got, err, tt.want)
			}
			calls := f.client.Calls("Refresh")
			if len(calls) != tt.wantRefresh {
				t.Fatalf("%d refreshes, want %d", len(calls), tt.wantRefresh)
			}
			if tt.wantRefresh == 0 {
				return
			}
			if calls[0].RefreshToken != "rt-0" {
				t.Fatalf("refreshed with %q", calls[0].RefreshToken)
			}
			h, total, _ := f.history.FindRefreshAttempts(context.Background(), id, 0, 0)
			if total != 1 || h[0].Trigger != core.RefreshBeforeSend || h[0].Outcome != core.RefreshSucceeded || h[0].ExpiresAt == nil {
				t.Fatalf("history %+v", h)
			}
			// No rotation: the refresh token stays.
			if eff := f.effective(t, id); eff.Settings.String(core.KeyRefreshToken) != "rt-0" || eff.Settings.String(core.KeyAccessToken) != "access-1" {
				t.Fatalf("stored %v", eff.Settings)
			}
		})
	}
}

func TestRotationStoredInOneWrite(t *testing.T) {
	f := newFixture(t)
	id := f.authorized(t, -time.Minute)
	f.client.Next = func(n int) *core.OAuthToken {
		return &core.OAuthToken{AccessToken: "new-at", RefreshToken: "rotated-rt", Expiry: f.clock.Now().Add(time.Hour)}
	}
	if _, err := f.svc.AccessToken(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	w := f.state.Writes()
	if len(w) != 1 {
		t.Fatalf("%d writes, want 1", len(w))
	}
	if _, ok := w[0][core.KeyRefreshToken]; !ok {
		t.Fatalf("the write %v lacks the rotated refresh token", w[0])
	}
	if _, ok := w[0][core.KeyAccessToken]; !ok {
		t.Fatalf("the write %v lacks the access token", w[0])
	}
	eff := f.effective(t, id)
	if eff.Settings.String(core.KeyRefreshToken) != "rotated-rt" || eff.Settings.String(core.KeyAccessToken) != "new-at" {
		t.Fatalf("stored %v", eff.Settings)
	}
	if raw := f.conns.Raw(id).Settings.String(core.KeyRefreshToken); !strings.HasPrefix(raw, "test-enc:") {
		t.Fatalf("rotated refresh token stored as %q", raw)
	}
}

func TestPinnedRefreshTokenNeverOverwritten(t *testing.T) {
	f := newFixture(t)
	id := f.googleConn(t, map[string]any{core.KeyAccessToken: "old", core.KeyTokenExpiry: f.clock.Now().Add(-time.Minute).Format(time.RFC3339)})
	f.pins[core.KeyRefreshToken] = core.Pin{Constant: "MAILSVC_OAUTHGOOGLETEST_REFRESH_TOKEN", Value: "pinned-rt"}
	f.client.Next = func(int) *core.OAuthToken {
		return &core.OAuthToken{AccessToken: "new-at", RefreshToken: "rotated-rt", Expiry: f.clock.Now().Add(time.Hour)}
	}
	if _, err := f.svc.AccessToken(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	if c := f.client.Calls("Refresh"); len(c) != 1 || c[0].RefreshToken != "pinned-rt" {
		t.Fatalf("refresh calls %+v, want the pinned token", c)
	}
	if _, ok := f.state.Writes()[0][core.KeyRefreshToken]; ok {
		t.Fatal("the pinned refresh token was overwritten")
	}
}

func TestRefreshedSingleFlight(t *testing.T) {
	for _, replicas := range []int{1, 2} {
		t.Run(map[int]string{1: "one process", 2: "two replicas"}[replicas], func(t *testing.T) {
			f := newFixture(t)
			id := f.authorized(t, time.Hour)
			svcs := []interface {
				Refreshed(context.Context, int64, string) (string, error)
			}{f.svc}
			if replicas == 2 {
				svcs = append(svcs, f.newService())
			}
			f.client.Block = make(chan struct{})
			var wg sync.WaitGroup
			results := make(chan string, 20)
			for i := range 20 {
				wg.Go(func() {
					tok, err := svcs[i%len(svcs)].Refreshed(context.Background(), id, "old")
					if err != nil {
						t.Errorf("Refreshed: %v", err)
					}
					results <- tok
				})
			}
			close(f.client.Block) // let the refresh answer
			wg.Wait()
			close(results)
			for tok := range results {
				if tok != "access-1" {
					t.Fatalf("a caller got %q, want access-1", tok)
				}
			}
			if n := len(f.client.Calls("Refresh")); n != 1 {
				t.Fatalf("%d refreshes, want 1", n)
			}
			// A token that was already replaced is not refreshed again.
			if tok, err := f.svc.Refreshed(context.Background(), id, "old"); err != nil || tok != "access-1" || len(f.client.Calls("Refresh")) != 1 {
				t.Fatalf("stale rejection: %q, %v", tok, err)
			}
			h, _, _ := f.history.FindRefreshAttempts(context.Background(), id, 0, 0)
			if len(h) != 1 || h[0].Trigger != core.RefreshUnauthorized {
				t.Fatalf("history %+v", h)
			}
		})
	}
}

func TestInvalidGrant(t *testing.T) {
	f := newFixture(t)
	id := f.authorized(t, -time.Minute)
	f.client.Err = &core.OAuthError{Code: "invalid_grant", Description: "Token has been expired or revoked for rt-0", Status: 400}
	var wg sync.WaitGroup
	for range 5 {
		wg.Go(func() {
			_, err := f.svc.AccessToken(context.Background(), id)
			if err == nil || core.IsTemporary(err) || !strings.Contains(err.Error(), "needs authorization") {
				t.Errorf("AccessToken err = %v, want a permanent needs authorization", err)
			}
		})
	}
	wg.Wait()
	if n := len(f.client.Calls("Refresh")); n != 1 {
		t.Fatalf("%d refreshes, want 1", n)
	}
	eff := f.effective(t, id)
	if eff.OAuthStatus != core.OAuthNeedsAuthorization || !strings.Contains(eff.LastError, "invalid_grant") {
		t.Fatalf("connection %+v", eff)
	}
	alerts := f.alerts.Raised()
	if len(alerts) != 1 || alerts[0].Event != core.EventOAuthRefreshFailed || alerts[0].ConnectionID != id {
		t.Fatalf("alerts %+v, want one oauth_refresh_failed", alerts)
	}
	h, _, _ := f.history.FindRefreshAttempts(context.Background(), id, 0, 0)
	if len(h) != 1 || h[0].Outcome != core.RefreshFailed || strings.Contains(h[0].Error, "rt-0") {
		t.Fatalf("history %+v (secrets must be masked)", h)
	}
	// Later calls fail without asking the provider.
	f.client.Err = nil
	for _, call := range []func() error{
		func() error { _, err := f.svc.AccessToken(context.Background(), id); return err },
		func() error { _, err := f.svc.Refreshed(context.Background(), id, "old"); return err },
	} {
		if err := call(); err == nil || core.IsTemporary(err) {
			t.Fatalf("err %v, want permanent", err)
		}
	}
	if n := len(f.client.Calls("Refresh")); n != 1 || len(f.alerts.Raised()) != 1 {
		t.Fatalf("%d refreshes and %d alerts after needs_authorization", n, len(f.alerts.Raised()))
	}
	// A manual refresh may repair it.
	res, err := f.svc.RefreshNow(context.Background(), id)
	if err != nil || !res.Success || f.effective(t, id).OAuthStatus != core.OAuthAuthorized {
		t.Fatalf("RefreshNow = %+v, %v", res, err)
	}
}

func TestTemporaryFailure(t *testing.T) {
	f := newFixture(t)
	id := f.authorized(t, -time.Minute)
	f.client.Err = errors.New("dial tcp: connection refused")
	_, err := f.svc.AccessToken(context.Background(), id)
	if err == nil || !core.IsTemporary(err) {
		t.Fatalf("err %v, want temporary", err)
	}
	if eff := f.effective(t, id); eff.OAuthStatus == core.OAuthNeedsAuthorization || len(f.alerts.Raised()) != 0 {
		t.Fatal("a temporary failure moved the connection or alerted")
	}
}

func TestRefreshNowAndHistory(t *testing.T) {
	f := newFixture(t)
	id := f.authorized(t, time.Hour)
	noRT := f.googleConn(t, map[string]any{core.KeyAccessToken: "x"})
	plain := f.create(t, "p", "plaintest", nil)
	for _, tt := range []struct {
		id   int64
		code string
	}{{999, core.ENOTFOUND}, {plain, core.EINVALID}, {noRT, core.EINVALID}} {
		if _, err := f.svc.RefreshNow(context.Background(), tt.id); core.ErrorCode(err) != tt.code {
			t.Fatalf("RefreshNow(%d) err %v, want %s", tt.id, err, tt.code)
		}
	}
	res, err := f.svc.RefreshNow(context.Background(), id)
	if err != nil || !res.Success || res.ExpiresAt == nil {
		t.Fatalf("RefreshNow = %+v, %v", res, err)
	}
	f.client.Err = errors.New("boom")
	res, err = f.svc.RefreshNow(context.Background(), id)
	if err != nil || res.Success || !strings.Contains(res.Error, "boom") {
		t.Fatalf("failing RefreshNow = %+v, %v", res, err)
	}
	h, total, err := f.svc.RefreshHistory(context.Background(), id, 0, 1)
	if err != nil || total != 2 || len(h) != 1 || h[0].Outcome != core.RefreshFailed || h[0].Trigger != core.RefreshManual {
		t.Fatalf("history %+v total %d, %v", h, total, err)
	}
	if _, _, err := f.svc.RefreshHistory(context.Background(), 999, 0, 10); core.ErrorCode(err) != core.ENOTFOUND {
		t.Fatalf("unknown connection history: %v", err)
	}
}

func TestRefreshDue(t *testing.T) {
	f := newFixture(t)
	soon := f.authorized(t, 10*time.Minute)   // expires before the next run (15 min)
	later := f.authorized(t, 2*time.Hour)     // not due
	flaky := f.authorized(t, 5*time.Minute)   // fails twice, then works
	broken := f.authorized(t, 5*time.Minute)  // always fails
	noRT := f.googleConn(t, map[string]any{}) // no refresh token
	inactive := f.authorized(t, time.Minute)
	off := false
	name := "g"
	if _, err := f.connApp.Update(context.Background(), inactive, appInput(&name, &off)); err != nil {
		t.Fatal(err)
	}
	failures := map[int64]int{flaky: 2, broken: 99}
	var mu sync.Mutex
	f.svc.Client = &scriptedClient{OAuthClientFake: f.client, fail: func(id int64) bool {
		mu.Lock()
		defer mu.Unlock()
		if failures[id] > 0 {
			failures[id]--
			return true
		}
		return false
	}}
	res, err := f.svc.RefreshDue(context.Background(), 15*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if res.Refreshed != 2 || res.Failed != 1 {
		t.Fatalf("result %+v, want 2 refreshed and 1 failed", res)
	}
	count := func(id int64) (ok, failed int) {
		h, _, _ := f.history.FindRefreshAttempts(context.Background(), id, 0, 0)
		for _, a := range h {
			if a.Trigger != core.RefreshScheduled {
				t.Fatalf("trigger %q", a.Trigger)
			}
			if a.Outcome == core.RefreshSucceeded {
				ok++
			} else {
				failed++
			}
		}
		return
	}
	for _, tt := range []struct {
		id             int64
		wantOK, wantKO int
	}{{soon, 1, 0}, {later, 0, 0}, {flaky, 1, 2}, {broken, 0, 3}, {noRT, 0, 0}, {inactive, 0, 0}} {
		if ok, ko := count(tt.id); ok != tt.wantOK || ko != tt.wantKO {
			t.Errorf("connection %d: %d successes and %d failures, want %d and %d", tt.id, ok, ko, tt.wantOK, tt.wantKO)
		}
	}
	alerts := f.alerts.Raised()
	if len(alerts) != 1 || alerts[0].ConnectionID != broken {
		t.Fatalf("alerts %+v, want one for connection %d", alerts, broken)
	}
}

// scriptedClient fails Refresh for the connections fail says.
type scriptedClient struct {
	OAuthClientFake interface {
		core.OAuthClient
	}
	fail func(id int64) bool
}

func (c *scriptedClient) AuthCodeURL(conn *core.Connection, r, s, v string) (string, error) {
	return c.OAuthClientFake.AuthCodeURL(conn, r, s, v)
}

func (c *scriptedClient) Exchange(ctx context.Context, conn *core.Connection, r, code, v string) (*core.OAuthToken, error) {
	return c.OAuthClientFake.Exchange(ctx, conn, r, code, v)
}

func (c *scriptedClient) Refresh(ctx context.Context, conn *core.Connection, rt string) (*core.OAuthToken, error) {
	if c.fail(conn.ID) {
		return nil, errors.New("503 service unavailable")
	}
	return c.OAuthClientFake.Refresh(ctx, conn, rt)
}

// countingConnections counts the reads of connections.
type countingConnections struct {
	oauth.Connections
	mu    sync.Mutex
	reads int
}

func (c *countingConnections) Effective(ctx context.Context, id int64) (*core.Connection, error) {
	c.mu.Lock()
	c.reads++
	c.mu.Unlock()
	return c.Connections.Effective(ctx, id)
}

// TestAccessTokenFollowsTheStoredConnection: every AccessToken reads the
// stored connection, so a token the connection no longer holds (an edit
// that moved its authorization server dropped it) is never handed out,
// not even by the process that read it a moment before.
func TestAccessTokenFollowsTheStoredConnection(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	reads := &countingConnections{Connections: f.connApp}
	f.svc.Connections = reads
	id := f.authorized(t, 10*time.Minute)
	for range 3 {
		if got, err := f.svc.AccessToken(ctx, id); err != nil || got != "old" {
			t.Fatalf("AccessToken = %q, %v", got, err)
		}
	}
	if reads.reads != 3 {
		t.Fatalf("%d connection reads for three sends, want 3", reads.reads)
	}
	if _, err := f.connApp.Update(ctx, id, app.ConnectionInput{Settings: map[string]any{
		"oauth_base_url": "https://accounts.google.com/elsewhere", "client_secret": "csecret-again"}}); err != nil {
		t.Fatal(err)
	}
	got, err := f.svc.AccessToken(ctx, id)
	if err == nil || got != "" || core.IsTemporary(err) {
		t.Fatalf("after the move AccessToken = %q, %v; want a permanent needs-authorization error", got, err)
	}
	if n := len(f.client.Calls("Refresh")); n != 0 {
		t.Fatalf("%d refreshes after the move, want none", n)
	}
}

// TestEndpointOffTheProviderHostsStopsOAuth: a connection whose stored
// oauth_base_url is off the provider's hosts (saved while custom
// endpoints were allowed, imported, or written in the database) gets no
// refresh, authorization or token check: nothing is sent to that server.
func TestEndpointOffTheProviderHostsStopsOAuth(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	f.connApp.AllowCustomEndpoints = true
	id := f.googleConn(t, map[string]any{
		core.KeyAccessToken: "old", core.KeyRefreshToken: "rt-0",
		core.KeyTokenExpiry: f.clock.Now().Add(-time.Hour).Format(time.RFC3339),
		"oauth_base_url":    "http://127.0.0.1:9",
	})
	f.connApp.AllowCustomEndpoints = false

	_, err := f.svc.AccessToken(ctx, id)
	if err == nil || core.IsTemporary(err) || !strings.Contains(err.Error(), "oauth_base_url") {
		t.Errorf("AccessToken = %v, want a permanent error naming oauth_base_url", err)
	}
	if _, err := f.svc.RefreshNow(ctx, id); err == nil {
		t.Errorf("RefreshNow succeeded")
	}
	_, err = f.svc.Authorize(ctx, oauth.AuthorizeInput{User: admin, Provider: core.ProviderGoogle, ConnectionID: fmt.Sprint(id)})
	if core.ErrorFields(err)["connection_id"] == "" {
		t.Errorf("Authorize = %v, want a validation error on connection_id", err)
	}
	_, err = f.svc.StoreToken(ctx, id, oauth.TokenInput{AccessToken: "pasted"})
	if core.ErrorFields(err)["connection_id"] == "" {
		t.Errorf("StoreToken = %v, want a validation error on connection_id", err)
	}
	for _, method := range []string{"Refresh", "AuthCodeURL", "Exchange"} {
		if n := len(f.client.Calls(method)); n != 0 {
			t.Errorf("%d %s calls to the OAuth client", n, method)
		}
	}
}
