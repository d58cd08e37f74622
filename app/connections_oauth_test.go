package app_test

import (
	"context"
	"testing"

	"github.com/mailsvc/mailsvc/app"
	"github.com/mailsvc/mailsvc/core"
)

func init() {
	core.Register(core.Driver{
		Slug:          "apptestoauth",
		Name:          "Test OAuth driver",
		OAuthProvider: core.ProviderGoogle,
		Fields: []core.Field{
			{Key: "client_id", Type: core.FieldString, Required: true},
			{Key: core.KeyRefreshToken, Type: core.FieldPassword},
		},
		New: func(*core.Connection, core.DriverEnv) (core.Transport, error) { return nil, nil },
	})
}

// TestOAuthStatusFollowsTheRefreshToken: an OAuth connection is pending
// until it has a refresh token, authorized once it has one; a driver
// without OAuth has no OAuth status.
func TestOAuthStatusFollowsTheRefreshToken(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name     string
		driver   string
		settings map[string]any
		pinned   bool
		want     string
	}{
		{"no token yet", "apptestoauth", map[string]any{"client_id": "id"}, false, core.OAuthPending},
		{"pasted refresh token", "apptestoauth", map[string]any{"client_id": "id", "refresh_token": "rt"}, false, core.OAuthAuthorized},
		{"refresh token pinned by a constant", "apptestoauth", map[string]any{"client_id": "id"}, true, core.OAuthAuthorized},
		{"not an OAuth driver", "apptestmail", map[string]any{"host": "smtp.example.com"}, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture()
			if tt.pinned {
				f.pins[core.KeyRefreshToken] = core.Pin{Constant: "MAILSVC_APPTESTOAUTH_REFRESH_TOKEN", Value: "pinned"}
			}
			c, err := f.svc.Create(ctx, app.ConnectionInput{Name: ptr("c"), Driver: ptr(tt.driver), Settings: tt.settings})
			if err != nil {
				t.Fatal(err)
			}
			if c.OAuthStatus != tt.want {
				t.Fatalf("oauth_status = %q, want %q", c.OAuthStatus, tt.want)
			}
		})
	}

	// A verdict of the OAuth service is not undone by an edit.
	f := newFixture()
	c, err := f.svc.Create(ctx, app.ConnectionInput{Name: ptr("c"), Driver: ptr("apptestoauth"), Settings: map[string]any{"client_id": "id", "refresh_token": "rt"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.store.UpdateConnectionSettings(ctx, c.ID, nil, core.OAuthNeedsAuthorization); err != nil {
		t.Fatal(err)
	}
	c, err = f.svc.Update(ctx, c.ID, app.ConnectionInput{Name: ptr("renamed")})
	if err != nil {
		t.Fatal(err)
	}
	if c.OAuthStatus != core.OAuthNeedsAuthorization {
		t.Fatalf("after an edit oauth_status = %q, want %q", c.OAuthStatus, core.OAuthNeedsAuthorization)
	}
}
