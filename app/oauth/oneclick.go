package oauth

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/mailsvc/mailsvc/core"
)

// OneClickCallbackPath is the path of a provider's one-click callback
// under the site's public URL; {provider} is replaced by the provider.
const OneClickCallbackPath = "/wp-json/mailsvc/v1/pro/oauth/{provider}/one-click/callback"

// OneClickDrivers maps each one-click provider to the driver of the
// connections it authorizes.
var OneClickDrivers = map[string]string{
	core.ProviderGoogle:    "gmail",
	core.ProviderMicrosoft: "outlook",
}

// oneClickNames are the names of connections a one-click flow creates.
var oneClickNames = map[string]string{
	core.ProviderGoogle:    "Gmail (one-click)",
	core.ProviderMicrosoft: "Outlook (one-click)",
}

// OneClick authorizes Gmail and Outlook connections through the vendor's
// OAuth app (Pro's one-click OAuth), with the manual flow's states, PKCE,
// single-use callback and encrypted token storage (Service). A connection
// it authorizes gets oauth_app=oneclick, so that Service's client (an
// AppClient) refreshes it with the vendor's app too.
type OneClick struct {
	Service *Service
	// Apps holds the vendor's app per provider.
	Apps map[string]VendorApp
	// Create stores a new connection (validated, secrets encrypted) and
	// returns its id; app.Connections.Create does it.
	Create func(ctx context.Context, name, driver string, settings map[string]any) (int64, error)
	// Delete removes a connection the flow created when its token could
	// not be stored.
	Delete func(ctx context.Context, id int64) error
}

// OneClickInput starts a one-click authorization. ConnectionID ("" for a
// new connection) names the connection to authorize.
type OneClickInput struct {
	User           *core.User
	Provider       string
	ConnectionID   string
	RequestBaseURL string
}

// oneClickStateKey keeps one-click states apart from the manual flow's:
// a state of one is unknown at the other's callback.
func oneClickStateKey(provider, state string) string { return "oneclick:" + provider + ":" + state }

// known reports whether provider has one-click.
func (o *OneClick) known(provider string) bool {
	_, ok := OneClickDrivers[provider]
	return ok
}

// RedirectURI returns the redirect URI of a one-click authorization: the
// hosted relay (MAILSVC_OAUTH_RELAY_URL) unless local redirects are on,
// else this site's one-click callback. relayed reports the relay.
func (o *OneClick) RedirectURI(provider, requestBase string) (uri string, relayed bool) {
	s := o.Service
	if s.RelayURL != "" && !s.UseLocalRedirects {
		return s.RelayURL, true
	}
	return o.LocalCallbackURL(provider, requestBase), false
}

// LocalCallbackURL returns this site's one-click callback of provider.
func (o *OneClick) LocalCallbackURL(provider, requestBase string) string {
	return o.Service.publicURL(requestBase) + strings.ReplaceAll(OneClickCallbackPath, "{provider}", provider)
}

// Authorize starts a one-click authorization and returns the provider's
// consent URL for the vendor's app. With a connection id, the connection
// must exist and use the provider's driver; without, the callback
// creates one. Microsoft answers with response_mode=form_post.
func (o *OneClick) Authorize(ctx context.Context, in OneClickInput) (string, error) {
	s := o.Service
	s.init()
	if !o.known(in.Provider) {
		return "", core.Errorf(core.ENOTFOUND, "Unknown one-click OAuth provider %q.", in.Provider)
	}
	if in.User == nil {
		return "", core.Errorf(core.EUNAUTHORIZED, "You are not currently logged in.")
	}
	app := o.Apps[in.Provider]
	if !app.Configured() {
		return "", core.Errorf(core.EUNAVAILABLE, "One-click %s authorization is not configured on this service.", in.Provider)
	}
	driver := OneClickDrivers[in.Provider]
	var id int64
	target := o.draft(driver)
	if in.ConnectionID != "" {
		n, err := strconv.ParseInt(in.ConnectionID, 10, 64)
		if err != nil || n < 1 {
			return "", core.InvalidField("connection_id", "Must be a connection id (a positive whole number).")
		}
		conn, err := s.Connections.Effective(ctx, n)
		if err != nil {
			return "", err
		}
		if conn.Driver != driver {
			return "", core.InvalidField("connection_id", fmt.Sprintf("Connection %d uses the driver %s; one-click %s authorizes %s connections.", n, conn.Driver, in.Provider, driver))
		}
		if err := usable(conn, "connection_id"); err != nil {
			return "", err
		}
		id, target = n, conn
	}
	redirect, relayed := o.RedirectURI(in.Provider, in.RequestBaseURL)
	state := randomToken(32)
	if relayed {
		state += "." + base64.RawURLEncoding.EncodeToString([]byte(o.LocalCallbackURL(in.Provider, in.RequestBaseURL)))
	}
	verifier := randomToken(32)
	encVerifier, err := s.encrypt(verifier)
	if err != nil {
		return "", fmt.Errorf("one-click authorize: %w", err)
	}
	rec := &core.OAuthState{
		State: oneClickStateKey(in.Provider, state), Provider: in.Provider, UserID: in.User.ID, ConnectionID: id,
		CodeVerifier: encVerifier, RedirectURI: redirect, ExpiresAt: s.now().Add(core.OAuthStateTTL),
	}
	if err := s.States.SaveOAuthState(ctx, rec); err != nil {
		return "", fmt.Errorf("one-click authorize: %w", err)
	}
	// The connection's own settings (tenant, delivery mode's scopes,
	// authorization server) with the vendor's app, as the exchange uses.
	conn, err := applyApp(target, app, in.Provider)
	if err != nil {
		return "", err
	}
	u, err := s.Client.AuthCodeURL(conn, redirect, state, verifier)
	if err != nil {
		return "", fmt.Errorf("one-click authorize: consent URL: %w", err)
	}
	if in.Provider == core.ProviderMicrosoft {
		pu, err := url.Parse(u)
		if err != nil {
			return "", fmt.Errorf("one-click authorize: consent URL: %w", err)
		}
		q := pu.Query()
		q.Set("response_mode", "form_post")
		pu.RawQuery = q.Encode()
		u = pu.String()
	}
	return u, nil
}

// draft is the connection a one-click flow creates, before it exists.
func (o *OneClick) draft(driver string) *core.Connection {
	return &core.Connection{Driver: driver, Settings: core.Settings{core.KeyOAuthApp: core.OAuthAppOneClick}}
}

// Callback completes a one-click authorization (the query of a GET, or
// the form of Microsoft's form_post) and returns where to send the
// browser, as Service.Callback does: the state is verified (single use,
// unexpired, this provider's one-click state, the same user when one is
// logged in) before any token request; the code is exchanged with the
// vendor's app; the connection named at the start is updated, or a new
// one is created, with oauth_app=oneclick and the tokens encrypted.
func (o *OneClick) Callback(ctx context.Context, provider string, in CallbackInput) string {
	s := o.Service
	driver := OneClickDrivers[provider]
	return s.complete(ctx, provider, in, completion{
		name:     "one-click callback",
		known:    o.known,
		stateKey: oneClickStateKey,
		target: func(st *core.OAuthState) (*core.Connection, string) {
			conn := o.draft(driver)
			if st.ConnectionID > 0 {
				c, d, err := s.oauthConnection(ctx, st.ConnectionID, "connection_id")
				if err != nil || d.Slug != driver {
					return nil, ErrConnection
				}
				conn = c
			}
			withApp, err := applyApp(conn, o.Apps[provider], provider)
			if err != nil {
				return nil, ErrExchangeFailed
			}
			return withApp, ""
		},
		store: func(st *core.OAuthState, _ *core.Connection, tok *core.OAuthToken) (int64, string) {
			return o.store(ctx, provider, st.ConnectionID, tok)
		},
	})
}

// store stores the tokens of a completed one-click authorization in the
// connection id, or in a new connection when id is 0, and returns the
// connection's id with the error flag when they could not be stored (a
// connection it created is then removed).
func (o *OneClick) store(ctx context.Context, provider string, id int64, tok *core.OAuthToken) (int64, string) {
	s := o.Service
	driver := OneClickDrivers[provider]
	created := false
	if id == 0 {
		var err error
		if id, err = o.Create(ctx, oneClickNames[provider], driver, map[string]any{core.KeyOAuthApp: core.OAuthAppOneClick}); err != nil {
			s.Logger.Error("one-click callback: create the connection", "provider", provider, "err", err)
			return 0, ErrStoreFailed
		}
		created = true
	}
	// A named connection switches to the vendor's app in the write that
	// stores the tokens, so a refused token leaves it as it was.
	stored, d, err := s.oauthConnection(ctx, id, "connection_id")
	if err == nil {
		err = s.storeTokenWith(ctx, stored, d, tok, core.Settings{core.KeyOAuthApp: core.OAuthAppOneClick})
	}
	if err != nil {
		flag := s.storeFailed("one-click callback", id, tok, err)
		if created && o.Delete != nil {
			if derr := o.Delete(ctx, id); derr != nil {
				s.Logger.Error("one-click callback: remove the connection", "connection_id", id, "err", derr)
			}
			id = 0
		}
		return id, flag
	}
	return id, ""
}
