package transfer

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/mailsvc/mailsvc/core"
)

// connectionSection exports and imports connections. Secrets never leave:
// a secret key is exported as null and listed in secrets_omitted; on
// import a replaced connection keeps its stored secrets and a new one has
// none (its last_error says which to enter).
type connectionSection struct{ svc *Service }

func (connectionSection) Name() string { return SectionConnections }

func (c connectionSection) sensitive(driver string) func(key string, v any) bool {
	d, _ := core.LookupDriver(driver)
	return func(key string, v any) bool {
		if d != nil {
			if f := d.Field(key); f != nil && f.Sensitive {
				return true
			}
		}
		return c.svc.secret(key, v)
	}
}

func (c connectionSection) Export(ctx context.Context, st Store) ([]Item, error) {
	conns, _, err := st.FindConnections(ctx, core.ConnectionFilter{})
	if err != nil {
		return nil, fmt.Errorf("export connections: %w", err)
	}
	out := make([]Item, 0, len(conns))
	for _, conn := range conns {
		settings, omitted := withoutSecrets(conn.Settings, c.sensitive(conn.Driver))
		out = append(out, Item{
			"id": conn.ID, "name": conn.Name, "driver": conn.Driver, "is_active": conn.IsActive,
			"settings": settings, KeySecretsOmitted: omitted,
		})
	}
	return out, nil
}

func (c connectionSection) Check(item Item) string {
	if msg := checkCommon(item, "is_active"); msg != "" {
		return msg
	}
	driver, _ := item["driver"].(string)
	if driver == "" {
		return "It has no driver."
	}
	d, ok := core.LookupDriver(driver)
	if !ok {
		return fmt.Sprintf("Unknown driver %q: no such transport is installed here.", driver)
	}
	if !c.svc.AllowCustomEndpoints {
		settings, _ := item["settings"].(map[string]any)
		return core.EndpointProblem(d.CheckEndpoints(settings, nil))
	}
	return ""
}

func (c connectionSection) Apply(ctx context.Context, tx Store, item Item, existingID int64, name string, _ Refs) (int64, error) {
	driver, _ := item["driver"].(string)
	active, ok := item["is_active"].(bool)
	if !ok {
		active = true
	}
	settings := importedSettings(item, c.sensitive(driver))
	if existingID > 0 {
		cur, err := tx.FindConnectionByID(ctx, existingID)
		if err != nil {
			return 0, fmt.Errorf("replace connection %d: %w", existingID, err)
		}
		isSecret := c.sensitive(cur.Driver)
		for k, v := range cur.Settings {
			if isSecret(k, v) {
				settings[k] = v // the stored (encrypted) secret stays
			}
		}
		cur.Name, cur.Driver, cur.IsActive, cur.Settings = name, driver, active, settings
		if err := tx.UpdateConnection(ctx, cur); err != nil {
			return 0, fmt.Errorf("replace connection %d: %w", existingID, err)
		}
		return existingID, nil
	}
	conn := &core.Connection{Name: name, Driver: driver, IsActive: active, Settings: settings, HealthStatus: core.HealthUnknown}
	if d, _ := core.LookupDriver(driver); d.OAuthProvider != "" {
		conn.OAuthStatus = core.OAuthPending
	}
	if err := tx.CreateConnection(ctx, conn); err != nil {
		return 0, fmt.Errorf("import connection %q: %w", name, err)
	}
	if missing := omittedKeys(item); len(missing) > 0 {
		h := core.ConnectionHealth{Status: core.HealthUnknown, CheckedAt: c.svc.now(),
			Error: fmt.Sprintf("Imported without its secrets (%s): enter them again before it can send.", strings.Join(missing, ", "))}
		if err := tx.UpdateConnectionHealth(ctx, conn.ID, h); err != nil {
			return 0, fmt.Errorf("import connection %q: %w", name, err)
		}
	}
	return conn.ID, nil
}

// withoutSecrets returns settings with every secret value replaced by
// null, and the sorted list of those keys (never nil).
func withoutSecrets(s core.Settings, secret func(key string, v any) bool) (map[string]any, []string) {
	out := make(map[string]any, len(s))
	omitted := []string{}
	for k, v := range s {
		if secret(k, v) {
			out[k] = nil
			omitted = append(omitted, k)
			continue
		}
		out[k] = v
	}
	sort.Strings(omitted)
	return out, omitted
}

// importedSettings returns an item's settings without nulls and without
// any secret (a secret pasted into a file is not imported: secrets are
// entered in the service).
func importedSettings(item Item, secret func(key string, v any) bool) core.Settings {
	out := core.Settings{}
	m, _ := item["settings"].(map[string]any)
	omitted := map[string]bool{}
	for _, k := range omittedKeys(item) {
		omitted[k] = true
	}
	for k, v := range m {
		if v == nil || omitted[k] || secret(k, v) {
			continue
		}
		out[k] = v
	}
	return out
}

// omittedKeys returns an item's secrets_omitted list.
func omittedKeys(item Item) []string {
	list, _ := item[KeySecretsOmitted].([]any)
	var out []string
	for _, v := range list {
		if s, ok := v.(string); ok && s != "" {
			out = append(out, s)
		}
	}
	if strs, ok := item[KeySecretsOmitted].([]string); ok {
		out = append(out, strs...)
	}
	return out
}

// checkCommon checks what every record has: a name, an optional integer
// id, optional settings object and the optional boolean keys.
func checkCommon(item Item, bools ...string) string {
	name, _ := item["name"].(string)
	if strings.TrimSpace(name) == "" {
		return "It has no name."
	}
	if v, ok := item["id"]; ok && v != nil {
		if _, isInt := core.AsInt(v); !isInt {
			return "Its id is not a whole number."
		}
	}
	if v, ok := item["settings"]; ok && v != nil {
		if _, isMap := v.(map[string]any); !isMap {
			return "Its settings are not an object."
		}
	}
	for _, k := range bools {
		if v, ok := item[k]; ok && v != nil {
			if _, isBool := v.(bool); !isBool {
				return fmt.Sprintf("Its %s is not true or false.", k)
			}
		}
	}
	return ""
}
