package core

import (
	"io"
	"log/slog"
	"testing"
	"time"
)

// TestNowFrom: a set clock's time, else the current time.
func TestNowFrom(t *testing.T) {
	fixed := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	tests := []struct {
		name  string
		clock func() time.Time
		check func(got, before, after time.Time) bool
	}{
		{"set", func() time.Time { return fixed }, func(got, _, _ time.Time) bool { return got.Equal(fixed) }},
		{"nil", nil, func(got, before, after time.Time) bool { return !got.Before(before) && !got.After(after) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := time.Now()
			got := NowFrom(tc.clock)
			if !tc.check(got, before, time.Now()) {
				t.Fatalf("NowFrom = %v", got)
			}
		})
	}
}

// TestLoggerOr: a set logger, else slog's default.
func TestLoggerOr(t *testing.T) {
	own := slog.New(slog.NewTextHandler(io.Discard, nil))
	tests := []struct {
		name string
		in   *slog.Logger
		want *slog.Logger
	}{
		{"set", own, own},
		{"nil", nil, slog.Default()},
	}
	for _, tc := range tests {
		if got := LoggerOr(tc.in); got != tc.want {
			t.Errorf("%s: LoggerOr = %p, want %p", tc.name, got, tc.want)
		}
	}
}
