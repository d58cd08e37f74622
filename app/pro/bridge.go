package pro

import (
	"context"
	"fmt"

	"github.com/mailsvc/mailsvc/core"
)

// SettingsTransactor runs fn with a settings store whose every read and
// write is part of one transaction: when fn returns an error nothing it
// wrote is kept.
type SettingsTransactor interface {
	InSettingsTransaction(ctx context.Context, fn func(st core.SettingsStore) error) error
}

// bridgeExclusions returns the sources the WordPress bridge leaves to the
// host's own mailer under the stored Pro settings: the excluded plugins
// when plugin exclusions are switched on (stored as true), else none. It
// reads the stored values as the bridge read them before the directive:
// an entry that is not a non-empty string is left out.
func bridgeExclusions(stored map[string]any) []string {
	out := []string{}
	if on, _ := stored[SettingPluginExclusions].(bool); !on {
		return out
	}
	var items []any
	switch v := stored[SettingExcludedPlugins].(type) {
	case []any:
		items = v
	case []string:
		for _, s := range v {
			items = append(items, s)
		}
	}
	for _, it := range items {
		if s, ok := it.(string); ok && s != "" {
			out = append(out, s)
		}
	}
	return out
}

// LockBridgeDirective writes the bridge directive's row (an empty list,
// which the transaction replaces before it commits) so that transactions
// that save the Pro settings or write the directive take their turns on
// it: called as the first read or write of each such transaction, each
// reads the Pro settings (a snapshot taken at its first read, on MariaDB)
// as the one before it committed them, and the last directive written is
// the one the last saved settings decide.
func LockBridgeDirective(ctx context.Context, st core.SettingsStore) error {
	if err := st.SaveSettings(ctx, core.ScopeBridge, map[string]any{core.BridgeExcludedSources: []string{}}); err != nil {
		return fmt.Errorf("write the bridge's excluded sources: %w", err)
	}
	return nil
}

// SaveSettingsAndDirective saves validated Pro settings values to st and
// then the bridge directive they decide (WriteBridgeDirective). Given the
// store of one transaction, it starts with LockBridgeDirective; a caller
// that reads before it in the transaction calls LockBridgeDirective first.
func SaveSettingsAndDirective(ctx context.Context, st core.SettingsStore, values map[string]any) error {
	if err := LockBridgeDirective(ctx, st); err != nil {
		return err
	}
	if err := st.SaveSettings(ctx, core.ScopePro, values); err != nil {
		return fmt.Errorf("save pro settings: %w", err)
	}
	return WriteBridgeDirective(ctx, st, true)
}

// WriteBridgeDirective writes the bridge directive the Pro settings decide
// (core.BridgeExcludedSources in core.ScopeBridge) to st: with on, the
// excluded plugins when plugin exclusions are switched on, read from the
// Pro settings in st; without (Pro switched off), an empty list, so the
// bridge excludes nothing. Called with the store of the transaction that
// saves the Pro settings, it changes in the same transaction.
func WriteBridgeDirective(ctx context.Context, st core.SettingsStore, on bool) error {
	sources := []string{}
	if on {
		stored, err := st.LoadSettings(ctx, core.ScopePro)
		if err != nil {
			return fmt.Errorf("load pro settings for the bridge: %w", err)
		}
		sources = bridgeExclusions(stored)
	}
	if err := st.SaveSettings(ctx, core.ScopeBridge, map[string]any{core.BridgeExcludedSources: sources}); err != nil {
		return fmt.Errorf("write the bridge's excluded sources: %w", err)
	}
	return nil
}
