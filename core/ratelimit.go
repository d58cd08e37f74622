package core

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Common connection settings every driver gets (Register appends them
// unless the driver declares its own field with the key).
const (
	// SettingMaxConcurrency is the ceiling of the sends of one connection
	// in flight at once across all replicas (1 to
	// MaxConnectionConcurrency), split between the live ones; absent, the
	// driver's DefaultConcurrency applies. Below it each process finds its
	// level (SettingAdaptiveConcurrency).
	SettingMaxConcurrency = "max_concurrency"
	// SettingAdaptiveConcurrency, on by default, lets each process find
	// the connection's level below max_concurrency by itself (more sends
	// at once while throughput grows, fewer when the server asks to slow
	// down); off pins the level at max_concurrency.
	SettingAdaptiveConcurrency = "adaptive_concurrency"
	// SettingMaxPerSecond is the connection's send rate limit across all
	// replicas, in messages per second; 0 means none (for ses, the
	// account's MaxSendRate then applies).
	SettingMaxPerSecond = "max_per_second"
	// MaxConnectionConcurrency is the largest max_concurrency.
	MaxConnectionConcurrency = 500
	// MaxConnectionPerSecond is the largest max_per_second.
	MaxConnectionPerSecond = 100000
	// DefaultDriverConcurrency is the max_concurrency of a driver that
	// declares no DefaultConcurrency.
	DefaultDriverConcurrency = 10
)

// RateLimits are a connection's adaptive_concurrency and max_per_second
// as typed values (RateLimitsOf).
type RateLimits struct {
	// Adaptive: adaptive_concurrency.
	Adaptive bool
	// PerSecond: max_per_second (0: none).
	PerSecond int64
}

// RateLimitsOf reads adaptive_concurrency and max_per_second from a
// connection's settings, a missing value taking its field's Default
// (rateFields: the one place these defaults are written).
func RateLimitsOf(s Settings) RateLimits {
	fields := rateFields(0)
	def := func(key string) any {
		for _, f := range fields {
			if f.Key == key {
				return f.Default
			}
		}
		return nil
	}
	adaptive, _ := def(SettingAdaptiveConcurrency).(bool)
	perSecond, _ := AsInt(def(SettingMaxPerSecond))
	return RateLimits{Adaptive: s.Bool(SettingAdaptiveConcurrency, adaptive), PerSecond: s.Int(SettingMaxPerSecond, perSecond)}
}

// rateFields returns the common fields Register appends to a driver.
func rateFields(concurrency int) []Field {
	if concurrency <= 0 {
		concurrency = DefaultDriverConcurrency
	}
	return []Field{
		{Key: SettingMaxConcurrency, Label: "Maximum concurrent sends", Type: FieldInteger, Default: int64(concurrency), Advanced: true,
			Min: Int64(1), Max: Int64(MaxConnectionConcurrency),
			Help: "Ceiling of the sends of this connection in flight at once, across all mailsvc processes sharing the database (1 to 500); below it the level adapts unless adaptive concurrency is off."},
		{Key: SettingAdaptiveConcurrency, Label: "Adaptive concurrency", Type: FieldBoolean, Default: true, Advanced: true,
			Help: "Find the number of concurrent sends by itself, up to the maximum: more while throughput grows, fewer when the server asks to slow down. Off: always the maximum."},
		{Key: SettingMaxPerSecond, Label: "Maximum messages per second", Type: FieldInteger, Default: int64(0), Advanced: true,
			Min: Int64(0), Max: Int64(MaxConnectionPerSecond),
			Help: "Rate limit across all mailsvc processes sharing the database; 0 means none."},
	}
}

// RateLimitError is a provider's "slow down" answer (HTTP 429, SMTP 421 or
// 451 asking to send later): the connection should pause for RetryAfter
// (0: unknown, the engine picks a pause) and the message be sent again
// without counting the attempt as a failure.
type RateLimitError struct {
	RetryAfter time.Duration
	Err        error
}

// Error implements the error interface.
func (e *RateLimitError) Error() string {
	if e.RetryAfter > 0 {
		return fmt.Sprintf("rate limited by the provider (retry after %s): %v", e.RetryAfter, e.Err)
	}
	return fmt.Sprintf("rate limited by the provider: %v", e.Err)
}

// Unwrap returns the underlying error.
func (e *RateLimitError) Unwrap() error { return e.Err }

// RateLimited marks err as a provider's rate-limit answer: a temporary
// failure that pauses the connection for retryAfter.
func RateLimited(err error, retryAfter time.Duration) error {
	if err == nil {
		return nil
	}
	return Temporary(&RateLimitError{RetryAfter: retryAfter, Err: err})
}

// AsRateLimited reports whether err is a rate-limit answer and the pause
// it asks for (0 when the provider named none).
func AsRateLimited(err error) (time.Duration, bool) {
	var rl *RateLimitError
	if errors.As(err, &rl) {
		return rl.RetryAfter, true
	}
	return 0, false
}

// ParseRetryAfter reads an HTTP Retry-After header (delay-seconds or an
// HTTP date) relative to now; 0 when absent or unreadable.
func ParseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if n, err := strconv.ParseFloat(v, 64); err == nil {
		if n <= 0 {
			return 0
		}
		return time.Duration(n * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// ParseRateLimitReset reads an X-RateLimit-Reset header relative to now:
// the Unix time at which the provider's window resets (SendGrid's form),
// or, for small values, the seconds until it does; 0 when absent,
// unreadable or past.
func ParseRateLimitReset(v string, now time.Time) time.Duration {
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	switch {
	case err != nil || n <= 0:
		return 0
	case n < 1_000_000_000: // a delay in seconds, not a date
		return time.Duration(n) * time.Second
	}
	if t := time.Unix(n, 0); t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// HTTPResponseError classifies a provider API's error response like
// HTTPStatusError, and makes a 429 a RateLimited error honouring its
// Retry-After header, or X-RateLimit-Reset when it names none.
func HTTPResponseError(status int, header http.Header, body string) error {
	if status == http.StatusTooManyRequests {
		now := time.Now()
		wait := ParseRetryAfter(header.Get("Retry-After"), now)
		if wait == 0 {
			wait = ParseRateLimitReset(header.Get("X-RateLimit-Reset"), now)
		}
		return RateLimited(fmt.Errorf("provider answered HTTP %d: %s", status, body), wait)
	}
	return HTTPStatusError(status, body)
}

// SendLimits are a provider account's own sending limits (SES
// GetSendQuota/GetAccount); zero fields mean unknown or none.
type SendLimits struct {
	// MaxPerSecond is the account's maximum send rate.
	MaxPerSecond float64
	// Max24Hour is how many messages the account may send in 24 hours;
	// SentLast24Hours how many it sent.
	Max24Hour       int64
	SentLast24Hours int64
}

// SendLimitReader is implemented by transports that can read their
// account's sending limits. The delivery engine calls it once per
// connection and refreshes it hourly; an error leaves the limits unknown.
type SendLimitReader interface {
	SendLimits(ctx context.Context) (SendLimits, error)
}
