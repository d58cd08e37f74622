package metrics_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/mailsvc/mailsvc/adapters/metrics"
	"github.com/mailsvc/mailsvc/adapters/store"
	"github.com/mailsvc/mailsvc/adapters/store/storetest"
	"github.com/mailsvc/mailsvc/core"
)

// queue is a QueueReader with fixed answers.
type queue struct {
	st       core.QueueStats
	oldest   *time.Time
	captured int
	err      error
}

func (q queue) QueueDepth(context.Context) (core.QueueStats, error) { return q.st, q.err }
func (q queue) OldestQueuedAt(context.Context) (*time.Time, error)  { return q.oldest, q.err }
func (q queue) CountCaptured(context.Context) (int, error)          { return q.captured, q.err }

// scrape fetches r's /metrics and parses it as the Prometheus text format.
func scrape(t *testing.T, r *metrics.Registry) (int, map[string]*dto.MetricFamily) {
	t.Helper()
	rec := httptest.NewRecorder()
	r.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusOK {
		return rec.Code, nil
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(rec.Body)
	if err != nil {
		t.Fatalf("/metrics is not Prometheus text: %v\n%s", err, rec.Body)
	}
	return rec.Code, fams
}

// value returns the value of the sample of fam whose labels are labels.
func value(t *testing.T, fams map[string]*dto.MetricFamily, name string, labels map[string]string) float64 {
	t.Helper()
	fam, ok := fams[name]
	if !ok {
		t.Fatalf("no %s in the scrape", name)
	}
	for _, m := range fam.Metric {
		got := map[string]string{}
		for _, l := range m.Label {
			got[l.GetName()] = l.GetValue()
		}
		if len(got) != len(labels) {
			continue
		}
		match := true
		for k, v := range labels {
			match = match && got[k] == v
		}
		if !match {
			continue
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue()
		case m.Gauge != nil:
			return m.Gauge.GetValue()
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount())
		}
	}
	t.Fatalf("no %s%v in the scrape", name, labels)
	return 0
}

func TestDeliveryMetrics(t *testing.T) {
	oldest := time.Now().Add(-90 * time.Second)
	r := metrics.New(queue{st: core.QueueStats{Queued: 7, Sending: 2, Delivered: 40, Failed: 3}, oldest: &oldest, captured: 5}, nil)
	// Connection 1 (smtp): 3 delivered, 1 temporary (retried, smtp_4xx),
	// one still in flight; connection 2 (sendgrid): 1 permanent, a 2.5 s
	// rate-limit wait.
	for range 3 {
		r.SendStarted(1, "smtp")
		r.SendFinished(1, "smtp", core.OutcomeDelivered, 20*time.Millisecond)
	}
	r.SendStarted(1, "smtp")
	r.SendFinished(1, "smtp", core.OutcomeTemporary, 2*time.Second)
	r.Retried(1, "smtp")
	r.ProviderError(1, "smtp", "smtp_4xx")
	r.SendStarted(1, "smtp")
	r.SendStarted(2, "sendgrid")
	r.SendFinished(2, "sendgrid", core.OutcomePermanent, 100*time.Millisecond)
	r.ProviderError(2, "sendgrid", "4xx")
	r.RateLimitWait(2, "sendgrid", 2500*time.Millisecond)
	// A simulated send finishes without starting: counted, not in flight.
	r.SendFinished(2, "sendgrid", core.OutcomeSimulated, 0)

	code, fams := scrape(t, r)
	if code != http.StatusOK {
		t.Fatalf("/metrics = %d", code)
	}
	tests := []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"mailsvc_deliveries_total", map[string]string{"connection": "1", "driver": "smtp", "outcome": core.OutcomeDelivered}, 3},
		{"mailsvc_deliveries_total", map[string]string{"connection": "1", "driver": "smtp", "outcome": core.OutcomeTemporary}, 1},
		{"mailsvc_deliveries_total", map[string]string{"connection": "2", "driver": "sendgrid", "outcome": core.OutcomePermanent}, 1},
		{"mailsvc_deliveries_total", map[string]string{"connection": "2", "driver": "sendgrid", "outcome": core.OutcomeSimulated}, 1},
		{"mailsvc_send_duration_seconds", map[string]string{"driver": "smtp"}, 4},
		{"mailsvc_send_duration_seconds", map[string]string{"driver": "sendgrid"}, 2},
		{"mailsvc_retries_total", map[string]string{"connection": "1", "driver": "smtp"}, 1},
		{"mailsvc_provider_errors_total", map[string]string{"driver": "smtp", "class": "smtp_4xx"}, 1},
		{"mailsvc_provider_errors_total", map[string]string{"driver": "sendgrid", "class": "4xx"}, 1},
		{"mailsvc_rate_limit_wait_seconds_total", map[string]string{"connection": "2", "driver": "sendgrid"}, 2.5},
		{"mailsvc_sends_in_flight", map[string]string{"connection": "1", "driver": "smtp"}, 1},
		{"mailsvc_sends_in_flight", map[string]string{"connection": "2", "driver": "sendgrid"}, 0},
		{"mailsvc_queue_messages", map[string]string{"status": "queued"}, 7},
		{"mailsvc_queue_messages", map[string]string{"status": "sending"}, 2},
		{"mailsvc_queue_messages", map[string]string{"status": "delivered"}, 40},
		{"mailsvc_queue_messages", map[string]string{"status": "failed"}, 3},
		{"mailsvc_captured_messages", map[string]string{}, 5},
	}
	for _, tc := range tests {
		if got := value(t, fams, tc.name, tc.labels); got != tc.want {
			t.Errorf("%s%v = %v, want %v", tc.name, tc.labels, got, tc.want)
		}
	}
	if age := value(t, fams, "mailsvc_queue_oldest_age_seconds", map[string]string{}); age < 89 || age > 3600 {
		t.Errorf("oldest age = %v, want about 90", age)
	}
	// The histogram's buckets: the 2 s send is above the 1 s bound.
	for _, m := range fams["mailsvc_send_duration_seconds"].Metric {
		if m.Label[0].GetValue() != "smtp" {
			continue
		}
		for _, b := range m.Histogram.Bucket {
			if b.GetUpperBound() == 1 && b.GetCumulativeCount() != 3 {
				t.Errorf("smtp sends under 1 s = %d, want 3", b.GetCumulativeCount())
			}
		}
	}
	if _, ok := fams["go_goroutines"]; !ok {
		t.Error("no Go runtime metrics")
	}
}

func TestQueueGaugesEmptyAndFailing(t *testing.T) {
	_, fams := scrape(t, metrics.New(queue{}, nil))
	if age := value(t, fams, "mailsvc_queue_oldest_age_seconds", map[string]string{}); age != 0 {
		t.Fatalf("oldest age of an empty queue = %v, want 0", age)
	}
	if n := value(t, fams, "mailsvc_captured_messages", map[string]string{}); n != 0 {
		t.Fatalf("captured messages with none held = %v, want 0", n)
	}
	// A store that fails makes the scrape fail (500), so the alert on
	// "up" or on scrape errors fires rather than a silent zero.
	code, _ := scrape(t, metrics.New(queue{err: errors.New("database is gone")}, nil))
	if code != http.StatusInternalServerError {
		t.Fatalf("scrape with the store down = %d, want 500", code)
	}
}

// A connection's series exist at 0 before anything is counted on it:
// added at start, or on its first measurement of any kind.
func TestSeriesStartAtZero(t *testing.T) {
	r := metrics.New(nil, nil)
	r.AddConnection(7, "smtp")
	r.Retried(9, "sendgrid")
	_, fams := scrape(t, r)
	for _, c := range []struct {
		conn, driver string
	}{{"7", "smtp"}, {"9", "sendgrid"}} {
		labels := map[string]string{"connection": c.conn, "driver": c.driver}
		for _, o := range metrics.Outcomes {
			if v := value(t, fams, "mailsvc_deliveries_total", with(labels, "outcome", o)); v != 0 {
				t.Errorf("deliveries %s %s = %v", c.conn, o, v)
			}
		}
		for _, name := range []string{"mailsvc_rate_limit_wait_seconds_total", "mailsvc_sends_in_flight"} {
			if v := value(t, fams, name, labels); v != 0 {
				t.Errorf("%s%v = %v", name, labels, v)
			}
		}
		for _, class := range metrics.ErrorClasses {
			if v := value(t, fams, "mailsvc_provider_errors_total", map[string]string{"driver": c.driver, "class": class}); v != 0 {
				t.Errorf("provider errors %s %s = %v", c.driver, class, v)
			}
		}
	}
	if v := value(t, fams, "mailsvc_retries_total", map[string]string{"connection": "7", "driver": "smtp"}); v != 0 {
		t.Errorf("retries of connection 7 = %v", v)
	}
	if v := value(t, fams, "mailsvc_retries_total", map[string]string{"connection": "9", "driver": "sendgrid"}); v != 1 {
		t.Errorf("retries of connection 9 = %v, want 1", v)
	}
}

// with returns labels plus k=v.
func with(labels map[string]string, k, v string) map[string]string {
	out := map[string]string{k: v}
	for kk, vv := range labels {
		out[kk] = vv
	}
	return out
}

// TestCapturedMessagesFromTheStore scrapes the captured gauge over a real
// store: the logs the staging guard holds, not the others, and fewer once
// some are released.
func TestCapturedMessagesFromTheStore(t *testing.T) {
	ctx := context.Background()
	db := storetest.OpenDialect(t, "sqlite")
	// Four messages are queued and claimed; the guard holds three, one is
	// delivered.
	for i := range 4 {
		l := &core.Log{Message: core.Message{From: core.Address{Email: "shop@example.com"}, To: []core.Address{{Email: "c@example.org"}}, Subject: "Order", Text: string(rune('a' + i))}}
		if err := db.Logs().EnqueueLog(ctx, l); err != nil {
			t.Fatal(err)
		}
	}
	claimed, err := db.Logs().ClaimLogs(ctx, "w", 10, time.Minute)
	if err != nil || len(claimed) != 4 {
		t.Fatalf("claim = %d, %v", len(claimed), err)
	}
	outs := make([]core.LogOutcome, len(claimed))
	for i, l := range claimed {
		status, outcome := core.StatusCaptured, core.OutcomeCaptured
		if i == 3 {
			status, outcome = core.StatusDelivered, core.OutcomeDelivered
		}
		outs[i] = core.LogOutcome{LogID: l.ID, Status: status, History: []core.Attempt{{LogID: l.ID, At: time.Now(), Outcome: outcome}}}
	}
	if _, err := db.Logs().RecordOutcomes(ctx, "w", outs); err != nil {
		t.Fatal(err)
	}
	// And one still queued.
	if err := db.Logs().EnqueueLog(ctx, &core.Log{Message: core.Message{From: core.Address{Email: "shop@example.com"}, To: []core.Address{{Email: "c@example.org"}}, Subject: "Later"}}); err != nil {
		t.Fatal(err)
	}
	r := metrics.New(struct {
		*store.LogService
		*store.CaptureService
	}{db.Logs(), db.Capture()}, nil)
	_, fams := scrape(t, r)
	if n := value(t, fams, "mailsvc_captured_messages", map[string]string{}); n != 3 {
		t.Fatalf("mailsvc_captured_messages = %v, want 3", n)
	}
	captured, _, err := db.Logs().FindLogs(ctx, core.LogFilter{Status: core.StatusCaptured})
	if err != nil || len(captured) != 3 {
		t.Fatalf("captured logs %d, %v", len(captured), err)
	}
	if _, err := db.Capture().ReleaseCaptured(ctx, []int64{captured[0].ID}, false); err != nil {
		t.Fatal(err)
	}
	_, fams = scrape(t, r)
	if n := value(t, fams, "mailsvc_captured_messages", map[string]string{}); n != 2 {
		t.Fatalf("mailsvc_captured_messages after a release = %v, want 2", n)
	}
}
