package oauth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"golang.org/x/oauth2"

	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/drivers/oauthdriver"
)

// Client is the core.OAuthClient of the Google, Microsoft and Zoho
// authorization servers. Its zero value is ready to use and it is safe for
// concurrent use.
type Client struct {
	// HTTPClient makes the token requests; nil means http.DefaultClient.
	HTTPClient *http.Client
}

var _ core.OAuthClient = (*Client)(nil)

// app is one connection's OAuth app, ready for x/oauth2.
type app struct {
	provider string
	config   *oauth2.Config
}

// pkce reports whether the provider takes a PKCE challenge (see the
// package doc).
func (a app) pkce() bool { return a.provider != core.ProviderZoho }

// appOf reads the connection's driver and effective settings.
func appOf(conn *core.Connection, redirectURI string) (app, error) {
	if conn == nil {
		return app{}, core.Errorf(core.EINVALID, "no connection")
	}
	d, ok := core.LookupDriver(conn.Driver)
	if !ok || d.OAuthProvider == "" {
		return app{}, core.Errorf(core.EINVALID, "driver %q of connection %d has no OAuth provider", conn.Driver, conn.ID)
	}
	provider := d.OAuthProvider
	s := conn.Settings
	id, secret := strings.TrimSpace(s.String(oauthdriver.KeyClientID)), s.String(oauthdriver.KeyClientSecret)
	missing := map[string]string{}
	if id == "" {
		missing[oauthdriver.KeyClientID] = "This field is required."
	}
	if secret == "" {
		missing[oauthdriver.KeyClientSecret] = "This field is required."
	}
	if err := core.Invalid(missing); err != nil {
		return app{}, err
	}
	ep, err := Endpoint(provider, s)
	if err != nil {
		return app{}, err
	}
	scopes := Scopes(provider, s.String(oauthdriver.KeyDeliveryMode))
	if provider == core.ProviderZoho {
		scopes = []string{strings.Join(scopes, ",")}
	}
	return app{provider: provider, config: &oauth2.Config{
		ClientID:     id,
		ClientSecret: secret,
		Endpoint:     ep,
		RedirectURL:  redirectURI,
		Scopes:       scopes,
	}}, nil
}

// AuthCodeURL returns the consent screen URL of the connection's provider
// with client_id, redirect_uri, the scopes of the delivery mode, state,
// the S256 challenge of verifier (Google and Microsoft, when verifier is
// not ""), and access_type=offline with prompt=consent (Google and Zoho).
func (c *Client) AuthCodeURL(conn *core.Connection, redirectURI, state, verifier string) (string, error) {
	a, err := appOf(conn, redirectURI)
	if err != nil {
		return "", err
	}
	var opts []oauth2.AuthCodeOption
	if a.provider != core.ProviderMicrosoft {
		opts = append(opts, oauth2.AccessTypeOffline, oauth2.SetAuthURLParam("prompt", "consent"))
	}
	if verifier != "" && a.pkce() {
		opts = append(opts, oauth2.S256ChallengeOption(verifier))
	}
	return a.config.AuthCodeURL(state, opts...), nil
}

// Exchange trades an authorization code for tokens at the connection's
// token endpoint, sending the PKCE verifier where the provider takes one.
func (c *Client) Exchange(ctx context.Context, conn *core.Connection, redirectURI, code, verifier string) (*core.OAuthToken, error) {
	a, err := appOf(conn, redirectURI)
	if err != nil {
		return nil, err
	}
	if code == "" {
		return nil, core.Errorf(core.EINVALID, "no authorization code")
	}
	var opts []oauth2.AuthCodeOption
	if verifier != "" && a.pkce() {
		opts = append(opts, oauth2.VerifierOption(verifier))
	}
	tok, err := a.config.Exchange(c.context(ctx), code, opts...)
	if err != nil {
		return nil, tokenError(a.provider, "code exchange", err)
	}
	return tokenOf(tok, ""), nil
}

// Refresh trades a refresh token for a new access token. The result's
// RefreshToken is the rotated refresh token, or "" when the server sent
// none (or sent the same one back).
func (c *Client) Refresh(ctx context.Context, conn *core.Connection, refreshToken string) (*core.OAuthToken, error) {
	a, err := appOf(conn, "")
	if err != nil {
		return nil, err
	}
	if refreshToken == "" {
		return nil, core.Errorf(core.EINVALID, "connection %d has no refresh token", conn.ID)
	}
	tok, err := a.config.TokenSource(c.context(ctx), &oauth2.Token{RefreshToken: refreshToken}).Token()
	if err != nil {
		return nil, tokenError(a.provider, "token refresh", err)
	}
	return tokenOf(tok, refreshToken), nil
}

// context hands the HTTP client to x/oauth2.
func (c *Client) context(ctx context.Context) context.Context {
	hc := c.HTTPClient
	if hc == nil {
		hc = http.DefaultClient
	}
	return context.WithValue(ctx, oauth2.HTTPClient, hc)
}

// extraKeys are the provider-specific token response fields kept in
// core.OAuthToken.Extra.
var extraKeys = []string{"api_domain", "ext_expires_in", "refresh_token_expires_in"}

// tokenOf converts x/oauth2's token. oldRefresh is the refresh token sent
// (x/oauth2 copies it into the result when the server sent none).
func tokenOf(t *oauth2.Token, oldRefresh string) *core.OAuthToken {
	out := &core.OAuthToken{
		AccessToken: t.AccessToken,
		TokenType:   t.TokenType,
		Expiry:      t.Expiry,
	}
	if t.RefreshToken != oldRefresh {
		out.RefreshToken = t.RefreshToken
	}
	if s, ok := t.Extra("scope").(string); ok {
		out.Scope = s
	}
	for _, k := range extraKeys {
		var v string
		switch x := t.Extra(k).(type) {
		case string:
			v = x
		case float64:
			v = strconv.FormatFloat(x, 'f', -1, 64)
		}
		if v != "" {
			if out.Extra == nil {
				out.Extra = map[string]string{}
			}
			out.Extra[k] = v
		}
	}
	return out
}

// tokenError maps an x/oauth2 error to a *core.OAuthError for an OAuth
// error answer, or a plain error, never quoting the response body.
func tokenError(provider, op string, err error) error {
	var re *oauth2.RetrieveError
	if !errors.As(err, &re) {
		return fmt.Errorf("%s %s: %w", provider, op, err)
	}
	status := 0
	if re.Response != nil {
		status = re.Response.StatusCode
	}
	if re.ErrorCode == "" {
		return fmt.Errorf("%s %s: the token endpoint answered HTTP %d without an OAuth error", provider, op, status)
	}
	oe := &core.OAuthError{Code: re.ErrorCode, Description: re.ErrorDescription, Status: status}
	if provider == core.ProviderZoho && re.ErrorCode == "invalid_code" {
		oe.Code = "invalid_grant"
		oe.Description = strings.TrimSuffix("invalid_code: "+re.ErrorDescription, ": ")
	}
	return fmt.Errorf("%s %s: %w", provider, op, oe)
}
