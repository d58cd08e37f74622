package oauth

import (
	"context"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"

	"github.com/mailsvc/mailsvc/core"
)

// CallbackPath is the path of a provider's callback route under the site's
// public URL; {provider} is replaced by the provider.
const CallbackPath = "/wp-json/mailsvc/v1/oauth/{provider}/callback"

// redirectHooks are the filters that override a provider's redirect URI.
var redirectHooks = map[string]string{
	core.ProviderGoogle:    core.HookGoogleRedirectURI,
	core.ProviderMicrosoft: core.HookMicrosoftRedirectURI,
	core.ProviderZoho:      core.HookZohoRedirectURI,
}

// AuthorizeInput starts an authorization.
type AuthorizeInput struct {
	User     *core.User
	Provider string
	// ConnectionID is the connection_id query parameter as given.
	ConnectionID string
	// RequestBaseURL is scheme://host of the request, used when PublicURL
	// is not configured.
	RequestBaseURL string
}

// publicURL returns the site's base URL without a trailing slash.
func (s *Service) publicURL(requestBase string) string {
	u := s.PublicURL
	if u == "" {
		u = requestBase
	}
	return strings.TrimRight(u, "/")
}

// LocalCallbackURL returns this site's own callback URL for provider.
func (s *Service) LocalCallbackURL(provider, requestBase string) string {
	return s.publicURL(requestBase) + strings.ReplaceAll(CallbackPath, "{provider}", provider)
}

// RedirectURI returns the redirect URI of provider, first match wins: the
// filter (the bridge-synced mail_svc_*_oauth_redirect_uri, then the Go
// hook of that name, which sees and may replace the value so far), the
// per-provider constant, this site's callback when local redirects are on
// (or no relay is configured), the relay. relayed reports the relay.
func (s *Service) RedirectURI(ctx context.Context, provider, requestBase string) (uri string, relayed bool, err error) {
	switch {
	case s.RedirectURIs[provider] != "":
		uri = s.RedirectURIs[provider]
	case s.UseLocalRedirects || s.RelayURL == "":
		uri = s.LocalCallbackURL(provider, requestBase)
	default:
		uri, relayed = s.RelayURL, true
	}
	if s.RedirectOverride != nil {
		o, err := s.RedirectOverride(ctx, provider)
		if err != nil {
			return "", false, fmt.Errorf("read the %s redirect URI filter: %w", provider, err)
		}
		if o != "" {
			uri, relayed = o, false
		}
	}
	if v, ok := s.Hooks.ApplyFilters(redirectHooks[provider], uri, provider).(string); ok && v != "" && v != uri {
		uri, relayed = v, false
	}
	return uri, relayed, nil
}

// Authorize starts an authorization of a connection with provider and
// returns the provider's consent URL. It stores the state (bound to the
// user, the connection, the provider and the redirect URI, single use,
// expiring in core.OAuthStateTTL) with its PKCE verifier encrypted.
func (s *Service) Authorize(ctx context.Context, in AuthorizeInput) (string, error) {
	s.init()
	if !KnownProvider(in.Provider) {
		return "", core.Errorf(core.ENOTFOUND, "Unknown OAuth provider %q.", in.Provider)
	}
	if in.User == nil {
		return "", core.Errorf(core.EUNAUTHORIZED, "You are not currently logged in.")
	}
	if in.ConnectionID == "" {
		return "", core.InvalidField("connection_id", "This parameter is required.")
	}
	id, err := strconv.ParseInt(in.ConnectionID, 10, 64)
	if err != nil || id < 1 {
		return "", core.InvalidField("connection_id", "Must be a connection id (a positive whole number).")
	}
	conn, d, err := s.oauthConnection(ctx, id, "connection_id")
	if err != nil {
		return "", err
	}
	if d.OAuthProvider != in.Provider {
		return "", core.InvalidField("connection_id", fmt.Sprintf("Connection %d (driver %s) authorizes with %s, not %s.", id, d.Slug, d.OAuthProvider, in.Provider))
	}
	fields := map[string]string{}
	for _, k := range []string{"client_id", "client_secret"} {
		if conn.Settings.String(k) == "" {
			fields[k] = "Set the app's " + strings.ReplaceAll(k, "_", " ") + " on the connection first."
		}
	}
	if err := core.Invalid(fields); err != nil {
		return "", err
	}
	redirect, relayed, err := s.RedirectURI(ctx, in.Provider, in.RequestBaseURL)
	if err != nil {
		return "", err
	}
	state := randomToken(32)
	if relayed {
		// The relay reads the site's callback from the state (docs/oauth.md).
		state += "." + base64.RawURLEncoding.EncodeToString([]byte(s.LocalCallbackURL(in.Provider, in.RequestBaseURL)))
	}
	verifier := randomToken(32)
	encVerifier, err := s.encrypt(verifier)
	if err != nil {
		return "", fmt.Errorf("authorize connection %d: %w", id, err)
	}
	rec := &core.OAuthState{
		State: stateKey(in.Provider, state), Provider: in.Provider, UserID: in.User.ID, ConnectionID: id,
		CodeVerifier: encVerifier, RedirectURI: redirect, ExpiresAt: s.now().Add(core.OAuthStateTTL),
	}
	if err := s.States.SaveOAuthState(ctx, rec); err != nil {
		return "", fmt.Errorf("authorize connection %d: %w", id, err)
	}
	u, err := s.Client.AuthCodeURL(conn, redirect, state, verifier)
	if err != nil {
		return "", fmt.Errorf("authorize connection %d: consent URL: %w", id, err)
	}
	return u, nil
}

// stateKey is what the state store keys a state by: the provider and the
// state, so a state presented to another provider's callback is unknown
// there (and stays usable at its own).
func stateKey(provider, state string) string { return provider + ":" + state }
