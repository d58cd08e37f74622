package servicetest

import (
	"context"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/adapters/store"
	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/test/fakes/smtpsink"
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

// OpenSinkStore opens the store at dsn (closed when the test ends) with
// one SMTP connection to sink, without TLS or login, as the default
// connection and shop@example.com as the sender; extra settings (a
// concurrency, a rate) are added to the connection's.
func OpenSinkStore(tb testing.TB, dsn string, sink *smtpsink.Sink, extra core.Settings) *store.DB {
	tb.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, dsn, store.DefaultPrefix, nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	settings := core.Settings{"host": sink.Host(), "port": int64(sink.Port()), "encryption": "none", "auth": false, "timeout": int64(10)}
	for k, v := range extra {
		settings[k] = v
	}
	conn := &core.Connection{Name: "sink", Driver: "smtp", IsActive: true, Settings: settings}
	if err := db.Connections().CreateConnection(ctx, conn); err != nil {
		tb.Fatal(err)
	}
	if err := db.Settings().SaveSettings(ctx, core.ScopeFree, map[string]any{"default_connection_id": conn.ID, "from_email": "shop@example.com"}); err != nil {
		tb.Fatal(err)
	}
	return db
}
