package pro

import (
	"context"

	"github.com/mailsvc/mailsvc/adapters/store"
	apppro "github.com/mailsvc/mailsvc/app/pro"
	"github.com/mailsvc/mailsvc/cmd/mailsvc/cli"
	"github.com/mailsvc/mailsvc/core"
)

// settingsTransactor runs a Pro settings update in one transaction of
// the store.
type settingsTransactor struct{ db *store.DB }

// InSettingsTransaction implements apppro.SettingsTransactor.
func (t settingsTransactor) InSettingsTransaction(ctx context.Context, fn func(st core.SettingsStore) error) error {
	return t.db.InTransaction(ctx, func(tx *store.DB) error { return fn(tx.Settings()) })
}

// joinBridge writes, as serve starts, the WordPress bridge's directive
// the Pro settings decide: the excluded plugins when Pro is switched on
// (on) and exclusions are switched on, else nothing excluded. Pro
// settings that cannot be read exclude nothing, as the bridge did when it
// read them itself. Updates write it again (apppro.Settings.Update, the
// transfer import).
func joinBridge(ctx context.Context, env *cli.ServeEnv, on bool) error {
	st := env.DB.Settings()
	err := apppro.WriteBridgeDirective(ctx, st, on)
	if err == nil || !on {
		return err
	}
	env.Logger.Warn("the Pro settings cannot be read: the WordPress bridge excludes no plugin", "err", err)
	return apppro.WriteBridgeDirective(ctx, st, false)
}
