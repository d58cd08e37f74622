// Package oauthdriver holds what the mail drivers of OAuth providers
// (outlook, gmail, zoho) do alike: the app settings (client id and secret,
// authorization server override), the token settings the OAuth service
// writes, the delivery mode and SMTP endpoint fields, sending one request
// to the provider's REST API with an access token (Request), and running
// a provider call with the connection's access token, refreshing it once
// when the provider refuses it.
package oauthdriver

import (
	"context"
	"errors"
	"fmt"

	"github.com/mailsvc/mailsvc/core"
)

// Settings keys the OAuth drivers share.
const (
	KeyClientID     = "client_id"
	KeyClientSecret = "client_secret"
	KeyDeliveryMode = "delivery_mode"
	// KeyOAuthBaseURL replaces the scheme and host of the provider's
	// authorization server (sovereign clouds, tests).
	KeyOAuthBaseURL = "oauth_base_url"
	KeySMTPHost     = "smtp_host"
	KeySMTPPort     = "smtp_port"
	KeyAccessToken  = core.KeyAccessToken
	KeyRefreshToken = core.KeyRefreshToken
	KeyTokenExpiry  = core.KeyTokenExpiry
	// KeyOAuthApp names the app the connection uses: "" its own
	// client_id and client_secret, "oneclick" the vendor's (Pro).
	KeyOAuthApp = core.KeyOAuthApp
)

// Delivery modes of an OAuth connection.
const (
	ModeAPI  = "api"  // the provider's HTTP mail API
	ModeSMTP = "smtp" // SMTP with AUTH XOAUTH2
)

// AppFields returns the client_id and client_secret fields of the OAuth
// app, with the provider's help texts. They are required unless the
// connection uses another app (KeyOAuthApp, see AppChoiceField).
func AppFields(clientIDHelp, secretHelp string) []core.Field {
	ownApp := map[string]string{KeyOAuthApp: ""}
	return []core.Field{
		{Key: KeyClientID, Label: "Client ID", Type: core.FieldString, RequiredWhen: ownApp, Help: clientIDHelp},
		{Key: KeyClientSecret, Label: "Client secret", Type: core.FieldPassword, RequiredWhen: ownApp, Help: secretHelp},
	}
}

// AppChoiceField returns the oauth_app field of the drivers that Pro's
// one-click authorization serves: empty for the connection's own app,
// "oneclick" for the vendor's (set by the one-click flow; client_id and
// client_secret are then not needed).
func AppChoiceField() core.Field {
	return core.Field{Key: KeyOAuthApp, Label: "OAuth app", Type: core.FieldSelect, Options: []string{core.OAuthAppOneClick}, Advanced: true,
		Help: "Empty: the client ID and secret above. oneclick: the vendor's app, set by one-click authorization (Pro)."}
}

// TokenFields returns the token, refresh_token and expires_at fields. The
// OAuth service fills them after an authorization; a user may also paste
// a refresh token obtained elsewhere (or pin it with a constant).
func TokenFields() []core.Field {
	return []core.Field{
		{Key: KeyAccessToken, Label: "Access token", Type: core.FieldPassword, Advanced: true,
			Help: "Set by the OAuth flow; refreshed automatically."},
		{Key: KeyRefreshToken, Label: "Refresh token", Type: core.FieldPassword, Advanced: true,
			Help: "Set by the OAuth flow, or pasted from a token obtained elsewhere."},
		{Key: KeyTokenExpiry, Label: "Access token expiry", Type: core.FieldString, Advanced: true,
			Help: "RFC 3339 time the access token expires; set by the OAuth flow."},
	}
}

// ModeField returns the delivery_mode field: the provider's API (the
// default) or SMTP with XOAUTH2.
func ModeField(help string) core.Field {
	return core.Field{Key: KeyDeliveryMode, Label: "Delivery mode", Type: core.FieldSelect,
		Options: []string{ModeAPI, ModeSMTP}, Default: ModeAPI, Help: help}
}

// OAuthBaseURLField returns the oauth_base_url field; def is the real
// authorization server, named in the help text, and hosts are the
// provider's own authorization hosts (core.Field.Hosts), the only ones
// it takes unless MAILSVC_ALLOW_CUSTOM_ENDPOINTS is true. It is a
// destination: the client secret and the refresh token go to it.
func OAuthBaseURLField(def string, hosts ...string) core.Field {
	return core.Field{Key: KeyOAuthBaseURL, Label: "Authorization server URL", Type: core.FieldURL,
		Help: "Leave empty for " + def + ".", Hosts: hosts, Destination: true, Advanced: true}
}

// SMTPFields returns the smtp_host and smtp_port fields of SMTP mode with
// the provider's endpoint as defaults. Both are destinations: the access
// token goes to them.
func SMTPFields(host string, port int64) []core.Field {
	return []core.Field{
		{Key: KeySMTPHost, Label: "SMTP host", Type: core.FieldString, Default: host, Destination: true, Advanced: true,
			Help: "SMTP mode only: the submission server (STARTTLS)."},
		{Key: KeySMTPPort, Label: "SMTP port", Type: core.FieldInteger, Default: port, Destination: true, Advanced: true,
			Min: core.Int64(1), Max: core.Int64(65535), Help: "SMTP mode only."},
	}
}

// ErrUnauthorized marks a provider's refusal of an access token (HTTP 401,
// SMTP 535): WithToken then refreshes the token and tries once more.
var ErrUnauthorized = errors.New("the provider refused the access token")

// Unauthorized wraps err so that errors.Is(err, ErrUnauthorized) holds.
func Unauthorized(err error) error {
	return fmt.Errorf("%w: %w", ErrUnauthorized, err)
}

// WithToken runs call with the connection's current access token. When
// call's error wraps ErrUnauthorized, it asks tokens for a refreshed token
// and runs call once more with it; a second refusal is a Permanent error.
// Errors of the token source pass through as they are (already
// classified).
func WithToken(ctx context.Context, tokens core.TokenSource, connID int64, call func(token string) error) error {
	if tokens == nil {
		return core.Permanent(errors.New("no OAuth token service is running for this connection"))
	}
	tok, err := tokens.AccessToken(ctx, connID)
	if err != nil {
		return err
	}
	err = call(tok)
	if !errors.Is(err, ErrUnauthorized) {
		return err
	}
	fresh, rerr := tokens.Refreshed(ctx, connID, tok)
	if rerr != nil {
		return rerr
	}
	err = call(fresh)
	if errors.Is(err, ErrUnauthorized) {
		return core.Permanent(err)
	}
	return err
}
