package delivery

import "time"

// Metrics receives the delivery engine's measurements; nil records nothing.
type Metrics interface {
	SendStarted(connID int64, driver string)
	SendFinished(connID int64, driver, outcome string, d time.Duration) // outcome: core.Outcome* (delivered, temporary_failure, permanent_failure, simulated, rate_limited)
	Retried(connID int64, driver string)
	ProviderError(connID int64, driver, class string) // class: "network", "timeout", "rate_limited", "4xx", "5xx", "smtp_4xx", "smtp_5xx", "other"
	RateLimitWait(connID int64, driver string, d time.Duration)
}

// Provider error classes passed to Metrics.ProviderError.
const (
	ErrorClassNetwork     = "network"
	ErrorClassTimeout     = "timeout"
	ErrorClassRateLimited = "rate_limited"
	ErrorClass4xx         = "4xx"
	ErrorClass5xx         = "5xx"
	ErrorClassSMTP4xx     = "smtp_4xx"
	ErrorClassSMTP5xx     = "smtp_5xx"
	ErrorClassOther       = "other"
)

// noMetrics records nothing.
type noMetrics struct{}

func (noMetrics) SendStarted(int64, string)                         {}
func (noMetrics) SendFinished(int64, string, string, time.Duration) {}
func (noMetrics) Retried(int64, string)                             {}
func (noMetrics) ProviderError(int64, string, string)               {}
func (noMetrics) RateLimitWait(int64, string, time.Duration)        {}

// metrics returns the Options' Metrics, or one that records nothing.
func (s *engine) metrics() Metrics {
	if s.o.Metrics == nil {
		return noMetrics{}
	}
	return s.o.Metrics
}
