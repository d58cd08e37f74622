package core

import (
	"context"
	"time"
)

// Connection is a configured way to deliver mail: a transport driver with
// its settings.
type Connection struct {
	ID       int64    `json:"id"`
	Name     string   `json:"name"`
	Driver   string   `json:"driver"`
	IsActive bool     `json:"is_active"`
	Settings Settings `json:"settings"`
	// Pinned lists the settings keys whose value comes from a constant
	// (MAILSVC_{DRIVER}_{KEY} or an alias); they cannot be changed by PUT.
	Pinned []string `json:"pinned"`
	// SettingsError is set when the stored settings cannot be used: secrets
	// that cannot be decrypted (the encryption key changed), or an endpoint
	// setting off the provider's hosts (core.Field.Hosts) while custom
	// endpoints are not allowed. The connection neither sends, verifies nor
	// refreshes a token until the settings are entered again.
	SettingsError string `json:"settings_error,omitempty"`
	// HealthStatus is the verdict of the last health check (Health*).
	HealthStatus string `json:"health_status"`
	// LastCheckedAt is when the health check last ran on the connection,
	// LastError what it (or the last OAuth refresh) failed with.
	LastCheckedAt *time.Time `json:"last_checked_at"`
	LastError     string     `json:"last_error"`
	// OAuthStatus is "" for a driver without OAuth, else OAuthAuthorized,
	// OAuthNeedsAuthorization or OAuthPending (no token yet).
	OAuthStatus string    `json:"oauth_status,omitempty"`
	CreatedAt   time.Time `json:"created_at"`
	UpdatedAt   time.Time `json:"updated_at"`
}

// Health statuses of a connection. A check that verifies the credentials
// makes it healthy (degraded when the check was slower than the slow
// threshold); a check that fails makes it down. Unknown means never
// checked.
const (
	HealthUnknown  = "unknown"
	HealthHealthy  = "healthy"
	HealthDegraded = "degraded"
	HealthDown     = "down"
)

// ConnectionHealth is the outcome of one health check of a connection.
type ConnectionHealth struct {
	Status    string
	CheckedAt time.Time
	// Error is what the check failed with ("" when it passed).
	Error string
}

// ConnectionFilter selects connections in a list.
type ConnectionFilter struct {
	Driver string // "" for any
	Offset int
	Limit  int // 0 for no limit
}

// ConnectionStore persists connections. Settings are stored as given: the
// caller encrypts sensitive values before and decrypts them after.
type ConnectionStore interface {
	// FindConnections returns the connections matching f ordered by id,
	// and the total count matching f before Offset and Limit.
	FindConnections(ctx context.Context, f ConnectionFilter) ([]*Connection, int, error)
	// FindConnectionByID returns one connection or an ENOTFOUND error.
	FindConnectionByID(ctx context.Context, id int64) (*Connection, error)
	// CreateConnection inserts c and sets its ID, CreatedAt and UpdatedAt.
	CreateConnection(ctx context.Context, c *Connection) error
	// UpdateConnection replaces the stored name, driver, is_active,
	// settings and health status of c.ID and sets UpdatedAt; ENOTFOUND if
	// it does not exist.
	UpdateConnection(ctx context.Context, c *Connection) error
	// DeleteConnections deletes the connections with the given ids in one
	// transaction and returns how many existed.
	DeleteConnections(ctx context.Context, ids []int64) (int, error)
}
