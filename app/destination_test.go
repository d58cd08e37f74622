package app_test

import (
	"context"
	"reflect"
	"sort"
	"testing"

	"github.com/mailsvc/mailsvc/app"
	"github.com/mailsvc/mailsvc/core"

	_ "github.com/mailsvc/mailsvc/drivers/all"
)

// destinationCase is one connection of a built-in driver and an edit of it.
type destinationCase struct {
	name     string
	driver   string
	settings map[string]any // at create, secrets included
	edit     map[string]any // the PUT's settings
	pins     map[string]core.Pin
	// wantErrors: the 422's data.errors (nil: the edit is accepted).
	wantErrors map[string]string
	// wantKept and wantGone: secrets the edited connection still holds
	// (with their value) and no longer holds.
	wantKept  map[string]string
	wantGone  []string
	wantOAuth string // the OAuth status after the edit, "" to skip
}

var (
	smtpConn = map[string]any{"host": "smtp.one.example", "port": float64(587), "encryption": "tls",
		"username": "mailer", "password": "smtp-secret", "from_email": "site@example.com"}
	outlookConn = map[string]any{"client_id": "cid", "client_secret": "app-secret",
		core.KeyAccessToken: "access-old", core.KeyRefreshToken: "refresh-old", core.KeyTokenExpiry: "2030-01-01T00:00:00Z"}
)

func with(base map[string]any, extra map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range base {
		out[k] = v
	}
	for k, v := range extra {
		out[k] = v
	}
	return out
}

// TestStoredSecretsFollowNoMovedDestination: across the built-in drivers,
// an edit that changes a destination field and keeps a stored secret
// (sent back masked, or not sent) is a 422 naming each secret to enter
// again, and stores nothing; OAuth tokens are dropped instead and the
// connection needs authorization. Entering the secrets again with the
// new destination works, a change of any other field keeps them, and a
// secret pinned by a constant stays usable.
func TestStoredSecretsFollowNoMovedDestination(t *testing.T) {
	again := func(what string) string { return "Enter the " + what + " again: the server changed." }
	tests := []destinationCase{
		{name: "smtp host", driver: "smtp", settings: smtpConn,
			edit:       map[string]any{"host": "smtp.two.example", "password": core.Mask, "username": core.Mask},
			wantErrors: map[string]string{"password": again("password"), "username": again("username")}},
		{name: "smtp port, secrets not sent", driver: "smtp", settings: smtpConn,
			edit:       map[string]any{"port": float64(2525)},
			wantErrors: map[string]string{"password": again("password"), "username": again("username")}},
		{name: "smtp encryption", driver: "smtp", settings: smtpConn,
			edit:       map[string]any{"encryption": "none", "password": core.Mask},
			wantErrors: map[string]string{"password": again("password"), "username": again("username")}},
		{name: "smtp port to its default is no move", driver: "smtp", settings: with(smtpConn, map[string]any{"port": nil}),
			edit:     map[string]any{"port": float64(587), "password": core.Mask},
			wantKept: map[string]string{"password": "smtp-secret", "username": "mailer"}},
		{name: "smtp from_name only", driver: "smtp", settings: smtpConn,
			edit:     map[string]any{"from_name": "The Shop", "password": core.Mask, "username": core.Mask},
			wantKept: map[string]string{"password": "smtp-secret", "username": "mailer"}},
		{name: "smtp host with the secrets entered again", driver: "smtp", settings: smtpConn,
			edit:     map[string]any{"host": "smtp.two.example", "password": "new-secret", "username": "mailer"},
			wantKept: map[string]string{"password": "new-secret", "username": "mailer"}},
		{name: "smtp host, password pinned by a constant", driver: "smtp", settings: smtpConn,
			pins:       map[string]core.Pin{"password": {Value: "pinned-secret", Constant: "MAILSVC_SMTP_PASSWORD"}},
			edit:       map[string]any{"host": "smtp.two.example", "password": core.Mask},
			wantErrors: map[string]string{"username": again("username")}},
		{name: "smtp host, both secrets pinned", driver: "smtp", settings: smtpConn,
			pins: map[string]core.Pin{"password": {Value: "pinned-secret", Constant: "MAILSVC_SMTP_PASSWORD"},
				"username": {Value: "pinned-user", Constant: "MAILSVC_SMTP_USERNAME"}},
			edit:     map[string]any{"host": "smtp.two.example"},
			wantKept: map[string]string{"password": "pinned-secret", "username": "pinned-user"}},
		{name: "smtp invalid value and kept secret", driver: "smtp", settings: smtpConn,
			edit: map[string]any{"host": "smtp.two.example", "timeout": "not-a-number"},
			wantErrors: map[string]string{"password": again("password"), "username": again("username"),
				"timeout": "Must be a whole number."}},
		{name: "sendgrid base_url", driver: "sendgrid", settings: map[string]any{"api_key": "SG.old"},
			edit:       map[string]any{"base_url": "https://relay.example", "api_key": core.Mask},
			wantErrors: map[string]string{"api_key": again("API key")}},
		{name: "sendgrid base_url with the key entered again", driver: "sendgrid", settings: map[string]any{"api_key": "SG.old"},
			edit:     map[string]any{"base_url": "https://relay.example", "api_key": "SG.new"},
			wantKept: map[string]string{"api_key": "SG.new"}},
		{name: "sendgrid from_name only", driver: "sendgrid", settings: map[string]any{"api_key": "SG.old"},
			edit:     map[string]any{"from_name": "Shop", "api_key": core.Mask},
			wantKept: map[string]string{"api_key": "SG.old"}},
		{name: "postmark base_url", driver: "postmark", settings: map[string]any{"api_key": "pm-old", "base_url": "https://api.postmarkapp.com"},
			edit:       map[string]any{"base_url": ""},
			wantErrors: map[string]string{"api_key": again("server API token")}},
		{name: "mailgun base_url", driver: "mailgun", settings: map[string]any{"api_key": "mg-old", "domain": "mg.example.com"},
			edit:       map[string]any{"base_url": "https://relay.example"},
			wantErrors: map[string]string{"api_key": again("private API key")}},
		{name: "mailgun region is no destination", driver: "mailgun", settings: map[string]any{"api_key": "mg-old", "domain": "mg.example.com"},
			edit:     map[string]any{"region": "eu"},
			wantKept: map[string]string{"api_key": "mg-old"}},
		{name: "ses custom_endpoint", driver: "ses", settings: map[string]any{"region": "us-east-1", "access_key": "AKIAOLD", "secret": "ses-old"},
			edit:       map[string]any{"custom_endpoint": "https://relay.example"},
			wantErrors: map[string]string{"access_key": again("access key ID"), "secret": again("secret access key")}},
		{name: "ses smtp_port", driver: "ses", settings: map[string]any{"delivery_mode": "smtp", "region": "us-east-1",
			"smtp_username": "ses-user", "smtp_password": "ses-pass"},
			edit:       map[string]any{"smtp_port": float64(2587)},
			wantErrors: map[string]string{"smtp_username": again("SMTP username"), "smtp_password": again("SMTP password")}},
		{name: "outlook oauth_base_url", driver: "outlook", settings: outlookConn,
			edit:       map[string]any{"oauth_base_url": "https://login.elsewhere.example", "client_secret": core.Mask},
			wantErrors: map[string]string{"client_secret": again("client secret")}},
		{name: "outlook oauth_base_url with the client secret entered again", driver: "outlook", settings: outlookConn,
			edit:     map[string]any{"oauth_base_url": "https://login.elsewhere.example", "client_secret": "app-secret-2"},
			wantKept: map[string]string{"client_secret": "app-secret-2"},
			wantGone: []string{core.KeyAccessToken, core.KeyRefreshToken, core.KeyTokenExpiry}, wantOAuth: core.OAuthNeedsAuthorization},
		{name: "outlook oauth_base_url with a refresh token pasted", driver: "outlook", settings: outlookConn,
			edit: map[string]any{"oauth_base_url": "https://login.elsewhere.example", "client_secret": "app-secret-2",
				core.KeyRefreshToken: "refresh-new"},
			wantKept:  map[string]string{core.KeyRefreshToken: "refresh-new"},
			wantGone:  []string{core.KeyAccessToken, core.KeyTokenExpiry},
			wantOAuth: core.OAuthAuthorized},
		{name: "outlook from_name only", driver: "outlook", settings: outlookConn,
			edit:      map[string]any{"from_name": "Shop"},
			wantKept:  map[string]string{"client_secret": "app-secret", core.KeyAccessToken: "access-old", core.KeyRefreshToken: "refresh-old"},
			wantOAuth: core.OAuthAuthorized},
		{name: "gmail smtp_host", driver: "gmail", settings: with(outlookConn, map[string]any{"delivery_mode": "smtp", "from_email": "me@example.com"}),
			edit:       map[string]any{"smtp_host": "smtp.elsewhere.example"},
			wantErrors: map[string]string{"client_secret": again("client secret")}},
		{name: "mailjet base_url", driver: "mailjet", settings: map[string]any{"api_key": "mj-old", "api_secret": "mj-secret"},
			edit:       map[string]any{"base_url": "https://relay.example"},
			wantErrors: map[string]string{"api_key": again("API key"), "api_secret": again("secret key")}},
		{name: "resend base_url", driver: "resend", settings: map[string]any{"api_key": "re_old", "webhook_secret": "whsec_b2xk"},
			edit:       map[string]any{"base_url": "https://relay.example"},
			wantErrors: map[string]string{"api_key": again("API key"), "webhook_secret": again("webhook signing secret")}},
		{name: "sparkpost region is no destination", driver: "sparkpost", settings: map[string]any{"api_key": "sp-old"},
			edit:     map[string]any{"region": "eu"},
			wantKept: map[string]string{"api_key": "sp-old"}},
		{name: "zoho base_url", driver: "zoho", settings: with(outlookConn, map[string]any{"from_email": "me@example.com"}),
			edit:      map[string]any{"base_url": "https://mail.elsewhere.example", "client_secret": "app-secret-2"},
			wantGone:  []string{core.KeyAccessToken, core.KeyRefreshToken},
			wantOAuth: core.OAuthNeedsAuthorization},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			f, created := newPinnedConnection(t, tt.driver, tt.settings, tt.pins)
			before, _ := f.store.FindConnectionByID(ctx, created.ID)
			beforeSettings := before.Settings.Clone()
			_, err := f.svc.Update(ctx, created.ID, app.ConnectionInput{Settings: tt.edit})
			if tt.wantErrors != nil {
				if core.ErrorCode(err) != core.EINVALID || !reflect.DeepEqual(core.ErrorFields(err), tt.wantErrors) {
					t.Fatalf("update: %v %v, want the errors %v", err, core.ErrorFields(err), tt.wantErrors)
				}
				after, _ := f.store.FindConnectionByID(ctx, created.ID)
				if !reflect.DeepEqual(after.Settings, beforeSettings) {
					t.Fatalf("a refused edit stored %v (was %v)", after.Settings, beforeSettings)
				}
				return
			}
			if err != nil {
				t.Fatalf("update: %v %v", err, core.ErrorFields(err))
			}
			eff, err := f.svc.Effective(ctx, created.ID)
			if err != nil {
				t.Fatal(err)
			}
			for k, want := range tt.wantKept {
				if got := eff.Settings.String(k); got != want {
					t.Errorf("%s = %q, want %q", k, got, want)
				}
			}
			for _, k := range tt.wantGone {
				if v, ok := eff.Settings[k]; ok {
					t.Errorf("%s still held: %v", k, v)
				}
			}
			if tt.wantOAuth != "" && eff.OAuthStatus != tt.wantOAuth {
				t.Errorf("oauth status %q, want %q", eff.OAuthStatus, tt.wantOAuth)
			}
		})
	}
}

// TestImportDropsSecretsOfAMovedConnection: Import replaces a
// connection's settings with a snapshot's, keeps its secrets while the
// destination stays, drops them (and marks an OAuth connection
// needs_authorization) when it moves, validates like Create with the
// secrets allowed to be missing, and lets a constant win over the file.
func TestImportDropsSecretsOfAMovedConnection(t *testing.T) {
	tests := []struct {
		name        string
		driver      string
		fileDriver  string // "": driver
		stored      map[string]any
		file        core.Settings
		pins        map[string]core.Pin
		wantDropped []string
		wantErrors  []string
		wantKept    map[string]string
		wantOAuth   string
	}{
		{name: "smtp port", driver: "smtp", stored: smtpConn,
			file:        core.Settings{"host": "smtp.one.example", "port": float64(2525), "encryption": "tls", "from_email": "site@example.com"},
			wantDropped: []string{"password", "username"}},
		{name: "smtp from_name", driver: "smtp", stored: smtpConn,
			file:     core.Settings{"host": "smtp.one.example", "port": float64(587), "encryption": "tls", "from_email": "site@example.com", "from_name": "Shop"},
			wantKept: map[string]string{"password": "smtp-secret", "username": "mailer", "from_name": "Shop"}},
		{name: "smtp timeout not a number", driver: "smtp", stored: smtpConn,
			file:       core.Settings{"host": "smtp.one.example", "timeout": "not-a-number"},
			wantErrors: []string{"timeout"}},
		{name: "smtp host pinned: the file's host is ignored", driver: "smtp", stored: smtpConn,
			pins:     map[string]core.Pin{"host": {Value: "smtp.one.example", Constant: "MAILSVC_SMTP_HOST"}},
			file:     core.Settings{"host": "smtp.evil.example", "port": float64(587), "encryption": "tls"},
			wantKept: map[string]string{"password": "smtp-secret", "host": "smtp.one.example"}},
		{name: "sendgrid base_url", driver: "sendgrid", stored: map[string]any{"api_key": "SG.old"},
			file: core.Settings{"base_url": "http://127.0.0.1:9"}, wantDropped: []string{"api_key"}},
		{name: "smtp becomes sendgrid", driver: "smtp", fileDriver: "sendgrid", stored: smtpConn,
			file: core.Settings{"from_email": "site@example.com"}, wantDropped: []string{"password", "username"}},
		{name: "outlook oauth_base_url", driver: "outlook", stored: outlookConn,
			file:        core.Settings{"client_id": "cid", "oauth_base_url": "https://login.elsewhere.example"},
			wantDropped: []string{core.KeyAccessToken, "client_secret", core.KeyRefreshToken},
			wantOAuth:   core.OAuthNeedsAuthorization},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			f, created := newPinnedConnection(t, tt.driver, tt.stored, tt.pins)
			driver := tt.driver
			if tt.fileDriver != "" {
				driver = tt.fileDriver
			}
			in := app.ImportedConnection{Name: "c", Driver: driver, IsActive: true, Settings: tt.file}
			checkErr := f.svc.CheckImport(in)
			_, dropped, err := f.svc.Import(ctx, f.store, created.ID, in)
			if tt.wantErrors != nil {
				for _, e := range []error{checkErr, err} {
					var got []string
					for k := range core.ErrorFields(e) {
						got = append(got, k)
					}
					sort.Strings(got)
					if !reflect.DeepEqual(got, tt.wantErrors) {
						t.Fatalf("errors %v (%v), want %v", got, e, tt.wantErrors)
					}
				}
				return
			}
			if checkErr != nil || err != nil {
				t.Fatalf("check: %v; import: %v %v", checkErr, err, core.ErrorFields(err))
			}
			if !reflect.DeepEqual(dropped, tt.wantDropped) {
				t.Fatalf("dropped %v, want %v", dropped, tt.wantDropped)
			}
			eff, _ := f.svc.Effective(ctx, created.ID)
			for _, k := range tt.wantDropped {
				if v, ok := eff.Settings[k]; ok {
					t.Errorf("%s still held: %v", k, v)
				}
			}
			for k, want := range tt.wantKept {
				if got := eff.Settings.String(k); got != want {
					t.Errorf("%s = %q, want %q", k, got, want)
				}
			}
			if tt.wantOAuth != "" && eff.OAuthStatus != tt.wantOAuth {
				t.Errorf("oauth status %q, want %q", eff.OAuthStatus, tt.wantOAuth)
			}
		})
	}
}

// TestImportCreatesWithoutSecrets: a new connection from a snapshot has
// no secret and still passes its driver's rules; settings the driver
// rejects are refused.
func TestImportCreatesWithoutSecrets(t *testing.T) {
	ctx := context.Background()
	f := newFixture()
	conn, dropped, err := f.svc.Import(ctx, f.store, 0, app.ImportedConnection{Name: "Relay", Driver: "smtp", IsActive: true,
		Settings: core.Settings{"host": "smtp.one.example", "port": float64(587)}})
	if err != nil || dropped != nil || conn.ID == 0 {
		t.Fatalf("import: %+v %v %v", conn, dropped, err)
	}
	if err := f.svc.CheckImport(app.ImportedConnection{Name: "Relay", Driver: "smtp", Settings: core.Settings{"host": "not a host"}}); core.ErrorFields(err)["host"] == "" {
		t.Fatalf("an invalid host passed: %v", err)
	}
}

// newPinnedConnection creates a connection of driver with settings in a
// new fixture where any endpoint is allowed (on-premise gateways, tests:
// the binding is then what keeps a secret from following a move), with
// pins set after it is created.
func newPinnedConnection(t *testing.T, driver string, settings map[string]any, pins map[string]core.Pin) (*fixture, *core.Connection) {
	t.Helper()
	f := newFixture()
	f.svc.AllowCustomEndpoints = true
	created, err := f.svc.Create(context.Background(), app.ConnectionInput{Name: ptr("c"), Driver: ptr(driver), Settings: settings})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	for k, p := range pins {
		f.pins[k] = p
	}
	return f, created
}
