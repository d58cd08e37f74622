package core

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// OAuth providers: the authorization servers of the OAuth mail drivers
// (gmail → google, outlook → microsoft, zoho → zoho). They name the
// /oauth/{provider}/... routes.
const (
	ProviderGoogle    = "google"
	ProviderMicrosoft = "microsoft"
	ProviderZoho      = "zoho"
)

// OAuth statuses of a connection (Connection.OAuthStatus).
const (
	// OAuthPending: the connection has its app (client id and secret) but
	// no token yet; the authorize flow or POST oauth-token gives it one.
	OAuthPending = "pending"
	// OAuthAuthorized: the connection holds a token it can refresh.
	OAuthAuthorized = "authorized"
	// OAuthNeedsAuthorization: the provider refused the refresh token
	// (invalid_grant); the connection is not used until someone authorizes
	// it again.
	OAuthNeedsAuthorization = "needs_authorization"
)

// Settings keys that hold an OAuth connection's tokens. They are
// sensitive by name (spec: token), so they are encrypted at rest and
// masked in every answer. token_expiry is the access token's expiry in
// RFC 3339, not a secret.
const (
	KeyAccessToken  = "access_token"
	KeyRefreshToken = "refresh_token"
	KeyTokenExpiry  = "expires_at"
)

// OAuthToken is what an authorization server granted.
type OAuthToken struct {
	AccessToken  string
	RefreshToken string // "" when the server did not send a new one
	TokenType    string
	Expiry       time.Time // zero when the server gave no lifetime
	Scope        string
	// Extra carries provider-specific fields of the token response (Zoho's
	// api_domain).
	Extra map[string]string
}

// OAuthError is an error response of a token endpoint (RFC 6749 §5.2).
type OAuthError struct {
	Code        string // e.g. invalid_grant, invalid_client
	Description string
	Status      int // the HTTP status of the answer
}

// Error implements the error interface.
func (e *OAuthError) Error() string {
	if e.Description == "" {
		return fmt.Sprintf("oauth: %s (HTTP %d)", e.Code, e.Status)
	}
	return fmt.Sprintf("oauth: %s: %s (HTTP %d)", e.Code, e.Description, e.Status)
}

// IsInvalidGrant reports whether err is the provider refusing a refresh
// token or code for good (revoked, expired, consent withdrawn): the
// connection needs a new authorization.
func IsInvalidGrant(err error) bool {
	var oe *OAuthError
	return errors.As(err, &oe) && oe.Code == "invalid_grant"
}

// OAuthClient speaks OAuth 2.0 with the providers' authorization servers
// for one connection's app (client id, secret, tenant or data centre, all
// read from the connection's effective settings).
//
// AuthCodeURL builds the consent screen URL; verifier is the PKCE code
// verifier, sent as its S256 challenge where the provider supports PKCE.
// Exchange trades an authorization code for tokens; Refresh trades a
// refresh token for a new access token (and, for providers that rotate,
// a new refresh token). Both return an *OAuthError when the server answers
// with an OAuth error, and a plain error when it cannot be reached. They
// honour ctx and are safe for concurrent use.
type OAuthClient interface {
	AuthCodeURL(conn *Connection, redirectURI, state, verifier string) (string, error)
	Exchange(ctx context.Context, conn *Connection, redirectURI, code, verifier string) (*OAuthToken, error)
	Refresh(ctx context.Context, conn *Connection, refreshToken string) (*OAuthToken, error)
}

// TokenSource gives OAuth transports an access token for their connection.
//
// AccessToken returns a token valid for at least the next minute,
// refreshing it first when it is not. Refreshed is called after the
// provider refused the token `rejected` (HTTP 401, SMTP 535): it refreshes
// unless another caller already replaced that token, and returns the
// current one. Both return a Permanent error when the connection needs a
// new authorization (no token, or invalid_grant), and a Temporary error
// when the authorization server could not be reached.
type TokenSource interface {
	AccessToken(ctx context.Context, connID int64) (string, error)
	Refreshed(ctx context.Context, connID int64, rejected string) (string, error)
}

// OAuthState is one pending authorization: the state parameter's record,
// bound to the user who started it and to the connection. It is single
// use and expires after OAuthStateTTL.
type OAuthState struct {
	State        string // the random value sent to the provider (stored hashed)
	Provider     string
	UserID       int64
	ConnectionID int64
	CodeVerifier string // PKCE verifier; stored encrypted by the caller
	RedirectURI  string
	ExpiresAt    time.Time
}

// OAuthStateTTL is how long an authorization may take.
const OAuthStateTTL = 10 * time.Minute

// OAuthStateStore keeps pending authorizations.
type OAuthStateStore interface {
	// SaveOAuthState stores s (its State hashed).
	SaveOAuthState(ctx context.Context, s *OAuthState) error
	// ConsumeOAuthState deletes and returns the state record atomically;
	// of concurrent calls with one state at most one gets it. It returns
	// an ENOTFOUND error when the state is unknown, used or expired.
	ConsumeOAuthState(ctx context.Context, state string) (*OAuthState, error)
}

// Outcomes of a token refresh attempt.
const (
	RefreshSucceeded = "success"
	RefreshFailed    = "failed"
)

// Triggers of a token refresh attempt.
const (
	RefreshScheduled    = "scheduled"    // the scheduler's refresh job
	RefreshManual       = "manual"       // POST oauth-refresh-now
	RefreshBeforeSend   = "before_send"  // the token was about to expire
	RefreshUnauthorized = "unauthorized" // the provider refused the token
)

// RefreshAttempt is one entry of a connection's refresh history.
type RefreshAttempt struct {
	ID           int64      `json:"id"`
	ConnectionID int64      `json:"connection_id"`
	AttemptedAt  time.Time  `json:"attempted_at"`
	Trigger      string     `json:"trigger"`
	Outcome      string     `json:"outcome"`
	Error        string     `json:"error"`
	ExpiresAt    *time.Time `json:"expires_at"` // the new token's expiry, on success
}

// RefreshHistoryStore keeps the refresh history of OAuth connections.
type RefreshHistoryStore interface {
	// AddRefreshAttempt appends a and sets its ID.
	AddRefreshAttempt(ctx context.Context, a *RefreshAttempt) error
	// FindRefreshAttempts returns a connection's attempts, newest first,
	// and their total count before offset and limit (0: no limit).
	FindRefreshAttempts(ctx context.Context, connID int64, offset, limit int) ([]RefreshAttempt, int, error)
}

// ConnectionStateStore writes the parts of a connection that the service
// changes on its own (tokens, OAuth status, health), without touching
// what a user edits.
type ConnectionStateStore interface {
	// UpdateConnectionSettings merges patch into the stored settings of
	// connection id (a nil value removes the key) and sets its OAuth
	// status when oauthStatus is not "", in one write; ENOTFOUND when the
	// connection does not exist. Values are stored as given (the caller
	// encrypts).
	UpdateConnectionSettings(ctx context.Context, id int64, patch Settings, oauthStatus string) error
	// UpdateConnectionHealth records a health check's outcome.
	UpdateConnectionHealth(ctx context.Context, id int64, h ConnectionHealth) error
}
