package app_test

import (
	"context"
	"slices"
	"testing"

	"github.com/mailsvc/mailsvc/app"
	"github.com/mailsvc/mailsvc/app/apptest"
	"github.com/mailsvc/mailsvc/core"
)

// newSettings returns a free settings service over empty in-memory
// stores, its connection store and the settings it reads first.
func newSettings(t *testing.T) (*app.Settings, *apptest.ConnectionStore, map[string]any) {
	t.Helper()
	conns := apptest.NewConnectionStore()
	svc := &app.Settings{Store: apptest.NewSettingsStore(), Connections: conns}
	got, err := svc.Get(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return svc, conns, got
}

func TestSettingsDefaultsAndUpdate(t *testing.T) {
	ctx := context.Background()
	svc, conns, got := newSettings(t)
	want := map[string]any{"health_check_enabled": true, "health_check_interval": int64(15), "oauth_refresh_enabled": true,
		"oauth_refresh_interval": int64(15), "oauth_refresh_max_retries": int64(3), "log_emails": true, "default_connection_id": nil,
		"uncertain_grace_minutes": int64(10)}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("default %s = %#v, want %#v", k, got[k], v)
		}
	}
	if len(got) != len(core.FreeSettings) {
		t.Errorf("got %d keys, want %d", len(got), len(core.FreeSettings))
	}
	c := &core.Connection{Name: "x", Driver: "apptestmail"}
	if err := conns.CreateConnection(ctx, c); err != nil {
		t.Fatal(err)
	}
	got, err := svc.Update(ctx, map[string]any{"health_check_interval": float64(60), "default_connection_id": float64(c.ID), "from_email": "site@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	if got["health_check_interval"] != int64(60) || got["default_connection_id"] != c.ID || got["from_email"] != "site@example.com" || got["oauth_refresh_interval"] != int64(15) {
		t.Errorf("after update: %v", got)
	}
}

func TestSettingsValidation(t *testing.T) {
	tests := []struct {
		name  string
		patch map[string]any
		field string
	}{
		{"interval below 1", map[string]any{"health_check_interval": float64(0)}, "health_check_interval"},
		{"interval above 1440", map[string]any{"oauth_refresh_interval": float64(1441)}, "oauth_refresh_interval"},
		{"retries above 10", map[string]any{"oauth_refresh_max_retries": float64(11)}, "oauth_refresh_max_retries"},
		{"retries below 1", map[string]any{"oauth_refresh_max_retries": float64(0)}, "oauth_refresh_max_retries"},
		{"uncertain grace below 1", map[string]any{"uncertain_grace_minutes": float64(0)}, "uncertain_grace_minutes"},
		{"uncertain grace above 1440", map[string]any{"uncertain_grace_minutes": float64(1441)}, "uncertain_grace_minutes"},
		{"fractional interval", map[string]any{"health_check_interval": 1.5}, "health_check_interval"},
		{"bool as string", map[string]any{"health_check_enabled": "yes"}, "health_check_enabled"},
		{"interval as string", map[string]any{"health_check_interval": "15"}, "health_check_interval"},
		{"bad email", map[string]any{"from_email": "not-an-email"}, "from_email"},
		{"unknown key", map[string]any{"colour": "red"}, "colour"},
		{"missing connection", map[string]any{"fallback_connection_id": float64(42)}, "fallback_connection_id"},
		{"negative retention", map[string]any{"log_retention_days": float64(-1)}, "log_retention_days"},
		{"report not an object", map[string]any{"summary_report": "weekly"}, "summary_report"},
		{"report frequency", map[string]any{"summary_report": map[string]any{"frequency": "hourly"}}, "summary_report.frequency"},
		{"report recipient", map[string]any{"summary_report": map[string]any{"recipients": []any{"ops@example.com", "nope"}}}, "summary_report.recipients"},
		{"report recipients type", map[string]any{"summary_report": map[string]any{"recipients": float64(3)}}, "summary_report.recipients"},
		{"report connection", map[string]any{"summary_report": map[string]any{"connection_id": float64(42)}}, "summary_report.connection_id"},
		{"report unknown field", map[string]any{"summary_report": map[string]any{"colour": "red"}}, "summary_report.colour"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := apptest.NewSettingsStore()
			svc := &app.Settings{Store: store, Connections: apptest.NewConnectionStore()}
			_, err := svc.Update(context.Background(), tt.patch)
			if core.ErrorCode(err) != core.EINVALID || core.ErrorFields(err)[tt.field] == "" {
				t.Fatalf("err = %v, want validation error on %s", err, tt.field)
			}
			stored, _ := store.LoadSettings(context.Background(), core.ScopeFree)
			if len(stored) != 0 {
				t.Errorf("a rejected update stored %v", stored)
			}
		})
	}
}

func TestSettingsSummaryReportMerges(t *testing.T) {
	ctx := context.Background()
	svc, conns, got := newSettings(t)
	if rep := core.ParseSummaryReport(got); rep.Frequency != core.ReportWeekly || len(rep.Recipients) != 0 || rep.ConnectionID != 0 {
		t.Fatalf("default summary_report = %+v, want weekly to the admin through the default connection", rep)
	}
	c := &core.Connection{Name: "x", Driver: "apptestmail"}
	if err := conns.CreateConnection(ctx, c); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Update(ctx, map[string]any{"summary_report": map[string]any{"recipients": "a@example.com, b@example.com,a@example.com", "connection_id": float64(c.ID)}}); err != nil {
		t.Fatal(err)
	}
	got, err := svc.Update(ctx, map[string]any{"summary_report": map[string]any{"frequency": "monthly"}})
	if err != nil {
		t.Fatal(err)
	}
	rep := core.ParseSummaryReport(got)
	if rep.Frequency != core.ReportMonthly || !slices.Equal(rep.Recipients, []string{"a@example.com", "b@example.com"}) || rep.ConnectionID != c.ID {
		t.Fatalf("after two partial updates summary_report = %+v", rep)
	}
	got, err = svc.Update(ctx, map[string]any{"summary_report": map[string]any{"connection_id": nil, "recipients": []any{}}})
	if err != nil {
		t.Fatal(err)
	}
	if rep := core.ParseSummaryReport(got); rep.Frequency != core.ReportMonthly || len(rep.Recipients) != 0 || rep.ConnectionID != 0 {
		t.Fatalf("after clearing summary_report = %+v", rep)
	}
}
