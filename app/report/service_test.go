package report_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/app"
	"github.com/mailsvc/mailsvc/app/apptest"
	"github.com/mailsvc/mailsvc/app/report"
	"github.com/mailsvc/mailsvc/core"
)

// site is the WordPress site: Berlin time, an admin address and a title.
type site struct{ loc *time.Location }

func (s site) TimeZone(context.Context) (*time.Location, error)  { return s.loc, nil }
func (s site) AdminEmail(context.Context) (string, error)        { return "admin@example.com", nil }
func (s site) Name(context.Context) (string, error)              { return "Shop <& Co>", nil }
func (s site) StartOfWeek(context.Context) (time.Weekday, error) { return time.Monday, nil }

// mailer records the queued messages.
type mailer struct {
	mu   sync.Mutex
	logs []*core.Log
}

func (m *mailer) Enqueue(_ context.Context, l *core.Log) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if l.Message.From.Email == "" {
		l.Message.From.Email = "site@example.com"
	}
	if err := l.Message.Validate(); err != nil {
		return 0, err
	}
	m.logs = append(m.logs, l)
	return int64(len(m.logs)), nil
}

func (m *mailer) sent() []*core.Log {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]*core.Log(nil), m.logs...)
}

type fixture struct {
	logs     *apptest.LogStore
	conns    *apptest.ConnectionStore
	settings *app.Settings
	alerts   *apptest.AlertHistory
	jobs     *apptest.JobStore
	mail     *mailer
	loc      *time.Location
	a, b     *core.Connection
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	loc, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{logs: apptest.NewLogStore(), conns: apptest.NewConnectionStore(), alerts: &apptest.AlertHistory{},
		jobs: apptest.NewJobStore(), mail: &mailer{}, loc: loc}
	f.settings = &app.Settings{Store: apptest.NewSettingsStore(), Connections: f.conns}
	ctx := context.Background()
	f.a = &core.Connection{Name: "Main SES", Driver: "ses", IsActive: true, HealthStatus: core.HealthHealthy}
	f.b = &core.Connection{Name: "Backup SMTP", Driver: "smtp", IsActive: true, HealthStatus: core.HealthDown, LastError: "dial tcp: connection refused"}
	for _, c := range []*core.Connection{f.a, f.b} {
		if err := f.conns.CreateConnection(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.settings.Update(ctx, map[string]any{"default_connection_id": f.a.ID}); err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *fixture) service(now func() time.Time, owner string) *report.Service {
	return &report.Service{Outcomes: f.logs, Queue: f.logs, Logs: f.logs, Connections: f.conns, Alerts: f.alerts,
		Site: site{f.loc}, SiteURL: "https://shop.example", Settings: f.settings, Mailer: f.mail, Jobs: f.jobs, Owner: owner, Now: now}
}

// imported makes n final logs through conn at t.
func imported(n int, conn int64, status, lastError string, t time.Time) []*core.Log {
	var out []*core.Log
	for i := range n {
		id := conn
		l := &core.Log{Status: status, SentConnectionID: &id, CreatedAt: t, UpdatedAt: t, LastError: fmt.Sprintf(lastError, i),
			Message: core.Message{From: core.Address{Email: "shop@example.com"}, To: []core.Address{{Email: "c@example.org"}}, Subject: "Order"}}
		out = append(out, l)
	}
	return out
}

func TestReportContent(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	at := func(d, h int) time.Time { return time.Date(2026, 3, d, h, 0, 0, 0, f.loc) }
	var logs []*core.Log
	// The week of Mon 2 – Sun 8 March 2026.
	logs = append(logs, imported(6, f.a.ID, core.StatusDelivered, "", at(2, 9))...)
	logs = append(logs, imported(2, f.a.ID, core.StatusFailed, "550 5.1.1 <bob%d@example.org>: Recipient address rejected: User unknown", at(4, 23))...)
	logs = append(logs, imported(1, f.b.ID, core.StatusDelivered, "", at(8, 23))...)
	logs = append(logs, imported(1, f.b.ID, core.StatusFailed, "dial tcp 10.0.0.%d:587: i/o timeout", at(8, 12))...)
	// The week before, and the Monday after (in neither period).
	logs = append(logs, imported(3, f.a.ID, core.StatusDelivered, "", at(1, 23))...)
	logs = append(logs, imported(4, f.a.ID, core.StatusDelivered, "", at(9, 0))...)
	if err := f.logs.ImportLogs(ctx, logs); err != nil {
		t.Fatal(err)
	}
	for _, a := range []core.Alert{
		{Event: core.EventConnectionDown, ConnectionID: f.b.ID, ConnectionName: "Backup SMTP", At: at(8, 12)},
		{Event: core.EventDeliveryFailed, ConnectionID: f.a.ID, At: at(1, 12)}, // the week before
	} {
		if err := f.alerts.RecordAlert(ctx, a); err != nil {
			t.Fatal(err)
		}
	}
	queued := &core.Log{Message: core.Message{From: core.Address{Email: "shop@example.com"}, To: []core.Address{{Email: "q@example.org"}}}}
	if err := f.logs.EnqueueLog(ctx, queued); err != nil {
		t.Fatal(err)
	}
	f.logs.SetCreatedAt(queued.ID, at(9, 8))
	svc := f.service(func() time.Time { return at(9, 10) }, "r1")

	out, err := svc.Preview(ctx, report.Query{From: "2026-03-02", To: "2026-03-08"})
	if err != nil {
		t.Fatal(err)
	}
	r := out.Report
	if got := [4]int64{r.Totals.Sent, r.Totals.Delivered, r.Totals.Failed, r.PreviousTotals.Sent}; got != [4]int64{10, 7, 3, 3} {
		t.Errorf("sent, delivered, failed, previous sent = %v, want [10 7 3 3]", got)
	}
	if r.Totals.SuccessRate == nil || *r.Totals.SuccessRate != 70 {
		t.Errorf("success rate = %v, want 70", r.Totals.SuccessRate)
	}
	if r.Change.Sent != 7 || r.Change.SentPercent == nil || *r.Change.SentPercent != 233.3 || r.Change.SuccessRatePoints == nil || *r.Change.SuccessRatePoints != -30 {
		t.Errorf("change = %+v, want +7 sent (+233.3%%), -30 points", r.Change)
	}
	if len(r.Connections) != 2 || r.Connections[0].ID != f.a.ID || r.Connections[0].Sent() != 8 || r.Connections[0].Failed != 2 ||
		r.Connections[0].PreviousSent != 3 || r.Connections[1].Sent() != 2 || r.Connections[1].Health != core.HealthDown ||
		r.Connections[1].HealthError == "" {
		t.Errorf("connections = %+v", r.Connections)
	}
	if len(r.FailureReasons) != 2 || r.FailureReasons[0].Count != 2 ||
		r.FailureReasons[0].Reason != "550 5.1.1 <address>: Recipient address rejected: User unknown" || r.FailuresRead != 3 {
		t.Errorf("failure reasons = %+v (%d read)", r.FailureReasons, r.FailuresRead)
	}
	if len(r.Days) != 7 || r.Days[0].Delivered != 6 || r.Days[2].Failed != 2 || r.Days[6].Delivered != 1 || r.Days[6].Failed != 1 {
		t.Errorf("days = %+v", r.Days)
	}
	if r.AlertsTotal != 1 || r.Alerts[0].Event != core.EventConnectionDown {
		t.Errorf("alerts = %+v", r.Alerts)
	}
	if r.Queue.Queued != 1 || r.Queue.OldestQueuedAt == nil || !r.Queue.OldestQueuedAt.Equal(at(9, 8)) {
		t.Errorf("queue = %+v", r.Queue)
	}
	for _, want := range []string{
		"Weekly email summary for Shop <& Co>", "Mon 2 Mar – Sun 8 Mar 2026 (Europe/Berlin)",
		"Sent                10   +7 (+233.3%)", "Success rate       70%   -30 points",
		"Main SES", "8 sent, 2 failed, success 75% (before: 3 sent)", "Health: down: dial tcp: connection refused",
		"    2  550 5.1.1 <address>: Recipient address rejected: User unknown",
		"1 queued, 0 sending. The oldest queued message has waited 2 hours",
		"    1  Connection down (Backup SMTP)",
	} {
		if !strings.Contains(out.Text, want) {
			t.Errorf("the text part lacks %q:\n%s", want, out.Text)
		}
	}
	for _, want := range []string{"Shop &lt;&amp; Co&gt;", "233.3%", "550 5.1.1 &lt;address&gt;", `width="100%" style="background:#2e7d32`} {
		if !strings.Contains(out.HTML, want) {
			t.Errorf("the HTML part lacks %q", want)
		}
	}
	for _, bad := range []string{"<script", "<img", "src=", "<link", "url("} {
		if strings.Contains(strings.ToLower(out.HTML), bad) {
			t.Errorf("the HTML part holds %q", bad)
		}
	}
	if testing.Verbose() {
		t.Log(out.Text)
	}
	if out.Subject != "[Shop <& Co>] Email summary: Mon 2 Mar – Sun 8 Mar 2026" {
		t.Errorf("subject = %q", out.Subject)
	}
}

func TestQueryValidation(t *testing.T) {
	f := newFixture(t)
	now := time.Date(2026, 3, 31, 12, 0, 0, 0, f.loc)
	svc := f.service(func() time.Time { return now }, "r1")
	for _, tt := range []struct {
		q     report.Query
		field string
	}{
		{report.Query{Period: "hourly"}, "period"},
		{report.Query{Period: "weekly", From: "2026-03-01"}, "period"},
		{report.Query{From: "yesterday"}, "from"},
		{report.Query{To: "2026-03-01"}, "from"},
		{report.Query{From: "2026-03-10", To: "2026-03-01"}, "to"},
		{report.Query{From: "2024-01-01", To: "2026-03-01"}, "to"},
	} {
		_, err := svc.Preview(context.Background(), tt.q)
		if core.ErrorCode(err) != core.EINVALID || core.ErrorFields(err)[tt.field] == "" {
			t.Errorf("Preview(%+v) = %v, want a validation error on %s", tt.q, err, tt.field)
		}
	}
	// The default: the frequency's period ending now, across the DST change.
	out, err := svc.Preview(context.Background(), report.Query{})
	if err != nil {
		t.Fatal(err)
	}
	if p := out.Report.Period; !p.From.Equal(time.Date(2026, 3, 24, 12, 0, 0, 0, f.loc)) || !p.To.Equal(now) {
		t.Errorf("default period = [%s, %s)", p.From, p.To)
	}
	out, err = svc.Preview(context.Background(), report.Query{Period: "monthly"})
	if err != nil {
		t.Fatal(err)
	}
	if p := out.Report.Period; !p.From.Equal(time.Date(2026, 2, 28, 12, 0, 0, 0, f.loc)) {
		t.Errorf("monthly period from %s, want 28 Feb 12:00", p.From)
	}
}

func TestSendNow(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	svc := f.service(func() time.Time { return time.Date(2026, 3, 31, 12, 0, 0, 0, f.loc) }, "r1")
	res, err := svc.SendNow(ctx, report.Query{}, []any{"ops@example.com", "cto@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	sent := f.mail.sent()
	if len(sent) != 1 || res.LogID != 1 {
		t.Fatalf("queued %d messages, result %+v", len(sent), res)
	}
	l := sent[0]
	if l.Source != report.SourceReport || l.ConnectionID != nil || len(l.Message.To) != 2 || l.Message.To[1].Email != "cto@example.com" ||
		l.Message.Text == "" || l.Message.HTML == "" {
		t.Errorf("queued %+v", l)
	}
	if _, err := svc.SendNow(ctx, report.Query{}, []any{"not an address"}); core.ErrorFields(err)["recipients"] == "" {
		t.Errorf("a bad recipient: %v", err)
	}
	if _, err := svc.SendNow(ctx, report.Query{}, "x@example.com, y@"); core.ErrorFields(err)["recipients"] == "" {
		t.Errorf("a bad recipient in a list: %v", err)
	}
	// Without recipients: the admin address; a chosen connection is asked for.
	if _, err := f.settings.Update(ctx, map[string]any{"summary_report": map[string]any{"connection_id": f.b.ID}}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.SendNow(ctx, report.Query{Period: "daily"}, nil); err != nil {
		t.Fatal(err)
	}
	sent = f.mail.sent()
	if l := sent[len(sent)-1]; l.Message.To[0].Email != "admin@example.com" || l.ConnectionID == nil || *l.ConnectionID != f.b.ID ||
		!strings.Contains(l.Message.Text, "Daily email summary") {
		t.Errorf("queued %+v", l)
	}
}

// TestScheduledOncePerPeriod runs three replicas' jobs side by side on a
// clock stepped an hour at a time through five weeks (the change to
// summer time among them): each week's report is queued once, right after
// the week ends, and none for the week in which the job first ran.
func TestScheduledOncePerPeriod(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	var mu sync.Mutex
	now := time.Date(2026, 3, 4, 10, 0, 0, 0, f.loc) // a Wednesday
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	f.jobs.SetClock(clock)
	replicas := []*report.Service{f.service(clock, "r1"), f.service(clock, "r2"), f.service(clock, "r3")}
	type sending struct {
		at      time.Time
		subject string
	}
	var sends []sending
	end := time.Date(2026, 4, 8, 0, 0, 0, 0, f.loc)
	for clock().Before(end) {
		var wg sync.WaitGroup
		for _, r := range replicas {
			wg.Go(func() {
				if _, err := r.RunScheduled(ctx); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		for _, l := range f.mail.sent()[len(sends):] {
			sends = append(sends, sending{at: clock(), subject: l.Message.Subject})
		}
		mu.Lock()
		now = now.Add(time.Hour)
		mu.Unlock()
	}
	want := []sending{
		{time.Date(2026, 3, 9, 0, 0, 0, 0, f.loc), "Mon 2 Mar – Sun 8 Mar 2026"},
		{time.Date(2026, 3, 16, 0, 0, 0, 0, f.loc), "Mon 9 Mar – Sun 15 Mar 2026"},
		{time.Date(2026, 3, 23, 0, 0, 0, 0, f.loc), "Mon 16 Mar – Sun 22 Mar 2026"},
		{time.Date(2026, 3, 30, 0, 0, 0, 0, f.loc), "Mon 23 Mar – Sun 29 Mar 2026"},
		{time.Date(2026, 4, 6, 0, 0, 0, 0, f.loc), "Mon 30 Mar – Sun 5 Apr 2026"},
	}
	if len(sends) != len(want) {
		t.Fatalf("%d reports queued, want %d: %+v", len(sends), len(want), sends)
	}
	for i, w := range want {
		if !sends[i].at.Equal(w.at) || !strings.HasSuffix(sends[i].subject, w.subject) {
			t.Errorf("report %d queued at %s as %q, want at %s for %q", i, sends[i].at, sends[i].subject, w.at, w.subject)
		}
	}

	// runHours lets each replica run its schedule once an hour for hours
	// hours, one after another.
	runHours := func(hours int) {
		t.Helper()
		for range hours {
			for _, r := range replicas {
				if _, err := r.RunScheduled(ctx); err != nil {
					t.Fatal(err)
				}
			}
			mu.Lock()
			now = now.Add(time.Hour)
			mu.Unlock()
		}
	}

	// Daily from now on: one a day, each for the day before; off: none.
	if _, err := f.settings.Update(ctx, map[string]any{"summary_report": map[string]any{"frequency": "daily"}}); err != nil {
		t.Fatal(err)
	}
	before := len(f.mail.sent())
	runHours(72)
	daily := f.mail.sent()[before:]
	// From Wed 8 Apr 00:00 for 72 hours: the days of 7, 8 and 9 April.
	if len(daily) != 3 || !strings.HasSuffix(daily[0].Message.Subject, "Tue 7 Apr 2026") || !strings.HasSuffix(daily[2].Message.Subject, "Thu 9 Apr 2026") {
		t.Errorf("daily reports: %d", len(daily))
		for _, l := range daily {
			t.Log(l.Message.Subject)
		}
	}
	if _, err := f.settings.Update(ctx, map[string]any{"summary_report": map[string]any{"frequency": "off"}}); err != nil {
		t.Fatal(err)
	}
	before = len(f.mail.sent())
	runHours(48)
	if n := len(f.mail.sent()) - before; n != 0 {
		t.Errorf("%d reports queued while off", n)
	}
}

// TestPruneRecords sends a daily report for 420 days, then prunes: the
// period records claimed more than 400 days ago go, the later ones, the
// armed record and other jobs' records stay, and pruning does not make
// the last period due again.
func TestPruneRecords(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	now := time.Date(2025, 1, 1, 1, 0, 0, 0, f.loc)
	clock := func() time.Time { return now }
	f.jobs.SetClock(clock)
	svc := f.service(clock, "r1")
	if _, err := f.settings.Update(ctx, map[string]any{"summary_report": map[string]any{"frequency": "daily"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.jobs.ClaimJobRun(ctx, "log_purge", "r1", time.Hour); err != nil {
		t.Fatal(err)
	}
	const days = 420
	for range days + 1 {
		if _, err := svc.RunScheduled(ctx); err != nil {
			t.Fatal(err)
		}
		now = now.AddDate(0, 0, 1)
	}
	now = now.AddDate(0, 0, -1) // the last run's day
	sent := len(f.mail.sent())
	if sent != days {
		t.Fatalf("%d reports sent, want %d", sent, days)
	}
	records := func() (periods int, oldest string, names map[string]bool) {
		runs, err := f.jobs.FindJobRuns(ctx)
		if err != nil {
			t.Fatal(err)
		}
		names = map[string]bool{}
		for _, r := range runs {
			names[r.Name] = true
			if strings.HasPrefix(r.Name, "summary_report:daily:") {
				periods++
				if oldest == "" || r.Name < oldest {
					oldest = r.Name
				}
			}
		}
		return periods, oldest, names
	}
	if n, _, _ := records(); n != days {
		t.Fatalf("%d period records before pruning, want %d", n, days)
	}
	n, err := svc.PruneRecords(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Each day's record is claimed at 01:00 the day after (the report of
	// 1 January on 2 January). The last run was on 25 February 2026, so
	// the cut-off is 21 January 2025 01:00: the 19 records claimed from 2
	// to 20 January go; the one claimed at the cut-off (the report of 20
	// January) and the later ones stay.
	if n != 19 {
		t.Errorf("pruned %d records, want 19", n)
	}
	periods, oldest, names := records()
	if periods != days-19 || oldest != "summary_report:daily:2025-01-20" {
		t.Errorf("%d period records left, the oldest %s; want %d, the oldest of 2025-01-20", periods, oldest, days-19)
	}
	for _, keep := range []string{"summary_report:armed", "log_purge"} {
		if !names[keep] {
			t.Errorf("the record %s was pruned", keep)
		}
	}
	if _, err := svc.RunScheduled(ctx); err != nil {
		t.Fatal(err)
	}
	if len(f.mail.sent()) != sent {
		t.Error("a report was sent again after pruning")
	}
}

// TestPruneRecordsNeedsAPruner checks that a job store that cannot prune
// is an error, not a silent no-op.
func TestPruneRecordsNeedsAPruner(t *testing.T) {
	svc := &report.Service{Jobs: struct{ core.JobStore }{apptest.NewJobStore()}}
	if _, err := svc.PruneRecords(context.Background()); err == nil {
		t.Error("PruneRecords with a store that cannot prune gave no error")
	}
}
