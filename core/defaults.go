package core

import (
	"log/slog"
	"time"
)

// NowFrom returns the time clock tells, or the current time when clock
// is nil: the time of a service whose clock a test may set.
func NowFrom(clock func() time.Time) time.Time {
	if clock != nil {
		return clock()
	}
	return time.Now()
}

// LoggerOr returns l, or slog.Default() when l is nil: the logger of a
// service whose Logger may be left unset.
func LoggerOr(l *slog.Logger) *slog.Logger {
	if l != nil {
		return l
	}
	return slog.Default()
}
