package http_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http/httptest"
	"testing"

	api "github.com/mailsvc/mailsvc/adapters/http"
	"github.com/mailsvc/mailsvc/app"
	"github.com/mailsvc/mailsvc/app/apptest"
	"github.com/mailsvc/mailsvc/core"
)

// stubSiteFormat answers a site's format, or err.
type stubSiteFormat struct {
	format core.SiteFormat
	err    error
}

func (s stubSiteFormat) SiteFormat(context.Context) (core.SiteFormat, error) { return s.format, s.err }

// TestSiteFormatAndSettingsSchema: GET /site/format answers the site's
// date and time format and zone, to an administrator only; GET
// /settings/schema answers every free setting in a group with its label.
func TestSiteFormatAndSettingsSchema(t *testing.T) {
	berlin := core.SiteFormat{DateFormat: "d.m.Y", TimeFormat: "H:i", TimeZone: "Europe/Berlin"}
	tests := []struct {
		name, token string
		reader      stubSiteFormat
		status      int
		want        core.SiteFormat
	}{
		{"the site's format", "admin", stubSiteFormat{format: berlin}, 200, berlin},
		{"an offset only", "admin", stubSiteFormat{format: core.SiteFormat{DateFormat: "F j, Y", TimeFormat: "g:i a", GMTOffset: 5.5}}, 200,
			core.SiteFormat{DateFormat: "F j, Y", TimeFormat: "g:i a", GMTOffset: 5.5}},
		{"no credentials", "", stubSiteFormat{format: berlin}, 401, core.SiteFormat{}},
		{"not an administrator", "editor", stubSiteFormat{format: berlin}, 403, core.SiteFormat{}},
		{"the options cannot be read", "admin", stubSiteFormat{err: errors.New("database gone")}, 500, core.SiteFormat{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := apptest.NewSettingsStore()
			s := &api.Server{Auth: &tokenAuth{}, Settings: &app.Settings{Store: store, Connections: apptest.NewConnectionStore()},
				SiteFormat: tt.reader, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
			ts := httptest.NewServer(s.Handler())
			defer ts.Close()
			r := do(t, ts, "GET", ns+"/site/format", tt.token, nil)
			if r.Status != tt.status {
				t.Fatalf("status %d, want %d: %s", r.Status, tt.status, r.Body)
			}
			if tt.status != 200 {
				return
			}
			var got core.SiteFormat
			r.json(t, &got)
			if got != tt.want {
				t.Errorf("answered %+v, want %+v", got, tt.want)
			}
		})
	}

	f := newDashboardServer(t)
	var schema struct {
		Groups   []core.SettingGroup `json:"groups"`
		Settings []core.SettingDef   `json:"settings"`
	}
	do(t, f.ts, "GET", ns+"/settings/schema", "admin", nil).json(t, &schema)
	if len(schema.Groups) == 0 || len(schema.Settings) != len(core.FreeSettings) {
		t.Fatalf("schema: %d groups, %d settings, want %d settings", len(schema.Groups), len(schema.Settings), len(core.FreeSettings))
	}
	for _, d := range schema.Settings {
		if d.Key == "health_check_interval" && (d.Group != "health" || d.Label == "" || d.Unit != "minutes") {
			t.Errorf("health_check_interval is described as %+v", d)
		}
	}
	if r := do(t, f.ts, "GET", ns+"/settings/schema", "", nil); r.Status != 401 {
		t.Errorf("the schema without credentials: %d", r.Status)
	}
}
