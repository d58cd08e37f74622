package migration_test

import (
	"context"
	"maps"
	"strconv"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/app/migration"
	"github.com/mailsvc/mailsvc/core"
)

func TestPostSMTPSetup(t *testing.T) {
	decode := func(v string) (string, error) {
		return (&stubSite{}).Decrypt(context.Background(), migration.SchemeBase64, v)
	}
	opts := func(extra map[string]any) migration.Dict {
		d := migration.Dict{
			"transport_type": "smtp", "sender_email": "shop@example.com", "sender_name": "Shop",
			"hostname": "smtp.example.com", "port": "587", "enc_type": "tls", "auth_type": "login",
			"basic_auth_username": "sue", "basic_auth_password": b64("s3cret"),
			"oauth_client_id": "cid", "oauth_client_secret": "csecret",
			"sendgrid_api_key": b64("SG.key"), "mailgun_api_key": b64("mg-key"), "mailgun_domain_name": "mg.example.com",
			"postmark_api_key": b64("pm-key"), "mandrill_api_key": b64("md-key"),
			"sendinblue_api_key": b64("xkeysib-1"), "sparkpost_api_key": b64("sp-key"), "mailjet_api_key": b64("mj-key"),
			"mailjet_secret_key": b64("mj-secret"), "mailersend_api_key": b64("mlsn.1"), "smtp2go_api_key": b64("api-1"), "resend_api_key": b64("re_1"),
			"ses_access_key_id": b64("AKIA"), "ses_secret_access_key": b64("sesSecret"), "ses_region": "eu-west-1",
			"office365_app_id": b64("o365id"), "office365_app_password": b64("o365secret"),
		}
		maps.Copy(d, extra)
		return d
	}
	googleToken := migration.Dict{"access_token": "at", "refresh_token": "rt", "auth_token_expires": int64(1), "vendor_name": "google"}
	tests := []struct {
		name      string
		in        migration.PostSMTPInput
		driver    string
		status    string
		settings  map[string]any
		issue     string
		constants map[string]string
	}{
		{"smtp basic auth", migration.PostSMTPInput{Options: opts(nil)}, "smtp", migration.StatusReady,
			map[string]any{"host": "smtp.example.com", "port": int64(587), "encryption": "tls", "username": "sue", "password": "s3cret", "from_email": "shop@example.com"}, "", nil},
		{"smtp password pinned by constant", migration.PostSMTPInput{Options: opts(nil)}, "smtp", migration.StatusNeedsPassword,
			map[string]any{"password": nil}, "MAILSVC_SMTP_PASSWORD", map[string]string{"POST_SMTP_AUTH_PASSWORD": "x"}},
		{"smtp undecodable password", migration.PostSMTPInput{Options: opts(map[string]any{"basic_auth_password": "!!"})}, "smtp", migration.StatusNeedsPassword,
			map[string]any{"password": nil}, "", nil},
		{"smtp oauth2 on gmail with own client", migration.PostSMTPInput{Options: opts(map[string]any{"auth_type": "oauth2", "hostname": "smtp.gmail.com"}), Token: googleToken},
			"gmail", migration.StatusReady, map[string]any{"delivery_mode": "smtp", "client_id": "cid", "client_secret": "csecret", "refresh_token": "rt"}, "redirect URI", nil},
		{"smtp oauth2 on yahoo", migration.PostSMTPInput{Options: opts(map[string]any{"auth_type": "oauth2", "hostname": "smtp.mail.yahoo.com"})},
			"", migration.StatusUnsupported, nil, "yahoo", nil},
		{"gmail api with own client", migration.PostSMTPInput{Options: opts(map[string]any{"transport_type": "gmail_api"}), Token: googleToken},
			"gmail", migration.StatusReady, map[string]any{"delivery_mode": "api", "refresh_token": "rt", "access_token": nil}, "", nil},
		{"gmail api one-click", migration.PostSMTPInput{Options: opts(map[string]any{"transport_type": "gmail_api"}), Token: googleToken, GmailOneClick: true},
			"gmail", migration.StatusNeedsAuthorization, map[string]any{"refresh_token": nil}, "one-click", nil},
		{"gmail api token of another vendor", migration.PostSMTPInput{Options: opts(map[string]any{"transport_type": "gmail_api"}), Token: migration.Dict{"refresh_token": "rt", "vendor_name": "microsoft"}},
			"gmail", migration.StatusNeedsAuthorization, map[string]any{"refresh_token": nil}, "", nil},
		{"sendgrid", migration.PostSMTPInput{Options: opts(map[string]any{"transport_type": "sendgrid_api"})}, "sendgrid", migration.StatusReady,
			map[string]any{"api_key": "SG.key", "from_email": "shop@example.com"}, "", nil},
		{"sendgrid eu region", migration.PostSMTPInput{Options: opts(map[string]any{"transport_type": "sendgrid_api", "sendgrid_region": "EU"})}, "sendgrid", migration.StatusNeedsReview,
			nil, "EU region", nil},
		{"mailgun eu", migration.PostSMTPInput{Options: opts(map[string]any{"transport_type": "mailgun_api", "mailgun_region": "on"})}, "mailgun", migration.StatusReady,
			map[string]any{"api_key": "mg-key", "domain": "mg.example.com", "region": "eu"}, "", nil},
		{"postmark key pinned by POST_SMTP_API_KEY", migration.PostSMTPInput{Options: opts(map[string]any{"transport_type": "postmark_api"})}, "postmark", migration.StatusNeedsPassword,
			map[string]any{"api_key": nil}, "MAILSVC_POSTMARK_API_KEY", map[string]string{"POST_SMTP_API_KEY": "k"}},
		{"aws ses api", migration.PostSMTPInput{Options: opts(map[string]any{"transport_type": "aws_ses_api"})}, "ses", migration.StatusReady,
			map[string]any{"access_key": "AKIA", "secret": "sesSecret", "region": "eu-west-1", "delivery_mode": "api"}, "", nil},
		{"office 365 with token", migration.PostSMTPInput{Options: opts(map[string]any{"transport_type": "office365_api"}), Office365: migration.Dict{"refresh_token": "ms-rt"}},
			"outlook", migration.StatusReady, map[string]any{"client_id": "o365id", "client_secret": "o365secret", "refresh_token": "ms-rt"}, "", nil},
		{"zoho pro", migration.PostSMTPInput{Options: opts(map[string]any{"transport_type": "zohomail_api"})}, "zoho", migration.StatusNeedsAuthorization, nil, "Zoho", nil},
		{"brevo", migration.PostSMTPInput{Options: opts(map[string]any{"transport_type": "sendinblue_api"})}, "brevo", migration.StatusReady,
			map[string]any{"api_key": "xkeysib-1", "from_email": "shop@example.com"}, "", nil},
		{"sparkpost", migration.PostSMTPInput{Options: opts(map[string]any{"transport_type": "sparkpost_api"})}, "sparkpost", migration.StatusReady,
			map[string]any{"api_key": "sp-key"}, "", nil},
		{"mailjet", migration.PostSMTPInput{Options: opts(map[string]any{"transport_type": "mailjet_api"})}, "mailjet", migration.StatusReady,
			map[string]any{"api_key": "mj-key", "api_secret": "mj-secret"}, "", nil},
		{"mailjet undecodable secret", migration.PostSMTPInput{Options: opts(map[string]any{"transport_type": "mailjet_api", "mailjet_secret_key": "!!"})}, "mailjet", migration.StatusNeedsPassword,
			map[string]any{"api_secret": nil}, "", nil},
		{"mailersend", migration.PostSMTPInput{Options: opts(map[string]any{"transport_type": "mailersend_api"})}, "mailersend", migration.StatusReady,
			map[string]any{"api_key": "mlsn.1"}, "", nil},
		{"smtp2go", migration.PostSMTPInput{Options: opts(map[string]any{"transport_type": "smtp2go_api"})}, "smtp2go", migration.StatusReady,
			map[string]any{"api_key": "api-1"}, "", nil},
		{"resend", migration.PostSMTPInput{Options: opts(map[string]any{"transport_type": "resend_api"})}, "resend", migration.StatusReady,
			map[string]any{"api_key": "re_1"}, "", nil},
		{"mandrill", migration.PostSMTPInput{Options: opts(map[string]any{"transport_type": "mandrill_api"})}, "mandrill", migration.StatusReady,
			map[string]any{"api_key": "md-key", "from_email": "shop@example.com"}, "", nil},
		{"php mail unsupported", migration.PostSMTPInput{Options: opts(map[string]any{"transport_type": "default"})}, "", migration.StatusUnsupported, nil, "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := tt.in
			in.Decode = decode
			in.Constant = func(n string) (string, bool) { v, ok := tt.constants[n]; return v, ok }
			setup := migration.PostSMTPSetup(in)
			if len(setup.Candidates) != 1 || setup.DefaultKey != "primary" || setup.FallbackKey != "" {
				t.Fatalf("setup = %+v, want one primary candidate", setup)
			}
			c := setup.Candidates[0]
			if c.Driver != tt.driver {
				t.Errorf("driver = %q, want %q", c.Driver, tt.driver)
			}
			if got := statusOf(c); got != tt.status {
				t.Errorf("status = %s, want %s (missing %v issues %v)", got, tt.status, c.Missing, c.Issues)
			}
			for k, want := range tt.settings {
				if got := c.Settings[k]; got != want {
					t.Errorf("settings[%s] = %#v, want %#v", k, got, want)
				}
			}
			if tt.issue != "" && !hasIssue(c.Issues, tt.issue) {
				t.Errorf("issues %v lack %q", c.Issues, tt.issue)
			}
		})
	}
	t.Run("fallback smtp and modes", func(t *testing.T) {
		setup := migration.PostSMTPSetup(migration.PostSMTPInput{Options: opts(map[string]any{
			"transport_type": "sendgrid_api", "fallback_smtp_enabled": "yes", "fallback_smtp_hostname": "backup.example.com",
			"fallback_smtp_port": "465", "fallback_smtp_security": "ssl", "fallback_smtp_use_auth": "login",
			"fallback_smtp_username": "fb", "fallback_smtp_password": b64("fbpass"), "fallback_from_email": "fb@example.com",
			"run_mode": "log_only", "mail_log_enabled": "false",
		}), Decode: decode})
		if len(setup.Candidates) != 2 || setup.DefaultKey != "primary" || setup.FallbackKey != "fallback" {
			t.Fatalf("setup = %+v, want primary and fallback", setup)
		}
		fb := setup.Candidates[1]
		if fb.Driver != "smtp" || fb.Settings["password"] != "fbpass" || fb.Settings["port"] != int64(465) || fb.Settings["encryption"] != "ssl" || statusOf(fb) != migration.StatusReady {
			t.Errorf("fallback = %+v", fb)
		}
		if !hasIssue(setup.Issues, "log-only") || !hasIssue(setup.Issues, "log was off") {
			t.Errorf("setup issues %v lack the run mode and log notes", setup.Issues)
		}
	})
}

func TestPostSMTPLogs(t *testing.T) {
	paris, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		t.Skip("no tz database")
	}
	src, _ := migration.Lookup(migration.SourcePostSMTP)
	logs := src.Logs()
	// 2026-07-01 12:00:00 in Paris (UTC+2) is 10:00 UTC; Post SMTP stores
	// current_time('timestamp'): the wall clock read as UTC.
	wall := time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC).Unix()
	wantTime := time.Date(2026, 7, 1, 10, 0, 0, 0, time.UTC)
	table := []migration.Row{
		{"id": "1", "success": "1", "from_header": "Shop <shop@example.com>", "to_header": "ann@example.org, bob@example.org", "cc_header": "cid@example.org",
			"original_subject": "Order 1", "original_message": "<p>Hi</p>", "original_headers": "Content-Type: text/html; charset=UTF-8\r\nX-Order: 1",
			"transport_uri": "smtp:tls:login://smtp.example.com:587", "time": strconv.FormatInt(wall, 10)},
		{"id": "2", "success": "SMTP Error: Could not authenticate.", "to_header": "ann@example.org", "original_subject": "Order 2", "original_message": "plain", "time": strconv.FormatInt(wall, 10)},
		{"id": "3", "success": "Sent ( ** Fallback ** )", "to_header": "ann@example.org", "original_subject": "Order 3", "original_message": "x", "time": strconv.FormatInt(wall, 10)},
		{"id": "4", "success": "In Queue", "to_header": "ann@example.org", "original_subject": "Order 4", "original_message": "x", "time": strconv.FormatInt(wall, 10)},
		{"id": "5", "success": "1", "to_header": "", "original_to": "", "original_subject": "nobody", "original_message": "x", "time": strconv.FormatInt(wall, 10)},
	}
	site := &stubSite{loc: paris, tables: map[string][]migration.Row{
		"post_smtp_logs": table,
		"posts": {
			{"ID": "7", "post_title": "Legacy sent", "post_content": "body 7", "post_excerpt": "", "post_date": "2020-01-01 13:00:00", "post_date_gmt": "2020-01-01 12:00:00"},
			{"ID": "9", "post_title": "Legacy failed", "post_content": "body 9", "post_excerpt": "Connection refused", "post_date": "2020-01-02 13:00:00", "post_date_gmt": "0000-00-00 00:00:00"},
		},
		"postmeta": {
			{"meta_id": "1", "post_id": "7", "meta_key": "success", "meta_value": "1"},
			{"meta_id": "2", "post_id": "7", "meta_key": "to_header", "meta_value": "old@example.org"},
			{"meta_id": "3", "post_id": "7", "meta_key": "original_message", "meta_value": "raw 7"},
			{"meta_id": "4", "post_id": "9", "meta_key": "success", "meta_value": ""},
			{"meta_id": "5", "post_id": "9", "meta_key": "original_to", "meta_value": "old9@example.org"},
			{"meta_id": "6", "post_id": "8", "meta_key": "to_header", "meta_value": "other@example.org"},
		},
	}}
	ctx := context.Background()
	ok, _, err := logs.Available(ctx, site)
	if err != nil || !ok {
		t.Fatalf("Available = %v, %v", ok, err)
	}
	// Read in chunks of 3: the legacy posts come first, then the table.
	var all []migration.LogEntry
	after := int64(0)
	for i := 0; i < 10; i++ {
		chunk, err := logs.ReadLogs(ctx, site, after, 3)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, chunk...)
		if len(chunk) < 3 {
			break
		}
		after = chunk[len(chunk)-1].Position
	}
	if len(all) != 7 {
		t.Fatalf("read %d entries, want 7 (2 legacy + 5 table)", len(all))
	}
	for i := 1; i < len(all); i++ {
		if all[i].Position <= all[i-1].Position {
			t.Fatalf("positions not ascending: %d then %d", all[i-1].Position, all[i].Position)
		}
	}
	l7, l9 := all[0], all[1]
	if l7.Status != core.StatusDelivered || l7.Message.Subject != "Legacy sent" || l7.Message.Text != "raw 7" ||
		len(l7.Message.To) != 1 || l7.Message.To[0].Email != "old@example.org" || !l7.Time.Equal(time.Date(2020, 1, 1, 12, 0, 0, 0, time.UTC)) {
		t.Errorf("legacy 7 = %+v", l7)
	}
	if l9.Status != core.StatusFailed || l9.Error != "Connection refused" || l9.Message.To[0].Email != "old9@example.org" ||
		!l9.Time.Equal(time.Date(2020, 1, 2, 12, 0, 0, 0, time.UTC)) {
		t.Errorf("legacy 9 (local post_date in Paris) = %+v", l9)
	}
	r1 := all[2]
	if r1.Status != core.StatusDelivered || !r1.Time.Equal(wantTime) || r1.Message.HTML != "<p>Hi</p>" || r1.Message.From.Email != "shop@example.com" ||
		len(r1.Message.To) != 2 || len(r1.Message.Cc) != 1 || r1.Provider != "smtp" || len(r1.Message.Headers) != 1 || r1.Message.Headers[0].Value != "1" {
		t.Errorf("table row 1 = %+v", r1)
	}
	wantStatus := []string{core.StatusFailed, core.StatusDelivered, core.StatusQueued}
	for i, st := range wantStatus {
		if all[3+i].Status != st {
			t.Errorf("row %d status = %s, want %s", i+2, all[3+i].Status, st)
		}
	}
	if all[3].Error != "SMTP Error: Could not authenticate." {
		t.Errorf("failed row error = %q", all[3].Error)
	}
	if !all[6].Skip {
		t.Errorf("a row without recipients must be skipped: %+v", all[6])
	}
}
