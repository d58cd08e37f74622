package storetest

import (
	"context"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// connectionStateTests returns the contract tests of this part of the store.
func (s *suite) connectionStateTests() []struct {
	name string
	fn   func(t *testing.T)
} {
	return []struct {
		name string
		fn   func(t *testing.T)
	}{
		{"ConnectionSettingsPatch", s.testConnectionSettingsPatch},
		{"ConnectionSettingsConcurrentPatches", s.testConnectionSettingsConcurrent},
		{"ConnectionHealth", s.testConnectionHealth},
	}
}

func (s *suite) testConnectionSettingsPatch(t *testing.T) {
	ctx := context.Background()
	db := s.open(t, s.prefix())
	c := &core.Connection{Name: "Gmail", Driver: "gmail", IsActive: true, OAuthStatus: core.OAuthPending,
		Settings: core.Settings{"client_id": "cid", "client_secret": "enc:v1:s"}}
	if err := db.Connections().CreateConnection(ctx, c); err != nil {
		t.Fatal(err)
	}
	other := &core.Connection{Name: "Other", Driver: "smtp", Settings: core.Settings{"host": "h"}}
	if err := db.Connections().CreateConnection(ctx, other); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name       string
		patch      core.Settings
		status     string
		want       core.Settings
		wantStatus string
	}{
		{"add tokens and authorize",
			core.Settings{"token": "enc:v1:at", "refresh_token": "enc:v1:rt", "expires_at": "2030-01-01T00:00:00Z"},
			core.OAuthAuthorized,
			core.Settings{"client_id": "cid", "client_secret": "enc:v1:s", "token": "enc:v1:at", "refresh_token": "enc:v1:rt", "expires_at": "2030-01-01T00:00:00Z"},
			core.OAuthAuthorized},
		{"rotate without a status change",
			core.Settings{"token": "enc:v1:at2", "refresh_token": "enc:v1:rt2"},
			"",
			core.Settings{"client_id": "cid", "client_secret": "enc:v1:s", "token": "enc:v1:at2", "refresh_token": "enc:v1:rt2", "expires_at": "2030-01-01T00:00:00Z"},
			core.OAuthAuthorized},
		{"nil removes keys",
			core.Settings{"token": nil, "refresh_token": nil, "expires_at": nil, "absent": nil},
			core.OAuthNeedsAuthorization,
			core.Settings{"client_id": "cid", "client_secret": "enc:v1:s"},
			core.OAuthNeedsAuthorization},
		{"empty patch only sets status", core.Settings{}, core.OAuthPending,
			core.Settings{"client_id": "cid", "client_secret": "enc:v1:s"}, core.OAuthPending},
	}
	prev := c.UpdatedAt
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			time.Sleep(2 * time.Millisecond) // so UpdatedAt visibly moves
			if err := db.Connections().UpdateConnectionSettings(ctx, c.ID, st.patch, st.status); err != nil {
				t.Fatalf("UpdateConnectionSettings: %v", err)
			}
			got, err := db.Connections().FindConnectionByID(ctx, c.ID)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got.Settings, st.want) || got.OAuthStatus != st.wantStatus {
				t.Fatalf("settings %v, status %q; want %v, %q", got.Settings, got.OAuthStatus, st.want, st.wantStatus)
			}
			if !got.UpdatedAt.After(prev) {
				t.Fatalf("UpdatedAt %v did not move past %v", got.UpdatedAt, prev)
			}
			prev = got.UpdatedAt
			if got.Name != "Gmail" || got.Driver != "gmail" || !got.IsActive {
				t.Fatalf("user-edited fields changed: %+v", got)
			}
		})
	}
	o, err := db.Connections().FindConnectionByID(ctx, other.ID)
	if err != nil || !reflect.DeepEqual(o.Settings, core.Settings{"host": "h"}) || o.OAuthStatus != "" {
		t.Fatalf("the other connection changed: %+v, %v", o, err)
	}
	for _, id := range []int64{0, other.ID + 100} {
		WantCode(t, db.Connections().UpdateConnectionSettings(ctx, id, core.Settings{"a": "b"}, core.OAuthAuthorized), core.ENOTFOUND)
	}
}

func (s *suite) testConnectionSettingsConcurrent(t *testing.T) {
	ctx := context.Background()
	prefix := s.prefix()
	db := s.open(t, prefix)
	db2 := s.open(t, prefix)
	c := &core.Connection{Name: "c", Driver: "outlook", Settings: core.Settings{"keep": "me"}}
	if err := db.Connections().CreateConnection(ctx, c); err != nil {
		t.Fatal(err)
	}
	const n = 8
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		h := db
		if i%2 == 1 {
			h = db2
		}
		wg.Go(func() {
			errs[i] = h.Connections().UpdateConnectionSettings(ctx, c.ID, core.Settings{fmt.Sprintf("k%d", i): int64(i)}, "")
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("patch %d: %v", i, err)
		}
	}
	got, err := db.Connections().FindConnectionByID(ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := core.Settings{"keep": "me"}
	for i := range n {
		want[fmt.Sprintf("k%d", i)] = int64(i)
	}
	if !reflect.DeepEqual(got.Settings, want) {
		t.Fatalf("after concurrent patches %v, want every key (no lost update) %v", got.Settings, want)
	}
}

func (s *suite) testConnectionHealth(t *testing.T) {
	ctx := context.Background()
	db := s.open(t, s.prefix())
	c := &core.Connection{Name: "smtp", Driver: "smtp", IsActive: true, Settings: core.Settings{"host": "h"}}
	if err := db.Connections().CreateConnection(ctx, c); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2030, 5, 6, 7, 8, 9, 123456789, time.FixedZone("X", 3600))
	steps := []core.ConnectionHealth{
		{Status: core.HealthDown, CheckedAt: at, Error: "dial tcp 127.0.0.1:1: connection refused"},
		{Status: core.HealthDown, CheckedAt: at, Error: "dial tcp 127.0.0.1:1: connection refused"}, // unchanged values
		{Status: core.HealthDegraded, CheckedAt: at.Add(time.Minute)},
		{Status: core.HealthHealthy, CheckedAt: at.Add(2 * time.Minute)},
	}
	for i, h := range steps {
		if err := db.Connections().UpdateConnectionHealth(ctx, c.ID, h); err != nil {
			t.Fatalf("step %d: UpdateConnectionHealth: %v", i, err)
		}
		got, err := db.Connections().FindConnectionByID(ctx, c.ID)
		if err != nil {
			t.Fatal(err)
		}
		wantAt := h.CheckedAt.UTC().Truncate(time.Microsecond)
		if got.HealthStatus != h.Status || got.LastError != h.Error || got.LastCheckedAt == nil || !got.LastCheckedAt.Equal(wantAt) {
			t.Fatalf("step %d: health %q, error %q, checked %v; want %q, %q, %v", i, got.HealthStatus, got.LastError, got.LastCheckedAt, h.Status, h.Error, wantAt)
		}
		// A check is not an edit: updated_at and settings stay.
		if !got.UpdatedAt.Equal(c.UpdatedAt) || !reflect.DeepEqual(got.Settings, c.Settings) {
			t.Fatalf("step %d: health write changed updated_at %v→%v or settings %v", i, c.UpdatedAt, got.UpdatedAt, got.Settings)
		}
	}
	WantCode(t, db.Connections().UpdateConnectionHealth(ctx, c.ID+100, core.ConnectionHealth{Status: core.HealthDown, CheckedAt: at}), core.ENOTFOUND)
}
