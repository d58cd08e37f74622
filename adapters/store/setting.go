package store

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/mailsvc/mailsvc/core"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

var _ core.SettingsStore = (*SettingsService)(nil)

// settingRow is a row of {prefix}mailsvc_settings: one key of one scope,
// its value as JSON.
type settingRow struct {
	Scope     string    `gorm:"column:scope;primaryKey"`
	Key       string    `gorm:"column:setting_key;primaryKey"`
	Value     string    `gorm:"column:setting_value"`
	UpdatedAt time.Time `gorm:"column:updated_at"`
}

// Column limits of the settings table (MySQL VARCHAR lengths).
const (
	maxScopeLen = 64
	maxKeyLen   = 191
)

func (db *handle) settings(ctx context.Context) *gorm.DB {
	return db.gdb.WithContext(ctx).Table(db.tableName("settings"))
}

// LoadSettings returns every stored key of a scope (absent keys are not in
// the map; the caller applies defaults). Values come back as JSON decodes
// them, with integral numbers as int64; a stored null is a nil value.
func (db *SettingsService) LoadSettings(ctx context.Context, scope string) (map[string]any, error) {
	var rows []settingRow
	if err := db.settings(ctx).Where("scope = ?", scope).Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("load settings %q: %w", scope, err)
	}
	out := make(map[string]any, len(rows))
	for _, r := range rows {
		v, err := DecodeJSON(r.Value)
		if err != nil {
			return nil, fmt.Errorf("load setting %s.%s: %w", scope, r.Key, err)
		}
		out[r.Key] = v
	}
	return out, nil
}

// LoadSettingsScopes returns, in one query, every stored key of every
// scope that starts with prefix (a network's sites' settings,
// "network_site:"), by scope; scopes with no key are not in the map.
// Values are decoded as LoadSettings decodes them.
func (db *SettingsService) LoadSettingsScopes(ctx context.Context, prefix string) (map[string]map[string]any, error) {
	var rows []settingRow
	if err := db.settings(ctx).Where("scope LIKE ? ESCAPE '!'", strings.NewReplacer("!", "!!", "%", "!%", "_", "!_").Replace(prefix)+"%").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("load settings %q*: %w", prefix, err)
	}
	out := map[string]map[string]any{}
	for _, r := range rows {
		if len(r.Scope) < len(prefix) || r.Scope[:len(prefix)] != prefix {
			continue
		}
		v, err := DecodeJSON(r.Value)
		if err != nil {
			return nil, fmt.Errorf("load setting %s.%s: %w", r.Scope, r.Key, err)
		}
		if out[r.Scope] == nil {
			out[r.Scope] = map[string]any{}
		}
		out[r.Scope][r.Key] = v
	}
	return out, nil
}

// SaveSettings upserts the given keys of a scope in one transaction; other
// keys are left as they are. A nil value is stored as JSON null (the key
// stays present). It returns an EINVALID error for an empty or overlong
// scope or key, and an error when a value cannot be encoded as JSON.
func (db *SettingsService) SaveSettings(ctx context.Context, scope string, values map[string]any) error {
	if scope == "" || len(scope) > maxScopeLen {
		return core.Errorf(core.EINVALID, "Settings scope must be 1 to %d characters.", maxScopeLen)
	}
	if len(values) == 0 {
		return nil
	}
	keys := make([]string, 0, len(values))
	for k := range values {
		if k == "" || len(k) > maxKeyLen {
			return core.Errorf(core.EINVALID, "Setting key must be 1 to %d characters.", maxKeyLen)
		}
		keys = append(keys, k)
	}
	// A fixed order makes concurrent upserts lock rows in the same order.
	slices.Sort(keys)
	t := now()
	rows := make([]settingRow, 0, len(keys))
	for _, k := range keys {
		js, err := EncodeJSON(values[k])
		if err != nil {
			return fmt.Errorf("save setting %s.%s: %w", scope, k, err)
		}
		rows = append(rows, settingRow{Scope: scope, Key: k, Value: js, UpdatedAt: t})
	}
	err := db.gdb.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		return tx.Table(db.tableName("settings")).Clauses(clause.OnConflict{
			Columns:   []clause.Column{{Name: "scope"}, {Name: "setting_key"}},
			DoUpdates: clause.AssignmentColumns([]string{"setting_value", "updated_at"}),
		}).CreateInBatches(rows, 200).Error
	})
	if err != nil {
		return fmt.Errorf("save settings %q: %w", scope, err)
	}
	return nil
}
