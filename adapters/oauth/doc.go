// Package oauth speaks OAuth 2.0 (authorization code grant and refresh)
// with the authorization servers of the OAuth mail drivers: Google (gmail),
// Microsoft identity platform v2.0 (outlook) and Zoho Accounts (zoho). Its
// Client implements core.OAuthClient with golang.org/x/oauth2.
//
// The app comes from the connection's effective settings (the keys of
// drivers/oauthdriver): client_id, client_secret, delivery_mode (which
// picks the scopes, see Scopes), oauth_base_url (replaces the scheme and
// host of the authorization server; the real paths stay), and per provider
// tenant_id (Microsoft, default "common") and data_center (Zoho, default
// "com").
//
// Provider differences this package handles:
//
//   - PKCE (S256) is sent to Google and Microsoft when a verifier is given.
//     Zoho documents PKCE only for mobile and desktop (public) clients, not
//     for server-based web apps with a client secret, so Zoho gets no
//     challenge and no verifier; its flow is protected by the client secret
//     and the state.
//   - Google and Zoho issue a refresh token only with access_type=offline,
//     and a new one on a repeated consent only with prompt=consent; both are
//     sent. Microsoft issues one when the offline_access scope is asked for.
//   - Zoho takes its scopes comma-separated in one parameter.
//   - Microsoft rotates refresh tokens: a refresh returns a new one, which
//     the caller must store. Google and Zoho send none on refresh; then
//     core.OAuthToken.RefreshToken is "" and the old one stays valid.
//   - Zoho answers token errors with HTTP 200 and a JSON {"error": ...}
//     body. Those become *core.OAuthError like the others (Status 200).
//     Zoho says "invalid_code" where RFC 6749 says "invalid_grant" (a
//     revoked refresh token, a used or expired code): it is reported with
//     Code "invalid_grant" so that core.IsInvalidGrant holds, and the
//     Description starts with "invalid_code" to keep Zoho's own word.
//   - Zoho's api_domain, Microsoft's ext_expires_in and Google's
//     refresh_token_expires_in are kept in core.OAuthToken.Extra.
//
// Errors: an OAuth error answer is a *core.OAuthError (wrapped with the
// provider's name); an answer without an OAuth error code (a proxy's 502
// page) or an unreachable server is a plain error. No error text carries
// the client secret, a code or a token.
package oauth
