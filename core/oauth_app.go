package core

// KeyOAuthApp is the settings key of an OAuth connection that names the
// OAuth app it authorizes and refreshes with: absent (or "") for the
// connection's own client_id and client_secret, OAuthAppOneClick for the
// vendor's app of Pro's one-click authorization.
const KeyOAuthApp = "oauth_app"

// OAuthAppOneClick is the KeyOAuthApp value of a connection authorized
// through the vendor's app (Pro one-click OAuth).
const OAuthAppOneClick = "oneclick"
