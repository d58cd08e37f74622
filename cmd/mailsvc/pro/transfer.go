package pro

import (
	"context"

	"github.com/mailsvc/mailsvc/adapters/store"
	"github.com/mailsvc/mailsvc/app/pro/transfer"
	"github.com/mailsvc/mailsvc/cmd/mailsvc/cli"
)

// transferService builds the export and import service on the serve
// environment's database.
func transferService(env *cli.ServeEnv) *transfer.Service {
	return &transfer.Service{
		Store:         newTransferStore(env.DB),
		Tx:            storeTransactor{env.DB},
		Site:          env.SiteURL,
		Cipher:        env.Cipher,
		SensitiveKeys: env.Connections.ExtraSensitiveKeys,
		Connections:   env.Connections,
	}
}

// storeTransactor runs an import in one transaction of the store.
type storeTransactor struct{ db *store.DB }

// InTransaction implements transfer.Transactor.
func (t storeTransactor) InTransaction(ctx context.Context, fn func(tx transfer.Store) error) error {
	return t.db.InTransaction(ctx, func(tx *store.DB) error { return fn(newTransferStore(tx)) })
}

// transferStore joins the store's services an export reads and an import
// writes; the sections' own store interfaces (routing rules, …) are the
// DB's.
type transferStore struct {
	*store.DB
	*store.ConnectionService
	*store.SettingsService
	*store.NotificationService
}

// newTransferStore returns db's services for a transfer.
func newTransferStore(db *store.DB) transferStore {
	return transferStore{db, db.Connections(), db.Settings(), db.Notifications()}
}
