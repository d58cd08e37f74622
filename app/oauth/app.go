package oauth

import (
	"context"
	"fmt"

	"github.com/mailsvc/mailsvc/core"
)

// VendorApp is an OAuth app that connections may use instead of their own
// (client_id and client_secret settings): the vendor's app of Pro's
// one-click authorization.
type VendorApp struct {
	ClientID     string
	ClientSecret string
	// BaseURL replaces the provider's authorization server (tests,
	// sovereign clouds); "" keeps the connection's own setting.
	BaseURL string
}

// Configured reports whether the app has a client id and secret.
func (a VendorApp) Configured() bool { return a.ClientID != "" && a.ClientSecret != "" }

// AppClient is a core.OAuthClient for connections that use a named app:
// for a connection whose oauth_app setting is Name it hands Next a copy
// of the connection with the app's client id, secret (and authorization
// server) in place of its own, so the consent URL, the code exchange and
// every refresh — the scheduler's included — use that app. Other
// connections pass through unchanged.
type AppClient struct {
	Next core.OAuthClient
	// Name is the oauth_app value served, e.g. core.OAuthAppOneClick.
	Name string
	// Apps holds the app per provider (core.ProviderGoogle, ...).
	Apps map[string]VendorApp
}

var _ core.OAuthClient = (*AppClient)(nil)

// withApp returns conn with the app's credentials when it uses the app.
func (c *AppClient) withApp(conn *core.Connection) (*core.Connection, error) {
	if conn == nil || conn.Settings.String(core.KeyOAuthApp) != c.Name || c.Name == "" {
		return conn, nil
	}
	d, ok := core.LookupDriver(conn.Driver)
	if !ok || d.OAuthProvider == "" {
		return conn, nil
	}
	return applyApp(conn, c.Apps[d.OAuthProvider], d.OAuthProvider)
}

// applyApp returns a copy of conn using app.
func applyApp(conn *core.Connection, app VendorApp, provider string) (*core.Connection, error) {
	if !app.Configured() {
		return nil, core.Errorf(core.EUNAVAILABLE, "The vendor's %s app is not configured on this service.", provider)
	}
	out := *conn
	out.Settings = conn.Settings.Clone()
	if out.Settings == nil {
		out.Settings = core.Settings{}
	}
	out.Settings["client_id"] = app.ClientID
	out.Settings["client_secret"] = app.ClientSecret
	if app.BaseURL != "" {
		out.Settings["oauth_base_url"] = app.BaseURL
	}
	return &out, nil
}

// AuthCodeURL implements core.OAuthClient.
func (c *AppClient) AuthCodeURL(conn *core.Connection, redirectURI, state, verifier string) (string, error) {
	conn, err := c.withApp(conn)
	if err != nil {
		return "", err
	}
	return c.Next.AuthCodeURL(conn, redirectURI, state, verifier)
}

// Exchange implements core.OAuthClient.
func (c *AppClient) Exchange(ctx context.Context, conn *core.Connection, redirectURI, code, verifier string) (*core.OAuthToken, error) {
	conn, err := c.withApp(conn)
	if err != nil {
		return nil, err
	}
	return c.Next.Exchange(ctx, conn, redirectURI, code, verifier)
}

// Refresh implements core.OAuthClient.
func (c *AppClient) Refresh(ctx context.Context, conn *core.Connection, refreshToken string) (*core.OAuthToken, error) {
	conn, err := c.withApp(conn)
	if err != nil {
		return nil, fmt.Errorf("refresh: %w", err)
	}
	return c.Next.Refresh(ctx, conn, refreshToken)
}
