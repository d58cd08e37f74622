package servicetest

import (
	"context"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// QueueCounter is the store's queue counts (store.DB.Logs()).
type QueueCounter interface {
	QueueStats(ctx context.Context) (core.QueueStats, error)
}

// AwaitQueue polls q's counts every poll until done holds for them and
// returns them. Past timeout it fails the test with the last counts, what
// was awaited and the end of the services' logs.
func AwaitQueue(tb testing.TB, q QueueCounter, timeout, poll time.Duration, what string, done func(core.QueueStats) bool, svcs ...*Service) core.QueueStats {
	tb.Helper()
	deadline := time.Now().Add(timeout)
	for {
		st, err := q.QueueStats(context.Background())
		if err == nil && done(st) {
			return st
		}
		if time.Now().After(deadline) {
			var logs string
			for _, s := range svcs {
				logs += s.Stderr.String()
			}
			tb.Fatalf("after %s: stats %+v (err %v), want %s\n%s", timeout, st, err, what, Tail(logs, 3000))
		}
		time.Sleep(poll)
	}
}

// Tail returns the last n bytes of s (a service's log, for a failure
// message).
func Tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
