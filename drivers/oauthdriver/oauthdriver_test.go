package oauthdriver_test

import (
	"context"
	"errors"
	"testing"

	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/drivers/oauthdriver"
	"github.com/mailsvc/mailsvc/drivers/oauthdriver/oauthdrivertest"
)

func TestWithToken(t *testing.T) {
	refused := oauthdriver.Unauthorized(errors.New("HTTP 401"))
	tests := []struct {
		name          string
		answers       map[string]error // token → what the provider says
		wantTokens    []string
		wantRefreshes int
		wantErr       bool
		wantPermanent bool
	}{
		{"accepted at once", map[string]error{"t1": nil}, []string{"t1"}, 0, false, false},
		{"refused then refreshed", map[string]error{"t1": refused, "t2": nil}, []string{"t1", "t2"}, 1, false, false},
		{"refused twice is permanent", map[string]error{"t1": refused, "t2": refused}, []string{"t1", "t2"}, 1, true, true},
		{"other errors pass through", map[string]error{"t1": core.Temporary(errors.New("HTTP 503"))}, []string{"t1"}, 0, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := oauthdrivertest.NewTokens("t1", "t2")
			var used []string
			err := oauthdriver.WithToken(context.Background(), src, 7, func(tok string) error {
				used = append(used, tok)
				return tt.answers[tok]
			})
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if tt.wantErr && core.IsTemporary(err) == tt.wantPermanent {
				t.Fatalf("err %v: temporary = %v, want permanent %v", err, core.IsTemporary(err), tt.wantPermanent)
			}
			if len(used) != len(tt.wantTokens) || src.Refreshes() != tt.wantRefreshes {
				t.Fatalf("tokens used %v (refreshes %d), want %v (%d)", used, src.Refreshes(), tt.wantTokens, tt.wantRefreshes)
			}
			for i := range used {
				if used[i] != tt.wantTokens[i] {
					t.Fatalf("tokens used %v, want %v", used, tt.wantTokens)
				}
			}
		})
	}
}

func TestWithTokenWithoutService(t *testing.T) {
	called := false
	err := oauthdriver.WithToken(context.Background(), nil, 1, func(string) error { called = true; return nil })
	if err == nil || core.IsTemporary(err) || called {
		t.Fatalf("err = %v (temporary %v), called %v: want a permanent error and no call", err, core.IsTemporary(err), called)
	}
}

func TestTokenFieldsAreSecret(t *testing.T) {
	d := core.Driver{Fields: oauthdriver.TokenFields()}
	for _, key := range []string{oauthdriver.KeyAccessToken, oauthdriver.KeyRefreshToken} {
		if f := d.Field(key); f == nil || f.Type != core.FieldPassword {
			t.Fatalf("%s must be a password field, got %+v", key, f)
		}
	}
	if f := d.Field(oauthdriver.KeyTokenExpiry); f == nil || core.IsSensitiveKey(f.Key, nil) {
		t.Fatalf("expires_at must exist and not be sensitive, got %+v", f)
	}
}
