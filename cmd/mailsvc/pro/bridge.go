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
// the Pro settings decide: the excluded plugins when exclusions are
// switched on, else nothing excluded. Pro settings that cannot be read
// exclude nothing, as the bridge did when it read them itself. Updates
// write it again (apppro.Settings.Update, the transfer import).
//
// Pro switched off empties it only when wp-config.php defines
// MAIL_SVC_PRO_ENABLED as false (bridgeProOff), which is what the bridge
// checked itself before the service wrote its directive: switched off by
// the environment variable alone, the stored exclusions stay in force for
// wp_mail(), as documented in docs/pro.md.
func joinBridge(ctx context.Context, env *cli.ServeEnv) error {
	on := !bridgeProOff(env.Constants)
	write := func(on bool) error {
		return settingsTransactor{env.DB}.InSettingsTransaction(ctx, func(st core.SettingsStore) error {
			if err := apppro.LockBridgeDirective(ctx, st); err != nil {
				return err
			}
			return apppro.WriteBridgeDirective(ctx, st, on)
		})
	}
	err := write(on)
	if err == nil || !on {
		return err
	}
	env.Logger.Warn("the Pro settings cannot be read: the WordPress bridge excludes no plugin", "err", err)
	return write(false)
}

// bridgeProOff reports whether wp-config.php itself switches Pro off:
// MAIL_SVC_PRO_ENABLED defined there as false (false, 0, "false", "0",
// "no" or "off", any case). A value the service cannot read counts as on,
// as the bridge read it.
func bridgeProOff(consts *core.Constants) bool {
	v, src, ok := consts.Lookup("MAIL_SVC_PRO_ENABLED")
	if !ok || src != core.SourceWPConfig {
		return false
	}
	b, valid := core.ParseBoolConstant(v)
	return valid && !b
}
