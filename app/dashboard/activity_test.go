package dashboard_test

import (
	"context"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/app/apptest"
	"github.com/mailsvc/mailsvc/app/dashboard"
	"github.com/mailsvc/mailsvc/core"
)

// settleLog stores a log and records its final outcome as a worker would.
func settleLog(t *testing.T, logs *apptest.LogStore, conn int64, to, subject, status string, created time.Time) int64 {
	t.Helper()
	ctx := context.Background()
	until := time.Now().Add(time.Hour)
	l := &core.Log{Status: core.StatusSending, LeaseOwner: "w", LeaseUntil: &until,
		Message: core.Message{From: core.Address{Email: "site@example.com"}, To: []core.Address{{Email: to}}, Cc: []core.Address{{Email: "cc@example.com"}}, Subject: subject}}
	if status == core.StatusQueued {
		l.Status, l.LeaseOwner, l.LeaseUntil = core.StatusQueued, "", nil
	}
	if err := logs.EnqueueLog(ctx, l); err != nil {
		t.Fatal(err)
	}
	out := core.LogOutcome{LogID: l.ID, Status: status, Attempts: 1, SentConnectionID: &conn}
	if status == core.StatusFailed {
		out.LastError = "550 mailbox unavailable"
	}
	if status != core.StatusQueued {
		if _, err := logs.RecordOutcomes(ctx, "w", []core.LogOutcome{out}); err != nil {
			t.Fatal(err)
		}
	}
	logs.SetCreatedAt(l.ID, created)
	return l.ID
}

func TestActivity(t *testing.T) {
	ctx := context.Background()
	logs := apptest.NewLogStore()
	conns := apptest.NewConnectionStore()
	if err := conns.CreateConnection(ctx, &core.Connection{Name: "primary", Driver: "smtp", Settings: core.Settings{}}); err != nil {
		t.Fatal(err)
	}
	base := at(t, "2024-06-30T10:00:00Z")
	d1 := settleLog(t, logs, 1, "a@example.com", "first", core.StatusDelivered, base)
	f1 := settleLog(t, logs, 1, "b@example.com", "second", core.StatusFailed, base.Add(time.Minute))
	d2 := settleLog(t, logs, 7, "c@example.com", "third", core.StatusDelivered, base.Add(2*time.Minute))
	q := settleLog(t, logs, 1, "q@example.com", "still queued", core.StatusQueued, base.Add(3*time.Minute))
	f2 := settleLog(t, logs, 1, "d@example.com", "fourth", core.StatusFailed, base.Add(4*time.Minute))
	loc := mustLoad(t, "America/New_York")
	s := &dashboard.Service{Logs: logs, Connections: conns, Site: site{loc: loc}}

	tests := []struct {
		name string
		q    dashboard.ActivityQuery
		want []int64
	}{
		{"all, newest first, the queued one too", dashboard.ActivityQuery{}, []int64{f2, q, d2, f1, d1}},
		{"limit", dashboard.ActivityQuery{Limit: "3"}, []int64{f2, q, d2}},
		{"queued only", dashboard.ActivityQuery{Status: "queued"}, []int64{q}},
		{"failed only", dashboard.ActivityQuery{Status: "failed"}, []int64{f2, f1}},
		{"delivered only, limit 1", dashboard.ActivityQuery{Status: "delivered", Limit: "1"}, []int64{d2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := s.Activity(ctx, tt.q)
			if err != nil {
				t.Fatal(err)
			}
			var got []int64
			for _, it := range a.Items {
				got = append(got, it.ID)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("ids %v, want %v", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Fatalf("ids %v, want %v", got, tt.want)
				}
			}
		})
	}
	a, err := s.Activity(ctx, dashboard.ActivityQuery{Status: "failed", Limit: "1"})
	if err != nil {
		t.Fatal(err)
	}
	it := a.Items[0]
	if it.Status != core.StatusFailed || it.Subject != "fourth" || it.LastError != "550 mailbox unavailable" ||
		len(it.Recipients) != 2 || it.Recipients[0] != "d@example.com" || it.Recipients[1] != "cc@example.com" {
		t.Errorf("item %+v", it)
	}
	if it.Connection == nil || it.Connection.Name != "primary" || it.Connection.Driver != "smtp" {
		t.Errorf("connection %+v", it.Connection)
	}
	if it.NextAttemptAt != nil {
		t.Errorf("a failed message has a next attempt: %v", it.NextAttemptAt)
	}
	a, _ = s.Activity(ctx, dashboard.ActivityQuery{Status: "queued"})
	if it := a.Items[0]; it.Status != core.StatusQueued || it.NextAttemptAt == nil {
		t.Errorf("queued item %+v: want its next attempt", it)
	}
	if it.CreatedAt.Location().String() != "America/New_York" || a.TimeZone != "America/New_York" {
		t.Errorf("times not in the site's zone: %v %q", it.CreatedAt, a.TimeZone)
	}
	a, _ = s.Activity(ctx, dashboard.ActivityQuery{Status: "delivered", Limit: "1"})
	if c := a.Items[0].Connection; c == nil || c.ID != 7 || c.Name != "" {
		t.Errorf("deleted connection shown as %+v", c)
	}
}

func TestActivityRejectsBadInput(t *testing.T) {
	s := &dashboard.Service{Logs: apptest.NewLogStore()}
	for _, tt := range []struct {
		q     dashboard.ActivityQuery
		field string
	}{
		{dashboard.ActivityQuery{Limit: "0"}, "limit"},
		{dashboard.ActivityQuery{Limit: "51"}, "limit"},
		{dashboard.ActivityQuery{Limit: "ten"}, "limit"},
		{dashboard.ActivityQuery{Status: "sending"}, "status"},
	} {
		_, err := s.Activity(context.Background(), tt.q)
		if f := fields(err); f[tt.field] == "" {
			t.Errorf("%+v: err = %v, want a validation error on %s", tt.q, err, tt.field)
		}
	}
}
