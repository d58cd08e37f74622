package core

import (
	"errors"
	"net/http"
	"strconv"
	"testing"
	"time"
)

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		in   string
		want time.Duration
	}{
		{"", 0},
		{"2", 2 * time.Second},
		{" 1.5 ", 1500 * time.Millisecond},
		{"0", 0},
		{"-3", 0},
		{"soon", 0},
		{now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second},
		{now.Add(-time.Minute).Format(http.TimeFormat), 0},
	} {
		if got := ParseRetryAfter(tc.in, now); got != tc.want {
			t.Errorf("ParseRetryAfter(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

func TestParseRateLimitReset(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	for _, tc := range []struct {
		in   string
		want time.Duration
	}{
		{"", 0},
		{"1800000007", 7 * time.Second}, // SendGrid: the Unix time of the reset
		{"1799999990", 0},               // already past
		{"30", 30 * time.Second},        // a delay in seconds
		{"0", 0},
		{"x", 0},
	} {
		if got := ParseRateLimitReset(tc.in, now); got != tc.want {
			t.Errorf("ParseRateLimitReset(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

func TestHTTPResponseErrorRateLimit(t *testing.T) {
	reset := time.Now().Add(10 * time.Second).Unix()
	for _, tc := range []struct {
		name     string
		header   http.Header
		min, max time.Duration
	}{
		{"Retry-After wins", http.Header{"Retry-After": {"2"}, "X-Ratelimit-Reset": {itoa(reset)}}, 2 * time.Second, 2 * time.Second},
		{"X-RateLimit-Reset alone", http.Header{"X-Ratelimit-Reset": {itoa(reset)}}, 8 * time.Second, 10 * time.Second},
		{"neither", http.Header{}, 0, 0},
	} {
		err := HTTPResponseError(http.StatusTooManyRequests, tc.header, `{"errors":[{"message":"too many requests"}]}`)
		var rl *RateLimitError
		if !errors.As(err, &rl) {
			t.Fatalf("%s: %v is not a rate-limit error", tc.name, err)
		}
		if rl.RetryAfter < tc.min || rl.RetryAfter > tc.max {
			t.Errorf("%s: wait %v, want between %v and %v", tc.name, rl.RetryAfter, tc.min, tc.max)
		}
	}
	var rl *RateLimitError
	if errors.As(HTTPResponseError(http.StatusBadGateway, http.Header{"Retry-After": {"2"}}, "bad gateway"), &rl) {
		t.Error("a 502 is a rate-limit error")
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func TestRateLimitsOf(t *testing.T) {
	tests := []struct {
		name string
		s    Settings
		want RateLimits
	}{
		{"unset: the fields' defaults", Settings{}, RateLimits{Adaptive: true, PerSecond: 0}},
		{"set", Settings{SettingAdaptiveConcurrency: false, SettingMaxPerSecond: int64(12)}, RateLimits{Adaptive: false, PerSecond: 12}},
		{"as a form sends them", Settings{SettingAdaptiveConcurrency: "0", SettingMaxPerSecond: float64(5)}, RateLimits{Adaptive: false, PerSecond: 5}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := RateLimitsOf(tt.s); got != tt.want {
				t.Fatalf("RateLimitsOf(%v) = %+v; want %+v", tt.s, got, tt.want)
			}
		})
	}
}
