package transfer

import (
	"context"

	"github.com/mailsvc/mailsvc/core"
)

// Store is what an export reads and an import writes: connections
// (their health included, to flag missing secrets), both settings scopes
// and alert channels. Inside Transactor.InTransaction every call runs in
// the one transaction.
type Store interface {
	core.ConnectionStore
	core.SettingsStore
	UpdateConnectionHealth(ctx context.Context, id int64, h core.ConnectionHealth) error
	FindNotificationChannels(ctx context.Context) ([]*core.NotificationChannel, error)
	CreateNotificationChannel(ctx context.Context, c *core.NotificationChannel) error
	UpdateNotificationChannel(ctx context.Context, c *core.NotificationChannel) error
}

// Transactor runs an import in one database transaction.
//
// InTransaction calls fn with a Store whose every read and write is part
// of one transaction: when fn returns an error (or panics) nothing fn
// wrote is kept and the error is returned; when it returns nil the
// transaction commits. The Store handed to fn may also implement the
// store interfaces of registered sections (the adapters' store does).
type Transactor interface {
	InTransaction(ctx context.Context, fn func(tx Store) error) error
}
