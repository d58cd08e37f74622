package cli

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/app"
	"github.com/mailsvc/mailsvc/app/apptest"
	"github.com/mailsvc/mailsvc/app/report"
	"github.com/mailsvc/mailsvc/core"
)

// reportMailer records the summary reports queued.
type reportMailer struct {
	mu   sync.Mutex
	logs []*core.Log
}

func (m *reportMailer) Enqueue(_ context.Context, l *core.Log) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.logs = append(m.logs, l)
	return int64(len(m.logs)), nil
}

// TestSummaryReportInSiteZone feeds the summary report service the site
// as the service reads it beside WordPress (siteOptions over the options
// timezone_string, start_of_week, admin_email): the scheduled period, its
// record and subject, and the dates of a preview are those of the site's
// zone and week, not of UTC and Monday.
func TestSummaryReportInSiteZone(t *testing.T) {
	ctx := context.Background()
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	conns := apptest.NewConnectionStore()
	conn := &core.Connection{Name: "Relay", Driver: "smtp", IsActive: true, HealthStatus: core.HealthHealthy}
	if err := conns.CreateConnection(ctx, conn); err != nil {
		t.Fatal(err)
	}
	settings := &app.Settings{Store: apptest.NewSettingsStore(), Connections: conns}
	if _, err := settings.Update(ctx, map[string]any{"default_connection_id": conn.ID, "summary_report": map[string]any{"frequency": "weekly"}}); err != nil {
		t.Fatal(err)
	}
	logs := apptest.NewLogStore()
	local := func(d, h, m int) time.Time { return time.Date(2026, 3, d, h, m, 0, 0, ny) }
	final := func(status string, at time.Time) *core.Log {
		id := conn.ID
		return &core.Log{Status: status, SentConnectionID: &id, CreatedAt: at, UpdatedAt: at,
			Message: core.Message{From: core.Address{Email: "shop@example.com"}, To: []core.Address{{Email: "c@example.org"}}, Subject: "Order"}}
	}
	if err := logs.ImportLogs(ctx, []*core.Log{
		final(core.StatusFailed, local(1, 0, 30)),     // Sunday 1 March, local: the site's week, not UTC's (Monday 2 to 9)
		final(core.StatusDelivered, local(7, 23, 30)), // Saturday night, local; Sunday 8 March in UTC
		final(core.StatusDelivered, local(7, 23, 45)),
		final(core.StatusDelivered, local(8, 10, 0)), // Sunday 8 March: the week being
	}); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	now := time.Date(2026, 2, 20, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	set := func(t time.Time) { mu.Lock(); defer mu.Unlock(); now = t }
	jobs := apptest.NewJobStore()
	jobs.SetClock(clock)
	mail := &reportMailer{}
	site := siteOptions{options: optionMap{"timezone_string": "America/New_York", "gmt_offset": "0", "start_of_week": "0",
		"admin_email": "owner@example.com", "blogname": "Shop"}}
	svc := &report.Service{Outcomes: logs, Queue: logs, Logs: logs, Connections: conns, Site: site,
		Settings: settings, Mailer: mail, Jobs: jobs, Owner: "r1", Now: clock}

	// The first run arms the job; nothing has ended since.
	if sent, err := svc.RunScheduled(ctx); err != nil || sent {
		t.Fatalf("first run: sent %v, %v", sent, err)
	}
	// Monday 9 March 02:00 UTC is still Sunday 8 March, 22:00, in New
	// York: the last whole week is Sunday 1 to Saturday 7 March, and the
	// last whole day Saturday 7 March (in UTC: Monday 2 to Sunday 8, and
	// Sunday 8).
	set(time.Date(2026, 3, 9, 2, 0, 0, 0, time.UTC))
	for _, tc := range []struct{ freq, record, label string }{
		{"weekly", "summary_report:weekly:2026-03-01", "Sun 1 Mar – Sat 7 Mar 2026"},
		{"daily", "summary_report:daily:2026-03-07", "Sat 7 Mar 2026"},
	} {
		if _, err := settings.Update(ctx, map[string]any{"summary_report": map[string]any{"frequency": tc.freq}}); err != nil {
			t.Fatal(err)
		}
		if sent, err := svc.RunScheduled(ctx); err != nil || !sent {
			t.Fatalf("%s: sent %v, %v", tc.freq, sent, err)
		}
		if n := jobs.Claims(tc.record); n != 1 {
			t.Errorf("%s: the record %s was claimed %d times, want 1", tc.freq, tc.record, n)
		}
		l := mail.logs[len(mail.logs)-1]
		if !strings.HasSuffix(l.Message.Subject, tc.label) || !strings.Contains(l.Message.Text, tc.label+" (America/New_York)") {
			t.Errorf("%s: queued %q, text without %q:\n%s", tc.freq, l.Message.Subject, tc.label+" (America/New_York)", l.Message.Text)
		}
		if len(l.Message.To) != 1 || l.Message.To[0].Email != "owner@example.com" {
			t.Errorf("%s: queued to %v, want the admin_email option", tc.freq, l.Message.To)
		}
	}

	// A preview's dates are the site's days: Sunday 1 to Saturday 7 March
	// from local midnight to local midnight.
	out, err := svc.Preview(ctx, report.Query{From: "2026-03-01", To: "2026-03-07"})
	if err != nil {
		t.Fatal(err)
	}
	p := out.Report.Period
	if !p.From.Equal(local(1, 0, 0)) || !p.To.Equal(local(8, 0, 0)) || p.From.Location().String() != "America/New_York" {
		t.Errorf("preview period [%s, %s), want [%s, %s)", p.From, p.To, local(1, 0, 0), local(8, 0, 0))
	}
	if tot := out.Report.Totals; tot.Delivered != 2 || tot.Failed != 1 {
		t.Errorf("preview totals %+v, want 2 delivered and 1 failed (the site's week)", tot)
	}
}
