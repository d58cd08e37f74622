package migration

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// Gmail SMTP (naa986/gmail-smtp, gmail-smtp/main.php and
// class.phpmaileroauthgoogle.php) sends through smtp.gmail.com with
// XOAUTH2, authorized by the site owner's own Google OAuth client (scope
// https://mail.google.com/, offline access). The option gmail_smtp_options
// holds the client id and secret in plain text and the Google token as a
// JSON string. There are no constants and no email log (paid add-on).
const gmailSMTPOption = "gmail_smtp_options"

// Settings keys of our gmail driver (drivers/gmail, drivers/oauthdriver).
const (
	gmailDriver        = "gmail"
	oauthKeyClientID   = "client_id"
	oauthKeySecret     = "client_secret"
	oauthKeyMode       = "delivery_mode"
	oauthKeySMTPHost   = "smtp_host"
	oauthKeySMTPPort   = "smtp_port"
	oauthKeyFromEmail  = "from_email"
	oauthKeyFromName   = "from_name"
	oauthModeSMTP      = "smtp"
	gmailSMTPHost      = "smtp.gmail.com"
	gmailSMTPSubmitTLS = int64(587)
)

// init registers the source; Gmail SMTP keeps no log in the database.
func init() {
	Register(gmailSMTPSource{plugin{id: SourceGmailSMTP, name: "Gmail SMTP", option: gmailSMTPOption, dir: "gmail-smtp/"}})
}

// gmailSMTPSource reads Gmail SMTP.
type gmailSMTPSource struct{ plugin }

// Connections converts the one Gmail connection.
func (s gmailSMTPSource) Connections(ctx context.Context, site Site) (*Setup, error) {
	return s.fromOption(ctx, site, "gmail smtp", func(setup *Setup, opts Dict) (*Setup, error) {
		setup.addDefault(GmailSMTPCandidate(opts))
		return setup, nil
	})
}

// googleToken is the token JSON Gmail SMTP stores (the Google PHP
// client's access token array).
type googleToken struct {
	AccessToken  string          `json:"access_token"`
	RefreshToken string          `json:"refresh_token"`
	ExpiresIn    json.RawMessage `json:"expires_in"`
	Created      json.RawMessage `json:"created"`
}

// GmailSMTPCandidate converts gmail_smtp_options to our gmail driver in
// SMTP mode (XOAUTH2 on smtp.gmail.com, as the plugin sends). The
// refresh token is carried over when the plugin's own OAuth client (id
// and secret) is there to refresh it: the connection is then ready.
// Without one the Engine reports needs_authorization.
func GmailSMTPCandidate(opts Dict) Candidate {
	login := strings.TrimSpace(opts.Str("oauth_user_email"))
	from := strings.TrimSpace(opts.Str("from_email"))
	if login == "" {
		login = from
	}
	settings := map[string]any{
		oauthKeyMode:     oauthModeSMTP,
		oauthKeySMTPHost: gmailSMTPHost,
		oauthKeySMTPPort: gmailSMTPSubmitTLS,
	}
	c := Candidate{Key: "primary", Name: "Gmail SMTP", SourceSlug: "gmail", Driver: gmailDriver, Settings: settings}
	if login != "" {
		settings[oauthKeyFromEmail] = login
		c.Name = "Gmail SMTP (" + login + ")"
	}
	if name := opts.Str("from_name"); name != "" {
		settings[oauthKeyFromName] = name
	}
	clientID := strings.TrimSpace(opts.Str("oauth_client_id"))
	secret := strings.TrimSpace(opts.Str("oauth_client_secret"))
	if clientID != "" {
		settings[oauthKeyClientID] = clientID
	} else {
		c.Missing = append(c.Missing, oauthKeyClientID)
	}
	if secret != "" {
		settings[oauthKeySecret] = secret
	} else {
		c.Missing = append(c.Missing, oauthKeySecret)
	}
	if from != "" && login != "" && !strings.EqualFold(from, login) {
		c.Issues = append(c.Issues, fmt.Sprintf("Gmail SMTP sent as %s from the mailbox %s; the connection sends from the mailbox, set the alias as the sender of your messages if you need it.", from, login))
	}
	if port := opts.Int("smtp_port", 0); port != 0 && port != gmailSMTPSubmitTLS {
		c.Issues = append(c.Issues, fmt.Sprintf("Gmail SMTP used port %d; the connection uses %d with STARTTLS.", port, gmailSMTPSubmitTLS))
	}
	tok, ok := parseGoogleToken(opts.Str("oauth_access_token"))
	switch {
	case !ok || tok.RefreshToken == "":
		c.Issues = append(c.Issues, "Gmail SMTP holds no refresh token: authorize the connection again.")
	case clientID == "" || secret == "":
		c.Issues = append(c.Issues, "The refresh token cannot be used without the OAuth client id and secret that issued it: authorize the connection again.")
	default:
		settings[core.KeyRefreshToken] = tok.RefreshToken
		if tok.AccessToken != "" {
			if exp, ok := tok.expiry(); ok && exp.After(time.Now()) {
				settings[core.KeyAccessToken] = tok.AccessToken
				settings[core.KeyTokenExpiry] = exp.UTC().Format(time.RFC3339)
			}
		}
		c.Issues = append(c.Issues, "The refresh token of your own Google OAuth client was imported. To authorize again later, add this service's redirect URI to that client in Google Cloud.")
	}
	return c
}

// parseGoogleToken decodes the stored token JSON.
func parseGoogleToken(s string) (googleToken, bool) {
	var t googleToken
	if strings.TrimSpace(s) == "" {
		return t, false
	}
	if err := json.Unmarshal([]byte(s), &t); err != nil {
		return t, false
	}
	return t, true
}

// expiry returns when the access token expires: created + expires_in.
func (t googleToken) expiry() (time.Time, bool) {
	created, ok1 := jsonInt(t.Created)
	in, ok2 := jsonInt(t.ExpiresIn)
	if !ok1 || !ok2 || created <= 0 {
		return time.Time{}, false
	}
	return time.Unix(created+in, 0), true
}

// jsonInt reads a JSON number or numeric string.
func jsonInt(raw json.RawMessage) (int64, bool) {
	s := strings.Trim(strings.TrimSpace(string(raw)), `"`)
	if s == "" {
		return 0, false
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n, true
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		return int64(f), true
	}
	return 0, false
}
