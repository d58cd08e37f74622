package app_test

import (
	"context"
	"strings"
	"testing"

	"github.com/mailsvc/mailsvc/app"
	"github.com/mailsvc/mailsvc/core"
)

func init() {
	core.Register(core.Driver{
		Slug: "apptestapi",
		Name: "Test API driver",
		Fields: []core.Field{
			{Key: "api_key", Type: core.FieldPassword},
			{Key: "base_url", Type: core.FieldURL, Hosts: []string{"api.provider.example", "*.api.provider.example"}},
			{Key: "role_source", Type: core.FieldBoolean, Default: false, ConstantOnly: true},
		},
		New: func(*core.Connection, core.DriverEnv) (core.Transport, error) { return nil, nil },
	})
}

func (f *fixture) createAPI(settings map[string]any) (*core.Connection, error) {
	return f.svc.Create(context.Background(), app.ConnectionInput{Name: ptr("API"), Driver: ptr("apptestapi"), Settings: settings})
}

func TestEndpointOffTheProviderHostsRefused(t *testing.T) {
	tests := []struct {
		name        string
		baseURL     string
		allowCustom bool
		wantErr     bool
	}{
		{"the provider's host", "https://api.provider.example/v3", false, false},
		{"a regional host", "https://eu.api.provider.example", false, false},
		{"no base_url", "", false, false},
		{"loopback", "http://127.0.0.1:8080", false, true},
		{"metadata service", "https://169.254.169.254/", false, true},
		{"the provider's host over http", "http://api.provider.example", false, true},
		{"an internal name", "https://intranet.local/", false, true},
		{"loopback with custom endpoints allowed", "http://127.0.0.1:8080", true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture()
			f.svc.AllowCustomEndpoints = tt.allowCustom
			settings := map[string]any{"api_key": "k"}
			if tt.baseURL != "" {
				settings["base_url"] = tt.baseURL
			}
			_, err := f.createAPI(settings)
			if !tt.wantErr {
				if err != nil {
					t.Fatalf("create: %v", err)
				}
				return
			}
			if core.ErrorCode(err) != core.EINVALID || !strings.Contains(core.ErrorFields(err)["base_url"], core.AllowCustomEndpointsConstant) {
				t.Fatalf("create = %v, want a validation error on base_url", err)
			}
			if list, n, _ := f.svc.List(context.Background(), 0, 10); n != 0 || len(list) != 0 {
				t.Errorf("a refused connection was stored")
			}
			// An update to the same endpoint is refused too.
			c, err := f.createAPI(map[string]any{"api_key": "k"})
			if err != nil {
				t.Fatal(err)
			}
			_, err = f.svc.Update(context.Background(), c.ID, app.ConnectionInput{Settings: map[string]any{"base_url": tt.baseURL}})
			if core.ErrorFields(err)["base_url"] == "" {
				t.Errorf("update = %v, want a validation error on base_url", err)
			}
			if got := f.store.Raw(c.ID).Settings["base_url"]; got != nil {
				t.Errorf("update stored base_url %v", got)
			}
		})
	}
}

// TestStoredEndpointOffTheProviderHosts covers a value stored before the
// rule, by an import or in the database: the effective connection carries
// a SettingsError (so delivery, health checks, verify and OAuth refuse
// it), unless custom endpoints are allowed or a constant pins the value.
func TestStoredEndpointOffTheProviderHosts(t *testing.T) {
	ctx := context.Background()
	f := newFixture()
	f.svc.AllowCustomEndpoints = true
	c, err := f.createAPI(map[string]any{"api_key": "k", "base_url": "http://127.0.0.1:9"})
	if err != nil {
		t.Fatal(err)
	}
	if eff, _ := f.svc.Effective(ctx, c.ID); eff.SettingsError != "" {
		t.Fatalf("allowed: settings_error %q", eff.SettingsError)
	}
	f.svc.AllowCustomEndpoints = false
	eff, err := f.svc.Effective(ctx, c.ID)
	if err != nil || !strings.Contains(eff.SettingsError, "base_url") || !strings.Contains(eff.SettingsError, core.AllowCustomEndpointsConstant) {
		t.Errorf("effective: %v, settings_error %q", err, eff.SettingsError)
	}
	if got, _ := f.svc.Get(ctx, c.ID); got.SettingsError == "" {
		t.Errorf("GET does not show the settings_error")
	}
	// Removing the endpoint heals it.
	fixed, err := f.svc.Update(ctx, c.ID, app.ConnectionInput{Settings: map[string]any{"base_url": nil}})
	if err != nil || fixed.SettingsError != "" {
		t.Errorf("after removing base_url: %v %q", err, fixed.SettingsError)
	}

	// A pinned endpoint is the site owner's: allowed on create and at use.
	f = newFixture()
	f.pins["base_url"] = core.Pin{Constant: "MAILSVC_APPTESTAPI_BASE_URL", Value: "http://127.0.0.1:9"}
	c, err = f.createAPI(map[string]any{"api_key": "k"})
	if err != nil {
		t.Fatalf("create under a pinned endpoint: %v", err)
	}
	if eff, _ := f.svc.Effective(ctx, c.ID); eff.SettingsError != "" || eff.Settings["base_url"] != "http://127.0.0.1:9" {
		t.Errorf("pinned endpoint: settings_error %q, base_url %v", eff.SettingsError, eff.Settings["base_url"])
	}
}

func TestConstantOnlySetting(t *testing.T) {
	ctx := context.Background()
	f := newFixture()
	_, err := f.createAPI(map[string]any{"api_key": "k", "role_source": true})
	if msg := core.ErrorFields(err)["role_source"]; !strings.Contains(msg, "MAILSVC_APPTESTAPI_ROLE_SOURCE") {
		t.Fatalf("role_source from the API = %v, want a validation error naming the constant", err)
	}
	// The default (what a form sends) and null are accepted and not stored.
	for _, v := range []any{false, nil, ""} {
		c, err := f.createAPI(map[string]any{"api_key": "k", "role_source": v})
		if err != nil {
			t.Fatalf("role_source %v: %v", v, err)
		}
		if _, has := f.store.Raw(c.ID).Settings["role_source"]; has {
			t.Errorf("role_source %v stored: %v", v, f.store.Raw(c.ID).Settings)
		}
	}
	// A value stored before the rule (or by an import) is ignored.
	c, _ := f.createAPI(map[string]any{"api_key": "k"})
	f.store.Raw(c.ID).Settings["role_source"] = true
	if eff, _ := f.svc.Effective(ctx, c.ID); eff.Settings.Bool("role_source", false) {
		t.Errorf("a stored role_source is in effect: %v", eff.Settings)
	}
	// The constant sets it.
	f.pins["role_source"] = core.Pin{Constant: "MAILSVC_APPTESTAPI_ROLE_SOURCE", Value: "true"}
	if eff, _ := f.svc.Effective(ctx, c.ID); eff.Settings["role_source"] != true {
		t.Errorf("pinned role_source = %v", eff.Settings["role_source"])
	}
}
