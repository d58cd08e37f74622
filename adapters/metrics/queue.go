package metrics

import (
	"context"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/mailsvc/mailsvc/core"
)

// QueueReader is what the queue gauges read on each scrape.
type QueueReader interface {
	// QueueDepth counts logs by status, each count capped (a count at the
	// cap means at least that many); it reads the status indexes only.
	QueueDepth(ctx context.Context) (core.QueueStats, error)
	// OldestQueuedAt returns the creation time of the oldest queued log,
	// or nil when none is queued.
	OldestQueuedAt(ctx context.Context) (*time.Time, error)
	// CountCaptured counts the messages the staging guard holds (status
	// captured), waiting for a release (core.CaptureStore).
	CountCaptured(ctx context.Context) (int, error)
}

// scrapeTimeout bounds the store reads of one scrape.
const scrapeTimeout = 5 * time.Second

// queueCollector reads the queue gauges from the store when scraped.
type queueCollector struct {
	queue    QueueReader
	logger   *slog.Logger
	now      func() time.Time
	depth    *prometheus.Desc
	oldest   *prometheus.Desc
	captured *prometheus.Desc
}

func newQueueCollector(q QueueReader, logger *slog.Logger) *queueCollector {
	return &queueCollector{
		queue: q, logger: logger, now: time.Now,
		depth: prometheus.NewDesc(prometheus.BuildFQName(Namespace, "queue", "messages"),
			"Logs in the database by status (queued, sending, delivered, failed), shared by every replica.",
			[]string{"status"}, nil),
		oldest: prometheus.NewDesc(prometheus.BuildFQName(Namespace, "queue", "oldest_age_seconds"),
			"Age of the oldest queued message in seconds; 0 when the queue is empty.", nil, nil),
		captured: prometheus.NewDesc(prometheus.BuildFQName(Namespace, "", "captured_messages"),
			"Messages the staging guard holds (status captured) until they are released, shared by every replica.", nil, nil),
	}
}

// Describe implements prometheus.Collector.
func (c *queueCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.depth
	ch <- c.oldest
	ch <- c.captured
}

// Collect implements prometheus.Collector.
func (c *queueCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	defer cancel()
	st, err := c.queue.QueueDepth(ctx)
	if err != nil {
		c.logger.Warn("metrics: queue depth unreadable", "err", err)
		ch <- prometheus.NewInvalidMetric(c.depth, err)
	} else {
		for _, s := range []struct {
			status string
			n      int
		}{{core.StatusQueued, st.Queued}, {core.StatusSending, st.Sending}, {core.StatusDelivered, st.Delivered}, {core.StatusFailed, st.Failed}} {
			ch <- prometheus.MustNewConstMetric(c.depth, prometheus.GaugeValue, float64(s.n), s.status)
		}
	}
	if oldest, err := c.queue.OldestQueuedAt(ctx); err != nil {
		c.logger.Warn("metrics: oldest queued message unreadable", "err", err)
		ch <- prometheus.NewInvalidMetric(c.oldest, err)
	} else {
		age := 0.0
		if oldest != nil {
			age = max(0, c.now().Sub(*oldest).Seconds())
		}
		ch <- prometheus.MustNewConstMetric(c.oldest, prometheus.GaugeValue, age)
	}
	if n, err := c.queue.CountCaptured(ctx); err != nil {
		c.logger.Warn("metrics: captured messages unreadable", "err", err)
		ch <- prometheus.NewInvalidMetric(c.captured, err)
	} else {
		ch <- prometheus.MustNewConstMetric(c.captured, prometheus.GaugeValue, float64(n))
	}
}
