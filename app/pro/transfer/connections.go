package transfer

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/mailsvc/mailsvc/app"
	"github.com/mailsvc/mailsvc/core"
)

// connectionSection exports and imports connections. Secrets never leave:
// a secret key is exported as null and listed in secrets_omitted. On
// import every connection is validated by its driver (app.Connections
// does the writing); a replaced connection keeps its stored secrets while
// its destination stays, and loses them when the file moves it; a new one
// has none. The last_error of a connection left without secrets says
// which to enter.
type connectionSection struct{ svc *Service }

// StatusNeedsPassword is the status of a replaced connection whose
// secrets the import dropped (its destination changed): they must be
// entered again. An OAuth connection that only lost its tokens has
// core.OAuthNeedsAuthorization.
const StatusNeedsPassword = "needs_password"

func (connectionSection) Name() string { return SectionConnections }

func (c connectionSection) sensitive(driver string) func(key string, v any) bool {
	if d, _ := core.LookupDriver(driver); d != nil {
		return c.svc.sensitive(d.Field)
	}
	return c.svc.sensitive(nil)
}

func (c connectionSection) Export(ctx context.Context, st Store) ([]Item, error) {
	conns, _, err := st.FindConnections(ctx, core.ConnectionFilter{})
	if err != nil {
		return nil, fmt.Errorf("export connections: %w", err)
	}
	out := make([]Item, 0, len(conns))
	for _, conn := range conns {
		settings, omitted := withoutSecrets(conn.Settings, c.sensitive(conn.Driver))
		delete(settings, core.KeyTokenExpiry) // the state of a token, which is never exported
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
	if _, ok := core.LookupDriver(driver); !ok {
		return fmt.Sprintf("Unknown driver %q: no such transport is installed here.", driver)
	}
	if err := c.svc.connections().CheckImport(c.imported(item, "")); err != nil {
		fields := core.ErrorFields(err)
		keys := make([]string, 0, len(fields))
		for k := range fields {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		msgs := make([]string, len(keys))
		for i, k := range keys {
			msgs[i] = k + ": " + fields[k]
		}
		return "Its settings are not valid for the driver: " + strings.Join(msgs, " ")
	}
	return ""
}

// imported returns item as app.Connections imports it, named name (""
// for the item's own name), without any secret.
func (c connectionSection) imported(item Item, name string) app.ImportedConnection {
	driver, _ := item["driver"].(string)
	if name == "" {
		name, _ = item["name"].(string)
	}
	active, ok := item["is_active"].(bool)
	if !ok {
		active = true
	}
	return app.ImportedConnection{Name: name, Driver: driver, IsActive: active, Settings: importedSettings(item, c.sensitive(driver))}
}

func (c connectionSection) Apply(ctx context.Context, tx Store, item Item, existingID int64, name string, _ Refs) (int64, error) {
	id, _, _, err := c.write(ctx, tx, item, existingID, name)
	return id, err
}

// write is Apply that also returns, for a connection left without
// secrets it needs, its status (StatusNeedsPassword or
// core.OAuthNeedsAuthorization) and the missing secrets.
func (c connectionSection) write(ctx context.Context, tx Store, item Item, existingID int64, name string) (int64, string, []string, error) {
	in := c.imported(item, name)
	conn, dropped, err := c.svc.connections().Import(ctx, tx, existingID, in)
	if err != nil {
		return 0, "", nil, fmt.Errorf("import connection %q: %w", name, err)
	}
	var msg, status string
	missing := dropped
	switch {
	case existingID == 0:
		missing = omittedKeys(item)
		if len(missing) > 0 {
			msg = fmt.Sprintf("Imported without its secrets (%s): enter them again before it can send.", strings.Join(missing, ", "))
		}
	case len(dropped) > 0:
		status = core.OAuthNeedsAuthorization
		for _, k := range dropped {
			if k != core.KeyAccessToken && k != core.KeyRefreshToken {
				status = StatusNeedsPassword
			}
		}
		msg = fmt.Sprintf("Imported with another server: its secrets (%s) were dropped, as they belong to the server they were entered for. ", strings.Join(dropped, ", "))
		if status == StatusNeedsPassword {
			msg += "Enter them again before it can send."
		} else {
			msg += "Authorize it again before it can send."
		}
	}
	if msg != "" {
		h := core.ConnectionHealth{Status: core.HealthUnknown, CheckedAt: c.svc.now(), Error: msg}
		if err := tx.UpdateConnectionHealth(ctx, conn.ID, h); err != nil {
			return 0, "", nil, fmt.Errorf("import connection %q: %w", name, err)
		}
	}
	return conn.ID, status, missing, nil
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

// importedSettings returns an item's settings without nulls, without any
// secret (a secret pasted into a file is not imported: secrets are
// entered in the service) and without an OAuth token's expiry.
func importedSettings(item Item, secret func(key string, v any) bool) core.Settings {
	out := core.Settings{}
	m, _ := item["settings"].(map[string]any)
	omitted := map[string]bool{}
	for _, k := range omittedKeys(item) {
		omitted[k] = true
	}
	for k, v := range m {
		if v == nil || omitted[k] || secret(k, v) || k == core.KeyTokenExpiry {
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
