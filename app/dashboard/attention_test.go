package dashboard_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/app/apptest"
	"github.com/mailsvc/mailsvc/app/dashboard"
	"github.com/mailsvc/mailsvc/app/health"
	"github.com/mailsvc/mailsvc/core"
)

// retrying is a dashboard.RetryCounter with fixed answers.
type retrying struct {
	n    int
	next *time.Time
}

func (r retrying) Retrying(context.Context) (int, *time.Time, error) { return r.n, r.next, nil }

// TestStatsTellTheTruth is the owner's case: 27 messages delivered, then
// the SMTP server refuses and a password reset retries. The stats say the
// connection is failing since the first refusal, with the error; the
// reset counts as retrying, with its next attempt, against the success
// rate; the attention object says what is wrong; one failed message and
// two held ones make the Mail menu's count.
func TestStatsTellTheTruth(t *testing.T) {
	ctx := context.Background()
	now := time.Now().UTC()
	conns := apptest.NewConnectionStore()
	if err := conns.CreateConnection(ctx, &core.Connection{Name: "Office relay", Driver: "smtp", IsActive: true, HealthStatus: core.HealthUnknown, Settings: core.Settings{}}); err != nil {
		t.Fatal(err)
	}
	out := &outcomes{}
	out.add(now.Add(-time.Hour), 1, core.StatusDelivered, 27)
	sends := &health.SendHealth{Store: apptest.NewSettingsStore()}
	conn := &core.Connection{ID: 1, Settings: core.Settings{"password": "s3cretpass"}}
	for i := range 27 {
		sends.Attempt(conn, core.Attempt{Outcome: core.OutcomeDelivered, At: now.Add(-time.Hour + time.Duration(i)*time.Second)})
	}
	firstRefusal := now.Add(-10 * time.Minute)
	for i := range 3 {
		sends.Attempt(conn, core.Attempt{Outcome: core.OutcomeTemporary, Error: "dial tcp 127.0.0.1:2525: connect: connection refused", At: firstRefusal.Add(time.Duration(i) * time.Minute)})
	}
	sends.Save(ctx)
	logs := apptest.NewLogStore()
	failedID := settleLog(t, logs, 1, "x@example.com", "order", core.StatusFailed, now.Add(-time.Hour))
	settleLog(t, logs, 1, "y@example.com", "old order", core.StatusFailed, now.Add(-48*time.Hour))
	next := now.Add(4 * time.Minute).Truncate(time.Second)
	s := &dashboard.Service{Outcomes: out, Queue: logs, Logs: logs, Connections: conns, Site: site{loc: time.UTC},
		Retrying: retrying{n: 1, next: &next}, SendHealth: sends, Capture: capture{held: 2}}

	st, err := s.Stats(ctx, dashboard.RangeQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if r := st.Totals.SuccessRate; r == nil || *r != 96.43 || st.Totals.Retrying != 1 {
		t.Errorf("success rate %v with %d retrying, want 96.43 (27 of 27 delivered + 1 retrying)", r, st.Totals.Retrying)
	}
	c := st.Connections[0]
	if c.Health != health.SendFailing || c.HealthSince == nil || !c.HealthSince.Equal(firstRefusal) ||
		!strings.Contains(c.LastError, "connection refused") || c.LastSentAt == nil || c.LastErrorAt == nil {
		t.Errorf("connection %+v: want failing since the first refusal, the error, the last send", c)
	}
	a := st.Attention
	if a == nil || a.Service != "running" || a.Retrying != 1 || a.NextAttemptAt == nil || !a.NextAttemptAt.Equal(next) ||
		a.Failed24h != 1 || a.LastFailedID == nil || *a.LastFailedID != failedID || a.Held != 2 || a.Count != 3 {
		t.Fatalf("attention %+v", a)
	}
	if len(a.FailingConnections) != 1 || a.FailingConnections[0].Name != "Office relay" || a.FailingConnections[0].Since == nil ||
		!strings.Contains(a.FailingConnections[0].LastError, "connection refused") {
		t.Errorf("failing connections %+v", a.FailingConnections)
	}
	js, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"attention":{"service":"running","failing_connections":[{"id":1,"name":"Office relay"`, `"retrying":1`, `"health":"failing"`, `"last_sent_at":"`, `"failed_24h":1`, `"held":2`, `"count":3`} {
		if !strings.Contains(string(js), key) {
			t.Errorf("stats JSON lacks %s:\n%s", key, js)
		}
	}
	alone, err := s.Attention(ctx)
	if err != nil || alone.Count != 3 || len(alone.FailingConnections) != 1 {
		t.Errorf("Attention = %+v, %v", alone, err)
	}
}

// capture is a dashboard.CaptureReader holding held messages.
type capture struct{ held int }

func (c capture) State(context.Context) (core.CaptureState, error) {
	return core.CaptureState{Captured: c.held}, nil
}
