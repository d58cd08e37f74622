package health_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/app/apptest"
	"github.com/mailsvc/mailsvc/app/health"
	"github.com/mailsvc/mailsvc/core"
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
	// A rate-limited or uncertain attempt says nothing of the connection.
	h.Attempt(conn, core.Attempt{Outcome: core.OutcomeRateLimited, At: t0.Add(time.Hour)})
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
