package storetest

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// oauthTests returns the contract tests of this part of the store.
func (s *suite) oauthTests() []struct {
	name string
	fn   func(t *testing.T)
} {
	return []struct {
		name string
		fn   func(t *testing.T)
	}{
		{"OAuthStateSingleUse", s.testOAuthStateSingleUse},
		{"OAuthStateExpiry", s.testOAuthStateExpiry},
		{"OAuthStateConcurrentConsume", s.testOAuthStateConcurrentConsume},
		{"RefreshHistory", s.testRefreshHistory},
	}
}

func (s *suite) testOAuthStateSingleUse(t *testing.T) {
	ctx := context.Background()
	db := s.open(t, s.prefix())
	want := &core.OAuthState{
		State: "google:abc123", Provider: core.ProviderGoogle, UserID: 7, ConnectionID: 42,
		CodeVerifier: "enc:verifier", RedirectURI: "https://site.example/cb",
		ExpiresAt: time.Now().UTC().Add(core.OAuthStateTTL).Truncate(time.Microsecond),
	}
	if err := db.OAuth().SaveOAuthState(ctx, want); err != nil {
		t.Fatalf("SaveOAuthState: %v", err)
	}
	other := &core.OAuthState{State: "google:other", Provider: core.ProviderGoogle, UserID: 1, ConnectionID: 1, ExpiresAt: want.ExpiresAt}
	if err := db.OAuth().SaveOAuthState(ctx, other); err != nil {
		t.Fatal(err)
	}
	// The table keeps the hash, never the state.
	var raw string
	if err := db.Gorm().Raw("SELECT state_hash FROM " + db.TableName("oauth_states") + " WHERE connection_id = 42").Scan(&raw).Error; err != nil {
		t.Fatal(err)
	}
	if len(raw) != 64 || raw == want.State {
		t.Fatalf("stored key %q, want a 64-character hash", raw)
	}

	for _, bad := range []string{"", "google:ABC123", "abc123", "google:abc1234"} {
		_, err := db.OAuth().ConsumeOAuthState(ctx, bad)
		WantCode(t, err, core.ENOTFOUND)
	}
	got, err := db.OAuth().ConsumeOAuthState(ctx, want.State)
	if err != nil {
		t.Fatalf("ConsumeOAuthState: %v", err)
	}
	if got.Provider != want.Provider || got.UserID != 7 || got.ConnectionID != 42 || got.CodeVerifier != want.CodeVerifier ||
		got.RedirectURI != want.RedirectURI || !got.ExpiresAt.Equal(want.ExpiresAt) || got.State != want.State {
		t.Fatalf("consumed %+v, want %+v", got, want)
	}
	_, err = db.OAuth().ConsumeOAuthState(ctx, want.State)
	WantCode(t, err, core.ENOTFOUND)
	// The other state is untouched.
	if _, err := db.OAuth().ConsumeOAuthState(ctx, other.State); err != nil {
		t.Fatalf("other state: %v", err)
	}
	WantCode(t, db.OAuth().SaveOAuthState(ctx, &core.OAuthState{}), core.EINVALID)
}

func (s *suite) testOAuthStateExpiry(t *testing.T) {
	ctx := context.Background()
	db := s.open(t, s.prefix())
	past := &core.OAuthState{State: "expired", Provider: core.ProviderZoho, UserID: 1, ConnectionID: 1, ExpiresAt: time.Now().Add(-time.Second)}
	if err := db.OAuth().SaveOAuthState(ctx, past); err != nil {
		t.Fatal(err)
	}
	_, err := db.OAuth().ConsumeOAuthState(ctx, "expired")
	WantCode(t, err, core.ENOTFOUND)

	// Saving another state purges expired ones.
	stale := &core.OAuthState{State: "stale", Provider: core.ProviderZoho, UserID: 1, ConnectionID: 1, ExpiresAt: time.Now().Add(-time.Minute)}
	if err := db.OAuth().SaveOAuthState(ctx, stale); err != nil {
		t.Fatal(err)
	}
	fresh := &core.OAuthState{State: "fresh", Provider: core.ProviderZoho, UserID: 1, ConnectionID: 1, ExpiresAt: time.Now().Add(time.Minute)}
	if err := db.OAuth().SaveOAuthState(ctx, fresh); err != nil {
		t.Fatal(err)
	}
	var n int64
	if err := db.Gorm().Table(db.TableName("oauth_states")).Count(&n).Error; err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Fatalf("%d states stored after the purge, want 1 (the fresh one)", n)
	}
}

func (s *suite) testOAuthStateConcurrentConsume(t *testing.T) {
	ctx := context.Background()
	db := s.open(t, s.prefix())
	for round := range 5 {
		state := fmt.Sprintf("race-%d", round)
		if err := db.OAuth().SaveOAuthState(ctx, &core.OAuthState{State: state, Provider: core.ProviderMicrosoft, UserID: 1, ConnectionID: 3, ExpiresAt: time.Now().Add(time.Minute)}); err != nil {
			t.Fatal(err)
		}
		var wins, misses atomic.Int32
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				_, err := db.OAuth().ConsumeOAuthState(ctx, state)
				switch core.ErrorCode(err) {
				case "":
					wins.Add(1)
				case core.ENOTFOUND:
					misses.Add(1)
				default:
					t.Errorf("ConsumeOAuthState: %v", err)
				}
			})
		}
		wg.Wait()
		if wins.Load() != 1 || misses.Load() != 7 {
			t.Fatalf("round %d: %d consumers won and %d missed, want 1 and 7", round, wins.Load(), misses.Load())
		}
	}
}

func (s *suite) testRefreshHistory(t *testing.T) {
	ctx := context.Background()
	db := s.open(t, s.prefix())
	base := time.Now().UTC().Truncate(time.Second)
	exp := base.Add(time.Hour)
	var ids []int64
	for i := range 5 {
		a := &core.RefreshAttempt{ConnectionID: 9, AttemptedAt: base.Add(time.Duration(i) * time.Minute), Trigger: core.RefreshScheduled, Outcome: core.RefreshSucceeded, ExpiresAt: &exp}
		if i%2 == 1 {
			a.Outcome, a.Error, a.ExpiresAt, a.Trigger = core.RefreshFailed, "oauth: invalid_grant", nil, core.RefreshUnauthorized
		}
		if err := db.OAuth().AddRefreshAttempt(ctx, a); err != nil {
			t.Fatalf("AddRefreshAttempt: %v", err)
		}
		if a.ID <= 0 {
			t.Fatalf("ID not set: %+v", a)
		}
		ids = append(ids, a.ID)
	}
	if err := db.OAuth().AddRefreshAttempt(ctx, &core.RefreshAttempt{ConnectionID: 10, Trigger: core.RefreshManual, Outcome: core.RefreshSucceeded}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name          string
		conn          int64
		offset, limit int
		wantIDs       []int64
		wantTotal     int
	}{
		{"all newest first", 9, 0, 0, []int64{ids[4], ids[3], ids[2], ids[1], ids[0]}, 5},
		{"first page", 9, 0, 2, []int64{ids[4], ids[3]}, 5},
		{"last page", 9, 4, 2, []int64{ids[0]}, 5},
		{"offset only", 9, 3, 0, []int64{ids[1], ids[0]}, 5},
		{"other connection", 10, 0, 0, nil, 1},
		{"unknown connection", 11, 0, 10, nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, total, err := db.OAuth().FindRefreshAttempts(ctx, tt.conn, tt.offset, tt.limit)
			if err != nil {
				t.Fatal(err)
			}
			if total != tt.wantTotal {
				t.Fatalf("total %d, want %d", total, tt.wantTotal)
			}
			if tt.wantIDs == nil {
				if tt.conn == 10 && (len(got) != 1 || got[0].Trigger != core.RefreshManual || got[0].AttemptedAt.IsZero()) {
					t.Fatalf("connection 10: %+v", got)
				}
				return
			}
			if len(got) != len(tt.wantIDs) {
				t.Fatalf("got %d attempts, want %d", len(got), len(tt.wantIDs))
			}
			for i, a := range got {
				if a.ID != tt.wantIDs[i] {
					t.Fatalf("attempt %d has id %d, want %d", i, a.ID, tt.wantIDs[i])
				}
			}
		})
	}
	all, _, _ := db.OAuth().FindRefreshAttempts(ctx, 9, 0, 0)
	first, second := all[4], all[3]
	if !first.AttemptedAt.Equal(base) || first.Outcome != core.RefreshSucceeded || first.Trigger != core.RefreshScheduled ||
		first.ExpiresAt == nil || !first.ExpiresAt.Equal(exp) || first.Error != "" {
		t.Fatalf("first attempt read back as %+v", first)
	}
	if second.Outcome != core.RefreshFailed || second.Error != "oauth: invalid_grant" || second.ExpiresAt != nil || second.Trigger != core.RefreshUnauthorized {
		t.Fatalf("second attempt read back as %+v", second)
	}
}
