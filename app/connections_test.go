package app_test

import (
	"context"
	"strings"
	"testing"

	"github.com/mailsvc/mailsvc/app"
	"github.com/mailsvc/mailsvc/app/apptest"
	"github.com/mailsvc/mailsvc/core"
)

func init() {
	core.Register(core.Driver{
		Slug: "apptestmail",
		Name: "Test driver",
		Fields: []core.Field{
			{Key: "host", Type: core.FieldString, Required: true},
			{Key: "port", Type: core.FieldInteger, Default: int64(587), Min: core.Int64(1), Max: core.Int64(65535)},
			{Key: "username", Type: core.FieldString},
			{Key: "password", Type: core.FieldPassword},
			{Key: "region", Type: core.FieldString},
			{Key: "webhook_signing", Type: core.FieldString},
		},
		New: func(*core.Connection, core.DriverEnv) (core.Transport, error) { return nil, nil },
	})
}

func ptr[T any](v T) *T { return &v }

type fixture struct {
	store *apptest.ConnectionStore
	svc   *app.Connections
	pins  map[string]core.Pin
}

func newFixture() *fixture {
	f := &fixture{store: apptest.NewConnectionStore(), pins: map[string]core.Pin{}}
	f.svc = &app.Connections{
		Store:  f.store,
		Cipher: apptest.Cipher{Key: "k1"},
		Hooks:  &core.Hooks{},
		Pins: func(driver string, keys []string) map[string]core.Pin {
			out := map[string]core.Pin{}
			for _, k := range keys {
				if p, ok := f.pins[k]; ok {
					out[k] = p
				}
			}
			return out
		},
	}
	return f
}

func (f *fixture) create(t *testing.T, settings map[string]any) *core.Connection {
	t.Helper()
	c, err := f.svc.Create(context.Background(), app.ConnectionInput{
		Name: ptr("Main"), Driver: ptr("apptestmail"), Settings: settings,
	})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	return c
}

func TestCreateValidation(t *testing.T) {
	tests := []struct {
		name   string
		in     app.ConnectionInput
		fields []string
	}{
		{"missing driver", app.ConnectionInput{Name: ptr("x")}, []string{"driver"}},
		{"unknown driver", app.ConnectionInput{Name: ptr("x"), Driver: ptr("nope")}, []string{"driver"}},
		{"missing name", app.ConnectionInput{Driver: ptr("apptestmail")}, []string{"name"}},
		{"blank name", app.ConnectionInput{Name: ptr("  "), Driver: ptr("apptestmail"), Settings: map[string]any{"host": "h"}}, []string{"name"}},
		{"missing required setting", app.ConnectionInput{Name: ptr("x"), Driver: ptr("apptestmail")}, []string{"host"}},
		{"port out of range", app.ConnectionInput{Name: ptr("x"), Driver: ptr("apptestmail"), Settings: map[string]any{"host": "h", "port": float64(70000)}}, []string{"port"}},
		{"port wrong type", app.ConnectionInput{Name: ptr("x"), Driver: ptr("apptestmail"), Settings: map[string]any{"host": "h", "port": "587"}}, []string{"port"}},
		{"unknown setting", app.ConnectionInput{Name: ptr("x"), Driver: ptr("apptestmail"), Settings: map[string]any{"host": "h", "colour": "red"}}, []string{"colour"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture()
			_, err := f.svc.Create(context.Background(), tt.in)
			if core.ErrorCode(err) != core.EINVALID {
				t.Fatalf("code = %q (%v), want %q", core.ErrorCode(err), err, core.EINVALID)
			}
			got := core.ErrorFields(err)
			for _, field := range tt.fields {
				if got[field] == "" {
					t.Errorf("no message for field %q in %v", field, got)
				}
			}
			if len(got) != len(tt.fields) {
				t.Errorf("fields = %v, want exactly %v", got, tt.fields)
			}
		})
	}
}

func TestSecretsEncryptedAtRestAndMasked(t *testing.T) {
	f := newFixture()
	c := f.create(t, map[string]any{"host": "smtp.example.com", "username": "me", "password": "hunter2", "webhook_signing": "whsec"})
	for _, k := range []string{"username", "password"} {
		if c.Settings[k] != core.Mask {
			t.Errorf("response %s = %v, want mask", k, c.Settings[k])
		}
	}
	if c.Settings["host"] != "smtp.example.com" || c.Settings["port"] != int64(587) {
		t.Errorf("non-secret settings = %v", c.Settings)
	}
	raw := f.store.Raw(c.ID)
	for _, k := range []string{"username", "password"} {
		v, _ := raw.Settings[k].(string)
		if !strings.HasPrefix(v, "test-enc:") {
			t.Errorf("stored %s = %q, want ciphertext", k, v)
		}
	}
	eff, err := f.svc.Effective(context.Background(), c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if eff.Settings["password"] != "hunter2" || eff.Settings["username"] != "me" {
		t.Errorf("effective settings = %v", eff.Settings)
	}
	// The mail_svc_sensitive_keys filter and configuration add keys.
	f.svc.SensitiveKeys = []string{"region"}
	f.svc.Hooks.AddFilter(core.HookSensitiveKeys, func(v any, _ ...any) any {
		return append(v.([]string), "webhook_signing")
	})
	got, err := f.svc.Get(context.Background(), c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Settings["webhook_signing"] != core.Mask {
		t.Errorf("filtered key not masked: %v", got.Settings["webhook_signing"])
	}
}

// TestSensitiveKeyFilterComesAndGoes: a key a filter makes sensitive is
// encrypted from the next write and masked; once the filter is gone, the
// value written encrypted is still decrypted (for the driver and in
// answers, no longer masked), never handed out as ciphertext.
func TestSensitiveKeyFilterComesAndGoes(t *testing.T) {
	f := newFixture()
	ctx := context.Background()
	filtered := true
	f.svc.Hooks.AddFilter(core.HookSensitiveKeys, func(v any, _ ...any) any {
		if filtered {
			return append(v.([]string), "region")
		}
		return v
	})
	c := f.create(t, map[string]any{"host": "smtp.example.com", "region": "eu-west-1"})
	if c.Settings["region"] != core.Mask {
		t.Errorf("create answers region = %v, want it masked", c.Settings["region"])
	}
	if v, _ := f.store.Raw(c.ID).Settings["region"].(string); !strings.HasPrefix(v, "test-enc:") {
		t.Errorf("stored region = %q, want ciphertext", v)
	}
	filtered = false
	got, err := f.svc.Get(ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	eff, err := f.svc.Effective(ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Settings["region"] != "eu-west-1" || eff.Settings["region"] != "eu-west-1" || got.SettingsError != "" {
		t.Errorf("after the filter went: answer %v, driver %v (%s), want eu-west-1", got.Settings["region"], eff.Settings["region"], got.SettingsError)
	}
}

func TestUpdateMergesAndKeepsMaskedSecret(t *testing.T) {
	f := newFixture()
	ctx := context.Background()
	c := f.create(t, map[string]any{"host": "a.example.com", "username": "me", "password": "hunter2"})
	_, err := f.svc.Update(ctx, c.ID, app.ConnectionInput{Settings: map[string]any{"host": "b.example.com", "password": core.Mask}})
	if err != nil {
		t.Fatal(err)
	}
	eff, _ := f.svc.Effective(ctx, c.ID)
	if eff.Settings["host"] != "b.example.com" || eff.Settings["password"] != "hunter2" || eff.Settings["username"] != "me" {
		t.Errorf("after masked update: %v", eff.Settings)
	}
	if eff.Name != "Main" || !eff.IsActive {
		t.Errorf("untouched fields changed: %+v", eff)
	}
	if _, err := f.svc.Update(ctx, c.ID, app.ConnectionInput{IsActive: ptr(false), Settings: map[string]any{"password": "new", "username": nil}}); err != nil {
		t.Fatal(err)
	}
	eff, _ = f.svc.Effective(ctx, c.ID)
	if eff.Settings["password"] != "new" || eff.IsActive {
		t.Errorf("after update: %+v", eff)
	}
	if _, ok := eff.Settings["username"]; ok {
		t.Errorf("null did not remove username: %v", eff.Settings)
	}
	if _, err := f.svc.Update(ctx, 999, app.ConnectionInput{}); core.ErrorCode(err) != core.ENOTFOUND {
		t.Errorf("update missing = %v", err)
	}
}

func TestPinnedSettings(t *testing.T) {
	f := newFixture()
	ctx := context.Background()
	f.pins["password"] = core.Pin{Constant: "MAILSVC_APPTESTMAIL_PASSWORD", Value: "from-constant"}
	f.pins["port"] = core.Pin{Constant: "MAILSVC_APPTESTMAIL_PORT", Value: "2525"}
	c := f.create(t, map[string]any{"host": "h.example.com"})
	if strings.Join(c.Pinned, ",") != "password,port" {
		t.Errorf("pinned = %v", c.Pinned)
	}
	if c.Settings["port"] != int64(2525) || c.Settings["password"] != core.Mask {
		t.Errorf("response settings = %v", c.Settings)
	}
	eff, _ := f.svc.Effective(ctx, c.ID)
	if eff.Settings["password"] != "from-constant" {
		t.Errorf("effective password = %v", eff.Settings["password"])
	}
	if _, has := f.store.Raw(c.ID).Settings["password"]; has {
		t.Errorf("pinned value was stored: %v", f.store.Raw(c.ID).Settings)
	}
	_, err := f.svc.Update(ctx, c.ID, app.ConnectionInput{Settings: map[string]any{"port": float64(25)}})
	if core.ErrorCode(err) != core.EINVALID || !strings.Contains(core.ErrorFields(err)["port"], "MAILSVC_APPTESTMAIL_PORT") {
		t.Errorf("changing a pinned key: %v", err)
	}
	// Sending back the mask or the pinned value itself is not a change.
	if _, err := f.svc.Update(ctx, c.ID, app.ConnectionInput{Settings: map[string]any{"password": core.Mask, "port": "2525"}}); err != nil {
		t.Errorf("unchanged pinned keys rejected: %v", err)
	}
}

func TestUndecryptableSecretsReported(t *testing.T) {
	f := newFixture()
	ctx := context.Background()
	c := f.create(t, map[string]any{"host": "h.example.com", "password": "hunter2"})
	f.svc.Cipher = apptest.Cipher{Key: "another-key"}
	got, err := f.svc.Get(ctx, c.ID)
	if err != nil {
		t.Fatalf("get after key change: %v", err)
	}
	if !strings.Contains(got.SettingsError, "password") || got.Settings["password"] != "" {
		t.Errorf("settings_error = %q, password = %v", got.SettingsError, got.Settings["password"])
	}
	list, _, err := f.svc.List(ctx, 0, 10)
	if err != nil || len(list) != 1 || list[0].SettingsError == "" {
		t.Errorf("list after key change: %v %+v", err, list)
	}
	// Entering the secret again heals the connection.
	fixed, err := f.svc.Update(ctx, c.ID, app.ConnectionInput{Settings: map[string]any{"password": "again"}})
	if err != nil || fixed.SettingsError != "" {
		t.Errorf("after re-entering: %v %q", err, fixed.SettingsError)
	}
}

func TestDelete(t *testing.T) {
	f := newFixture()
	ctx := context.Background()
	a := f.create(t, map[string]any{"host": "a"})
	b := f.create(t, map[string]any{"host": "b"})
	c := f.create(t, map[string]any{"host": "c"})
	if err := f.svc.Delete(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	if err := f.svc.Delete(ctx, a.ID); core.ErrorCode(err) != core.ENOTFOUND {
		t.Errorf("second delete = %v", err)
	}
	n, err := f.svc.DeleteMany(ctx, []int64{b.ID, c.ID, 999})
	if err != nil || n != 2 {
		t.Errorf("bulk delete = %d, %v", n, err)
	}
	if _, err := f.svc.DeleteMany(ctx, nil); core.ErrorCode(err) != core.EINVALID {
		t.Errorf("empty bulk delete = %v", err)
	}
}

func TestDeleteRefusesConnectionsTheSettingsName(t *testing.T) {
	f := newFixture()
	ctx := context.Background()
	settingsStore := apptest.NewSettingsStore()
	f.svc.Settings = settingsStore
	def := f.create(t, map[string]any{"host": "a"})
	fb := f.create(t, map[string]any{"host": "b"})
	other := f.create(t, map[string]any{"host": "c"})
	if err := settingsStore.SaveSettings(ctx, core.ScopeFree, map[string]any{"default_connection_id": def.ID, "fallback_connection_id": fb.ID}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		del     func() error
		field   string
		mention string
	}{
		{"default", func() error { return f.svc.Delete(ctx, def.ID) }, "id", "default connection"},
		{"fallback in a bulk delete", func() error { _, err := f.svc.DeleteMany(ctx, []int64{other.ID, fb.ID}); return err }, "ids", "fallback connection"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.del()
			if core.ErrorCode(err) != core.EINVALID || !strings.Contains(core.ErrorFields(err)[tt.field], tt.mention) {
				t.Fatalf("err = %v, want a validation error on %s mentioning %q", err, tt.field, tt.mention)
			}
		})
	}
	// Nothing was deleted by the refused bulk delete.
	if _, err := f.svc.Get(ctx, other.ID); err != nil {
		t.Fatalf("a refused bulk delete removed a connection: %v", err)
	}
	if err := f.svc.Delete(ctx, other.ID); err != nil {
		t.Fatalf("deleting an unreferenced connection: %v", err)
	}
}
