package scalebench

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"

	"github.com/mailsvc/mailsvc/internal/testdb"
	"github.com/mailsvc/mailsvc/test/fakes/smtpsink"
	"github.com/mailsvc/mailsvc/test/servicetest"
)

// TestConcurrentSessionsEachCommitted sends from 20 SMTP sessions at once
// through the built binary on MariaDB (their messages are committed in
// groups): every 250 names its own log id, and that log holds that
// session's message.
func TestConcurrentSessionsEachCommitted(t *testing.T) {
	const sessions, each = 20, 15
	dsn := testdb.MySQL(t)
	smtpAddr := servicetest.FreeAddr(t)
	svc := start(t, dsn, "MAILSVC_SMTP_LISTEN="+smtpAddr)
	sink := smtpsink.Start(t)
	admin := adminAuth(t, svc)
	useDefault(t, svc, admin, createConnection(t, svc, admin, "sink", "smtp", map[string]any{
		"host": sink.Host(), "port": sink.Port(), "encryption": "none", "auth": false,
	}, nil))
	pw := svc.AdminPassword()

	var mu sync.Mutex
	ids := map[int64]string{} // log id → subject
	var wg sync.WaitGroup
	errs := make(chan error, sessions*each)
	for s := range sessions {
		wg.Go(func() {
			c, err := smtp.Dial(smtpAddr)
			if err != nil {
				errs <- err
				return
			}
			defer c.Close()
			if err := c.Auth(sasl.NewPlainClient("", "admin", pw)); err != nil {
				errs <- err
				return
			}
			for k := range each {
				subject := fmt.Sprintf("session %d message %d", s, k)
				data := "From: shop@example.com\r\nTo: buyer@example.com\r\nSubject: " + subject + "\r\n\r\nhello\r\n"
				reply, err := smtpsink.Send(c, "shop@example.com", []string{"buyer@example.com"}, data)
				if err != nil {
					errs <- fmt.Errorf("%s: %w", subject, err)
					return
				}
				_, idText, ok := strings.Cut(reply, "queued as ")
				id, perr := strconv.ParseInt(strings.TrimSpace(idText), 10, 64)
				if !ok || perr != nil {
					errs <- fmt.Errorf("%s: reply %q names no log id", subject, reply)
					return
				}
				mu.Lock()
				if prev, dup := ids[id]; dup {
					errs <- fmt.Errorf("%s and %s both got log %d", prev, subject, id)
				}
				ids[id] = subject
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if len(ids) != sessions*each {
		t.Fatalf("%d distinct log ids, want %d", len(ids), sessions*each)
	}
	db := openStore(t, dsn)
	for id, subject := range ids {
		l, err := db.Logs().FindLogByID(context.Background(), id)
		if err != nil {
			t.Fatalf("log %d (%s): %v", id, subject, err)
		}
		if l.Message.Subject != subject || l.Source != "smtp" {
			t.Fatalf("log %d = %q from %q, want %q from smtp", id, l.Message.Subject, l.Source, subject)
		}
		if len(l.Message.To) != 1 || l.Message.To[0].Email != "buyer@example.com" {
			t.Fatalf("log %d recipients %v", id, l.Message.To)
		}
	}
	st, err := db.Logs().QueueStats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if total := st.Queued + st.Sending + st.Delivered + st.Failed; total != sessions*each {
		t.Fatalf("%d logs in the table, want %d", total, sessions*each)
	}
}
