package dashboard_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/mailsvc/mailsvc/app"
	"github.com/mailsvc/mailsvc/app/apptest"
	"github.com/mailsvc/mailsvc/app/dashboard"
	"github.com/mailsvc/mailsvc/core"
)

func init() {
	core.Register(core.Driver{
		Slug: "wizardsmtp", Name: "Wizard SMTP",
		Fields: []core.Field{
			{Key: "host", Type: core.FieldString, Required: true},
			{Key: "password", Type: core.FieldPassword},
			{Key: "from_email", Type: core.FieldEmail},
		},
		New: func(*core.Connection, core.DriverEnv) (core.Transport, error) { return nil, nil },
	})
}

// sender is an app.ImmediateSender that records what it sent: a recipient
// containing "refuse" fails at the provider; a message without a valid
// From is a validation error, as delivery.Service.SendNow answers.
type sender struct {
	mu    sync.Mutex
	sent  []string // "connID:to"
	froms []string
}

func (s *sender) SendNow(_ context.Context, connID int64, msg *core.Message, source string, _ core.OutcomeHostHooks) (*core.Log, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !core.ValidEmail(msg.From.Email) {
		return nil, core.InvalidField("from", "A valid sender address is required.")
	}
	s.froms = append(s.froms, msg.From.Email)
	s.sent = append(s.sent, fmt.Sprintf("%d:%s", connID, msg.To[0].Email))
	l := &core.Log{ID: int64(len(s.sent)), Status: core.StatusDelivered, ConnectionID: &connID, Message: *msg, Source: source}
	if strings.Contains(msg.To[0].Email, "refuse") {
		l.Status, l.LastError = core.StatusFailed, "550 refused"
	}
	return l, nil
}

type wizard struct {
	svc      *dashboard.Service
	conns    *apptest.ConnectionStore
	settings *app.Settings
	store    *apptest.SettingsStore
	sender   *sender
}

func newWizard(admin string) wizard {
	conns := apptest.NewConnectionStore()
	store := apptest.NewSettingsStore()
	connApp := &app.Connections{Store: conns, Cipher: apptest.Cipher{Key: "k"}, Hooks: &core.Hooks{}, Settings: store}
	settings := &app.Settings{Store: store, Connections: conns}
	snd := &sender{}
	svc := &dashboard.Service{
		Store: store, Editor: connApp, Settings: settings,
		Tester: &app.ConnectionActions{Connections: connApp, Settings: settings, Sender: snd, Hooks: &core.Hooks{}},
		Site:   site{admin: admin},
	}
	return wizard{svc: svc, conns: conns, settings: settings, store: store, sender: snd}
}

func ptr[T any](v T) *T { return &v }

func TestOnboardingState(t *testing.T) {
	ctx := context.Background()
	w := newWizard("")
	st, err := w.svc.Onboarding(ctx)
	if err != nil || *st != (dashboard.OnboardingState{}) {
		t.Fatalf("initial state %+v, %v", st, err)
	}
	steps := []struct {
		name  string
		in    dashboard.OnboardingInput
		want  dashboard.OnboardingState
		field string
	}{
		{"step and driver", dashboard.OnboardingInput{Step: ptr[int64](2), Driver: ptr("wizardsmtp")}, dashboard.OnboardingState{Step: 2, Driver: "wizardsmtp"}, ""},
		{"merge keeps the rest", dashboard.OnboardingInput{Dismissed: ptr(true)}, dashboard.OnboardingState{Step: 2, Driver: "wizardsmtp", Dismissed: true}, ""},
		{"step too high", dashboard.OnboardingInput{Step: ptr[int64](11), Dismissed: ptr(false)}, dashboard.OnboardingState{Step: 2, Driver: "wizardsmtp", Dismissed: true}, "step"},
		{"negative step", dashboard.OnboardingInput{Step: ptr[int64](-1)}, dashboard.OnboardingState{Step: 2, Driver: "wizardsmtp", Dismissed: true}, "step"},
		{"unknown driver", dashboard.OnboardingInput{Driver: ptr("nope"), Step: ptr[int64](3)}, dashboard.OnboardingState{Step: 2, Driver: "wizardsmtp", Dismissed: true}, "driver"},
		{"clear driver, complete", dashboard.OnboardingInput{Driver: ptr(""), Completed: ptr(true), Step: ptr[int64](10)}, dashboard.OnboardingState{Step: 10, Dismissed: true, Completed: true}, ""},
	}
	for _, s := range steps {
		got, err := w.svc.UpdateOnboarding(ctx, s.in)
		if s.field != "" {
			if fields(err)[s.field] == "" {
				t.Fatalf("%s: err = %v, want a validation error on %s", s.name, err, s.field)
			}
		} else if err != nil || *got != s.want {
			t.Fatalf("%s: %+v, %v; want %+v", s.name, got, err, s.want)
		}
		stored, _ := w.svc.Onboarding(ctx)
		if *stored != s.want {
			t.Fatalf("%s: stored %+v, want %+v", s.name, stored, s.want)
		}
	}
}

func TestApplyOnboarding(t *testing.T) {
	ctx := context.Background()
	w := newWizard("owner@example.com")
	res, err := w.svc.ApplyOnboarding(ctx, dashboard.ApplyInput{
		Driver:   ptr("wizardsmtp"),
		Settings: map[string]any{"host": "mx.example.com", "password": "hunter2", "from_email": "site@example.com"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Connection.ID != 1 || res.Connection.Name != "Wizard SMTP" || res.Connection.Settings["password"] != core.Mask {
		t.Errorf("connection %+v", res.Connection)
	}
	if !res.Test.Success || res.Test.LogID == 0 || res.Test.To != "owner@example.com" {
		t.Errorf("test %+v", res.Test)
	}
	if len(w.sender.sent) != 1 || w.sender.sent[0] != "1:owner@example.com" {
		t.Errorf("sent %v", w.sender.sent)
	}
	if st := res.Onboarding; !st.Completed || st.Driver != "wizardsmtp" || st.ConnectionID == nil || *st.ConnectionID != 1 {
		t.Errorf("onboarding %+v", st)
	}
	if raw := w.conns.Raw(1); raw.Settings.String("password") == "hunter2" {
		t.Error("password stored in clear")
	}
	if st, _ := w.settings.Get(ctx); st["default_connection_id"] != int64(1) {
		t.Errorf("default connection %v", st["default_connection_id"])
	}

	// Apply again on the same connection, to a recipient that refuses:
	// updated in place, the test fails, the wizard is not completed.
	res, err = w.svc.ApplyOnboarding(ctx, dashboard.ApplyInput{
		ConnectionID: ptr[int64](1), Name: ptr("Office"),
		Settings:  map[string]any{"host": "mx2.example.com", "password": core.Mask},
		TestEmail: ptr("refuse@example.com"),
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Connection.ID != 1 || res.Connection.Name != "Office" || res.Connection.Settings["host"] != "mx2.example.com" {
		t.Errorf("updated connection %+v", res.Connection)
	}
	if res.Test.Success || !strings.Contains(res.Test.Message, "550 refused") || res.Onboarding.Completed {
		t.Errorf("failed test reported as %+v, onboarding %+v", res.Test, res.Onboarding)
	}
	if raw := w.conns.Raw(1); raw.Settings.String("password") == "" {
		t.Error("masked password replaced the stored one")
	}
	if n, _, _ := w.conns.FindConnections(ctx, core.ConnectionFilter{}); len(n) != 1 {
		t.Errorf("%d connections after an update", len(n))
	}
}

func TestApplyOnboardingValidationWritesNothing(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name   string
		admin  string
		in     dashboard.ApplyInput
		fields []string
	}{
		{"no driver", "owner@example.com", dashboard.ApplyInput{Settings: map[string]any{"host": "h"}}, []string{"driver"}},
		{"unknown driver", "owner@example.com", dashboard.ApplyInput{Driver: ptr("nope")}, []string{"driver"}},
		{"settings fail the driver's schema", "owner@example.com", dashboard.ApplyInput{Driver: ptr("wizardsmtp"), Settings: map[string]any{"from_email": "not an address"}}, []string{"host", "from_email"}},
		{"bad test address", "owner@example.com", dashboard.ApplyInput{Driver: ptr("wizardsmtp"), Settings: map[string]any{"host": "h"}, TestEmail: ptr("nobody")}, []string{"test_email"}},
		{"no recipient anywhere", "", dashboard.ApplyInput{Driver: ptr("wizardsmtp"), Settings: map[string]any{"host": "h"}}, []string{"test_email"}},
		{"unknown connection", "owner@example.com", dashboard.ApplyInput{ConnectionID: ptr[int64](42), Settings: map[string]any{"host": "h"}}, []string{"connection_id"}},
		{"connection id 0", "owner@example.com", dashboard.ApplyInput{ConnectionID: ptr[int64](0), Driver: ptr("wizardsmtp")}, []string{"connection_id"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWizard(tt.admin)
			_, err := w.svc.ApplyOnboarding(ctx, tt.in)
			f := fields(err)
			for _, k := range tt.fields {
				if f[k] == "" {
					t.Errorf("err = %v (fields %v), want a message on %s", err, f, k)
				}
			}
			if list, _, _ := w.conns.FindConnections(ctx, core.ConnectionFilter{}); len(list) != 0 {
				t.Errorf("%d connections written", len(list))
			}
			for _, scope := range []string{core.ScopeFree, dashboard.ScopeOnboarding} {
				if v, _ := w.store.LoadSettings(ctx, scope); len(v) != 0 {
					t.Errorf("scope %s written: %v", scope, v)
				}
			}
			if len(w.sender.sent) != 0 {
				t.Errorf("sent %v", w.sender.sent)
			}
		})
	}
}

func TestApplyOnboardingDefaultRecipient(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct {
		name, admin, fromSetting, want string
	}{
		{"admin email", "owner@example.com", "general@example.com", "owner@example.com"},
		{"from_email setting", "", "general@example.com", "general@example.com"},
		{"connection's from_email", "not-an-address", "", "conn@example.com"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := newWizard(tt.admin)
			if tt.fromSetting != "" {
				if _, err := w.settings.Update(ctx, map[string]any{"from_email": tt.fromSetting}); err != nil {
					t.Fatal(err)
				}
			}
			res, err := w.svc.ApplyOnboarding(ctx, dashboard.ApplyInput{Driver: ptr("wizardsmtp"), Settings: map[string]any{"host": "h", "from_email": "conn@example.com"}})
			if err != nil {
				t.Fatal(err)
			}
			if res.Test.To != tt.want {
				t.Errorf("sent to %q, want %q", res.Test.To, tt.want)
			}
		})
	}
}

// siteSender is an app.SiteSender with a fixed address.
type siteSender string

func (s siteSender) DefaultFrom(context.Context) (string, error) { return string(s), nil }

func TestApplyOnboardingFailedTestWritesNothing(t *testing.T) {
	ctx := context.Background()
	w := newWizard("owner@example.com")
	// No From anywhere and no site sender: the test email cannot be tried.
	_, err := w.svc.ApplyOnboarding(ctx, dashboard.ApplyInput{Driver: ptr("wizardsmtp"), Settings: map[string]any{"host": "h"}})
	if fields(err)["from"] == "" {
		t.Fatalf("err = %v, want a validation error on from", err)
	}
	if list, _, _ := w.conns.FindConnections(ctx, core.ConnectionFilter{}); len(list) != 0 {
		t.Errorf("%d connections left behind", len(list))
	}
	for _, scope := range []string{core.ScopeFree, dashboard.ScopeOnboarding} {
		if v, _ := w.store.LoadSettings(ctx, scope); len(v) != 0 {
			t.Errorf("scope %s written: %v", scope, v)
		}
	}
}

func TestApplyOnboardingFallsBackToTheSiteSender(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct {
		name, fromSetting, connFrom, want string
	}{
		{"nothing set: the site's sender", "", "", "wordpress@example.com"},
		{"from_email setting", "general@example.com", "", "general@example.com"},
		{"connection's from_email", "general@example.com", "conn@example.com", "conn@example.com"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := newWizard("owner@example.com")
			w.svc.Tester.(*app.ConnectionActions).Site = siteSender("wordpress@example.com")
			if tt.fromSetting != "" {
				if _, err := w.settings.Update(ctx, map[string]any{"from_email": tt.fromSetting}); err != nil {
					t.Fatal(err)
				}
			}
			settings := map[string]any{"host": "h"}
			if tt.connFrom != "" {
				settings["from_email"] = tt.connFrom
			}
			res, err := w.svc.ApplyOnboarding(ctx, dashboard.ApplyInput{Driver: ptr("wizardsmtp"), Settings: settings})
			if err != nil || !res.Test.Success {
				t.Fatalf("apply: %+v, %v", res, err)
			}
			if len(w.sender.froms) != 1 || w.sender.froms[0] != tt.want {
				t.Errorf("sent from %v, want %s", w.sender.froms, tt.want)
			}
		})
	}
}

func TestApplyOnboardingRetryReusesItsConnection(t *testing.T) {
	ctx := context.Background()
	w := newWizard("owner@example.com")
	in := dashboard.ApplyInput{Driver: ptr("wizardsmtp"), Settings: map[string]any{"host": "h", "from_email": "site@example.com"}, TestEmail: ptr("refuse@example.com")}
	first, err := w.svc.ApplyOnboarding(ctx, in)
	if err != nil || first.Test.Success {
		t.Fatalf("first apply: %+v, %v", first, err)
	}
	in.TestEmail = ptr("owner@example.com")
	in.Settings = map[string]any{"host": "h2"}
	second, err := w.svc.ApplyOnboarding(ctx, in)
	if err != nil || !second.Test.Success {
		t.Fatalf("retry: %+v, %v", second, err)
	}
	if second.Connection.ID != first.Connection.ID || second.Connection.Settings["host"] != "h2" {
		t.Errorf("retry made or changed another connection: %+v, first %d", second.Connection, first.Connection.ID)
	}
	if list, _, _ := w.conns.FindConnections(ctx, core.ConnectionFilter{}); len(list) != 1 {
		t.Errorf("%d connections after a retry, want 1", len(list))
	}
	// Once completed, a new apply makes a new connection.
	in.Settings = map[string]any{"host": "h3", "from_email": "site@example.com"}
	third, err := w.svc.ApplyOnboarding(ctx, in)
	if err != nil || third.Connection.ID == first.Connection.ID {
		t.Errorf("apply after completion: %+v, %v; want a new connection", third, err)
	}
}
