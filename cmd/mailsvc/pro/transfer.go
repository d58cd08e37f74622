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
		Store:         env.DB,
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
	return t.db.InTransaction(ctx, func(tx *store.DB) error { return fn(tx) })
}
