// Package metrics exposes mailsvc's measurements in the Prometheus text
// format (github.com/prometheus/client_golang): the delivery engine's
// counters and latencies (it implements delivery.Metrics) and, read from
// the store on each scrape, the queue's depth by status, the age of its
// oldest queued message and the messages the staging guard holds. Every
// name is prefixed mailsvc_.
package metrics

import (
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/mailsvc/mailsvc/app/delivery"
	"github.com/mailsvc/mailsvc/core"
)

// Namespace prefixes every metric name.
const Namespace = "mailsvc"

// SendBuckets are the send latency histogram's bucket bounds, in seconds:
// from a loopback SMTP sink (milliseconds) to a slow provider (a minute).
var SendBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}

// Registry holds mailsvc's metrics. Create it with New; it records the
// delivery engine's measurements (set it as delivery.Options.Metrics) and
// serves them all with Handler.
type Registry struct {
	// reg is where the metrics register, gatherer where they are read
	// (a fleet's registry, which labels them by site).
	reg        prometheus.Registerer
	gatherer   prometheus.Gatherer
	deliveries *prometheus.CounterVec
	duration   *prometheus.HistogramVec
	retries    *prometheus.CounterVec
	errors     *prometheus.CounterVec
	waits      *prometheus.CounterVec
	inFlight   *prometheus.GaugeVec

	// started counts the sends started and not yet finished per
	// connection and driver, so that a SendFinished with no SendStarted
	// (a simulated send, an inactive connection) never takes the in-flight
	// gauge below zero.
	mu      sync.Mutex
	started map[flightKey]int
	// known are the connections whose series exist, at 0 until counted.
	known map[flightKey]bool
	// drivers are the drivers whose series exist.
	drivers map[string]bool
}

// Outcomes are the values of mailsvc_deliveries_total's outcome label:
// the outcomes of core.Attempt, as the log's attempt history shows them.
var Outcomes = []string{core.OutcomeDelivered, core.OutcomeTemporary, core.OutcomePermanent, core.OutcomeSimulated, core.OutcomeRateLimited}

// ErrorClasses are the values of mailsvc_provider_errors_total's class
// label.
var ErrorClasses = []string{
	delivery.ErrorClassNetwork, delivery.ErrorClassTimeout, delivery.ErrorClassRateLimited, delivery.ErrorClass4xx,
	delivery.ErrorClass5xx, delivery.ErrorClassSMTP4xx, delivery.ErrorClassSMTP5xx, delivery.ErrorClassOther,
}

// flightKey is one sends_in_flight series.
type flightKey struct {
	conn   int64
	driver string
}

var _ delivery.Metrics = (*Registry)(nil)

// New returns a Registry with the delivery metrics and the Go runtime and
// process collectors. queue, when not nil, is read on each scrape for the
// queue gauges; a scrape whose queue read fails logs it to logger and
// reports the error.
func New(queue QueueReader, logger *slog.Logger) *Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return newRegistry(reg, reg, queue, logger)
}

// newRegistry returns a Registry whose metrics register with reg and are
// served from gatherer.
func newRegistry(reg prometheus.Registerer, gatherer prometheus.Gatherer, queue QueueReader, logger *slog.Logger) *Registry {
	if logger == nil {
		logger = slog.Default()
	}
	r := &Registry{
		reg:      reg,
		gatherer: gatherer,
		started:  map[flightKey]int{},
		known:    map[flightKey]bool{},
		drivers:  map[string]bool{},
		deliveries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Name: "deliveries_total",
			Help: "Send attempts finished, by connection, driver and outcome (delivered, temporary_failure, permanent_failure, simulated, rate_limited).",
		}, []string{"connection", "driver", "outcome"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: Namespace, Name: "send_duration_seconds",
			Help:    "Time a send attempt took, by driver.",
			Buckets: SendBuckets,
		}, []string{"driver"}),
		retries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Name: "retries_total",
			Help: "Messages put back in the queue for a later attempt, by connection and driver.",
		}, []string{"connection", "driver"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Name: "provider_errors_total",
			Help: "Errors from providers, by driver and class (network, timeout, rate_limited, 4xx, 5xx, smtp_4xx, smtp_5xx, other).",
		}, []string{"driver", "class"}),
		waits: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Name: "rate_limit_wait_seconds_total",
			Help: "Time sends waited for a connection's rate limit, by connection and driver.",
		}, []string{"connection", "driver"}),
		inFlight: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: Namespace, Name: "sends_in_flight",
			Help: "Sends in progress in this process, by connection and driver.",
		}, []string{"connection", "driver"}),
	}
	r.reg.MustRegister(r.deliveries, r.duration, r.retries, r.errors, r.waits, r.inFlight)
	if queue != nil {
		r.reg.MustRegister(newQueueCollector(queue, logger))
	}
	return r
}

// Handler serves the metrics in the Prometheus text format (or
// OpenMetrics when the scraper asks for it). It does no access control.
func (r *Registry) Handler() http.Handler {
	return promhttp.HandlerFor(r.gatherer, promhttp.HandlerOpts{EnableOpenMetrics: true})
}

// Gatherer returns the underlying registry, for tests and for adding
// collectors.
func (r *Registry) Gatherer() prometheus.Gatherer { return r.gatherer }

func connLabel(id int64) string { return strconv.FormatInt(id, 10) }

// AddConnection makes the series of a connection exist at 0 before
// anything is counted on it: deliveries by every outcome, retries, rate
// limit waits, sends in flight, and its driver's send latencies and
// provider errors by every class, so that a rate() or an alert sees 0
// rather than no data. The serve command adds the connections known at
// start; a connection created later is added on its first measurement.
func (r *Registry) AddConnection(connID int64, driver string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.addLocked(flightKey{connID, driver})
}

// addLocked is AddConnection with r.mu held.
func (r *Registry) addLocked(k flightKey) {
	if r.known[k] {
		return
	}
	r.known[k] = true
	conn := connLabel(k.conn)
	for _, o := range Outcomes {
		r.deliveries.WithLabelValues(conn, k.driver, o)
	}
	r.retries.WithLabelValues(conn, k.driver)
	r.waits.WithLabelValues(conn, k.driver)
	r.inFlight.WithLabelValues(conn, k.driver)
	if !r.drivers[k.driver] {
		r.drivers[k.driver] = true
		r.duration.WithLabelValues(k.driver)
		for _, c := range ErrorClasses {
			r.errors.WithLabelValues(k.driver, c)
		}
	}
}

// add is AddConnection, cheap once the connection is known.
func (r *Registry) add(connID int64, driver string) {
	k := flightKey{connID, driver}
	r.mu.Lock()
	if !r.known[k] {
		r.addLocked(k)
	}
	r.mu.Unlock()
}

// SendStarted implements delivery.Metrics.
func (r *Registry) SendStarted(connID int64, driver string) {
	r.mu.Lock()
	r.addLocked(flightKey{connID, driver})
	r.started[flightKey{connID, driver}]++
	r.mu.Unlock()
	r.inFlight.WithLabelValues(connLabel(connID), driver).Inc()
}

// SendFinished implements delivery.Metrics.
func (r *Registry) SendFinished(connID int64, driver, outcome string, d time.Duration) {
	conn := connLabel(connID)
	k := flightKey{connID, driver}
	r.mu.Lock()
	r.addLocked(k)
	wasStarted := r.started[k] > 0
	if wasStarted {
		r.started[k]--
	}
	r.mu.Unlock()
	if wasStarted {
		r.inFlight.WithLabelValues(conn, driver).Dec()
	}
	r.deliveries.WithLabelValues(conn, driver, outcome).Inc()
	r.duration.WithLabelValues(driver).Observe(d.Seconds())
}

// Retried implements delivery.Metrics.
func (r *Registry) Retried(connID int64, driver string) {
	r.add(connID, driver)
	r.retries.WithLabelValues(connLabel(connID), driver).Inc()
}

// ProviderError implements delivery.Metrics.
func (r *Registry) ProviderError(connID int64, driver, class string) {
	r.add(connID, driver)
	r.errors.WithLabelValues(driver, class).Inc()
}

// RateLimitWait implements delivery.Metrics.
func (r *Registry) RateLimitWait(connID int64, driver string, d time.Duration) {
	r.add(connID, driver)
	r.waits.WithLabelValues(connLabel(connID), driver).Add(d.Seconds())
}
