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
	// SettingsError is set when stored secrets cannot be decrypted (the
	// encryption key changed); the connection cannot send until they are
	// entered again.
	SettingsError string    `json:"settings_error,omitempty"`
	HealthStatus  string    `json:"health_status"`
	CreatedAt     time.Time `json:"created_at"`
	UpdatedAt     time.Time `json:"updated_at"`
}

// Health statuses of a connection.
const (
	HealthUnknown   = "unknown"
	HealthHealthy   = "healthy"
	HealthUnhealthy = "unhealthy"
)

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
