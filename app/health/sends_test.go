package health_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/app/apptest"
	"github.com/mailsvc/mailsvc/app/health"
	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/test/fakes/smtpsink"
)

func TestClassify(t *testing.T) {
	for _, tt := range []struct {
		name   string
		recent []bool
		inARow int
		want   string
	}{
		{"all delivered", []bool{true, true, true}, 0, health.SendHealthy},
		{"one failure among successes", []bool{true, false, true}, 0, health.SendDegraded},
		{"two failures in a row", []bool{true, false, false}, 2, health.SendDegraded},
		{"three failures in a row", []bool{true, false, false, false}, 3, health.SendFailing},
		{"failures in a row beyond the window", []bool{false, false}, 5, health.SendFailing},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := health.Classify(tt.recent, tt.inARow, health.DefaultFailingAfter); got != tt.want {
				t.Errorf("Classify = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestSendHealthFollowsRealSends: 27 deliveries make a connection
// healthy with its last send; three refused attempts make it failing
// since the first of them, with the error, its password masked; a
// delivery after that makes it degraded (failures still in the window).
// The records are kept in the settings store and read back.
func TestSendHealthFollowsRealSends(t *testing.T) {
	ctx := context.Background()
	store := apptest.NewSettingsStore()
	h := &health.SendHealth{Store: store}
	conn := &core.Connection{ID: 4, Name: "relay", Settings: core.Settings{"password": "hunter2secret"}}
	t0 := time.Date(2026, 12, 6, 5, 0, 0, 0, time.UTC)
	for i := range 27 {
		h.Attempt(conn, core.Attempt{Outcome: core.OutcomeDelivered, At: t0.Add(time.Duration(i) * time.Second)})
	}
	// An uncertain attempt says nothing of the connection.
	h.Attempt(conn, core.Attempt{Outcome: core.OutcomeUncertain, At: t0.Add(time.Hour)})
	h.Save(ctx)
	got := read(t, h)[4]
	if got.Status != health.SendHealthy || got.LastSentAt == nil || !got.LastSentAt.Equal(t0.Add(26*time.Second)) {
		t.Fatalf("after 27 deliveries: %+v", got)
	}
	refused := "dial tcp 127.0.0.1:2525: connect: connection refused (auth hunter2secret)"
	t1 := t0.Add(time.Minute)
	for i := range 3 {
		h.Attempt(conn, core.Attempt{Outcome: core.OutcomeTemporary, Error: refused, At: t1.Add(time.Duration(i) * time.Minute)})
		h.Save(ctx)
		want := health.SendDegraded
		if i == 2 {
			want = health.SendFailing
		}
		if got := read(t, h)[4]; got.Status != want {
			t.Fatalf("after %d failures: %q, want %q", i+1, got.Status, want)
		}
	}
	got = read(t, h)[4]
	if !got.Since.Equal(t1) || got.FailuresInARow != 3 {
		t.Errorf("failing since %v after %d failures", got.Since, got.FailuresInARow)
	}
	if strings.Contains(got.LastError, "hunter2secret") || !strings.Contains(got.LastError, "connection refused") {
		t.Errorf("last error %q: want the error with the password masked", got.LastError)
	}
	h.Attempt(conn, core.Attempt{Outcome: core.OutcomeDelivered, At: t1.Add(time.Hour)})
	h.Save(ctx)
	if got := read(t, h)[4]; got.Status != health.SendDegraded || got.FailuresInARow != 0 || len(got.Recent) != health.DefaultSendWindow {
		t.Errorf("after a delivery: %+v", got)
	}
}

// TestSendHealthRateLimited: a real SMTP server answering 421 to every
// message, through the real smtp driver. Each answer is a "slow down"
// (not counted against the message) but it counts against the
// connection: one makes it degraded with the server's words as the last
// error; nothing else for five attempts over five minutes makes it
// failing since the first of them; fewer attempts, or a shorter span,
// leave it degraded; a delivery ends it.
func TestSendHealthRateLimited(t *testing.T) {
	sink := smtpsink.Start(t)
	drv, _ := core.LookupDriver("smtp")
	conn := &core.Connection{ID: 7, Name: "relay", Driver: "smtp", Settings: core.Settings{
		"host": sink.Host(), "port": int64(sink.Port()), "encryption": "none", "auth": false, "timeout": int64(5)}}
	tr, err := drv.New(conn, core.DriverEnv{})
	if err != nil {
		t.Fatal(err)
	}
	if c, ok := tr.(interface{ Close() error }); ok {
		t.Cleanup(func() { _ = c.Close() })
	}
	msg := &core.Message{From: core.Address{Email: "shop@example.com"}, To: []core.Address{{Email: "buyer@example.com"}},
		Subject: "Password reset", Text: "reset"}
	t0 := time.Date(2026, 12, 6, 5, 0, 0, 0, time.UTC)
	// send sends msg once at the given time and records the outcome as
	// the delivery engine does.
	send := func(t *testing.T, h *health.SendHealth, at time.Time) {
		t.Helper()
		a := core.Attempt{Outcome: core.OutcomeDelivered, At: at}
		if _, err := tr.Send(context.Background(), msg); err != nil {
			if _, limited := core.AsRateLimited(err); !limited {
				t.Fatalf("the 421 is not a rate-limit answer: %v", err)
			}
			a.Outcome, a.Error = core.OutcomeRateLimited, err.Error()
		}
		h.Attempt(conn, a)
	}
	for _, tt := range []struct {
		name     string
		limited  int
		every    time.Duration
		want     string
		wantFrom time.Time
	}{
		{"one 421", 1, time.Minute, health.SendDegraded, time.Time{}},
		{"four 421s over four minutes", 4, time.Minute, health.SendDegraded, time.Time{}},
		{"five 421s within a minute", 5, 10 * time.Second, health.SendDegraded, time.Time{}},
		{"five 421s over five minutes", 5, 75 * time.Second, health.SendFailing, t0},
		{"twenty 421s over an hour", 20, 3 * time.Minute, health.SendFailing, t0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := &health.SendHealth{Store: apptest.NewSettingsStore()}
			send(t, h, t0.Add(-time.Hour)) // delivered: healthy
			sink.FailNext(tt.limited, 421, "4.7.0 Try again later")
			for i := range tt.limited {
				send(t, h, t0.Add(time.Duration(i)*tt.every))
			}
			h.Save(context.Background())
			got := read(t, h)[7]
			if got.Status != tt.want || got.RateLimitedInARow != tt.limited || !strings.Contains(got.LastError, "Try again later") {
				t.Fatalf("after %d 421s: %q with %d in a row, error %q; want %q", tt.limited, got.Status, got.RateLimitedInARow, got.LastError, tt.want)
			}
			if got.Status == health.SendFailing && !got.Since.Equal(tt.wantFrom) {
				t.Errorf("failing since %v, want the first 421 at %v", got.Since, tt.wantFrom)
			}
			send(t, h, t0.Add(2*time.Hour)) // the server takes mail again
			h.Save(context.Background())
			if got := read(t, h)[7]; got.Status != health.SendDegraded || got.RateLimitedInARow != 0 {
				t.Errorf("after a delivery: %q with %d in a row, want degraded (the 421s still in the window) and 0", got.Status, got.RateLimitedInARow)
			}
		})
	}
	if n := len(sink.Messages()); n != 10 {
		t.Errorf("the server took %d messages, want 10 (two per case)", n)
	}
}

func read(t *testing.T, h *health.SendHealth) map[int64]health.SendRecord {
	t.Helper()
	m, err := h.Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestEffective: the health from the check and the sends together.
func TestEffective(t *testing.T) {
	checked := time.Date(2026, 12, 6, 5, 0, 0, 0, time.UTC)
	before, after := checked.Add(-time.Minute), checked.Add(time.Minute)
	for _, tt := range []struct {
		name  string
		check string
		rec   *health.SendRecord
		want  string
	}{
		{"never checked, never sent", core.HealthUnknown, nil, core.HealthUnknown},
		{"never checked, sends fine", core.HealthUnknown, &health.SendRecord{Status: health.SendHealthy, LastSentAt: &after}, health.SendHealthy},
		{"check passed, sends failing", core.HealthHealthy, &health.SendRecord{Status: health.SendFailing}, health.SendFailing},
		{"check down, nothing sent since", core.HealthDown, &health.SendRecord{Status: health.SendHealthy, LastSentAt: &before}, health.SendFailing},
		{"check down, delivered since", core.HealthDown, &health.SendRecord{Status: health.SendHealthy, LastSentAt: &after}, health.SendHealthy},
		{"check slow", core.HealthDegraded, nil, health.SendDegraded},
		{"sends degraded", core.HealthHealthy, &health.SendRecord{Status: health.SendDegraded}, health.SendDegraded},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := &core.Connection{HealthStatus: tt.check, LastCheckedAt: &checked}
			if got := health.Effective(c, tt.rec); got != tt.want {
				t.Errorf("Effective = %q, want %q", got, tt.want)
			}
		})
	}
}

// BenchmarkSendHealthAttempt is the cost the delivery path pays per
// delivered message.
func BenchmarkSendHealthAttempt(b *testing.B) {
	h := &health.SendHealth{Store: apptest.NewSettingsStore()}
	conn := &core.Connection{ID: 1, Settings: core.Settings{"password": "secret-value"}}
	a := core.Attempt{Outcome: core.OutcomeDelivered, At: time.Now()}
	b.ReportAllocs()
	for b.Loop() {
		h.Attempt(conn, a)
	}
}
