// Package queue tests the durable delivery queue through the built
// mailsvc binary: end-to-end delivery into a real SMTP sink, a SIGKILL in
// the middle of a burst, two processes sharing one MariaDB queue, and
// database connections killed under load.
package queue

import (
	"github.com/mailsvc/mailsvc/test/servicetest"

	"bytes"
	"context"
	"database/sql"
	"encoding/base64"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/mail"
	"strings"
	"sync"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql"

	"github.com/mailsvc/mailsvc/adapters/store"
	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/internal/testdb"
	"github.com/mailsvc/mailsvc/test/fakes/smtpsink"
)

func TestMain(m *testing.M) { servicetest.Main(m) }

// start runs the service on dsn with a private data directory.
func start(t *testing.T, dsn string, extra ...string) *servicetest.Service {
	t.Helper()
	return servicetest.Start(t, t.TempDir(), append([]string{"MAILSVC_DB=" + dsn,
		"MAIL_SVC_ENCRYPTION_KEY=queue-test-key-0123456789abcdef"}, extra...)...)
}

// setup opens the store and points the default connection at sink.
func setup(t *testing.T, dsn string, sink *smtpsink.Sink) *store.DB {
	t.Helper()
	return servicetest.OpenSinkStore(t, dsn, sink, nil)
}

func message(i int) core.Message {
	return core.Message{
		From:    core.Address{Email: "shop@example.com"},
		To:      []core.Address{{Email: fmt.Sprintf("buyer%d@example.com", i)}},
		Subject: fmt.Sprintf("msg-%06d", i),
		Text:    strings.Repeat("x", 900),
	}
}

// enqueueMany inserts n messages through the store, 8 at a time.
func enqueueMany(t *testing.T, db *store.DB, from, n int) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	next := make(chan int)
	for range 8 {
		wg.Go(func() {
			for i := range next {
				if err := db.Logs().EnqueueLog(context.Background(), &core.Log{Message: message(i), Source: "test"}); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	for i := from; i < from+n; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// waitDelivered waits until want logs are delivered.
func waitDelivered(t *testing.T, db *store.DB, want int, timeout time.Duration, svcs ...*servicetest.Service) core.QueueStats {
	t.Helper()
	return servicetest.AwaitQueue(t, db.Logs(), timeout, 100*time.Millisecond, fmt.Sprintf("%d delivered", want),
		func(st core.QueueStats) bool { return st.Delivered == want }, svcs...)
}

func TestQueuedToDeliveredBytesIntact(t *testing.T) {
	for _, dialect := range []string{"sqlite", "mysql"} {
		t.Run(dialect, func(t *testing.T) {
			dsn := testdb.SQLite(t)
			if dialect == "mysql" {
				dsn = testdb.MySQL(t)
			}
			sink := smtpsink.Start(t)
			db := setup(t, dsn, sink)
			svc := start(t, dsn)
			bin := make([]byte, 3000)
			for i := range bin {
				bin[i] = byte(i * 7)
			}
			msg := core.Message{
				From:        core.Address{Name: "Shop", Email: "shop@example.com"},
				To:          []core.Address{{Email: "ann@example.com"}},
				Bcc:         []core.Address{{Email: "audit@example.com"}},
				Subject:     "Invoice 42",
				Text:        "See the attachment.",
				Attachments: []core.Attachment{{Filename: "invoice.bin", ContentType: "application/octet-stream", Data: bin}},
			}
			l := &core.Log{Message: msg, Source: "test"}
			if err := db.Logs().EnqueueLog(context.Background(), l); err != nil {
				t.Fatal(err)
			}
			got, err := sink.WaitFor(1, 30*time.Second)
			if err != nil {
				t.Fatalf("%v\n%s", err, svc.Stderr)
			}
			r := got[0]
			if r.From != "shop@example.com" || strings.Join(r.To, ",") != "ann@example.com,audit@example.com" {
				t.Fatalf("envelope %s → %v", r.From, r.To)
			}
			if bytes.Contains(r.Data, []byte("audit@example.com")) {
				t.Fatal("the Bcc address appears in the sent message")
			}
			att := attachment(t, r.Data, "invoice.bin")
			if !bytes.Equal(att, bin) {
				t.Fatalf("attachment: %d bytes differ from the %d queued", len(att), len(bin))
			}
			waitDelivered(t, db, 1, 30*time.Second, svc)
			stored, err := db.Logs().FindLogByID(context.Background(), l.ID)
			if err != nil {
				t.Fatal(err)
			}
			if stored.ProviderMessageID == "" || len(stored.History) != 1 || stored.History[0].Outcome != core.OutcomeDelivered {
				t.Fatalf("stored log: provider id %q history %+v", stored.ProviderMessageID, stored.History)
			}
			if !strings.Contains(stored.ProviderMessageID, r.QueueID) && !strings.Contains(stored.History[0].Response, r.QueueID) {
				t.Fatalf("provider id %q / response %q do not name the sink's queue id %q", stored.ProviderMessageID, stored.History[0].Response, r.QueueID)
			}
		})
	}
}

// attachment returns the decoded bytes of the named MIME part.
func attachment(t *testing.T, data []byte, name string) []byte {
	t.Helper()
	m, err := mail.ReadMessage(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	var find func(ct string, body io.Reader) []byte
	find = func(ct string, body io.Reader) []byte {
		mt, params, err := mime.ParseMediaType(ct)
		if err != nil || !strings.HasPrefix(mt, "multipart/") {
			return nil
		}
		mr := multipart.NewReader(body, params["boundary"])
		for {
			p, err := mr.NextPart() // decodes quoted-printable, not base64
			if err != nil {
				return nil
			}
			if p.FileName() == name {
				raw, _ := io.ReadAll(p)
				if strings.EqualFold(p.Header.Get("Content-Transfer-Encoding"), "base64") {
					out, err := decodeBase64(raw)
					if err != nil {
						t.Fatalf("attachment base64: %v", err)
					}
					return out
				}
				return raw
			}
			if b := find(p.Header.Get("Content-Type"), p); b != nil {
				return b
			}
		}
	}
	b := find(m.Header.Get("Content-Type"), m.Body)
	if b == nil {
		t.Fatalf("no attachment %q in the message", name)
	}
	return b
}

// TestSIGKILLMidBurst kills the service in the middle of a 5,000-message
// burst: after a restart every message is delivered, and the duplicates
// at the sink are no more than the messages that were in flight (those
// the killed process held under its leases).
func TestSIGKILLMidBurst(t *testing.T) {
	dsn := testdb.MySQL(t)
	sink := smtpsink.Start(t)
	db := setup(t, dsn, sink)
	const total, workers, batch = 5000, 4, 50
	enqueueMany(t, db, 0, total)
	env := []string{fmt.Sprintf("MAILSVC_WORKERS=%d", workers), fmt.Sprintf("MAILSVC_BATCH_SIZE=%d", batch), "MAILSVC_QUEUE_LEASE=3"}
	first := start(t, dsn, env...)
	deadline := time.Now().Add(60 * time.Second)
	for len(sink.Messages()) < 1000 {
		if time.Now().After(deadline) {
			t.Fatalf("only %d messages reached the sink in 60s\n%s", len(sink.Messages()), servicetest.Tail(first.Stderr.String(), 3000))
		}
		time.Sleep(10 * time.Millisecond)
	}
	first.Kill()
	atKill := len(sink.Messages())
	st, _ := db.Logs().QueueStats(context.Background())
	if atKill >= total {
		t.Fatalf("the whole burst was sent before the kill (%d); the test proves nothing", atKill)
	}
	t.Logf("killed after %d messages reached the sink; stats then %+v", atKill, st)
	second := start(t, dsn, env...)
	waitDelivered(t, db, total, 120*time.Second, second)
	counts := servicetest.SubjectsAtSink(t, sink)
	dups := 0
	for i := range total {
		n := counts[fmt.Sprintf("msg-%06d", i)]
		if n == 0 {
			t.Fatalf("msg-%06d was never delivered", i)
		}
		dups += n - 1
	}
	// What the killed process held (its leases outlive it) is what may
	// have been sent twice: at most its workers' hands, each up to
	// four batches while the sink is fast.
	if most := workers * batch * 4; st.Sending > most {
		t.Errorf("the killed process held %d messages, more than its workers' hands (%d)", st.Sending, most)
	}
	if dups > st.Sending {
		t.Fatalf("%d duplicates at the sink, more than the %d messages the killed process held", dups, st.Sending)
	}
	t.Logf("%d duplicates (bound %d)", dups, st.Sending)
}

// TestTwoProcessesShareTheQueue runs two services on one MariaDB
// database: every message is sent exactly once.
func TestTwoProcessesShareTheQueue(t *testing.T) {
	dsn := testdb.MySQL(t)
	sink := smtpsink.Start(t)
	db := setup(t, dsn, sink)
	const total = 3000
	env := []string{"MAILSVC_WORKERS=3", "MAILSVC_BATCH_SIZE=20"}
	a := start(t, dsn, env...)
	b := start(t, dsn, env...)
	enqueueMany(t, db, 0, total)
	waitDelivered(t, db, total, 120*time.Second, a, b)
	counts := servicetest.SubjectsAtSink(t, sink)
	for i := range total {
		if n := counts[fmt.Sprintf("msg-%06d", i)]; n != 1 {
			t.Fatalf("msg-%06d reached the sink %d times, want exactly once", i, n)
		}
	}
	// Both processes took part: each sink connection is one process's
	// pooled session, and each process dials its own.
	if c := sink.Connections(); c < 2 {
		t.Fatalf("the sink saw %d connections; both processes should have sent", c)
	}
}

// TestDatabaseConnectionsKilledUnderLoad kills every database connection
// of the service repeatedly while it delivers: it recovers without a
// restart and delivers everything.
func TestDatabaseConnectionsKilledUnderLoad(t *testing.T) {
	dsn := testdb.MySQL(t)
	sink := smtpsink.Start(t)
	db := setup(t, dsn, sink)
	const total = 3000
	enqueueMany(t, db, 0, total)
	admin, err := sql.Open("mysql", testdb.DriverDSN(dsn))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	admin.SetMaxOpenConns(1)
	var self int64
	if err := admin.QueryRow("SELECT CONNECTION_ID()").Scan(&self); err != nil {
		t.Fatal(err)
	}
	dbName := dsn[strings.LastIndex(dsn, "/")+1:]
	if i := strings.Index(dbName, "?"); i >= 0 {
		dbName = dbName[:i]
	}
	svc := start(t, dsn, "MAILSVC_WORKERS=4", "MAILSVC_BATCH_SIZE=25", "MAILSVC_QUEUE_LEASE=3")
	killed := 0
	for round := 0; round < 5; round++ {
		time.Sleep(300 * time.Millisecond)
		rows, err := admin.Query("SELECT id FROM information_schema.processlist WHERE db = ? AND id <> ?", dbName, self)
		if err != nil {
			t.Fatal(err)
		}
		var ids []int64
		for rows.Next() {
			var id int64
			if err := rows.Scan(&id); err == nil {
				ids = append(ids, id)
			}
		}
		rows.Close()
		for _, id := range ids {
			if _, err := admin.Exec(fmt.Sprintf("KILL %d", id)); err == nil {
				killed++
			}
		}
	}
	if killed == 0 {
		t.Fatal("found no service connections to kill")
	}
	t.Logf("killed %d database connections", killed)
	waitDelivered(t, db, total, 120*time.Second, svc)
	counts := servicetest.SubjectsAtSink(t, sink)
	for i := range total {
		if counts[fmt.Sprintf("msg-%06d", i)] == 0 {
			t.Fatalf("msg-%06d was never delivered", i)
		}
	}
	if !svc.Running() {
		t.Fatal("the service exited")
	}
}

func decodeBase64(raw []byte) ([]byte, error) {
	clean := strings.Map(func(r rune) rune {
		if r == '\r' || r == '\n' || r == ' ' || r == '\t' {
			return -1
		}
		return r
	}, string(raw))
	return base64.StdEncoding.DecodeString(clean)
}

// TestMariaDBRestartedUnderLoad stops the database server in the middle of
// a burst and starts it again a few seconds later: the service, never
// restarted, delivers every message.
func TestMariaDBRestartedUnderLoad(t *testing.T) {
	server := testdb.PrivateServer(t)
	dsn := server.Database("mailsvc_restart")
	sink := smtpsink.Start(t)
	db := setup(t, dsn, sink)
	const total = 3000
	enqueueMany(t, db, 0, total)
	svc := start(t, dsn, "MAILSVC_QUEUE_LEASE=5")
	if _, err := sink.WaitFor(200, 60*time.Second); err != nil {
		t.Fatalf("nothing delivered before the restart: %v\n%s", err, servicetest.Tail(svc.Stderr.String(), 2000))
	}
	server.Stop()
	if n := len(sink.Messages()); n >= total {
		t.Fatalf("all %d messages were delivered before the database stopped: no load to restart under", n)
	} else {
		t.Logf("database stopped with %d of %d delivered", n, total)
	}
	time.Sleep(3 * time.Second)
	server.Start()
	waitDelivered(t, db, total, 180*time.Second, svc)
	counts := servicetest.SubjectsAtSink(t, sink)
	for i := range total {
		if counts[fmt.Sprintf("msg-%06d", i)] == 0 {
			t.Fatalf("msg-%06d was never delivered", i)
		}
	}
	if !svc.Running() {
		t.Fatal("the service exited")
	}
	if !strings.Contains(svc.Stderr.String(), "level=WARN") {
		t.Errorf("the outage left no warning in the service log")
	}
}
