package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// alertHistoryTests returns the contract tests of the alert history.
func (s *suite) alertHistoryTests() []struct {
	name string
	fn   func(t *testing.T)
} {
	return []struct {
		name string
		fn   func(t *testing.T)
	}{
		{"AlertHistory", s.testAlertHistory},
	}
}

func (s *suite) testAlertHistory(t *testing.T) {
	ctx := context.Background()
	db := s.open(t, s.prefix())
	base := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	for _, a := range []core.Alert{
		{Event: core.EventConnectionDown, ConnectionID: 3, ConnectionName: "SES", Title: "down", At: base},
		{Event: core.EventConnectionDown, ConnectionID: 3, ConnectionName: "SES", Title: "down", At: base.Add(2 * time.Hour)},
		{Event: core.EventQueueStalled, Title: "stalled", At: base.Add(time.Hour)},
		{Event: core.EventDeliveryFailed, ConnectionID: 4, At: base.Add(-time.Hour)},     // before the range
		{Event: core.EventDeliveryFailed, ConnectionID: 4, At: base.Add(24 * time.Hour)}, // at its end: excluded
	} {
		if err := db.AlertHistory().RecordAlert(ctx, a); err != nil {
			t.Fatal(err)
		}
	}
	got, err := db.AlertHistory().CountAlerts(ctx, base, base.Add(24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	want := []core.AlertCount{
		{Event: core.EventConnectionDown, ConnectionID: 3, ConnectionName: "SES", Count: 2, Last: base.Add(2 * time.Hour)},
		{Event: core.EventQueueStalled, Count: 1, Last: base.Add(time.Hour)},
	}
	if len(got) != len(want) {
		t.Fatalf("CountAlerts = %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i].Event != want[i].Event || got[i].ConnectionID != want[i].ConnectionID || got[i].ConnectionName != want[i].ConnectionName ||
			got[i].Count != want[i].Count || !got[i].Last.Equal(want[i].Last) {
			t.Errorf("CountAlerts[%d] = %+v, want %+v", i, got[i], want[i])
		}
	}
	n, err := db.AlertHistory().PruneAlerts(ctx, base)
	if err != nil || n != 1 {
		t.Fatalf("PruneAlerts = %d, %v; want 1", n, err)
	}
	got, err = db.AlertHistory().CountAlerts(ctx, base.Add(-48*time.Hour), base.Add(48*time.Hour))
	if err != nil || len(got) != 3 {
		t.Fatalf("after the prune CountAlerts = %+v, %v; want 3 groups", got, err)
	}
}
