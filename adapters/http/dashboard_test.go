package http_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	api "github.com/mailsvc/mailsvc/adapters/http"
	"github.com/mailsvc/mailsvc/app"
	"github.com/mailsvc/mailsvc/app/apptest"
	"github.com/mailsvc/mailsvc/app/dashboard"
	"github.com/mailsvc/mailsvc/core"
)

type dashboardFixture struct {
	ts    *httptest.Server
	logs  *apptest.LogStore
	conns *apptest.ConnectionStore
}

// newDashboardServer serves the real router over in-memory stores, with
// the connection "primary" (id 1, driver smtp) and the fake sender of the
// delivery route tests (a recipient containing "refuse" fails).
func newDashboardServer(t *testing.T) dashboardFixture {
	t.Helper()
	conns := apptest.NewConnectionStore()
	store := apptest.NewSettingsStore()
	hooks := &core.Hooks{}
	connApp := &app.Connections{Store: conns, Cipher: apptest.Cipher{Key: "k"}, Hooks: hooks, Settings: store}
	settings := &app.Settings{Store: store, Connections: conns}
	logs := apptest.NewLogStore()
	actions := &app.ConnectionActions{Connections: connApp, Settings: settings, Sender: sender{logs}, Hooks: hooks}
	s := &api.Server{
		Auth:        &tokenAuth{},
		Connections: connApp,
		Settings:    settings,
		Logs:        &app.Logs{Store: logs},
		Actions:     actions,
		Dashboard: &dashboard.Service{Outcomes: logs, Queue: logs, Logs: logs, Connections: conns,
			Store: store, Editor: connApp, Settings: settings, Tester: actions},
		Hooks:  hooks,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)
	name, driver := "primary", "smtp"
	if _, err := connApp.Create(context.Background(), app.ConnectionInput{Name: &name, Driver: &driver, Settings: map[string]any{"host": "mx", "password": "right"}}); err != nil {
		t.Fatal(err)
	}
	return dashboardFixture{ts: ts, logs: logs, conns: conns}
}

// add stores a message through connection 1 with a final or live status.
func (f dashboardFixture) add(t *testing.T, status, to string) {
	t.Helper()
	conn := int64(1)
	l := &core.Log{ConnectionID: &conn, Message: core.Message{From: core.Address{Email: "site@example.com"}, To: []core.Address{{Email: to}}, Subject: "about " + to}}
	out := core.LogOutcome{Status: status, Attempts: 1, SentConnectionID: &conn}
	if status == core.StatusFailed {
		out.LastError = "permanent failure: 550 no such user"
	}
	if err := settle(context.Background(), f.logs, l, out); err != nil {
		t.Fatal(err)
	}
}

func TestDashboardReadRoutes(t *testing.T) {
	f := newDashboardServer(t)
	f.add(t, core.StatusDelivered, "a@example.com")
	f.add(t, core.StatusDelivered, "b@example.com")
	f.add(t, core.StatusFailed, "c@example.com")
	f.add(t, core.StatusQueued, "d@example.com")

	tests := []struct {
		name, path string
		status     int
		field      string
		check      func(t *testing.T, r reply)
	}{
		{"stats", "/dashboard/stats", 200, "", func(t *testing.T, r reply) {
			var st struct {
				TimeZone string `json:"timezone"`
				Totals   struct {
					Queued, Sending, Delivered, Failed int64
					SuccessRate                        *float64 `json:"success_rate"`
				}
				Today       struct{ Delivered, Failed, Total int64 }
				Last7Days   struct{ Delivered int64 } `json:"last_7_days"`
				Last30Days  struct{ Failed int64 }    `json:"last_30_days"`
				Connections []struct {
					ID                int64
					Name, Driver      string
					Delivered, Failed int64
					SuccessRate       *float64 `json:"success_rate"`
				}
			}
			r.json(t, &st)
			if st.TimeZone != "UTC" || st.Totals.Queued != 1 || st.Totals.Delivered != 2 || st.Totals.Failed != 1 ||
				st.Totals.SuccessRate == nil || *st.Totals.SuccessRate != 66.67 {
				t.Fatalf("totals %s", r.Body)
			}
			if st.Today.Total != 3 || st.Last7Days.Delivered != 2 || st.Last30Days.Failed != 1 {
				t.Fatalf("periods %s", r.Body)
			}
			if len(st.Connections) != 1 || st.Connections[0].Name != "primary" || st.Connections[0].Delivered != 2 || st.Connections[0].Failed != 1 {
				t.Fatalf("connections %s", r.Body)
			}
		}},
		{"stats range today", "/dashboard/stats?range=today", 200, "", nil},
		{"stats bad range", "/dashboard/stats?range=forever", 422, "range", nil},
		{"stats to before from", "/dashboard/stats?from=2024-06-10&to=2024-06-01", 422, "to", nil},
		{"stats bad from", "/dashboard/stats?from=june", 422, "from", nil},
		{"chart default", "/dashboard/chart", 200, "", func(t *testing.T, r reply) {
			var c struct {
				Bucket string
				Points []struct {
					Label             string
					Delivered, Failed int64
				}
				Totals struct{ Delivered, Failed int64 }
			}
			r.json(t, &c)
			last := c.Points[len(c.Points)-1]
			if c.Bucket != "day" || len(c.Points) != 30 || last.Delivered != 2 || last.Failed != 1 || c.Points[0].Delivered != 0 || c.Totals.Delivered != 2 {
				t.Fatalf("chart %s", r.Body)
			}
		}},
		{"chart hours", "/dashboard/chart?bucket=hour&days=1", 200, "", func(t *testing.T, r reply) {
			var c struct{ Points []json.RawMessage }
			r.json(t, &c)
			if len(c.Points) != 24 {
				t.Fatalf("%d points", len(c.Points))
			}
		}},
		{"chart from/to dates", "/dashboard/chart?from=2024-01-01&to=2024-01-31", 200, "", func(t *testing.T, r reply) {
			var c struct{ Points []struct{ Label string } }
			r.json(t, &c)
			if len(c.Points) != 31 || c.Points[0].Label != "2024-01-01" || c.Points[30].Label != "2024-01-31" {
				t.Fatalf("chart %s", r.Body)
			}
		}},
		{"chart bucket week", "/dashboard/chart?bucket=week", 422, "bucket", nil},
		{"chart to before from", "/dashboard/chart?from=2024-06-10T00:00:00Z&to=2024-06-09T00:00:00Z", 422, "to", nil},
		{"chart days 0", "/dashboard/chart?days=0", 422, "days", nil},
		{"chart days 366", "/dashboard/chart?days=366", 422, "days", nil},
		{"chart too many hours", "/dashboard/chart?bucket=hour&days=40", 422, "bucket", nil},
		{"chart days and from", "/dashboard/chart?days=3&from=2024-01-01", 422, "range", nil},
		{"activity", "/dashboard/activity?limit=2&status=failed", 200, "", func(t *testing.T, r reply) {
			var a struct {
				Items []struct {
					Status, Subject string
					Recipients      []string
					Connection      *struct{ ID int64 }
					LastError       string `json:"last_error"`
				}
			}
			r.json(t, &a)
			if len(a.Items) != 1 || a.Items[0].Status != "failed" || a.Items[0].Subject != "about c@example.com" ||
				a.Items[0].Recipients[0] != "c@example.com" || a.Items[0].Connection == nil || a.Items[0].Connection.ID != 1 ||
				!strings.Contains(a.Items[0].LastError, "550") {
				t.Fatalf("activity %s", r.Body)
			}
		}},
		{"activity default limit", "/dashboard/activity", 200, "", func(t *testing.T, r reply) {
			var a struct{ Items []json.RawMessage }
			r.json(t, &a)
			if len(a.Items) != 4 {
				t.Fatalf("activity %s", r.Body)
			}
		}},
		{"activity queued", "/dashboard/activity?status=queued", 200, "", func(t *testing.T, r reply) {
			var a struct {
				Items []struct {
					Status        string
					NextAttemptAt *time.Time `json:"next_attempt_at"`
				}
			}
			r.json(t, &a)
			if len(a.Items) != 1 || a.Items[0].Status != "queued" || a.Items[0].NextAttemptAt == nil {
				t.Fatalf("activity %s", r.Body)
			}
		}},
		{"attention", "/dashboard/attention", 200, "", func(t *testing.T, r reply) {
			var a struct {
				Service   string
				Failed24h int `json:"failed_24h"`
				Count     int
			}
			r.json(t, &a)
			if a.Service != "running" || a.Failed24h != 1 || a.Count != 1 {
				t.Fatalf("attention %s", r.Body)
			}
		}},
		{"activity limit 0", "/dashboard/activity?limit=0", 422, "limit", nil},
		{"activity limit 51", "/dashboard/activity?limit=51", 422, "limit", nil},
		{"activity sending", "/dashboard/activity?status=sending", 422, "status", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := do(t, f.ts, "GET", ns+tt.path, "admin", nil)
			if r.Status != tt.status {
				t.Fatalf("status %d, want %d: %s", r.Status, tt.status, r.Body)
			}
			if tt.field != "" {
				code, status, fields := r.errorCode(t)
				if code != "validation_error" || status != 422 || fields[tt.field] == "" {
					t.Fatalf("error %s", r.Body)
				}
			}
			if tt.check != nil {
				tt.check(t, r)
			}
		})
	}
}

func TestDashboardRoutesNeedTheCapability(t *testing.T) {
	f := newDashboardServer(t)
	for _, route := range []struct{ method, path string }{
		{"GET", "/dashboard/stats"}, {"GET", "/dashboard/chart"}, {"GET", "/dashboard/activity"},
		{"GET", "/dashboard/onboarding"}, {"POST", "/dashboard/onboarding"}, {"POST", "/dashboard/onboarding/apply"},
	} {
		for token, want := range map[string]int{"": 401, "editor": 403} {
			if r := do(t, f.ts, route.method, ns+route.path, token, strings.NewReader(`{}`)); r.Status != want {
				t.Errorf("%s %s as %q: %d, want %d", route.method, route.path, token, r.Status, want)
			}
		}
	}
}

func TestOnboardingRoutes(t *testing.T) {
	f := newDashboardServer(t)
	post := func(path, body string) reply {
		return do(t, f.ts, "POST", ns+path, "admin", strings.NewReader(body))
	}
	state := func() map[string]any {
		var st map[string]any
		do(t, f.ts, "GET", ns+"/dashboard/onboarding", "admin", nil).json(t, &st)
		return st
	}
	if st := state(); st["step"] != 0.0 || st["driver"] != "" || st["dismissed"] != false || st["completed"] != false || st["connection_id"] != nil {
		t.Fatalf("initial state %v", st)
	}
	if r := post("/dashboard/onboarding", `{"step":3,"driver":"smtp"}`); r.Status != 200 {
		t.Fatalf("update: %d %s", r.Status, r.Body)
	}
	if r := post("/dashboard/onboarding", `{"dismissed":true}`); r.Status != 200 {
		t.Fatalf("update: %d %s", r.Status, r.Body)
	}
	if st := state(); st["step"] != 3.0 || st["driver"] != "smtp" || st["dismissed"] != true {
		t.Fatalf("merged state %v", st)
	}

	bad := []struct {
		name, path, body string
		status           int
		field            string
	}{
		{"step too high", "/dashboard/onboarding", `{"step":11}`, 422, "step"},
		{"unknown driver", "/dashboard/onboarding", `{"driver":"carrier-pigeon"}`, 422, "driver"},
		{"step not a number", "/dashboard/onboarding", `{"step":"two"}`, 400, "step"},
		{"step fractional", "/dashboard/onboarding", `{"step":2.5}`, 400, "step"},
		{"malformed", "/dashboard/onboarding", `{"step":`, 400, ""},
		{"not an object", "/dashboard/onboarding", `[1]`, 400, ""},
		{"apply malformed", "/dashboard/onboarding/apply", `{`, 400, ""},
		{"apply settings wrong type", "/dashboard/onboarding/apply", `{"driver":"smtp","settings":"x"}`, 400, "settings"},
		{"apply no driver", "/dashboard/onboarding/apply", `{"settings":{"host":"mx"},"test_email":"a@example.com"}`, 422, "driver"},
		{"apply unknown driver", "/dashboard/onboarding/apply", `{"driver":"nope","test_email":"a@example.com"}`, 422, "driver"},
		{"apply settings invalid", "/dashboard/onboarding/apply", `{"driver":"smtp","settings":{"from_email":"x"},"test_email":"a@example.com"}`, 422, "host"},
		{"apply bad test address", "/dashboard/onboarding/apply", `{"driver":"smtp","settings":{"host":"mx"},"test_email":"nobody"}`, 422, "test_email"},
		{"apply no recipient", "/dashboard/onboarding/apply", `{"driver":"smtp","settings":{"host":"mx"}}`, 422, "test_email"},
		{"apply unknown connection", "/dashboard/onboarding/apply", `{"connection_id":99,"test_email":"a@example.com"}`, 422, "connection_id"},
	}
	for _, tt := range bad {
		r := post(tt.path, tt.body)
		if r.Status != tt.status {
			t.Errorf("%s: %d, want %d: %s", tt.name, r.Status, tt.status, r.Body)
			continue
		}
		if _, _, fields := r.errorCode(t); tt.field != "" && fields[tt.field] == "" {
			t.Errorf("%s: no message on %s: %s", tt.name, tt.field, r.Body)
		}
	}
	if list, _, _ := f.conns.FindConnections(context.Background(), core.ConnectionFilter{}); len(list) != 1 {
		t.Fatalf("bad applies wrote connections: %d", len(list))
	}
	if st := state(); st["step"] != 3.0 || st["driver"] != "smtp" || st["connection_id"] != nil {
		t.Fatalf("bad input changed the state: %v", st)
	}
	var settings map[string]any
	do(t, f.ts, "GET", ns+"/settings", "admin", nil).json(t, &settings)
	if settings["default_connection_id"] != nil {
		t.Fatalf("bad applies set a default: %v", settings["default_connection_id"])
	}

	r := post("/dashboard/onboarding/apply", `{"name":"Wizard","driver":"smtp","settings":{"host":"mx.example.com","password":"wizard-secret","from_email":"site@example.com"},"test_email":"rcpt@example.com"}`)
	if r.Status != 200 || strings.Contains(string(r.Body), "wizard-secret") {
		t.Fatalf("apply: %d %s", r.Status, r.Body)
	}
	var res struct {
		Connection struct {
			ID       int64
			Name     string
			Settings map[string]any
		}
		Test struct {
			Success bool
			Message string
			LogID   int64 `json:"log_id"`
		}
		Onboarding struct {
			Completed    bool
			ConnectionID *int64 `json:"connection_id"`
		}
	}
	r.json(t, &res)
	id := res.Connection.ID
	if id != 2 || res.Connection.Name != "Wizard" || res.Connection.Settings["password"] != core.Mask || !res.Test.Success || res.Test.LogID == 0 ||
		!res.Onboarding.Completed || res.Onboarding.ConnectionID == nil || *res.Onboarding.ConnectionID != id {
		t.Fatalf("apply: %s", r.Body)
	}
	do(t, f.ts, "GET", ns+"/settings", "admin", nil).json(t, &settings)
	if settings["default_connection_id"] != float64(id) {
		t.Fatalf("default connection %v", settings["default_connection_id"])
	}
	sent, err := f.logs.FindLogByID(context.Background(), res.Test.LogID)
	if err != nil || sent.Message.To[0].Email != "rcpt@example.com" || *sent.ConnectionID != id {
		t.Fatalf("test log %+v %v", sent, err)
	}

	// Re-apply on the same connection with a refusing recipient: updated,
	// not duplicated, the failure reported with a 200.
	r = post("/dashboard/onboarding/apply", fmt.Sprintf(`{"connection_id":%d,"settings":{"password":%q},"test_email":"refuse@example.com"}`, id, core.Mask))
	r.json(t, &res)
	if r.Status != 200 || res.Test.Success || res.Connection.ID != id || res.Onboarding.Completed {
		t.Fatalf("re-apply: %d %s", r.Status, r.Body)
	}
	if list, _, _ := f.conns.FindConnections(context.Background(), core.ConnectionFilter{}); len(list) != 2 {
		t.Fatalf("%d connections after re-apply", len(list))
	}
}
