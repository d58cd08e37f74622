// Package scale tests delivery at scale through the built mailsvc binary:
// the connection settings that bound it, and several replicas on one
// MariaDB database.
package scale

import (
	"bytes"
	"context"
	"fmt"
	"net/mail"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/adapters/store"
	"github.com/mailsvc/mailsvc/app/delivery"
	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/internal/testdb"
	"github.com/mailsvc/mailsvc/test/fakes/smtpsink"
	"github.com/mailsvc/mailsvc/test/servicetest"
)

func TestMain(m *testing.M) { servicetest.Main(m) }

// TestRateSettingsOutOfBounds: max_concurrency and max_per_second outside
// their bounds are refused with 422 naming the field, and nothing is
// stored.
func TestRateSettingsOutOfBounds(t *testing.T) {
	svc := servicetest.Start(t, t.TempDir())
	admin := servicetest.Basic("admin", svc.AdminPassword())
	tests := []struct {
		field string
		value string
	}{
		{"max_concurrency", "0"},
		{"max_concurrency", "501"},
		{"max_concurrency", `"ten"`},
		{"max_per_second", "-1"},
		{"max_per_second", "100001"},
	}
	for _, tc := range tests {
		t.Run(tc.field+"="+tc.value, func(t *testing.T) {
			body := fmt.Sprintf(`{"name":"bad","driver":"smtp","settings":{"host":"127.0.0.1","port":2525,"encryption":"none","auth":false,%q:%s}}`, tc.field, tc.value)
			r := servicetest.Call(t, "POST", svc.Base+"/connections", body, admin)
			if r.Status != 422 || r.Code() != "validation_error" || !strings.Contains(string(r.Body), tc.field) {
				t.Fatalf("POST: %d %s, want 422 naming %s", r.Status, r.Body, tc.field)
			}
			list := servicetest.Call(t, "GET", svc.Base+"/connections", "", admin)
			if strings.TrimSpace(string(list.Body)) != "[]" {
				t.Fatalf("a connection was stored: %s", list.Body)
			}
		})
	}
	// In bounds: stored with the given values.
	r := servicetest.Call(t, "POST", svc.Base+"/connections", `{"name":"ok","driver":"smtp","settings":{"host":"127.0.0.1","port":2525,"encryption":"none","auth":false,"max_concurrency":500,"max_per_second":0}}`, admin)
	if r.Status != 201 && r.Status != 200 {
		t.Fatalf("in bounds: %d %s", r.Status, r.Body)
	}
}

func setup(t *testing.T, dsn string, sink *smtpsink.Sink) *store.DB {
	t.Helper()
	return servicetest.OpenSinkStore(t, dsn, sink, core.Settings{core.SettingMaxConcurrency: int64(10)})
}

func enqueue(t *testing.T, db *store.DB, n int) {
	t.Helper()
	var wg sync.WaitGroup
	next := make(chan int)
	for range 8 {
		wg.Go(func() {
			for i := range next {
				m := core.Message{From: core.Address{Email: "shop@example.com"}, To: []core.Address{{Email: fmt.Sprintf("b%d@example.com", i)}},
					Subject: fmt.Sprintf("msg-%06d", i), Text: strings.Repeat("x", 900)}
				if err := db.Logs().EnqueueLog(context.Background(), &core.Log{Message: m, Source: "test"}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
}

func counts(t *testing.T, sink *smtpsink.Sink) map[string]int {
	out := map[string]int{}
	for _, r := range sink.Messages() {
		m, err := mail.ReadMessage(bytes.NewReader(r.Data))
		if err != nil {
			t.Fatal(err)
		}
		out[m.Header.Get("Subject")]++
	}
	return out
}

func waitDelivered(t *testing.T, db *store.DB, want int, svcs ...*servicetest.Service) {
	t.Helper()
	deadline := time.Now().Add(180 * time.Second)
	for {
		st, err := db.Logs().QueueStats(context.Background())
		if err == nil && st.Delivered == want {
			return
		}
		if time.Now().After(deadline) {
			var logs string
			for _, s := range svcs {
				logs += s.Stderr.String()
			}
			if len(logs) > 3000 {
				logs = logs[len(logs)-3000:]
			}
			t.Fatalf("stats %+v (%v), want %d delivered\n%s", st, err, want, logs)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func start(t *testing.T, dsn string) *servicetest.Service {
	return servicetest.Start(t, t.TempDir(), "MAILSVC_DB="+dsn, "MAIL_SVC_ENCRYPTION_KEY=scale-test-key-0123456789abcdef",
		"MAILSVC_QUEUE_LEASE=3")
}

// TestThreeReplicas: three processes on one MariaDB database deliver
// 3,000 messages, each exactly once; then, with one killed (SIGKILL)
// mid-run, all of the next 3,000 are delivered and the duplicates are
// no more than the killed process could have had in flight.
func TestThreeReplicas(t *testing.T) {
	dsn := testdb.MySQL(t)
	sink := smtpsink.Start(t)
	db := setup(t, dsn, sink)
	const total = 3000
	a, b, c := start(t, dsn), start(t, dsn), start(t, dsn)
	enqueue(t, db, total)
	waitDelivered(t, db, total, a, b, c)
	for subject, n := range counts(t, sink) {
		if n != 1 {
			t.Fatalf("%s reached the sink %d times, want exactly once", subject, n)
		}
	}
	if len(counts(t, sink)) != total {
		t.Fatalf("%d distinct messages at the sink, want %d", len(counts(t, sink)), total)
	}

	// A second burst; c is killed once part of it is through.
	sink.Reset()
	if n, err := db.Logs().DeleteLogs(context.Background(), allIDs(t, db)); err != nil || n != total {
		t.Fatalf("clear logs: %d, %v", n, err)
	}
	// Enqueued while the replicas deliver, so the kill comes mid-burst
	// however fast they are.
	enqueued := make(chan struct{})
	go func() { defer close(enqueued); enqueue(t, db, total) }()
	defer func() { <-enqueued }()
	deadline := time.Now().Add(60 * time.Second)
	for len(sink.Messages()) < total/5 {
		if time.Now().After(deadline) {
			t.Fatal("the second burst did not start")
		}
		time.Sleep(5 * time.Millisecond)
	}
	c.Kill()
	// What c held under its leases is what may have been sent twice: its
	// workers' lease owners are "host-pid-8 hex digits/wN".
	var held int
	if err := db.Gorm().Raw(`SELECT COUNT(*) FROM wp_mailsvc_logs WHERE status = ? AND lease_owner LIKE ?`,
		core.StatusSending, fmt.Sprintf("%%-%d-________/w%%", c.Pid())).Scan(&held).Error; err != nil {
		t.Fatal(err)
	}
	if len(sink.Messages()) >= total {
		t.Fatal("the whole burst was sent before the kill; the test proves nothing")
	}
	<-enqueued
	waitDelivered(t, db, total, a, b)
	dups := 0
	got := counts(t, sink)
	for i := range total {
		n := got[fmt.Sprintf("msg-%06d", i)]
		if n == 0 {
			t.Fatalf("msg-%06d was never delivered", i)
		}
		dups += n - 1
	}
	// The killed process held at most its workers' hands (up to four
	// batches each while the sink is fast): sent or being sent, not yet
	// recorded.
	if most := delivery.DefaultWorkers * delivery.DefaultBatchSize * 4; held > most {
		t.Errorf("the killed process held %d messages, more than its workers' hands (%d)", held, most)
	}
	if dups > held {
		t.Fatalf("%d duplicates, more than the %d messages the killed process held", dups, held)
	}
	t.Logf("%d duplicates after the kill (it held %d)", dups, held)
}

func allIDs(t *testing.T, db *store.DB) []int64 {
	logs, _, err := db.Logs().FindLogs(context.Background(), core.LogFilter{})
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]int64, len(logs))
	for i, l := range logs {
		ids[i] = l.ID
	}
	return ids
}
