package metrics_test

import (
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/adapters/metrics"
	"github.com/mailsvc/mailsvc/core"
)

// TestFleetLabelsSeriesBySite checks that a fleet's registry serves
// every site's series with its site label, each site counting its own,
// and the process's own series once.
func TestFleetLabelsSeriesBySite(t *testing.T) {
	f := metrics.NewFleet()
	a := f.Site("a.test", queue{st: core.QueueStats{Queued: 3}}, nil)
	b := f.Site("b.test", queue{st: core.QueueStats{Queued: 5}}, nil)
	a.SendStarted(1, "smtp")
	a.SendFinished(1, "smtp", core.OutcomeDelivered, time.Millisecond)
	b.AddConnection(1, "smtp")
	code, fams := scrape(t, a) // a site's handler serves the whole fleet
	if code != 200 {
		t.Fatalf("/metrics: %d", code)
	}
	for _, tc := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"mailsvc_deliveries_total", map[string]string{"site": "a.test", "connection": "1", "driver": "smtp", "outcome": core.OutcomeDelivered}, 1},
		{"mailsvc_deliveries_total", map[string]string{"site": "b.test", "connection": "1", "driver": "smtp", "outcome": core.OutcomeDelivered}, 0},
		{"mailsvc_queue_messages", map[string]string{"site": "a.test", "status": "queued"}, 3},
		{"mailsvc_queue_messages", map[string]string{"site": "b.test", "status": "queued"}, 5},
	} {
		if got := value(t, fams, tc.name, tc.labels); got != tc.want {
			t.Errorf("%s%v = %v, want %v", tc.name, tc.labels, got, tc.want)
		}
	}
	if n := len(fams["go_goroutines"].GetMetric()); n != 1 {
		t.Errorf("go_goroutines has %d series, want the process's one", n)
	}
}
