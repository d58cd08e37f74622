package health_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/app/health"
	"github.com/mailsvc/mailsvc/core"
)

// TestSendFailureMarksDownUntilTheCheckPasses: delivery marks a healthy
// connection down (one alert), marking it again raises nothing, and the
// next health check that passes brings it back up with a recovery alert.
func TestSendFailureMarksDownUntilTheCheckPasses(t *testing.T) {
	f := newFixture()
	c := f.add(t, "relay", &behaviour{}, func(c *core.Connection) { c.HealthStatus = core.HealthHealthy })
	ctx := context.Background()
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	sf := &health.SendFailures{State: f.store, Alerts: f.alerts, Site: "shop", Now: func() time.Time { return at }}
	reason := "smtp: connect 127.0.0.1:9: dial tcp 127.0.0.1:9: connect: connection refused"

	read := func() *core.Connection {
		t.Helper()
		got, err := f.store.FindConnectionByID(ctx, c.ID)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	if err := sf.MarkDown(ctx, read(), reason); err != nil {
		t.Fatal(err)
	}
	got := read()
	if got.HealthStatus != core.HealthDown || !strings.Contains(got.LastError, "connection refused") ||
		got.LastCheckedAt == nil || !got.LastCheckedAt.Equal(at) {
		t.Fatalf("after the failure: %s %q at %v", got.HealthStatus, got.LastError, got.LastCheckedAt)
	}
	if err := sf.MarkDown(ctx, read(), reason); err != nil { // already down: no second alert
		t.Fatal(err)
	}
	if err := f.checker.CheckAll(ctx); err != nil {
		t.Fatal(err)
	}
	if got := read(); got.HealthStatus != core.HealthHealthy || got.LastError != "" {
		t.Fatalf("after the check: %s %q", got.HealthStatus, got.LastError)
	}
	var events []string
	for _, a := range f.alerts.Raised() {
		events = append(events, a.Event)
		if a.ConnectionID != c.ID {
			t.Errorf("alert %s names connection %d", a.Event, a.ConnectionID)
		}
	}
	if strings.Join(events, ",") != core.EventConnectionDown+","+core.EventConnectionRecovered {
		t.Errorf("alerts %v, want down then recovered", events)
	}
	if err := sf.MarkDown(ctx, &core.Connection{ID: 999}, reason); core.ErrorCode(err) != core.ENOTFOUND {
		t.Errorf("unknown connection: %v", err)
	}
}
