package migration_test

import (
	"context"
	"fmt"
	"maps"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/app/migration"
)

func TestGmailSMTPCandidate(t *testing.T) {
	created := time.Now().Unix()
	token := func(refresh string) string {
		return fmt.Sprintf(`{"access_token":"ya29.at","expires_in":3599,"refresh_token":%q,"scope":"https://mail.google.com/","token_type":"Bearer","created":%d}`, refresh, created)
	}
	base := func(extra map[string]any) migration.Dict {
		d := migration.Dict{
			"oauth_client_id": "123.apps.googleusercontent.com", "oauth_client_secret": "GOCSPX-secret",
			"oauth_user_email": "me@gmail.com", "oauth_access_token": token("1//refresh"),
			"from_email": "me@gmail.com", "from_name": "Me", "type_of_encryption": "tls", "smtp_port": "587",
		}
		maps.Copy(d, extra)
		return d
	}
	tests := []struct {
		name    string
		opts    migration.Dict
		status  string
		refresh any
		missing []string
		issue   string
	}{
		{"own client and refresh token: ready", base(nil), migration.StatusReady, "1//refresh", nil, "redirect URI"},
		{"no token: needs authorization", base(map[string]any{"oauth_access_token": ""}), migration.StatusNeedsAuthorization, nil, nil, "no refresh token"},
		{"token without refresh token", base(map[string]any{"oauth_access_token": token("")}), migration.StatusNeedsAuthorization, nil, nil, "no refresh token"},
		{"broken token JSON", base(map[string]any{"oauth_access_token": "{not json"}), migration.StatusNeedsAuthorization, nil, nil, "no refresh token"},
		{"no client secret: the token is unusable", base(map[string]any{"oauth_client_secret": ""}), migration.StatusNeedsPassword, nil, []string{"client_secret"}, "cannot be used"},
		{"ssl port is moved to 587", base(map[string]any{"type_of_encryption": "ssl", "smtp_port": "465"}), migration.StatusReady, "1//refresh", nil, "port 465"},
		{"alias sender is reported", base(map[string]any{"from_email": "sales@example.com"}), migration.StatusReady, "1//refresh", nil, "sales@example.com"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := migration.GmailSMTPCandidate(tt.opts)
			if c.Driver != "gmail" || c.SourceSlug != "gmail" {
				t.Fatalf("conversion %q→%q", c.SourceSlug, c.Driver)
			}
			if got := statusOf(c); got != tt.status {
				t.Errorf("status = %s, want %s (issues %v)", got, tt.status, c.Issues)
			}
			if c.Settings["refresh_token"] != tt.refresh {
				t.Errorf("refresh_token = %#v, want %#v", c.Settings["refresh_token"], tt.refresh)
			}
			if fmt.Sprint(c.Missing) != fmt.Sprint(tt.missing) {
				t.Errorf("missing = %v, want %v", c.Missing, tt.missing)
			}
			if c.Settings["delivery_mode"] != "smtp" || c.Settings["smtp_port"] != int64(587) || c.Settings["from_email"] != "me@gmail.com" {
				t.Errorf("settings = %v: want SMTP mode on 587 as me@gmail.com", c.Settings)
			}
			if tt.issue != "" && !hasIssue(c.Issues, tt.issue) {
				t.Errorf("issues %v lack %q", c.Issues, tt.issue)
			}
		})
	}
	t.Run("fresh access token is kept with its expiry", func(t *testing.T) {
		c := migration.GmailSMTPCandidate(base(nil))
		want := time.Unix(created+3599, 0).UTC().Format(time.RFC3339)
		if c.Settings["access_token"] != "ya29.at" || c.Settings["expires_at"] != want {
			t.Errorf("access token %v expiry %v, want ya29.at %s", c.Settings["access_token"], c.Settings["expires_at"], want)
		}
	})
	t.Run("expired access token is dropped", func(t *testing.T) {
		c := migration.GmailSMTPCandidate(base(map[string]any{"oauth_access_token": `{"access_token":"old","expires_in":3599,"refresh_token":"r","created":1000}`}))
		if _, ok := c.Settings["access_token"]; ok {
			t.Errorf("expired access token imported: %v", c.Settings)
		}
	})
}

func TestGmailSMTPSource(t *testing.T) {
	src, ok := migration.Lookup(migration.SourceGmailSMTP)
	if !ok {
		t.Fatal("gmail-smtp is not registered")
	}
	ctx := context.Background()
	site := &stubSite{options: map[string]any{"gmail_smtp_options": map[string]any{"oauth_client_id": "id", "oauth_client_secret": "s", "oauth_user_email": "me@gmail.com"}}}
	d, err := src.Detect(ctx, site)
	if err != nil || !d.Found || d.Active {
		t.Fatalf("Detect = %+v, %v; want found, inactive", d, err)
	}
	setup, err := src.Connections(ctx, site)
	if err != nil || len(setup.Candidates) != 1 || setup.DefaultKey != "primary" {
		t.Fatalf("Connections = %+v, %v", setup, err)
	}
	if got := statusOf(setup.Candidates[0]); got != migration.StatusNeedsAuthorization {
		t.Errorf("status = %s, want needs_authorization", got)
	}
	if src.Logs() != nil {
		t.Error("Gmail SMTP has no log table")
	}
}
