package migration_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"maps"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/app/migration"
)

// stubSite is an in-memory migration.Site for the source tests: options
// as Site.Option decodes them, constants, tables of rows, and secrets
// that open only when listed in sealed (any other value of a sealed
// scheme is undecryptable). Base64 schemes decode for real.
type stubSite struct {
	options   map[string]any
	unread    map[string]bool // options whose serialization is broken
	constants map[string]string
	plugins   []string
	tables    map[string][]migration.Row
	serial    map[string]any // column text → unserialized value
	sealed    map[string]string
	loc       *time.Location
}

func (s *stubSite) Option(_ context.Context, name string) (any, bool, error) {
	if s.unread[name] {
		return nil, true, migration.ErrUnreadable
	}
	v, ok := s.options[name]
	return v, ok, nil
}

func (s *stubSite) Unserialize(v string) (any, error) {
	if x, ok := s.serial[v]; ok {
		return x, nil
	}
	return nil, fmt.Errorf("not serialized")
}

func (s *stubSite) ActivePlugins(context.Context) ([]string, error) { return s.plugins, nil }

func (s *stubSite) Constant(name string) (string, bool) {
	v, ok := s.constants[name]
	return v, ok
}

func (s *stubSite) HasTable(_ context.Context, table string) (bool, error) {
	_, ok := s.tables[table]
	return ok, nil
}

func (s *stubSite) EstimateRows(_ context.Context, table string) (int64, error) {
	return int64(len(s.tables[table])), nil
}

func (s *stubSite) CountRows(_ context.Context, table, _ string, _ ...any) (int64, error) {
	return int64(len(s.tables[table])), nil
}

// Rows applies the keyset and, for postmeta, the post_id IN filter.
func (s *stubSite) Rows(_ context.Context, q migration.RowQuery) ([]migration.Row, error) {
	rows := append([]migration.Row(nil), s.tables[q.Table]...)
	sort.Slice(rows, func(i, j int) bool {
		a, _ := strconv.ParseInt(rows[i][q.Key], 10, 64)
		b, _ := strconv.ParseInt(rows[j][q.Key], 10, 64)
		return a < b
	})
	in := map[string]bool{}
	if strings.Contains(q.Where, "post_id IN") {
		for _, a := range q.Args {
			in[fmt.Sprint(a)] = true
		}
	}
	var out []migration.Row
	for _, r := range rows {
		k, _ := strconv.ParseInt(r[q.Key], 10, 64)
		if k <= q.After || (len(in) > 0 && !in[r["post_id"]]) {
			continue
		}
		out = append(out, r)
		if len(out) == q.Limit {
			break
		}
	}
	return out, nil
}

func (s *stubSite) Location(context.Context) (*time.Location, error) {
	if s.loc == nil {
		return time.UTC, nil
	}
	return s.loc, nil
}

func (s *stubSite) Decrypt(_ context.Context, scheme migration.Scheme, v string) (string, error) {
	switch scheme {
	case migration.SchemeBase64:
		b, err := base64.StdEncoding.DecodeString(v)
		if err != nil {
			return "", migration.ErrUndecryptable
		}
		return string(b), nil
	case migration.SchemeBase64Unpadded:
		b, err := base64.RawStdEncoding.DecodeString(strings.TrimRight(v, "="))
		if err != nil {
			return "", migration.ErrUndecryptable
		}
		return string(b), nil
	}
	if p, ok := s.sealed[string(scheme)+":"+v]; ok {
		return p, nil
	}
	return "", migration.ErrUndecryptable
}

// b64 is standard base64, as the plugins store "encoded" secrets.
func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// oauthDrivers are our OAuth drivers (their core.Driver OAuthProvider).
var oauthDrivers = map[string]bool{"gmail": true, "outlook": true, "zoho": true}

// statusOf is the status the Engine derives from a candidate before
// validating its settings (migration.Candidate's contract).
func statusOf(c migration.Candidate) string {
	switch {
	case c.Driver == "":
		return migration.StatusUnsupported
	case len(c.Missing) > 0:
		return migration.StatusNeedsPassword
	case oauthDrivers[c.Driver] && c.Settings["refresh_token"] == nil:
		return migration.StatusNeedsAuthorization
	case c.Review:
		return migration.StatusNeedsReview
	}
	return migration.StatusReady
}

// hasIssue reports whether one of the issues contains sub.
func hasIssue(issues []string, sub string) bool {
	for _, s := range issues {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

func TestSMTPMailerCandidate(t *testing.T) {
	b64Decode := func(v string) (string, error) {
		return (&stubSite{}).Decrypt(context.Background(), migration.SchemeBase64, v)
	}
	base := func(extra map[string]any) migration.Dict {
		d := migration.Dict{
			"smtp_host": "smtp.example.com", "smtp_auth": "true", "smtp_username": "sue@example.com",
			"smtp_password": b64("pa'ss\\word"), "type_of_encryption": "tls", "smtp_port": "587",
			"from_email": "shop@example.com", "from_name": "Shop", "force_from_name": "", "force_from_email": "1",
			"force_from_address": "", "disable_ssl_verification": "",
		}
		maps.Copy(d, extra)
		return d
	}
	tests := []struct {
		name     string
		opts     migration.Dict
		status   string
		settings map[string]any
		missing  []string
		issue    string
	}{
		{"base64 password decoded", base(nil), migration.StatusReady, map[string]any{
			"host": "smtp.example.com", "port": int64(587), "encryption": "tls", "auth": true,
			"username": "sue@example.com", "password": "pa'ss\\word", "from_email": "shop@example.com",
			"from_name": "Shop", "force_from": true}, nil, ""},
		{"no auth keeps no credentials", base(map[string]any{"smtp_auth": "false", "type_of_encryption": "none", "smtp_port": "25"}),
			migration.StatusReady, map[string]any{"host": "smtp.example.com", "port": int64(25), "encryption": "none", "auth": false,
				"from_email": "shop@example.com", "from_name": "Shop", "force_from": true}, nil, ""},
		{"password that is not base64 is missing", base(map[string]any{"smtp_password": "%%not base64%%"}),
			migration.StatusNeedsPassword, nil, []string{"password"}, ""},
		{"empty password is missing", base(map[string]any{"smtp_password": ""}), migration.StatusNeedsPassword, nil, []string{"password"}, ""},
		{"ssl port and insecure", base(map[string]any{"type_of_encryption": "ssl", "smtp_port": "", "disable_ssl_verification": "1"}),
			migration.StatusReady, map[string]any{"encryption": "ssl", "port": int64(465), "insecure_skip_verify": true}, nil, ""},
		{"force name only is reported", base(map[string]any{"force_from_email": "", "force_from_name": "1"}),
			migration.StatusReady, map[string]any{"force_from": nil}, nil, "forced only the sender name"},
		{"no host needs review", base(map[string]any{"smtp_host": ""}), migration.StatusNeedsReview, nil, nil, "no SMTP host"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := migration.SMTPMailerCandidate(tt.opts, b64Decode)
			if c.Driver != "smtp" || c.SourceSlug != "smtp" || c.Key != "primary" {
				t.Fatalf("conversion = %q→%q key %q", c.SourceSlug, c.Driver, c.Key)
			}
			if got := statusOf(c); got != tt.status {
				t.Errorf("status = %s, want %s (missing %v, issues %v)", got, tt.status, c.Missing, c.Issues)
			}
			for k, want := range tt.settings {
				if got := c.Settings[k]; got != want {
					t.Errorf("settings[%s] = %#v, want %#v", k, got, want)
				}
			}
			if fmt.Sprint(c.Missing) != fmt.Sprint(tt.missing) {
				t.Errorf("missing = %v, want %v", c.Missing, tt.missing)
			}
			if _, has := c.Settings["password"]; has && len(tt.missing) > 0 {
				t.Errorf("an undecodable password was imported: %#v", c.Settings["password"])
			}
			if tt.issue != "" && !hasIssue(c.Issues, tt.issue) {
				t.Errorf("issues %v lack %q", c.Issues, tt.issue)
			}
		})
	}
}

func TestSMTPMailerSource(t *testing.T) {
	src, ok := migration.Lookup(migration.SourceSMTPMailer)
	if !ok {
		t.Fatal("smtp-mailer is not registered")
	}
	ctx := context.Background()
	site := &stubSite{
		options: map[string]any{"smtp_mailer_options": map[string]any{"smtp_host": "mx.example.com", "smtp_auth": "true", "smtp_username": "u", "smtp_password": b64("p")}},
		plugins: []string{"akismet/akismet.php", "smtp-mailer/main.php"},
	}
	d, err := src.Detect(ctx, site)
	if err != nil || !d.Found || !d.Active {
		t.Fatalf("Detect = %+v, %v; want found and active", d, err)
	}
	setup, err := src.Connections(ctx, site)
	if err != nil || len(setup.Candidates) != 1 || setup.DefaultKey != "primary" || setup.Candidates[0].Settings["password"] != "p" {
		t.Fatalf("Connections = %+v, %v", setup, err)
	}
	if src.Logs() != nil {
		t.Error("SMTP Mailer has no log table, Logs() must be nil")
	}
	site.unread = map[string]bool{"smtp_mailer_options": true}
	setup, err = src.Connections(ctx, site)
	if err != nil || len(setup.Candidates) != 0 || len(setup.Errors) != 1 {
		t.Fatalf("broken option: Connections = %+v, %v; want one error and no candidate", setup, err)
	}
	d, err = src.Detect(ctx, &stubSite{})
	if err != nil || d.Found || d.Active {
		t.Fatalf("empty site: Detect = %+v, %v", d, err)
	}
}
