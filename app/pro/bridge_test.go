package pro

import (
	"context"
	"slices"
	"testing"

	"github.com/mailsvc/mailsvc/app/apptest"
	"github.com/mailsvc/mailsvc/core"
)

// directive returns the bridge's excluded sources stored in st, and
// whether the key is there.
func directive(t *testing.T, st core.SettingsStore) ([]string, bool) {
	t.Helper()
	m, err := st.LoadSettings(context.Background(), core.ScopeBridge)
	if err != nil {
		t.Fatal(err)
	}
	v, ok := m[core.BridgeExcludedSources]
	if !ok {
		return nil, false
	}
	list, isList := v.([]string)
	if !isList {
		t.Fatalf("%s is %T %v, want a list of strings", core.BridgeExcludedSources, v, v)
	}
	return list, true
}

// countingTx is a SettingsTransactor over one store that counts its
// transactions.
type countingTx struct {
	st core.SettingsStore
	n  int
}

func (c *countingTx) InSettingsTransaction(ctx context.Context, fn func(st core.SettingsStore) error) error {
	c.n++
	return fn(c.st)
}

// TestUpdateWritesBridgeDirective: every save of the Pro settings writes
// the bridge's excluded sources, in the save's transaction: the excluded
// plugins while exclusions are on, an empty list while they are off.
func TestUpdateWritesBridgeDirective(t *testing.T) {
	ctx := context.Background()
	st := apptest.NewSettingsStore()
	tx := &countingTx{st: st}
	s := &Settings{Store: st, Tx: tx}
	steps := []struct {
		name  string
		patch map[string]any
		want  []string
	}{
		{"list without exclusions on", map[string]any{SettingExcludedPlugins: []any{"woocommerce"}}, []string{}},
		{"exclusions on", map[string]any{SettingPluginExclusions: true}, []string{"woocommerce"}},
		{"list changed", map[string]any{SettingExcludedPlugins: []any{"theme:astra", "legacy-forms", "theme:astra"}}, []string{"theme:astra", "legacy-forms"}},
		{"another key saved", map[string]any{SettingMaxRetries: float64(5)}, []string{"theme:astra", "legacy-forms"}},
		{"exclusions off", map[string]any{SettingPluginExclusions: false}, []string{}},
		{"on with an empty list", map[string]any{SettingPluginExclusions: true, SettingExcludedPlugins: []any{}}, []string{}},
	}
	for i, step := range steps {
		if _, err := s.Update(ctx, step.patch); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		got, ok := directive(t, st)
		if !ok || !slices.Equal(got, step.want) {
			t.Errorf("%s: excluded sources %v (stored %v), want %v", step.name, got, ok, step.want)
		}
		if tx.n != i+1 {
			t.Errorf("%s: %d transactions after %d updates", step.name, tx.n, i+1)
		}
	}
	// A refused update writes nothing.
	if _, err := s.Update(ctx, map[string]any{SettingExcludedPlugins: "woocommerce"}); core.ErrorCode(err) != core.EINVALID || tx.n != len(steps) {
		t.Errorf("a refused update: %v, %d transactions", err, tx.n)
	}
}

// TestWriteBridgeDirective: the directive from stored Pro settings as the
// bridge used to read them, and none excluded with Pro switched off.
func TestWriteBridgeDirective(t *testing.T) {
	for _, tt := range []struct {
		name   string
		stored map[string]any
		on     bool
		want   []string
	}{
		{"nothing stored", nil, true, []string{}},
		{"on", map[string]any{SettingPluginExclusions: true, SettingExcludedPlugins: []any{"keep-out", "", 3, "theme:astra"}}, true, []string{"keep-out", "theme:astra"}},
		{"off", map[string]any{SettingPluginExclusions: false, SettingExcludedPlugins: []any{"keep-out"}}, true, []string{}},
		{"on but not a boolean", map[string]any{SettingPluginExclusions: "true", SettingExcludedPlugins: []any{"keep-out"}}, true, []string{}},
		{"list not a list", map[string]any{SettingPluginExclusions: true, SettingExcludedPlugins: "keep-out"}, true, []string{}},
		{"Pro switched off", map[string]any{SettingPluginExclusions: true, SettingExcludedPlugins: []any{"keep-out"}}, false, []string{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			st := apptest.NewSettingsStore()
			if err := st.SaveSettings(ctx, core.ScopePro, tt.stored); err != nil {
				t.Fatal(err)
			}
			if err := st.SaveSettings(ctx, core.ScopeBridge, map[string]any{core.BridgeExcludedSources: []string{"stale"}}); err != nil {
				t.Fatal(err)
			}
			if err := WriteBridgeDirective(ctx, st, tt.on); err != nil {
				t.Fatal(err)
			}
			if got, ok := directive(t, st); !ok || !slices.Equal(got, tt.want) {
				t.Errorf("excluded sources %v (stored %v), want %v", got, ok, tt.want)
			}
		})
	}
}
